"""Rasterise the app icons (``static/icons/icon.svg`` and ``icon-maskable.svg``, drawn for this
project) into the PNG sizes the web app manifest and iOS ask for, with the machine's Chromium
through Playwright: icon-192/512.png, icon-maskable-192/512.png and apple-touch-icon.png (180 px,
from the maskable drawing: iOS rounds the corners itself and shows no transparency).

Usage: ``python scripts/make_icons.py`` (rewrites the PNGs next to the SVGs).
"""

from __future__ import annotations

import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "src" / "guandan" / "server" / "static" / "icons"
#: (source SVG, output PNG, edge in pixels)
OUTPUTS = (
    ("icon.svg", "icon-192.png", 192),
    ("icon.svg", "icon-512.png", 512),
    ("icon-maskable.svg", "icon-maskable-192.png", 192),
    ("icon-maskable.svg", "icon-maskable-512.png", 512),
    ("icon-maskable.svg", "apple-touch-icon.png", 180),
)


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from browser_helpers import LAUNCH_ARGS, find_chromium
    from playwright.sync_api import sync_playwright

    exe = find_chromium()
    if exe is None:
        print("no Chromium found", file=sys.stderr)
        return 1
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=LAUNCH_ARGS)
        for src, out, edge in OUTPUTS:
            page = browser.new_page(viewport={"width": edge, "height": edge})
            svg = (ICONS / src).read_text(encoding="utf-8")
            page.set_content(f"<html><body style='margin:0;background:transparent'>"
                             f"<div style='width:{edge}px;height:{edge}px'>{svg.replace('<svg ', f'<svg width={edge} height={edge} ')}</div></body></html>")
            page.screenshot(path=str(ICONS / out), omit_background=True, clip={"x": 0, "y": 0, "width": edge, "height": edge})
            page.close()
            print(out)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
