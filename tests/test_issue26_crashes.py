"""Issue 26: damaged workbooks that used to end in a traceback are refused cleanly.

Each cause of the issue has its test, named after it: the damage is made in a real tracker
file of the system the issue counted it for, a command runs through the command line's own
entry point, and the refusal must be a :class:`SheetSyncError` naming the cell or the part,
with the file and its ``.bak`` byte for byte as they were.  The damage is made in the
package's XML (``benchmarks/fuzz_trackers.py``'s helpers), so nothing else of the file
changes."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import sys
import zipfile
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.core.errors import SheetFormatError, SheetSyncError
from sheetsync.core.registry import parse_mark

ROOT = Path(__file__).resolve().parent.parent


def _fuzz_module() -> Any:
    spec = importlib.util.spec_from_file_location("fuzz_trackers", ROOT / "benchmarks" / "fuzz_trackers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz_trackers", module)
    spec.loader.exec_module(module)
    return module


fz = _fuzz_module()


@cache
def tracker(system_id: str, resolved: bool = True) -> bytes:
    """The example battle's tracker of ``system_id``, its first step resolved (or not:
    its first orders still pending)."""
    return fz.base_tracker(system_id, resolved=resolved)  # type: ignore[no-any-return]


def edited(system_id: str, edit: Callable[[Any], None], *, resolved: bool = True) -> bytes:
    pkg = fz.Package.read(tracker(system_id, resolved))
    edit(pkg)
    return pkg.write()  # type: ignore[no-any-return]


def refusal(tmp_path: Path, data: bytes, *command: str) -> SheetSyncError:
    """Run ``command`` on a workbook holding ``data``: it must be refused with one of our
    errors, and leave the workbook and its ``.bak`` as they were."""
    book = tmp_path / "tracker.xlsx"
    book.write_bytes(data)
    bak = book.with_name("tracker.xlsx.bak")
    bak.write_bytes(b"the previous copy")
    out = CliRunner().invoke(app, [command[0], str(book), *command[1:]])
    assert isinstance(out.exception, SheetSyncError), (out.output, repr(out.exception))
    assert book.read_bytes() == data
    assert bak.read_bytes() == b"the previous copy"
    return out.exception


def blob_of(pkg: Any) -> dict[str, Any]:
    pieces = []
    for row in range(2, 402):
        text = fz.cell_text(pkg, "State", f"A{row}")
        if not text:
            break
        pieces.append(fz._unescape(text))
    return json.loads("".join(pieces))  # type: ignore[no-any-return]


def put_blob(pkg: Any, text: str) -> None:
    for row in range(2, 402):
        if fz.cell_text(pkg, "State", f"A{row}") is None:
            break
        fz.set_cell(pkg, "State", f"A{row}", None)
    for i in range(0, len(text), 30_000):
        fz.set_cell(pkg, "State", f"A{i // 30_000 + 2}", text[i:i + 30_000])


# -- RecursionError: a State entry nested 30,000 deep ---------------------------------------


@pytest.mark.parametrize("system_id", ["hexwar", "exalted"])
@pytest.mark.parametrize("command", ["resolve", "export"])
def test_issue26_state_nested_30000_deep_is_refused(tmp_path: Path, system_id: str, command: str) -> None:
    data = edited(system_id, lambda pkg: put_blob(pkg, "[" * 30_000 + "]" * 30_000))
    exc = refusal(tmp_path, data, command)
    assert isinstance(exc, SheetFormatError) and str(exc).startswith("State!A2: "), str(exc)


def test_issue26_state_undo_record_nested_30000_deep_is_refused(tmp_path: Path) -> None:
    def deep_record(pkg: Any) -> None:
        # the undo record's JSON cell (E1 is the records' header, issue 22.3)
        (ref,) = [r for r in fz.cells_with_values(pkg, "State") if r.startswith("E") and r != "E1"]
        fz.set_cell(pkg, "State", ref, "{\"a\":" * 30_000 + "1" + "}" * 30_000)

    exc = refusal(tmp_path, edited("hexwar", deep_record), "undo")
    assert "State!E" in str(exc) and "can't be read" in str(exc), str(exc)


def test_issue26_state_nested_deeper_than_sheetsync_writes_is_not_taken() -> None:
    """Below the recursion limit, JSON nested past any depth sheetsync writes is refused too
    (a later step would recurse through it)."""
    from sheetsync.sheets import session as ss

    deep = "[" * 500 + "]" * 500
    with pytest.raises(SheetFormatError, match=r"^State!A2: "):
        ss.parse([[json.dumps({"rev": 1, "steps": [], "battle": {}, "x": json.loads(deep)})]], [])


# -- ValueError: 4,301 digits, and marks that are no marks -----------------------------------


@pytest.mark.parametrize("value", ["9" * 4301, fz.RawNumber("9" * 4301)], ids=["text", "number"])
def test_issue26_exalted_dice_cell_of_4301_digits_is_refused(tmp_path: Path, value: str) -> None:
    """An order's Dice cell (E1) holding 4,301 digits: past what ``int()`` converts."""
    from sheetsync.systems.exalted.tracker.layout import layout

    block = layout(None).block("Orders_Table")
    where = block.cell(0, "dice")
    data = edited("exalted", lambda pkg: fz.set_cell(pkg, "Orders", where.split("!")[1], value), resolved=False)
    exc = refusal(tmp_path, data, "resolve")
    if isinstance(value, fz.RawNumber):  # a number cell no reader can read: the file is refused
        assert "tracker.xlsx can't be opened as a workbook" in str(exc), str(exc)
    else:
        # the cell is named, and neither Python's conversion error nor the whole number is shown
        assert f"{where}: " in str(exc) and "Exceeds the limit" not in str(exc), str(exc)
        assert "9" * 100 not in str(exc), str(exc)


@pytest.mark.parametrize("mark", ["bbn@" + "9" * 4301, "bbn@²", "hexwar@٣"], ids=["4301-digits", "superscript", "arabic"])
def test_issue26_system_mark_of_4301_digits_or_not_ascii_digits_is_refused(tmp_path: Path, mark: str) -> None:
    with pytest.raises(SheetFormatError, match=r"^State!B1: "):
        parse_mark(mark)
    data = edited("bbn", lambda pkg: fz.set_cell(pkg, "State", "B1", mark))
    exc = refusal(tmp_path, data, "export")
    assert str(exc).startswith("State!B1: "), str(exc)


# -- zlib.error: one flipped bit in a compressed sheet ---------------------------------------


def _flipped(data: bytes, member: str) -> bytes:
    """``data`` with the first bit flip (in ``member``'s compressed bytes) that makes
    inflating it fail: the damage the issue saw."""
    import struct

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo(member)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    for pos in range(start + 2, start + info.compress_size):
        for bit in range(8):
            out = bytearray(data)
            out[pos] ^= 1 << bit
            try:
                zlib.decompress(bytes(out[start:start + info.compress_size]), -15)
            except zlib.error:
                return bytes(out)
    raise AssertionError("no flip breaks the member")


@pytest.mark.parametrize(("system_id", "command"), [("bbn", "resolve"), ("hexwar", "build"), ("exalted", "status")])
def test_issue26_flipped_bit_in_compressed_sheet_is_refused(tmp_path: Path, system_id: str, command: str) -> None:
    data = _flipped(tracker(system_id), "xl/worksheets/sheet2.xml")
    exc = refusal(tmp_path, data, command)
    assert "xl/worksheets/sheet2.xml: the compressed data is damaged" in str(exc), str(exc)


def test_issue26_flipped_bit_in_the_style_table_is_refused(tmp_path: Path) -> None:
    exc = refusal(tmp_path, _flipped(tracker("exalted"), "xl/styles.xml"), "export")
    assert "xl/styles.xml: the compressed data is damaged" in str(exc), str(exc)


# -- AttributeError: merged cells where a step writes ----------------------------------------


def _merge(pkg: Any, sheet: str, ref: str) -> None:
    member = pkg.sheets[sheet]
    xml = pkg.members[member]
    assert b"<mergeCells" not in xml
    pkg.members[member] = xml.replace(b"</sheetData>", f'</sheetData><mergeCells count="1"><mergeCell ref="{ref}"/>'
                                      f"</mergeCells>".encode(), 1)


@pytest.mark.parametrize(("system_id", "command"), [("bbn", "resolve"), ("hexwar", "resolve"), ("exalted", "resolve")])
def test_issue26_merged_cells_in_a_sheet_a_step_writes_are_refused(tmp_path: Path, system_id: str,
                                                                    command: str) -> None:
    """The Log's next rows merged: the step's append would write into the merged range."""
    wb = openpyxl.load_workbook(io.BytesIO(tracker(system_id, False)))
    last = max(c.row for row in wb["Log"].iter_rows() for c in row if c.value not in (None, ""))
    ref = f"A{last + 1}:C{last + 3}"
    exc = refusal(tmp_path, edited(system_id, lambda pkg: _merge(pkg, "Log", ref), resolved=False), command)
    assert isinstance(exc, SheetFormatError), str(exc)
    assert any(p.where.startswith("Log!") and ref in p.message for p in exc.problems), str(exc)


def test_issue26_merged_cells_refusal_names_every_range_and_writes_nothing() -> None:
    from sheetsync.backends.excel import _refuse_merged
    from sheetsync.sheets.backend import RangeUpdate

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Log"
    ws.merge_cells("B2:C3")
    ws.merge_cells("E5:E6")
    ws.merge_cells("H1:H2")  # not written over
    with pytest.raises(SheetFormatError) as info:
        _refuse_merged(wb, [RangeUpdate("Log!A2:E6", [[1, 2, 3, 4, 5]] * 5)])
    assert [p.where for p in info.value.problems] == ["Log!C2", "Log!E6"]
    _refuse_merged(wb, [RangeUpdate("Log!B2", [["top-left cell of a merge"]])])  # its first cell is writable


# -- OverflowError / NaN / Infinity in hex cells ---------------------------------------------


def test_issue26_hex_impassable_1e309_is_refused(tmp_path: Path) -> None:
    def infinite(pkg: Any) -> None:
        fz.set_cell(pkg, "Battle", "B11", fz.RawNumber("1e309"))
        assert b"<v>1e309</v>" in pkg.members[pkg.sheets["Battle"]]

    exc = refusal(tmp_path, edited("hexwar", infinite, resolved=False), "build")
    assert "Battle!B11: " in str(exc) and "hex id" in str(exc), str(exc)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e309, 1.5])
def test_issue26_hex_codecs_refuse_numbers_that_are_no_hex_ids(value: float) -> None:
    from sheetsync.core.layout import CodecError
    from sheetsync.systems.hexwar.tracker.layout import HEX, HEXES

    for codec in (HEX, HEXES):
        with pytest.raises(CodecError, match="not a hex id"):
            codec.decode(value)
    assert HEXES.decode(405.0) == ("0405",) and HEX.decode(405.0) == "0405"  # what a spreadsheet makes of 0405


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("column", ["to", "path"])
def test_issue26_http_payload_nan_or_infinity_in_hex_id_or_path_cell_is_a_cell_error(value: float,
                                                                                     column: str) -> None:
    """What the endpoint's payload engine runs (``server._step``): JSON's NaN and Infinity
    arrive as floats, and must be the cell's problem, not a bug's generic alert."""
    from sheetsync.backends.payload import PayloadBackend
    from sheetsync.backends.xlwings_remote import payload_from_openpyxl
    from sheetsync.sheets import marks as steps
    from sheetsync.systems.hexwar.tracker.layout import layout

    payload = payload_from_openpyxl(openpyxl.load_workbook(io.BytesIO(tracker("hexwar", False))), "Google Apps Script")
    block = layout(None).block("Moves_Table")
    moves = next(s for s in payload["sheets"] if s["name"] == "Moves")
    row, col = block.first_row - 1, block.first_col - 1 + block.index(column)
    while len(moves["values"]) <= row:
        moves["values"].append([])
    cells = moves["values"][row]
    cells.extend([None] * (col + 1 - len(cells)))
    cells[col] = value
    where = block.cell(0, column)
    with pytest.raises(SheetSyncError) as info:
        steps.run("resolve", PayloadBackend(payload))
    assert f"{where}: " in str(info.value), str(info.value)


# -- IndexError: a State row index of 2**63 --------------------------------------------------


@pytest.mark.parametrize("system_id", ["hexwar", "exalted"])
@pytest.mark.parametrize("index", [2**63, -1, 10**6], ids=["2**63", "-1", "10**6"])
def test_issue26_state_row_index_2_63_is_refused(tmp_path: Path, system_id: str, index: int) -> None:
    def hand_edited(pkg: Any) -> None:
        blob = blob_of(pkg)
        assert isinstance(blob["rows"], list) and blob["rows"]
        blob["rows"][0] = index
        put_blob(pkg, json.dumps(blob, separators=(",", ":")))

    exc = refusal(tmp_path, edited(system_id, hand_edited), "resolve")
    assert str(exc).startswith("State!A2: ") and "rows" in str(exc), str(exc)


# -- found by the fuzzer ---------------------------------------------------------------------


def test_issue26_fuzz_state_battle_trait_past_any_bound_is_refused(tmp_path: Path) -> None:
    """A unit's average Dexterity in the State's battle made 5,000 digits of text: the
    loader read it as a float, infinite, and the trait arithmetic failed (ValueError from
    Fraction('inf'))."""
    def hand_edited(pkg: Any) -> None:
        blob = blob_of(pkg)
        blob["battle"]["units"][0]["avg_dexterity"] = "9" * 5000
        put_blob(pkg, json.dumps(blob, separators=(",", ":")))

    exc = refusal(tmp_path, edited("exalted", hand_edited), "export")
    assert str(exc).startswith("State!A2: "), str(exc)
