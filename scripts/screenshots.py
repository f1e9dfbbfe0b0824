"""Render the README's screenshots as LibreOffice draws them: the Battle and Orders sheets
of the example battle after phase 1, and the Map and Attacks sheets of the example hex
battle after turn 1.

    python scripts/screenshots.py    # docs/img/battle.png, orders.png, hex-map.png, hex-attacks.png
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import yaml  # noqa: E402
from libreoffice import render_png  # noqa: E402

from sheetsync.app.workbook_cli import new_workbook, run_workbook, system_tracker_from  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.sheets.disk import example_path  # noqa: E402


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
        hexwar = find_system("hexwar")
        hx = Path(tmp) / "hex.xlsx"
        system_tracker_from(hx, hexwar, hexwar.load(yaml.safe_load(hexwar.example_data())))
        run_workbook("resolve", hx)
        for sheet, crop in {"Map": (0.03, 0.05, 0.94, 0.9), "Attacks": (0.03, 0.1, 0.94, 0.08)}.items():
            png = render_png(hx, out / f"hex-{sheet.lower()}.png", sheet, dpi=220, crop=crop)
            print(png.relative_to(ROOT))


if __name__ == "__main__":
    main()
