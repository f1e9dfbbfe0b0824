"""The battalion system's tracker: its layout, the reader that turns its sheets into a
battle file, the writer of its computed blocks, and its openpyxl template.  The generic
middle (``sheetsync.sheets``, ``sheetsync.core``) knows no rule system; this package is
where the battalion system meets it."""

from __future__ import annotations

__all__: list[str] = []
