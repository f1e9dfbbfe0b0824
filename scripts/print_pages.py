"""Print each rule system's example tracker as LibreOffice prints it, and render the first
page of one sheet of each to PNG (issue 22): the battalion Battle sheet, the hex Map (the
whole map on one page) and the Exalted Units sheet (the first of its pages across).

    python scripts/print_pages.py docs/img            # print-bbn.png, print-hexwar.png, print-exalted.png
    python scripts/print_pages.py out --dpi 100 --paper letter --keep-pdf

Each tracker is made from its system's example, built, with one step resolved.  Needs
LibreOffice Calc headless and poppler-utils (``pdftoppm``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import yaml  # noqa: E402
from libreoffice import sheet_pdfs  # noqa: E402

from sheetsync.app.workbook_cli import new_workbook, run_workbook, system_tracker_from  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.sheets.disk import example_path  # noqa: E402

SHEETS = {"bbn": "Battle", "hexwar": "Map", "exalted": "Units"}
"""The sheet whose first printed page is shown for each system."""


def tracker(system_id: str, out: Path, paper: str) -> Path:
    """The system's example as a tracker on ``paper``, built, one step resolved."""
    if system_id == "bbn":
        new_workbook(out, example_path(), paper=paper)
    else:
        system = find_system(system_id)
        system_tracker_from(out, system, system.load(yaml.safe_load(system.example_data())), paper=paper)
    run_workbook("build", out)
    run_workbook("resolve", out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where the PNGs (print-<system>.png) go")
    parser.add_argument("--dpi", type=int, default=60, help="resolution of the PNGs (default 60)")
    parser.add_argument("--paper", choices=("a4", "letter"), default="a4")
    parser.add_argument("--keep-pdf", action="store_true", help="also keep each sheet's PDF in the folder")
    args = parser.parse_args(argv)
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        raise SystemExit("needs pdftoppm (Debian package poppler-utils)")
    args.folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sheetsync-print-") as tmp:
        books = {system_id: tracker(system_id, Path(tmp) / f"{system_id}.xlsx", args.paper) for system_id in SHEETS}
        pdfs = {system_id: Path(tmp) / f"print-{system_id}.pdf" for system_id in SHEETS}
        sheet_pdfs({books[s]: {SHEETS[s]: pdfs[s]} for s in SHEETS})
        for system_id, pdf in pdfs.items():
            stem = args.folder / f"print-{system_id}"
            subprocess.run([pdftoppm, "-png", "-r", str(args.dpi), "-f", "1", "-l", "1", "-singlefile", str(pdf),
                            str(stem)], check=True, capture_output=True, timeout=120)
            if args.keep_pdf:
                shutil.copy(pdf, args.folder / pdf.name)
            print(f"{stem}.png")


if __name__ == "__main__":
    main()
