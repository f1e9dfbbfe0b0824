"""The web page once loaded reloads and runs with no network (issue 25 §2): its service
worker (``sw.js``) keeps the page, its wheels and Pyodide in the browser's cache.

Headless Chromium (Debian's ``chromium``) loads the site from a local server; once the page
is ready and the service worker active, the server is shut down, so nothing at all answers
any more.  The page is reloaded: Python loads again from the cache, and a blank tracker is
made and a battalion tracker built, with no server.  No host but 127.0.0.1 resolves.
"""

from __future__ import annotations

import functools
import http.server
import threading
import urllib.request
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml

from sheetsync.web.site import build_site, pyodide_cache

CHROMIUM = Path("/usr/bin/chromium")
LOAD_TIMEOUT_MS = 240_000
STEP_TIMEOUT_MS = 120_000


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".whl": "application/zip"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


def _site(root: Path) -> Path:
    npm = pyodide_cache() / "node_modules" / "pyodide"
    assert (npm / "pyodide.asm.wasm").is_file(), f"no Pyodide in {npm}: run bash .ci/install-pyodide.sh"
    build_site(root, "pyodide/")
    (root / "pyodide").symlink_to(npm, target_is_directory=True)
    return root


def _example(tmp_path: Path) -> Path:
    """The battalion example as a tracker, before Build."""
    from sheetsync.app.workbook_cli import system_tracker_from
    from sheetsync.core.registry import find_system

    system = find_system("bbn")
    out = tmp_path / "battle.xlsx"
    system_tracker_from(out, system, system.load(yaml.safe_load(system.example_data())))
    return out


def test_issue25_the_page_reloads_and_runs_with_the_server_gone(tmp_path: Path) -> None:
    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: install Debian's chromium (bash .ci/install-system-deps.sh)"
    from playwright.sync_api import expect, sync_playwright

    site = _site(tmp_path / "site")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}/"
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        try:
            context = browser.new_context(accept_downloads=True)
            tab = context.new_page()
            tab.on("pageerror", lambda error: errors.append(str(error)))
            tab.goto(url)
            tab.wait_for_selector("#loading", state="hidden", timeout=LOAD_TIMEOUT_MS)
            expect(tab.locator("#offline")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
            # the service worker has everything: the server goes, and nothing answers any more
            server.shutdown()
            server.server_close()
            thread.join(10)
            with pytest.raises(OSError):
                urllib.request.urlopen(url, timeout=5)
            tab.reload()
            tab.wait_for_selector("#loading", state="hidden", timeout=LOAD_TIMEOUT_MS)
            assert "failed" not in (tab.locator("#loading").get_attribute("class") or "")
            # a step runs: a battalion tracker built, its Cohorts written
            tab.get_by_label("Tracker workbook").set_input_files(str(_example(tmp_path)))
            status = tab.get_by_role("status")
            expect(status).to_have_attribute("aria-busy", "false", timeout=STEP_TIMEOUT_MS)
            tab.get_by_role("button", name="Build Cohorts").click()
            expect(status).to_have_attribute("aria-busy", "false", timeout=STEP_TIMEOUT_MS)
            assert status.locator(".message.ok").count() == 1, status.inner_text()
            link = tab.locator("#download").get_by_role("link")
            with tab.expect_download() as download:
                link.click()
            got = tmp_path / "built.xlsx"
            download.value.save_as(got)
        finally:
            browser.close()
    assert not errors, errors
    book = openpyxl.load_workbook(got, read_only=True)
    try:
        assert "Cohorts" in book.sheetnames
    finally:
        book.close()
