"""The web page in a real browser (issue 25 §2): headless Chromium (Debian's ``chromium``)
driven by Playwright, the site ``sheetsync web`` writes served from a local folder, and
Pyodide from the npm package ``.ci/install-pyodide.sh`` puts in ``.cache/pyodide``.  Nothing
is fetched from outside: every request not to 127.0.0.1 is refused (and the browser resolves
no other host), and the test fails if one was tried.

One browser and one page load for the whole module (Pyodide takes a while to start); once
loaded, the browser is put offline, so every step below runs on a page with no network.
Every test chooses its workbook on the same page, so a workbook chosen after another
replaces it without a reload, which the module checks at its end.

For each rule system: the example tracker through Build, Resolve, Undo, Resolve and End,
clicked by their captions, then downloaded: its cells equal those the CLI leaves after the
same steps on a copy.  Then a damaged workbook (every bad cell listed with its address), a
file that is no workbook, and a blank tracker from "New tracker".

Nothing here is skipped: without Chromium or the Pyodide cache the tests fail and say what
to install.
"""

from __future__ import annotations

import base64
import functools
import http.server
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openpyxl
import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app as cli
from sheetsync.app.workbook_cli import run_workbook, system_tracker_from
from sheetsync.core.errors import InputError
from sheetsync.core.registry import find_system, tracker_system_ids
from sheetsync.web.site import build_site, pyodide_cache

CHROMIUM = Path("/usr/bin/chromium")
STEPS = ("build", "resolve", "undo", "resolve", "end")
LOAD_TIMEOUT_MS = 240_000
"""Pyodide starting on a busy shared machine: well under a minute as a rule."""
STEP_TIMEOUT_MS = 120_000
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


# -- the site, its server and the browser -----------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".whl": "application/zip"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = pyodide_cache() / "node_modules" / "pyodide"
    assert (npm / "pyodide.asm.wasm").is_file(), f"no Pyodide in {npm}: run bash .ci/install-pyodide.sh"
    root = tmp_path_factory.mktemp("web") / "site"
    build_site(root, "pyodide/")
    (root / "pyodide").symlink_to(npm, target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def url(site: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def page(url: str) -> Iterator[Any]:
    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: install Debian's chromium (bash .ci/install-system-deps.sh)"
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    errors: list[str] = []

    def local_only(route: Any) -> None:
        if urlsplit(route.request.url).hostname in LOCAL_HOSTS or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            # belt and braces beside the route: no host but this one resolves, workers included
            args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        try:
            # the route sees every request only without the service worker (tests/test_web_offline.py
            # tries that one, with the server gone)
            context = browser.new_context(accept_downloads=True, service_workers="block")
            context.route("**/*", local_only)
            tab = context.new_page()
            tab.on("pageerror", lambda error: errors.append(str(error)))
            tab.goto(url)
            tab.evaluate("window.sameLoad = 'first load'")
            tab.wait_for_selector("#loading", state="hidden", timeout=LOAD_TIMEOUT_MS)
            context.set_offline(True)  # once loaded, the page works offline: every test below runs so
            tab.evaluate("""() => {  // every change of the status region's aria-busy, in order
                window.busyLog = [];
                const region = document.querySelector('[role="status"]');
                new MutationObserver(() => window.busyLog.push(region.getAttribute("aria-busy")))
                    .observe(region, { attributes: true, attributeFilter: ["aria-busy"] });
            }""")
            yield tab
            assert tab.evaluate("window.sameLoad") == "first load", "the page was reloaded"
        finally:
            browser.close()
    assert not outside, f"the page asked for something outside: {outside}"
    assert not errors, errors


def _wait(page: Any) -> Any:
    """The status region once the step that was just clicked is done."""
    from playwright.sync_api import expect

    status = page.get_by_role("status")
    expect(status).to_have_attribute("aria-busy", "false", timeout=STEP_TIMEOUT_MS)
    return status


def _choose(page: Any, path: Path) -> Any:
    page.get_by_label("Tracker workbook").set_input_files(str(path))
    return _wait(page)


def _click(page: Any, caption: str) -> Any:
    """Click the step ``caption``; the status region said it was busy until the step was done."""
    page.evaluate("window.busyLog.length = 0")
    page.get_by_role("button", name=caption, exact=True).click()
    status = _wait(page)
    assert page.evaluate("window.busyLog") == ["true", "false"], caption
    return status


def _drop(page: Any, path: Path) -> Any:
    """Drop ``path`` on the page, as a file dragged from the desktop."""
    page.evaluate("""([name, data]) => {
        const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        const transfer = new DataTransfer();
        transfer.items.add(new File([bytes], name));
        document.getElementById("drop").dispatchEvent(
            new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }""", [path.name, base64.b64encode(path.read_bytes()).decode()])
    return _wait(page)


def _download(page: Any, link: Any, out: Path) -> Path:
    with page.expect_download() as download:
        link.click()
    download.value.save_as(out)
    return out


# -- the trackers ------------------------------------------------------------------------------


def _example_tracker(system_id: str, path: Path) -> Path:
    system = find_system(system_id)
    battle = system.load(yaml.safe_load(system.example_data()))
    system_tracker_from(path, system, battle)
    return path


def _cli_steps(path: Path, steps: tuple[str, ...]) -> None:
    runner = CliRunner()
    for step in steps:
        result = runner.invoke(cli, [step, str(path)])
        assert result.exit_code == 0, (step, result.output)


def _visible_cells(path: Path) -> dict[str, dict[str, Any]]:
    book = openpyxl.load_workbook(path)
    return {ws.title: {cell.coordinate: cell.value for row in ws.iter_rows() for cell in row if cell.value is not None}
            for ws in book.worksheets if ws.sheet_state == "visible"}


# -- the tests ---------------------------------------------------------------------------------


def test_issue25_the_page_loads_pyodide_and_offers_every_system(page: Any) -> None:
    assert page.get_by_label("Tracker workbook").is_enabled()
    options = page.locator("#new-system option")
    assert options.evaluate_all("os => os.map(o => o.value)") == list(tracker_system_ids())
    # nothing is offered for download before a step has succeeded
    assert page.get_by_role("link", name=re.compile(r"^Download")).count() == 0


@pytest.mark.parametrize("system_id", tracker_system_ids())
def test_issue25_every_system_through_its_steps_downloads_the_cells_the_cli_writes(
        page: Any, system_id: str, tmp_path: Path) -> None:
    system = find_system(system_id)
    origin = _example_tracker(system_id, tmp_path / f"{system_id}-battle.xlsx")
    expected = tmp_path / "cli" / origin.name
    expected.parent.mkdir()
    shutil.copy(origin, expected)
    _cli_steps(expected, STEPS)

    status = _choose(page, origin)
    assert page.locator("#summary-system").inner_text() == system.title
    assert status.locator(".error").count() == 0, status.inner_text()
    assert page.get_by_role("link", name=re.compile(r"^Download")).count() == 0
    for action in STEPS:
        caption = next(step.caption for step in system.steps if step.action == action)
        status = _click(page, caption)
        assert status.locator(".error").count() == 0, (caption, status.inner_text())
        assert status.locator(".message.ok").count() == 1, (caption, status.inner_text())
    if system_id == "hexwar":  # H1, H2: the hex map comes with every hex step, drawn as SVG without Pillow
        picture = status.get_by_role("img", name="The hex map")
        assert picture.count() == 1
        assert picture.evaluate("img => img.naturalWidth") > 400  # the SVG loaded and has the map's size

    link = page.locator("#download").get_by_role("link", name=re.compile(r"^Download"))
    got = _download(page, link, tmp_path / "page" / origin.name)
    assert _visible_cells(got) == _visible_cells(expected)


def test_issue25_check_forecast_and_report_show_in_the_page(page: Any, tmp_path: Path) -> None:
    origin = _example_tracker("bbn", tmp_path / "battle.xlsx")
    _cli_steps(origin, ("build",))
    _choose(page, origin)
    status = _click(page, "Check")
    assert status.locator(".error").count() == 0, status.inner_text()
    status = _click(page, "Report")
    assert status.locator(".report h2").first.inner_text().startswith("After-action report")
    status = _click(page, "Forecast")
    assert "wins" in status.locator(".forecast").inner_text()
    assert re.search(r"\d+\.\d%", status.locator(".forecast").inner_text())


def test_issue25_a_damaged_workbook_lists_every_bad_cell_and_offers_nothing(page: Any, tmp_path: Path) -> None:
    from sheetsync.systems.bbn.tracker.layout import layout

    lay = layout()
    path = _example_tracker("bbn", tmp_path / "damaged.xlsx")
    book = openpyxl.load_workbook(path)
    cohorts = lay.block("Cohorts_Setup")
    sheet = book[cohorts.sheet]

    def at(block: Any, offset: int, key: str) -> str:
        return block.cell(offset, key).split("!")[1]

    names = [sheet[at(cohorts, i, "name")].value for i in range(cohorts.rows)]
    sheet[at(cohorts, names.index(None), "name")] = names[0]  # a cohort named twice
    characters = lay.block("Characters_Table")
    book[characters.sheet][at(characters, 0, "temper")] = "lots"  # not a number
    book.save(path)
    with pytest.raises(InputError) as refused:
        run_workbook("build", path)
    cells = [problem.where for problem in refused.value.problems]
    assert len(cells) >= 2

    status = _choose(page, path)
    status = _click(page, "Build Cohorts")
    shown = status.locator("ul.problems li")
    assert shown.count() == len(cells)
    listed = status.inner_text()
    for cell in cells:
        assert cell in listed
    assert status.locator(".message.error").count() == 1
    assert page.get_by_role("link", name=re.compile(r"^Download")).count() == 0


def test_issue25_a_file_that_is_no_tracker_gets_a_clear_message(page: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a workbook")
    status = _choose(page, notes)
    assert "not a tracker workbook" in status.inner_text()
    fake = tmp_path / "fake.xlsx"
    fake.write_text("not a zip either")
    status = _choose(page, fake)
    assert status.locator(".message.error").inner_text() == "fake.xlsx can't be opened as a workbook: File is not a zip file"
    assert page.get_by_role("button", name="Build Cohorts").count() == 0
    blank = openpyxl.Workbook()
    blank.save(tmp_path / "plain.xlsx")
    status = _choose(page, tmp_path / "plain.xlsx")
    assert "is it a sheetsync tracker" in status.locator(".message.error").inner_text()
    assert page.get_by_role("link", name=re.compile(r"^Download")).count() == 0


def test_issue25_new_tracker_downloads_a_blank_tracker_of_the_chosen_system(page: Any, tmp_path: Path) -> None:
    page.get_by_label("Rule system").select_option("hexwar")
    _click(page, "New tracker")
    link = page.locator("#new-download").get_by_role("link", name=re.compile(r"^Download"))
    got = _download(page, link, tmp_path / "new.xlsx")
    expected = tmp_path / "cli.xlsx"
    result = CliRunner().invoke(cli, ["template", str(expected), "--system", "hexwar"])
    assert result.exit_code == 0, result.output
    assert _visible_cells(got) == _visible_cells(expected)
    # and the blank tracker is a tracker the page takes, dropped on it this time
    status = _drop(page, got)
    assert page.locator("#summary-system").inner_text() == find_system("hexwar").title
    assert page.locator("#summary-file").inner_text() == "new.xlsx"
    assert status.locator(".message.error").count() == 0, status.inner_text()
    assert page.get_by_role("button", name="Resolve Turn", exact=True).is_enabled()
