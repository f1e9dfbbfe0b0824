"""Render the README's picture of the after-action report as a real browser draws it: the
embedded example battle (``sheetsync/examples/battle.yaml``) with its declared phase 1
resolved, then two more phases of the same three attacks (the ghouls on Night Watch,
Night Watch on the ghouls, Iron Hand's guns on the ghouls), reported as HTML and shot by
headless Chromium.

    python scripts/report_screenshot.py                # docs/img/report.png
    python scripts/report_screenshot.py --pdf a4.pdf   # also print it to PDF (A4) to check the page breaks

Needs Debian's ``chromium`` package (``apt-get install -y chromium``); the test suite does not.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sheetsync.app.report import ReportSource, account_of, to_html  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.sheets.disk import example_path, read_data_file  # noqa: E402

MORE_ORDERS = [
    {"cohort": "Ghoul Pack", "task": "Melee Attack", "target": "Night Watch"},
    {"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghoul Pack"},
    {"cohort": "Iron Hand", "task": "Ranged Attack", "target": "Ghoul Pack"},
]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def example_report_html() -> str:
    """The example battle played three phases, as the report's HTML."""
    system = find_system("bbn")
    battle = system.load(read_data_file(example_path()), str(example_path()))
    for phase in (1, 2, 3):
        battle = system.resolve_file(battle).battle
        if phase < 3:
            data = system.dump(battle)
            data["orders"] = MORE_ORDERS
            battle = system.load(data, f"after-phase-{phase}.yaml")
    acc = account_of(ReportSource(system, battle, "battle.yaml (the example, three phases)", "file"))
    return to_html(acc)


def _browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    sys.exit("error: no Chromium found: install Debian's package with `apt-get install -y chromium`")


def _run(browser: str, *args: str) -> None:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    if proc.returncode != 0:
        sys.exit(f"error: Chromium failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "report.png")
    parser.add_argument("--pdf", type=Path, help="Also print the report to this PDF, on A4.")
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args()
    browser = _browser()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(example_report_html(), encoding="utf-8")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _run(browser, f"--window-size={args.width},{args.height}", f"--screenshot={args.out.resolve()}",
             page.as_uri())
        print(args.out)
        if args.pdf:
            a4 = Path(tmp) / "report-a4.html"
            a4.write_text(page.read_text(encoding="utf-8").replace("@page {", "@page { size: A4;", 1), encoding="utf-8")
            _run(browser, f"--print-to-pdf={args.pdf.resolve()}", "--no-pdf-header-footer", a4.as_uri())
            print(args.pdf)


if __name__ == "__main__":
    main()
