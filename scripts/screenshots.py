"""Render the README's screenshots: the Battle and Orders sheets of the example battle after
phase 1, as LibreOffice draws them.

    python scripts/screenshots.py            # writes docs/img/battle.png and docs/img/orders.png
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from libreoffice import render_png  # noqa: E402

from sheetsync.app.files import example_path  # noqa: E402
from sheetsync.app.workbook_cli import new_workbook, run_workbook  # noqa: E402


def main() -> None:
    out = ROOT / "docs" / "img"
    with tempfile.TemporaryDirectory() as tmp:
        wb = Path(tmp) / "example.xlsx"
        new_workbook(wb, example_path())
        run_workbook("resolve", wb)
        # (left, top, width, height) of an A4 landscape page: the part with content, as the
        # sheets' page setup (fitted to the page width) lays it out
        crops = {"Battle": (0.03, 0.05, 0.94, 0.37), "Orders": (0.03, 0.05, 0.94, 0.12)}
        for sheet, crop in crops.items():
            png = render_png(wb, out / f"{sheet.lower()}.png", sheet, dpi=220, crop=crop)
            print(png.relative_to(ROOT))


if __name__ == "__main__":
    main()
