"""The installable app's files over HTTP (issue 25, item 5; guandan.server.webapp): the manifest and
the service worker with their content types, the worker's version and precache list, and the pages'
version header. The browser side (registration, offline page) is tests/test_browser_app.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from guandan.server.app import create_app
from guandan.server.settings import STATIC_DIR, Settings
from guandan.server.webapp import precache_urls, service_worker_source, static_version


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    app = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'g.db'}"))
    with TestClient(app) as c:
        yield c


def test_manifest_is_served_as_a_web_app_manifest(client: TestClient) -> None:
    r = client.get("/manifest.webmanifest")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/manifest+json"
    m = json.loads(r.content)
    assert m["name"] == "掼蛋 Guandan" and m["short_name"] == "掼蛋"
    assert m["start_url"].startswith("/") and m["scope"] == "/" and m["display"] == "standalone"
    assert m["theme_color"] == "#14502f" and m["background_color"] == "#1b5e3a"
    sizes = {(i["sizes"], i["purpose"]) for i in m["icons"]}
    # installable on Android: a 192 and a 512 PNG, and maskable ones for the launcher's shapes
    assert {("192x192", "any"), ("512x512", "any"), ("192x192", "maskable"), ("512x512", "maskable")} <= sizes
    for icon in m["icons"]:
        got = client.get(icon["src"])
        assert got.status_code == 200, icon["src"]
        assert got.headers["content-type"].startswith(icon["type"]), icon
        if icon["type"] == "image/png":
            # the PNG header's width and height are the declared size
            w = int.from_bytes(got.content[16:20], "big")
            h = int.from_bytes(got.content[20:24], "big")
            assert f"{w}x{h}" == icon["sizes"], icon


def test_ios_tags_and_manifest_link_in_the_page(client: TestClient) -> None:
    html = client.get("/").text
    for tag in ('<link rel="manifest" href="/manifest.webmanifest">', 'name="apple-mobile-web-app-capable" content="yes"',
                'rel="apple-touch-icon" href="/static/icons/apple-touch-icon.png"', 'name="theme-color" content="#14502f"'):
        assert tag in html, tag
    icon = client.get("/static/icons/apple-touch-icon.png")
    assert icon.status_code == 200 and int.from_bytes(icon.content[16:20], "big") == 180


def test_service_worker_is_served_with_its_version_and_precache_list(client: TestClient) -> None:
    r = client.get("/sw.js")
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/javascript; charset=utf-8"
    assert r.headers["cache-control"] == "no-cache" and r.headers["service-worker-allowed"] == "/"
    version = static_version(STATIC_DIR)
    assert len(version) == 16 and r.headers["x-static-version"] == version
    assert f'const VERSION = "{version}";' in r.text
    assert "const CACHE = `guandan-static-${VERSION}`;" in r.text
    line = next(x for x in r.text.splitlines() if x.startswith("const PRECACHE = "))
    urls = json.loads(line[len("const PRECACHE = "):].split(";")[0])
    for must in ("/static/offline.html", "/static/offline.js", "/static/css/offline.css", "/static/js/app.js", "/static/js/i18n.js",
                 "/static/js/i18n_app.js", "/static/icons/icon.svg", "/static/css/app.css"):
        assert must in urls, must
    # only public static files: no API, page or websocket path, not the worker itself
    assert all(u.startswith("/static/") for u in urls) and "/static/sw.js" not in urls
    # the pages carry the same version (the worker compares it with its own)
    assert client.get("/").headers["x-static-version"] == version
    assert client.get("/").headers["cache-control"] == "no-cache"  # never an older server's version from the HTTP cache
    assert client.get("/room/abc").headers["x-static-version"] == version


def test_version_changes_with_any_static_file(tmp_path: Path) -> None:
    """A versioned cache: editing one byte of one asset gives another version, so an upgraded server
    serves a different worker and the browser replaces the old one and its cache."""
    static = tmp_path / "static"
    shutil.copytree(STATIC_DIR, static)
    before = static_version(static)
    assert before == static_version(STATIC_DIR)
    css = static / "css" / "offline.css"
    css.write_text(css.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    after = static_version(static)
    assert after != before
    src = service_worker_source(static, after)
    assert f'const VERSION = "{after}";' in src and before not in src
    assert "/static/css/offline.css" in precache_urls(static)


def test_worker_without_its_marked_lines_is_refused(tmp_path: Path) -> None:
    static = tmp_path / "static"
    static.mkdir()
    (static / "sw.js").write_text("self.addEventListener('fetch', () => {});\n", encoding="utf-8")
    with pytest.raises(ValueError):
        service_worker_source(static, "0123456789abcdef")
