"""The house style every tracker shares, whatever its rule system: input cells pale yellow,
computed cells grey, dark headers, numbers centred under their headers."""

from __future__ import annotations

from openpyxl.styles import Border, Font, PatternFill, Side

__all__ = ["COMPUTED_FILL", "HEADER_FILL", "HEADER_FONT", "INPUT_FILL", "NUMBER_KINDS", "THIN", "TITLE_FONT",
           "align_of"]

INPUT_FILL = PatternFill("solid", fgColor="FFF9E0")
COMPUTED_FILL = PatternFill("solid", fgColor="EEEEEE")
HEADER_FILL = PatternFill("solid", fgColor="2F3E4E")
HEADER_FONT = Font(bold=True, color="FFFFFF")
TITLE_FONT = Font(bold=True, size=14)
THIN = Border(bottom=Side(style="thin", color="BBBBBB"))
NUMBER_KINDS = ("int", "number", "percent", "bool")


def align_of(kind: str) -> str:
    """A column's horizontal alignment, for its header and its values alike: numbers and
    Yes/No centred, text left, so a header sits over its own numbers."""
    return "center" if kind in NUMBER_KINDS else "left"
