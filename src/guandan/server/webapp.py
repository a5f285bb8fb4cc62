"""The installable web app (issue 25, item 5): the web app manifest at ``/manifest.webmanifest`` and
the service worker at ``/sw.js``, both from the static directory.

The service worker (``static/sw.js``) caches the static assets in a cache named after a version of
the static files (a hash of their paths and bytes, :func:`static_version`), so that an upgraded
server changes the worker's bytes and the browser replaces it; the worker then deletes the older
caches. Pages carry the same version in an ``X-Static-Version`` header (:data:`VERSION_HEADER`),
which lets a still-running older worker see that its cached scripts are stale. Only the public
files of the static directory are ever precached: no API answer, page or websocket.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, Response

#: Header naming the static files' version on page answers (read by the service worker).
VERSION_HEADER = "X-Static-Version"
#: Files of the static directory the worker does not precache: itself, and the manifest (served at
#: its own path, always from the network).
_NOT_PRECACHED = {"sw.js", "manifest.webmanifest"}
_VERSION_LINE = re.compile(r'^const VERSION = "[^"\n]*";.*$', re.MULTILINE)
_PRECACHE_LINE = re.compile(r"^const PRECACHE = \[\];.*$", re.MULTILINE)


def static_files(static_dir: Path) -> list[Path]:
    """The files under ``static_dir`` (sorted, hidden files left out).

    Args:
        static_dir: the browser UI's directory.
    Returns:
        Their paths.
    """
    return sorted(p for p in static_dir.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(static_dir).parts))


def static_version(static_dir: Path) -> str:
    """A version of the static files: the first 16 hex digits of SHA-256 over each file's path
    (relative, POSIX) and bytes, in path order. Any change of any file changes it.

    Args:
        static_dir: the browser UI's directory.
    Returns:
        16 lowercase hex digits.
    Raises:
        OSError: a file cannot be read.
    """
    digest = hashlib.sha256()
    for path in static_files(static_dir):
        rel = path.relative_to(static_dir).as_posix()
        digest.update(rel.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def precache_urls(static_dir: Path) -> list[str]:
    """The URLs (``/static/...``) the service worker caches when it installs: every static file but
    the worker and the manifest.

    Args:
        static_dir: the browser UI's directory.
    Returns:
        The URLs, sorted.
    """
    return [f"/static/{p.relative_to(static_dir).as_posix()}" for p in static_files(static_dir)
            if p.relative_to(static_dir).as_posix() not in _NOT_PRECACHED]


def service_worker_source(static_dir: Path, version: str) -> str:
    """``static/sw.js`` with its version and precache list written in.

    Args:
        static_dir: the browser UI's directory (holds ``sw.js``).
        version: the static files' version (:func:`static_version`).
    Returns:
        The worker's JavaScript source.
    Raises:
        OSError: ``sw.js`` cannot be read.
        ValueError: ``sw.js`` lacks its ``const VERSION`` or ``const PRECACHE`` line.
    """
    text = (static_dir / "sw.js").read_text(encoding="utf-8")
    text, n_version = _VERSION_LINE.subn(f"const VERSION = {json.dumps(version)};", text, count=1)
    urls = json.dumps(precache_urls(static_dir), ensure_ascii=True)
    text, n_precache = _PRECACHE_LINE.subn(lambda _m: f"const PRECACHE = {urls};", text, count=1)
    if n_version != 1 or n_precache != 1:
        raise ValueError("static/sw.js must hold one 'const VERSION = \"...\";' and one 'const PRECACHE = [];' line")
    return text


def install_webapp(app: FastAPI, static_dir: Path) -> str:
    """Serve ``/manifest.webmanifest`` (``application/manifest+json``) and ``/sw.js``
    (``text/javascript``, scope ``/``, never cached by HTTP so that an upgrade is seen at the next
    page load).

    Args:
        app: the application.
        static_dir: the browser UI's directory.
    Returns:
        The static files' version (for the pages' :data:`VERSION_HEADER`).
    Raises:
        OSError, ValueError: as :func:`service_worker_source`.
    """
    version = static_version(static_dir)
    worker = service_worker_source(static_dir, version)
    manifest = static_dir / "manifest.webmanifest"

    async def manifest_file() -> FileResponse:
        return FileResponse(manifest, media_type="application/manifest+json", headers={"Cache-Control": "no-cache"})

    async def service_worker() -> Response:
        return Response(worker, media_type="text/javascript; charset=utf-8",
                        headers={"Cache-Control": "no-cache", "Service-Worker-Allowed": "/", VERSION_HEADER: version})

    app.add_api_route("/manifest.webmanifest", manifest_file, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_api_route("/sw.js", service_worker, methods=["GET", "HEAD"], include_in_schema=False)
    return version
