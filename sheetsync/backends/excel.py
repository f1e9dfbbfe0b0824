"""The Excel workbook backend (openpyxl): an .xlsx or .xlsm file on disk.

Reads load the workbook once; ``write_ranges`` applies every update and saves through
:func:`sheetsync.sheets.disk.atomic_write_bytes`: to a temporary file beside the workbook,
then over it, the previous file kept as ``NAME.xlsx.bak`` (a symbolic link is written
through to its target; a read-only file is refused).  A workbook that LibreOffice or Excel
holds open (its lock file is beside it) is refused and nothing is written.  Text starting
with ``=`` stays text.

Issue 12: a step on a workbook file goes, when it can, through the package itself
(:mod:`sheetsync.backends.xlsx_package`): only the sheets read are parsed, only the sheets
changed are rewritten, every other part (the VBA project, drawings, charts) is kept byte for
byte.  Anything that path does not handle runs the whole step on openpyxl, as before; so
does a backend given a workbook in memory, a ``before_save`` or ``serialize`` (unless
``package=True`` says they are only needed on openpyxl), or ``SHEETSYNC_OPENPYXL=1``.

Two steps on one file never interleave: a step runs inside :meth:`ExcelBackend.locked`,
which holds an OS-level lock (``.NAME.lock`` beside the workbook) from before the read
until after the save, so a second step waits, then reads the first one's result.  A
worksheet part that can't be parsed is refused by name before anything is read, because
openpyxl would read it as an empty sheet and the save would wipe it.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sheetsync.core.errors import BackendError, WorkbookLockedError
from sheetsync.sheets.backend import CellValue, Formula, Grid, RangeUpdate, parse_range, trim_grid

__all__ = ["ExcelBackend", "check_workbook_parts", "lock_files"]


def lock_files(path: Path) -> list[Path]:
    """The lock files LibreOffice (``.~lock.NAME#``) and Excel (``~$NAME``) leave beside an
    open workbook.  sheetsync's own step lock (``.NAME.lock``) is none of these: it only
    makes a second sheetsync step wait."""
    candidates = [path.with_name(f".~lock.{path.name}#"), path.with_name("~$" + path.name[2:]),
                  path.with_name("~$" + path.name)]
    return [p for p in candidates if p.exists()]


_NS_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_MAIN_URI = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS_MAIN = "{" + _MAIN_URI + "}"


def check_workbook_parts(path: Path, data: bytes | None = None) -> None:
    """Refuse a workbook with a damaged sheet: every worksheet part listed in
    ``xl/workbook.xml`` (and the shared strings and styles) must be present and be
    well-formed XML.  openpyxl reads a damaged part as an empty sheet, and a step would then
    go ahead on a wiped Log, default House Rules and a State that restarts the battle.  A
    file that is no zip at all is left to the loader's own error.  ``data``: the file's
    bytes, when they are read already (issue 12)."""
    import xml.etree.ElementTree as ET

    try:
        zf = zipfile.ZipFile(path if data is None else io.BytesIO(data))
    except (zipfile.BadZipFile, OSError):
        return
    with zf:
        names = set(zf.namelist())

        def damaged(what: str, member: str, why: object) -> BackendError:
            return BackendError(f"{path}: {what} is damaged and can't be read ({member}: {why}); nothing was "
                                f"written. Restore {path.name}.bak or the last good copy")

        def parse_whole(member: str) -> Any:
            try:
                return ET.fromstring(zf.read(member))
            except _UNZIP_ERRORS as exc:
                raise damaged("the list of sheets", member, _unzip_why(exc)) from None
            except (ET.ParseError, OSError, EOFError, ValueError) as exc:
                raise damaged("the list of sheets", member, exc) from None

        if "xl/workbook.xml" not in names:
            return  # not a workbook openpyxl can load: its own error names it
        book = parse_whole("xl/workbook.xml")
        targets: dict[str, tuple[str, str]] = {}
        if "xl/_rels/workbook.xml.rels" in names:
            for rel in parse_whole("xl/_rels/workbook.xml.rels"):
                target = rel.get("Target", "")
                if rel.get("TargetMode") == "External" or not target:
                    continue
                member = target.lstrip("/") if target.startswith("/") else posixpath.normpath("xl/" + target)
                targets[rel.get("Id", "")] = (member, rel.get("Type", ""))
        parts: list[tuple[str, str, bool]] = []
        sheets = book.find(f"{_NS_MAIN}sheets")
        for sheet in sheets if sheets is not None else []:
            member, kind = targets.get(sheet.get(f"{_NS_REL}id", ""), ("", ""))
            parts.append((f"the sheet {sheet.get('name')!r}", member, kind.endswith("/worksheet")))
        parts += [("the shared-text table", "xl/sharedStrings.xml", False),
                  ("the style table", "xl/styles.xml", False)]
        for what, member, worksheet in parts:
            if member not in names:
                if what.startswith("the sheet"):
                    raise damaged(what, member or "its part", "the part is missing")
                continue
            why = _parse_part(zf, member, worksheet)
            if why:
                raise damaged(what, member, why)


_UNZIP_ERRORS: tuple[type[Exception], ...] = (zlib.error, zipfile.BadZipFile, EOFError)
"""What reading a zip member whose compressed bytes are damaged raises (issue 26: one
flipped bit gives ``zlib.error``; a damaged member that still inflates fails its CRC)."""


def _unzip_why(exc: Exception) -> str:
    return f"the compressed data is damaged ({exc})"


def _parse_part(zf: Any, member: str, worksheet: bool) -> str:
    """Parse one part in a stream; the reason it is damaged, or ``""``.  A worksheet must
    also be one: a ``worksheet`` root in the spreadsheet namespace holding ``sheetData``
    (openpyxl reads anything else as an empty sheet).

    Issue 9: the part is checked whole, but only its first elements are looked at from
    Python (the root, and its children up to ``sheetData``); expat checks the rest, every
    cell of a long Log or Orders sheet, on its own, so the check does not cost a Python
    call a cell."""
    from xml.parsers import expat

    parser = expat.ParserCreate(namespace_separator=" ")
    depth = 0
    seen: dict[str, str] = {}

    def done() -> None:  # what the part is, is known: the rest is only checked to be whole
        parser.StartElementHandler = None
        parser.EndElementHandler = None

    def start(name: str, attrs: object) -> None:
        nonlocal depth
        if depth == 0:
            seen["root"] = name
            if name != _MAIN_URI + " worksheet":
                done()
        elif depth == 1 and name == _MAIN_URI + " sheetData":
            seen["data"] = name
            done()
        depth += 1

    def end(name: str) -> None:
        nonlocal depth
        depth -= 1

    if worksheet:
        parser.StartElementHandler = start
        parser.EndElementHandler = end
    try:
        data = zf.read(member)
    except _UNZIP_ERRORS as exc:  # issue 26
        return _unzip_why(exc)
    except (OSError, ValueError) as exc:
        return str(exc)
    try:
        parser.Parse(data, True)  # whole: one call into expat (issue 12)
    except (expat.ExpatError, OSError, ValueError) as exc:
        return str(exc)
    if worksheet:
        if seen.get("root") != _MAIN_URI + " worksheet":
            return f"it is not a worksheet (its first element is {seen.get('root', 'missing')!r})"
        if "data" not in seen:
            return "it holds no cell table (sheetData)"
    return ""


class ExcelBackend:
    """A :class:`SheetBackend` over one workbook file.  The constructor does no I/O.

    ``save_to`` writes the result to another file and leaves ``path`` untouched
    (``resolve --out``); ``workbook`` starts from an openpyxl workbook in memory instead of
    reading ``path`` (a new tracker, written once)."""

    def __init__(
        self,
        path: Path | str,
        *,
        backup: bool = True,
        before_save: Callable[[Any], None] | None = None,
        serialize: Callable[[Any], bytes] | None = None,
        save_to: Path | str | None = None,
        workbook: Any = None,
        lock_timeout: float | None = None,
        package: bool | None = None,
        package_hook: Callable[[Any], dict[str, bytes]] | None = None,
    ) -> None:
        self.path = Path(path)
        self.backup = backup
        self.before_save = before_save
        self.serialize = serialize
        self.save_to = Path(save_to) if save_to is not None else None
        self.lock_timeout = lock_timeout
        self._wb: Any = workbook
        # issue 12: the package path (None: only without openpyxl-only save hooks)
        self.package = package if package is not None else (before_save is None and serialize is None)
        self.package_hook = package_hook
        self._pkg: Any = None
        self._patched: bytes | None = None  # the package's bytes a write made, for save()
        self._openpyxl_only = False  # the package path gave up on this step
        self._depth = 0
        self.reads = 0
        self.writes = 0

    @property
    def destination(self) -> Path:
        """The file a save writes: ``save_to`` if given, else the workbook itself."""
        return self.save_to if self.save_to is not None else self.path

    @contextlib.contextmanager
    def locked(self) -> Iterator[ExcelBackend]:
        """Hold the step lock of the workbook (and of ``save_to``) for a whole step: from
        before the read until after the save.  Re-entrant; when the outermost hold ends the
        loaded workbook is dropped, so the next step reads the file afresh."""
        from sheetsync.sheets.disk import LOCK_TIMEOUT, file_lock

        timeout = LOCK_TIMEOUT if self.lock_timeout is None else self.lock_timeout
        with contextlib.ExitStack() as stack:
            if self._depth == 0:
                stack.enter_context(file_lock(self.path, timeout))
                if self.save_to is not None and self.save_to.absolute() != self.path.absolute():
                    stack.enter_context(file_lock(self.save_to, timeout))
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._wb = None
                    self._pkg = None
                    self._openpyxl_only = False

    def _check_lock(self) -> None:
        from sheetsync.sheets.disk import target_of

        seen: list[Path] = []
        for p in (self.path, target_of(self.path), self.destination, target_of(self.destination)):
            seen += [lock for lock in lock_files(p) if lock not in seen]
        if seen:
            raise WorkbookLockedError(f"{self.path.name} is open in LibreOffice or Excel ({seen[0].name} exists); "
                                      "close it there first. Nothing was written.")

    @property
    def workbook(self) -> Any:
        if self._wb is None:
            import openpyxl

            if not self.path.exists():
                raise BackendError(f"{self.path}: no such workbook")
            if self.path.is_dir():
                raise BackendError(f"{self.path} is a folder, not a workbook")
            from sheetsync.sheets.disk import refuse_special_file

            refuse_special_file(self.path)  # a FIFO would hang the read (issue 26)
            check_workbook_parts(self.path)
            failure = ""
            try:
                with warnings.catch_warnings():
                    # a workbook saved by LibreOffice or Excel carries extensions openpyxl
                    # does not read; they are not sheetsync's cells, so say nothing
                    warnings.filterwarnings("ignore", message=".*extension is not supported", category=UserWarning)
                    self._wb = openpyxl.load_workbook(self.path, keep_vba=self.path.suffix.lower() == ".xlsm")
            except Exception as exc:  # OSError, ValueError, zipfile.BadZipFile and friends
                failure = str(exc) or type(exc).__name__
            if failure:
                _close_abandoned_files()
                raise BackendError(f"{self.path} can't be opened as a workbook: {failure}")
        return self._wb

    def _sheet(self, name: str) -> Any:
        try:
            return self.workbook[name]
        except KeyError:
            raise BackendError(f"{self.path.name} has no sheet {name!r}: is it a sheetsync tracker?") from None

    def _package(self) -> Any:
        """The workbook's package (issue 12), or ``None`` when this step goes through
        openpyxl: a workbook in memory or already loaded, a file that is not a plain
        workbook file, or a package the fast path does not handle."""
        import os

        from sheetsync.backends.xlsx_package import FALLBACK_ERRORS, PackageFallback, XlsxPackage

        if (not self.package or self._openpyxl_only or self._wb is not None
                or os.environ.get("SHEETSYNC_OPENPYXL") == "1" or self.path.suffix.lower() not in (".xlsx", ".xlsm")):
            return None
        if self._pkg is None:
            try:
                if not self.path.is_file():
                    raise PackageFallback("no such file")  # openpyxl's path names the trouble
                data = self.path.read_bytes()
                check_workbook_parts(self.path, data)
                self._pkg = XlsxPackage(data, str(self.path))  # checked as openpyxl loads it (issue 26)
            except (*FALLBACK_ERRORS, OSError):
                self._openpyxl_only = True
                return None
        return self._pkg

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        from sheetsync.backends.xlsx_package import FALLBACK_ERRORS

        with self.locked():
            self.reads += 1
            pkg = self._package()
            if pkg is not None:
                try:
                    return pkg.read_ranges(ranges)  # type: ignore[no-any-return]
                except FALLBACK_ERRORS:
                    self._openpyxl_only = True
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
        from sheetsync.backends.xlsx_package import FALLBACK_ERRORS, XlsxPackage

        with self.locked():
            self._check_lock()
            pkg = self._package()
            if pkg is not None:
                try:
                    data = pkg.patched(updates, self.package_hook)
                except FALLBACK_ERRORS:
                    self._openpyxl_only = True
                else:
                    self._patched = data
                    try:
                        self.save()
                    finally:
                        self._patched = None
                    self._pkg = XlsxPackage(data)  # a read after this one reads what was written
                    self.writes += 1
                    return
            wb = self.workbook
            for u in updates:  # check every sheet first: all or nothing
                self._sheet(parse_range(u.range).sheet)
            _refuse_merged(wb, updates)
            for u in updates:
                rng = parse_range(u.range)
                ws = wb[rng.sheet]
                row1 = max(rng.row1, _last_value_row(ws) + 1) if u.append else rng.row1  # RangeUpdate.append
                for i, row in enumerate(u.values):
                    for j, value in enumerate(row):
                        _write_cell(ws.cell(row=row1 + i, column=rng.col1 + j), value)
            self.save()
            self.writes += 1

    def save(self) -> None:
        """Save atomically to :attr:`destination`, keeping the previous file as ``.bak``: the
        patched package when a write went through it (issue 12), else the openpyxl workbook."""
        from sheetsync.sheets.disk import atomic_write_bytes

        with self.locked():
            self._check_lock()
            if self._patched is not None:
                atomic_write_bytes(self.destination, self._patched, backup=self.backup)
                return
            if self.before_save is not None:
                self.before_save(self.workbook)
            if self.serialize is not None:
                data = self.serialize(self.workbook)
            else:
                buf = io.BytesIO()
                self.workbook.save(buf)
                data = buf.getvalue()
            atomic_write_bytes(self.destination, data, backup=self.backup)


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


def _last_value_row(ws: Any) -> int:
    """The last row holding a value (0 when none), where an append starts after.

    openpyxl's ``max_row`` also counts styled empty rows, so the rows are looked at from
    the last one up until one holds a value, through openpyxl's own cell dict (looking
    cells up through ``ws.cell`` would create them).  Issue 9: this costs one pass over the
    keys (in C) when the last cell of the sheet holds a value, as it does after an append;
    when styled empty rows trail, the rows from the bottom up are looked at while that is
    fewer looks than the sheet has cells, then every cell once."""
    cells: dict[tuple[int, int], Any] = ws._cells
    if not cells:
        return 0
    top, col = max(cells)  # the last row, and its last cell
    if cells[(top, col)].value not in (None, ""):
        return top
    width = max(c for _r, c in cells)
    budget = len(cells)  # rows up from the bottom, while that is cheaper than every cell
    for row in range(top, 0, -1):
        if budget < width:
            break
        budget -= width
        for c in range(1, width + 1):
            cell = cells.get((row, c))
            if cell is not None and cell.value not in (None, ""):
                return row
    else:
        return 0
    return max((r for (r, _c), cell in cells.items() if cell.value not in (None, "")), default=0)


def _close_abandoned_files() -> None:
    """Issue 26: openpyxl leaves the workbook's file open when it gives up on a damaged
    one; once its exception is gone, collect the file now (quietly: the refusal says what
    went wrong) rather than leave a ``ResourceWarning`` to a later, unrelated moment."""
    import gc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def _refuse_merged(wb: Any, updates: Sequence[RangeUpdate]) -> None:
    """Issue 26: a cell inside a merged range (but its first) can't be written (openpyxl's
    ``MergedCell`` is read-only), so a step whose writes reach one is refused before any
    cell is written, naming every such cell and its range."""
    from openpyxl.utils import get_column_letter

    from sheetsync.core.errors import Problem, SheetFormatError

    problems: list[Problem] = []
    for u in updates:
        rng = parse_range(u.range)
        ws = wb[rng.sheet]
        ranges = list(ws.merged_cells.ranges)
        if not ranges or not u.values:
            continue
        row1 = max(rng.row1, _last_value_row(ws) + 1) if u.append else rng.row1
        row2 = row1 + len(u.values) - 1
        col2 = rng.col1 + max(len(r) for r in u.values) - 1
        for m in sorted(ranges, key=lambda m: (m.min_row, m.min_col)):
            top, bottom = max(row1, m.min_row), min(row2, m.max_row)
            left, right = max(rng.col1, m.min_col), min(col2, m.max_col)
            if top > bottom or left > right:
                continue
            cells = [(r, c) for r in range(top, bottom + 1)
                     for c in range(left, min(right, rng.col1 + len(u.values[r - row1]) - 1) + 1)
                     if (r, c) != (m.min_row, m.min_col)]
            if cells:
                r, c = cells[0]
                problems.append(Problem(f"{rng.sheet}!{get_column_letter(c)}{r}",
                                        f"is inside the merged cells {m.coord}, where sheetsync writes; "
                                        "unmerge them and run the step again. Nothing was written"))
    if problems:
        raise SheetFormatError(problems)


def _write_cell(cell: Any, value: CellValue) -> None:
    if isinstance(value, Formula):
        cell.value = value.text
        return
    cell.value = value
    if isinstance(value, str) and value.startswith("="):
        cell.data_type = "s"  # literal text, never a formula (formula injection)
