"""Take the README's picture of the web page (issue 25): the site ``sheetsync web`` writes,
served from a temporary folder and opened in headless Chromium, with the example battle's
tracker chosen, built and its first phase resolved.

    python scripts/web_screenshot.py                      # docs/img/web-page.png
    python scripts/web_screenshot.py --out page.png --system hexwar

Needs Debian's ``chromium`` and Playwright (the ``test`` extra); Pyodide comes from the npm
package ``.ci/install-pyodide.sh`` caches, or from ``--pyodide URL``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from sheetsync.app.workbook_cli import system_tracker_from  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.web.site import build_site, pyodide_cache  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def example_tracker(system_id: str, path: Path) -> Path:
    system = find_system(system_id)
    battle = system.load(yaml.safe_load(system.example_data()))
    system_tracker_from(path, system, battle)
    return path


def shoot(out: Path, system_id: str, pyodide: str | None) -> None:
    from playwright.sync_api import expect, sync_playwright

    system = find_system(system_id)
    with tempfile.TemporaryDirectory(prefix="sheetsync-web-") as tmp:
        site = Path(tmp) / "site"
        npm = pyodide_cache() / "node_modules" / "pyodide"
        if pyodide is None and not (npm / "pyodide.asm.wasm").is_file():
            raise SystemExit(f"no Pyodide in {npm}: run bash .ci/install-pyodide.sh, or give --pyodide URL")
        build_site(site, pyodide or "pyodide/")
        if pyodide is None:
            (site / "pyodide").symlink_to(npm, target_is_directory=True)
        tracker = example_tracker(system_id, Path(tmp) / f"{system_id}-battle.xlsx")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
                page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
                page.goto(f"http://127.0.0.1:{server.server_port}/")
                page.wait_for_selector("#loading", state="hidden", timeout=300_000)
                status = page.get_by_role("status")
                page.get_by_label("Tracker workbook").set_input_files(str(tracker))
                expect(status).to_have_attribute("aria-busy", "false", timeout=120_000)
                for action in ("build", "resolve"):
                    caption = next(step.caption for step in system.steps if step.action == action)
                    page.get_by_role("button", name=caption, exact=True).click()
                    expect(status).to_have_attribute("aria-busy", "false", timeout=120_000)
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out), full_page=True)
                browser.close()
        finally:
            server.shutdown()
            server.server_close()
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "web-page.png")
    parser.add_argument("--system", default="bbn", help="the rule system of the example tracker (bbn, hexwar, exalted)")
    parser.add_argument("--pyodide", default=None, metavar="URL",
                        help="where the page loads Pyodide from (default: the local npm cache)")
    args = parser.parse_args()
    shoot(args.out, args.system, args.pyodide)


if __name__ == "__main__":
    main()
