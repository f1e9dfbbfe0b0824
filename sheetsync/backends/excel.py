"""The Excel workbook backend (openpyxl): an .xlsx or .xlsm file on disk.

Reads load the workbook once; ``write_ranges`` applies every update and saves atomically:
to a temporary file beside the workbook, then over it, the previous file kept as
``NAME.xlsx.bak``.  A workbook that LibreOffice or Excel holds open (its lock file is
beside it) is refused and nothing is written.  Text starting with ``=`` stays text.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sheetsync.errors import BackendError, WorkbookLockedError
from sheetsync.sheets.backend import CellValue, Formula, Grid, RangeUpdate, parse_range, trim_grid

__all__ = ["ExcelBackend", "lock_files"]


def lock_files(path: Path) -> list[Path]:
    """The lock files LibreOffice (``.~lock.NAME#``) and Excel (``~$NAME``) leave beside an
    open workbook."""
    candidates = [path.with_name(f".~lock.{path.name}#"), path.with_name("~$" + path.name[2:]),
                  path.with_name("~$" + path.name)]
    return [p for p in candidates if p.exists()]


class ExcelBackend:
    """A :class:`SheetBackend` over one workbook file.  The constructor does no I/O."""

    def __init__(
        self,
        path: Path | str,
        *,
        backup: bool = True,
        before_save: Callable[[Any], None] | None = None,
        serialize: Callable[[Any], bytes] | None = None,
    ) -> None:
        self.path = Path(path)
        self.backup = backup
        self.before_save = before_save
        self.serialize = serialize
        self._wb: Any = None
        self.reads = 0
        self.writes = 0

    def _check_lock(self) -> None:
        locks = lock_files(self.path)
        if locks:
            raise WorkbookLockedError(f"{self.path.name} is open in LibreOffice or Excel ({locks[0].name} exists); "
                                      "close it there first. Nothing was written.")

    @property
    def workbook(self) -> Any:
        if self._wb is None:
            import openpyxl

            if not self.path.exists():
                raise BackendError(f"{self.path}: no such workbook")
            try:
                with warnings.catch_warnings():
                    # a workbook saved by LibreOffice or Excel carries extensions openpyxl
                    # does not read; they are not sheetsync's cells, so say nothing
                    warnings.filterwarnings("ignore", message=".*extension is not supported", category=UserWarning)
                    self._wb = openpyxl.load_workbook(self.path, keep_vba=self.path.suffix.lower() == ".xlsm")
            except (OSError, ValueError, KeyError) as exc:
                raise BackendError(f"{self.path} can't be opened as a workbook: {exc}") from None
            except Exception as exc:  # zipfile.BadZipFile and friends
                raise BackendError(f"{self.path} can't be opened as a workbook: {exc}") from None
        return self._wb

    def _sheet(self, name: str) -> Any:
        try:
            return self.workbook[name]
        except KeyError:
            raise BackendError(f"{self.path.name} has no sheet {name!r}: is it a sheetsync tracker?") from None

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        self.reads += 1
        out: list[Grid] = []
        for text in ranges:
            rng = parse_range(text)
            ws = self._sheet(rng.sheet)
            last = rng.row2 if rng.row2 is not None else max(ws.max_row, rng.row1)
            rows: list[list[CellValue]] = []
            for row in ws.iter_rows(min_row=rng.row1, max_row=last, min_col=rng.col1, max_col=rng.col2):
                rows.append([_read_cell(c) for c in row])
            out.append(trim_grid(rows, rng.width))
        return out

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        self._check_lock()
        wb = self.workbook
        for u in updates:  # check every sheet first: all or nothing
            self._sheet(parse_range(u.range).sheet)
        for u in updates:
            rng = parse_range(u.range)
            ws = wb[rng.sheet]
            for i, row in enumerate(u.values):
                for j, value in enumerate(row):
                    _write_cell(ws.cell(row=rng.row1 + i, column=rng.col1 + j), value)
        self.save()
        self.writes += 1

    def save(self) -> None:
        """Save atomically, keeping the previous file as ``.bak``."""
        from sheetsync.app.files import atomic_write_bytes

        self._check_lock()
        if self.before_save is not None:
            self.before_save(self.workbook)
        if self.serialize is not None:
            data = self.serialize(self.workbook)
        else:
            buf = io.BytesIO()
            self.workbook.save(buf)
            data = buf.getvalue()
        try:
            atomic_write_bytes(self.path, data, backup=self.backup)
        except OSError as exc:
            raise BackendError(f"{self.path}: can't save ({exc.strerror}); the previous file is untouched") from None


_BOOLEAN_FORMULAS = {"=TRUE()": True, "=FALSE()": False, "=TRUE": True, "=FALSE": False}


def _read_cell(cell: Any) -> CellValue:
    value = cell.value
    if value is None:
        return None
    if cell.data_type == "f":
        text = value if isinstance(value, str) else getattr(value, "text", str(value))
        text = text if text.startswith("=") else "=" + text
        if text.upper() in _BOOLEAN_FORMULAS:  # LibreOffice saves TRUE/FALSE as =TRUE()/=FALSE()
            return _BOOLEAN_FORMULAS[text.upper()]
        return Formula(text)
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _write_cell(cell: Any, value: CellValue) -> None:
    if isinstance(value, Formula):
        cell.value = value.text
        return
    cell.value = value
    if isinstance(value, str) and value.startswith("="):
        cell.data_type = "s"  # literal text, never a formula (formula injection)
