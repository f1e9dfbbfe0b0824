"""Issue 9: a battalion tracker's undo history at constant cost.

The State blob keeps the battle and at most the one snapshot the next undo restores; each
resolve appends one small undo record to ``State!C:F``.  So the State grows by a record a
phase, and a step writes as much at phase 20 as at phase 1, while undo still takes the
battle back phase after phase, exactly.
"""

from __future__ import annotations

import json
from typing import Any

from battles import make_battle

from sheetsync.app import usecases
from sheetsync.core.registry import find_system
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate
from sheetsync.sheets.marks import mark_updates
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import Battle
from sheetsync.systems.bbn.tracker import journal as sj
from sheetsync.systems.bbn.tracker.layout import STATE_CHUNKS, Layout, layout

COHORTS = 12
LAY = layout(capacity={"orders": 600})
ORDERS = LAY.block("Orders_Table")
STATE = LAY.block("State_Blob")
HISTORY = LAY.block(sj.HISTORY_BLOCK)


class Counting:
    """A backend that counts the characters of every value a step writes."""

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner
        self.written = 0

    def read_ranges(self, ranges: list[str]) -> list[Grid]:
        return self.inner.read_ranges(ranges)

    def write_ranges(self, updates: list[RangeUpdate]) -> None:
        self.written = sum(len(str(v)) for u in updates for row in u.values for v in row if v is not None)
        self.inner.write_ranges(updates)


def _tracker(lay: Layout = LAY, cohorts: int = COHORTS) -> MemoryBackend:
    backend = MemoryBackend({name: {} for name in lay.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(cohorts)), lay)
    backend.write_ranges(mark_updates(find_system("bbn"), lay.capacity))
    return backend


def _type_orders(backend: MemoryBackend, phase: int, cohorts: int = COHORTS) -> None:
    """Phase ``phase``'s orders typed below the resolved rows: two a cohort, each on an
    enemy that changes from phase to phase (so every phase's orders differ)."""
    grid = backend.read_ranges([ORDERS.range()])[0]
    j = ORDERS.index("cohort")
    start = 1 + max((i for i, row in enumerate(grid) if row[j] is not None), default=-1)
    rows = [[f"Cohort {i}", "Melee Attack", f"Cohort {(i + 1 + 2 * ((phase + k) % 3)) % cohorts}"]
            for k in range(2) for i in range(cohorts)]
    r0 = ORDERS.first_row + start
    backend.write_ranges([RangeUpdate(f"Orders!{ORDERS.letter('cohort')}{r0}:{ORDERS.letter('target')}"
                                      f"{r0 + len(rows) - 1}", rows)])


def _state_size(backend: MemoryBackend) -> tuple[int, int]:
    """Characters in the State blob (``State!A``) and in the undo records (``State!C:F``)."""
    blob, records = backend.read_ranges([STATE.range(), HISTORY.range()])
    return tuple(sum(len(str(v)) for row in grid for v in row if v is not None)  # type: ignore[return-value]
                 for grid in (blob, records))


def _stored(backend: MemoryBackend) -> sj.Stored:
    blob, records = backend.read_ranges([STATE.range(), HISTORY.range()])
    return sj.parse_state(blob, records)


def _same_battle(snapshot: dict[str, Any], battle: Battle) -> bool:
    """``battle`` is the battle of the undo snapshot ``snapshot`` (history and log aside)."""
    data = {k: v for k, v in snapshot.items() if k != "log_length"}
    want = Battle.from_data({**data, "history": [], "log": []})
    return want == battle.model_copy(update={"history": (), "log": ()})


def test_issue9_state_grows_at_most_3kb_a_phase() -> None:
    backend = _tracker()
    sizes = []
    for phase in range(1, 21):
        if phase > 1:
            _type_orders(backend, phase)
        usecases.resolve(backend, LAY)
        sizes.append(_state_size(backend))
    total = [a + c for a, c in sizes]
    assert (total[-1] - total[0]) / 19 <= 3000, total
    # each phase adds one record; the blob does not grow (it changes with the phase's
    # events: the last resolve's record and the snapshot inline, never the phases behind)
    records = [c for _a, c in sizes]
    assert max(b - a for a, b in zip(records, records[1:], strict=False)) <= 3000, records
    assert max(a for a, _c in sizes) <= 1.1 * sizes[0][0], sizes
    stored = _stored(backend)
    assert stored.battle is not None
    assert len(stored.chain) == 20 and len(stored.battle.history) == 1  # one snapshot inline, 20 records
    assert len(json.dumps(stored.battle.history[0])) < 30000


def test_issue9_resolve_write_stays_within_1_2x() -> None:
    counting = Counting(_tracker())
    writes = {}
    for phase in range(1, 21):
        if phase > 1:
            _type_orders(counting.inner, phase)
        usecases.resolve(counting, LAY)  # type: ignore[arg-type]
        writes[phase] = counting.written
    assert all(w <= 1.2 * writes[1] for w in writes.values()), writes
    usecases.undo(counting, LAY)  # type: ignore[arg-type]
    assert counting.written <= 1.2 * writes[1]


def test_issue9_undo_walks_back_phase_after_phase_exactly_and_marks_each_record() -> None:
    backend = _tracker(cohorts=4)
    snaps = []  # the engine's own snapshot before each phase, straight from the resolve
    for phase in range(1, 5):
        if phase > 1:
            _type_orders(backend, phase, cohorts=4)
        snaps.append(usecases.resolve(backend, LAY).result.battle.history[-1])  # type: ignore[union-attr]
    for phase in range(4, 0, -1):
        assert usecases.undo(backend, LAY).phase == phase
        stored = _stored(backend)
        assert stored.battle is not None and _same_battle(snaps[phase - 1], stored.battle)
        assert len(stored.chain) == phase - 1 and len(stored.battle.history) == min(1, phase - 1)
        if phase > 1:  # the snapshot the next undo restores is the engine's, rebuilt from the record
            assert _same_battle(stored.battle.history[0], Battle.from_data(
                {**{k: v for k, v in snaps[phase - 2].items() if k != "log_length"}, "history": [], "log": []}))
    marks = [row[HISTORY.index("mark")] for row in backend.read_ranges([HISTORY.range()])[0]]
    assert marks.count(sj.UNDONE) == 4
    assert usecases.resolve(backend, LAY).phase == 1  # and the battle goes on
    assert len(_stored(backend).chain) == 1


def test_issue9_export_gives_the_whole_history_a_battle_file_can_undo() -> None:
    backend = _tracker(cohorts=4)
    for phase in range(1, 4):
        if phase > 1:
            _type_orders(backend, phase, cohorts=4)
        usecases.resolve(backend, LAY)
    data = usecases.export(backend, LAY)["battle"]
    assert [h["phase"] for h in data["history"]] == [1, 2, 3]
    from sheetsync.systems.bbn.rules import undo

    battle = load_battle(data)
    for phase in (3, 2, 1):
        battle = undo(battle)
        assert battle.phase == phase
    again = MemoryBackend({name: {} for name in LAY.sheets})  # the file into a new tracker: undo comes along
    usecases.load_battle_into(again, load_battle(data), LAY)
    again.write_ranges(mark_updates(find_system("bbn"), LAY.capacity))
    assert len(_stored(again).chain) == 3
    assert [usecases.undo(again, LAY).phase for _ in range(3)] == [3, 2, 1]


def test_issue9_state_with_the_whole_history_inline_still_undoes_and_moves_to_records() -> None:
    """A State written before issue 9 holds every snapshot inline: the next step reads it
    and moves it to undo records, and undo goes on back to phase 1."""
    backend = _tracker(cohorts=4)
    for phase in range(1, 4):
        if phase > 1:
            _type_orders(backend, phase, cohorts=4)
        usecases.resolve(backend, LAY)
    full = usecases.export(backend, LAY)["battle"]["history"]
    payload = json.loads("".join(str(r[0]) for r in backend.read_ranges([STATE.range()])[0] if r and r[0]))
    payload["battle"]["history"] = full
    payload.pop("undo")
    text = json.dumps(payload)
    backend.write_ranges([RangeUpdate(STATE.range(rows=STATE_CHUNKS), [[text]] + [[None]] * (STATE_CHUNKS - 1))])
    backend.sheets["State"] = {k: v for k, v in backend.sheets["State"].items() if k[1] < HISTORY.first_col}
    assert usecases.undo(backend, LAY).phase == 3
    stored = _stored(backend)
    assert len(stored.chain) == 2 and all(k in stored.records for k in stored.chain)  # moved to records
    assert usecases.undo(backend, LAY).phase == 2
    assert usecases.undo(backend, LAY).phase == 1
    assert _stored(backend).chain == []


def test_issue9_a_missing_undo_record_is_a_clear_error_and_nothing_is_written() -> None:
    backend = _tracker(cohorts=4)
    usecases.resolve(backend, LAY)
    _type_orders(backend, 2, cohorts=4)
    usecases.resolve(backend, LAY)
    backend.sheets["State"] = {k: v for k, v in backend.sheets["State"].items() if k[1] < HISTORY.first_col}
    before = {k: dict(v) for k, v in backend.sheets.items()}
    import pytest

    from sheetsync.core.errors import BattleStateError

    with pytest.raises(BattleStateError, match=r"State!A1: .*undo record .* is missing from State!C:F"):
        usecases.undo(backend, LAY)
    assert backend.sheets == before


def test_issue9_reverse_diff_turns_the_new_back_into_the_old() -> None:
    old = {"a": 1, "b": {"x": [1, 2], "y": {"p": "q"}}, "c": None, "gone": 3}
    new = {"a": 2, "b": {"x": [1, 2], "y": {"p": "r", "extra": 1}}, "c": None, "added": True}
    patch = sj.reverse_diff(old, new)
    assert sj.apply_patch(new, patch) == old
    assert patch == {"s": {"a": 1, "gone": 3}, "d": ["added"],
                     "n": {"b": {"n": {"y": {"s": {"p": "q"}, "d": ["extra"]}}}}}  # unchanged values not stored
    assert sj.reverse_diff(old, old) == {}


class _Held:
    """A laptop whose write is held back: it reads the tracker now, writes when told."""

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner
        self.held: list[RangeUpdate] = []

    def read_ranges(self, ranges: list[str]) -> list[Grid]:
        return self.inner.read_ranges(ranges)

    def write_ranges(self, updates: list[RangeUpdate]) -> None:
        self.held = list(updates)


def test_issue9_lost_undo_leaves_no_undone_mark_and_the_records_that_stand_still_undo() -> None:
    """Undo and Resolve from one read, the Resolve's write landing last: the next step
    reports the lost Undo and clears the mark it left on the record that stands; a lost
    Resolve's record is marked lost.  Undo then goes back through both phases."""
    import pytest

    from sheetsync.core.errors import BattleStateError

    backend = _tracker(cohorts=4)
    usecases.resolve(backend, LAY)
    _type_orders(backend, 2, cohorts=4)
    late = _Held(backend)
    usecases.resolve(late, LAY)  # type: ignore[arg-type]  # reads, holds its write
    usecases.undo(backend, LAY)  # lands first
    backend.write_ranges(late.held)  # the Resolve lands last
    marks = [row[HISTORY.index("mark")] for row in backend.read_ranges([HISTORY.range()])[0]]
    assert sj.UNDONE in marks  # the lost Undo's mark, on phase 1's record
    with pytest.raises(BattleStateError, match="Undo Phase 1 was lost"):
        usecases.resolve(backend, LAY)
    marks = [row[HISTORY.index("mark")] for row in backend.read_ranges([HISTORY.range()])[0]]
    assert sj.UNDONE not in marks
    assert [usecases.undo(backend, LAY).phase for _ in range(2)] == [2, 1]

    backend = _tracker(cohorts=4)
    usecases.resolve(backend, LAY)
    _type_orders(backend, 2, cohorts=4)
    late = _Held(backend)
    usecases.undo(late, LAY)  # type: ignore[arg-type]
    usecases.resolve(backend, LAY)
    backend.write_ranges(late.held)  # the Undo lands last: the Resolve of phase 2 is lost
    with pytest.raises(BattleStateError, match="Resolve Phase 2 was lost"):
        usecases.resolve(backend, LAY)
    marks = [row[HISTORY.index("mark")] for row in backend.read_ranges([HISTORY.range()])[0]]
    assert marks.count(sj.LOST) == 1 and marks.count(sj.UNDONE) == 1
    assert _stored(backend).chain == [] and usecases.resolve(backend, LAY).phase == 1


LOG = LAY.block("Log_Table")
LOG_STEPS = f"Log!{LOG.letter('step')}{LOG.first_row}:{LOG.letter('step')}"


class _Looked(list[list[Any]]):
    """The Log's Step column, counting the rows looked at (by index or by iterating)."""

    looked = 0

    def __getitem__(self, i: Any) -> Any:
        got = super().__getitem__(i)
        self.looked += len(got) if isinstance(i, slice) else 1
        return got

    def __iter__(self) -> Any:
        for row in super().__iter__():
            self.looked += 1
            yield row


def test_issue9_lost_step_check_looks_only_at_the_log_rows_since_the_step_that_stands() -> None:
    """The Log grows every phase; the lost-step check looks at the rows written since the
    State that stands was written (its ``log_checked``), so as many at phase 25 as at phase 2."""
    backend = _tracker(cohorts=4)
    looked, grown = {}, {}
    for phase in range(1, 26):
        if phase > 1:
            _type_orders(backend, phase, cohorts=4)
        steps = backend.read_ranges([LOG_STEPS])[0]
        stored = _stored(backend)
        assert stored.log_checked <= len(steps)
        rows = _Looked(steps)
        assert sj.lost_steps(stored, rows) == ([], [])
        looked[phase], grown[phase] = rows.looked, len(steps) - stored.log_checked
        assert stored.log_read == len(steps)
        usecases.resolve(backend, LAY)
        assert _stored(backend).log_checked == len(steps)  # what this resolve read and checked
    assert len(backend.read_ranges([LOG_STEPS])[0]) > 25 * 8  # the Log has grown: 8 orders a phase
    assert looked[25] == looked[2] == grown[25] == grown[2] > 0, looked  # one phase's rows, not the Log's


def test_issue9_lost_step_check_starts_where_the_state_says_and_checks_a_shorter_log_whole() -> None:
    """``log_checked`` rows are not looked at again; a Log shorter than that (rows deleted
    by hand) is looked at whole, so a lost step is never hidden by it."""
    lost = "7:lostid:undo:3"
    steps: Grid = [["6:abc:resolve:3:1"], [f"{lost}:1"], ["6:abc:resolve:3:2"], [None], [f"{lost}:2"]]
    stored = sj.Stored(journal=[[6, "abc", "resolve", 3]], log_checked=3)
    found, twice = sj.lost_steps(stored, steps)
    assert [(x.token, x.rows) for x in found] == [(lost, (4,))] and twice == []
    assert stored.log_read == 5
    stored = sj.Stored(journal=[[6, "abc", "resolve", 3]], log_checked=9)
    found, _ = sj.lost_steps(stored, steps)
    assert [(x.token, x.rows) for x in found] == [(lost, (1, 4))]


def test_issue9_lost_undo_past_the_journal_window_is_still_found() -> None:
    """Deep into a battle (more steps than the journal keeps), a Resolve and an Undo from
    one read, the Resolve landing last: the next step still reports the lost Undo, and
    Undo then goes back through both phases."""
    import pytest

    from sheetsync.core.errors import BattleStateError

    backend = _tracker(cohorts=4)
    for phase in range(1, sj.JOURNAL + 3):
        if phase > 1:
            _type_orders(backend, phase, cohorts=4)
        usecases.resolve(backend, LAY)
    phase = sj.JOURNAL + 3
    _type_orders(backend, phase, cohorts=4)
    late = _Held(backend)
    usecases.resolve(late, LAY)  # type: ignore[arg-type]  # reads, holds its write
    usecases.undo(backend, LAY)  # lands first
    backend.write_ranges(late.held)  # the Resolve lands last
    with pytest.raises(BattleStateError, match=f"Undo Phase {phase - 1} was lost"):
        usecases.resolve(backend, LAY)
    assert [usecases.undo(backend, LAY).phase for _ in range(2)] == [phase, phase - 1]


def test_issue9_a_damaged_count_of_log_rows_checked_is_refused_and_nothing_is_written() -> None:
    import pytest

    from sheetsync.core.errors import BattleStateError

    backend = _tracker(cohorts=4)
    usecases.resolve(backend, LAY)
    payload = json.loads("".join(str(r[0]) for r in backend.read_ranges([STATE.range()])[0] if r and r[0]))
    assert payload["log_checked"] == 0  # nothing was in the Log before phase 1
    payload["log_checked"] = "lots"
    backend.write_ranges([RangeUpdate(STATE.range(rows=STATE_CHUNKS),
                                      [[json.dumps(payload)]] + [[None]] * (STATE_CHUNKS - 1))])
    _type_orders(backend, 2, cohorts=4)
    before = {k: dict(v) for k, v in backend.sheets.items()}
    with pytest.raises(BattleStateError, match=r"State!A1: .*damaged .*Log rows checked"):
        usecases.resolve(backend, LAY)
    assert backend.sheets == before


def test_issue9_bench_state_growth_prints_every_phase_with_the_backend_floor() -> None:
    """``benchmarks/bench_state_growth.py`` runs on both backends with its flags, and
    prints for each phase the resolve time, the floor (the backend alone) and the rest,
    each with its ratio to phase 1 (the figures themselves are not checked: a benchmark)."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_state_growth.py"
    done = subprocess.run([sys.executable, str(script), "--cohorts", "4", "--phases", "1,3", "--repeat", "1",
                           "--backend", "memory,excel"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "floor ms" in lines[1] and "own ms" in lines[1] and lines[1].count("x ph1") == 5
    rows = [line.split() for line in lines[2:]]
    assert [(r[0], r[1]) for r in rows] == [("memory", "1"), ("memory", "3"), ("excel", "1"), ("excel", "3")]
    assert all(len(r) == 16 for r in rows), rows
    assert all(r[-1] == "1.00" and r[-3] == "1.00" for r in rows if r[1] == "1")  # phase 1 is the base


def test_issue9_workbook_part_check_looks_at_the_same_elements_however_long_the_log(tmp_path: Any,
                                                                                   monkeypatch: Any) -> None:
    """Before a step, every sheet of the workbook is checked to be whole: a Log of 2,000
    rows costs as many Python calls as an empty one (expat checks the cells on its own),
    and a damaged long sheet is still refused."""
    import zipfile
    from xml.parsers import expat

    import openpyxl
    import pytest

    from sheetsync.backends.excel import check_workbook_parts
    from sheetsync.core.errors import BackendError
    from sheetsync.systems.bbn.tracker.template import build_template

    short, long = tmp_path / "short.xlsx", tmp_path / "long.xlsx"
    build_template(LAY).save(short)
    wb = openpyxl.load_workbook(short)
    for r in range(LOG.first_row, LOG.first_row + 2000):
        for c in range(LOG.first_col, LOG.first_col + len(LOG.columns)):
            wb["Log"].cell(row=r, column=c, value=f"r{r}c{c}")
    wb.save(long)
    calls = [0]
    real = expat.ParserCreate

    class Counted:
        """An expat parser whose Python handlers count their calls."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            object.__setattr__(self, "parser", real(*args, **kwargs))

        def __setattr__(self, name: str, value: Any) -> None:
            if callable(value):
                handler = value

                def value(*args: Any) -> Any:
                    calls[0] += 1
                    return handler(*args)
            setattr(self.parser, name, value)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.parser, name)

    monkeypatch.setattr(expat, "ParserCreate", Counted)
    seen = []
    for path in (short, long):
        calls[0] = 0
        check_workbook_parts(path)
        seen.append(calls[0])
    assert 0 < seen[1] == seen[0], seen  # not a call a cell: 2,000 rows x 12 cells would be 48,000 more
    with zipfile.ZipFile(long) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    sheet = next(n for n, data in parts.items() if n.startswith("xl/worksheets/") and b"r2000c" in data)
    parts[sheet] = parts[sheet][: -len(parts[sheet]) // 3]  # cut off in the middle of its cells
    with zipfile.ZipFile(long, "w") as zf:
        for n, data in parts.items():
            zf.writestr(n, data)
    with pytest.raises(BackendError, match="the sheet 'Log' is damaged"):
        check_workbook_parts(long)


class _CountedScans(dict):  # type: ignore[type-arg]
    """A sheet's cell dict that counts the passes over all its cells."""

    scans = 0

    def items(self) -> Any:
        type(self).scans += 1
        return super().items()


def test_issue9_memory_backend_last_row_is_kept_not_scanned_for_each_append_and_read() -> None:
    """``MemoryBackend.max_row`` (issue 9): one pass over a sheet's cells, then appends and
    open-ended reads land where a scan would put them without another pass."""
    _CountedScans.scans = 0
    log = _CountedScans({(1, 1): "Phase", (2, 1): 1, (2, 2): "first"})
    backend = MemoryBackend({"Log": log})
    for n in range(2, 30):
        backend.write_ranges([RangeUpdate("Log!A2:B", [[n, f"row {n}"]], append=True)])
        assert backend.read_ranges(["Log!A2:B"])[0][-1] == [n, f"row {n}"]
    assert backend.max_row("Log") == 30
    assert _CountedScans.scans == 1, "one pass over the Log, not one an append or a read"
    backend.write_ranges([RangeUpdate("Log!A10:B10", [["", "changed"]])])  # the last row stays
    assert backend.max_row("Log") == 30 and _CountedScans.scans == 1


def test_issue9_memory_backend_last_row_follows_cells_cleared_and_poked_by_hand() -> None:
    """The kept last row (issue 9) is the scanned one whatever changes the cells: a write
    that clears the last rows, and cells added, removed, emptied or replaced by hand."""
    backend = MemoryBackend({"Log": {(1, 1): "Phase"}})
    backend.write_ranges([RangeUpdate("Log!A2:B", [[2, "a"], [3, "b"], [4, "c"]], append=True)])
    assert backend.max_row("Log") == 4
    backend.write_ranges([RangeUpdate("Log!A3:B4", [[None, ""], ["", None]])])  # a write clears the last rows
    assert backend.max_row("Log") == 2
    backend.write_ranges([RangeUpdate("Log!A2:B", [[5, "d"]], append=True)])
    assert backend.read_ranges(["Log!A2:B"])[0] == [[2, "a"], [5, "d"]]
    backend.sheets["Log"][(9, 4)] = "typed by hand"  # a new cell below
    assert backend.max_row("Log") == 9
    del backend.sheets["Log"][(9, 4)]
    assert backend.max_row("Log") == 3
    backend.sheets["Log"][(3, 1)] = ""  # the cell holding the last row emptied in place
    assert backend.max_row("Log") == 3  # its neighbour still holds "d"
    backend.sheets["Log"][(3, 2)] = None
    assert backend.max_row("Log") == 2
    backend.sheets["Log"] = {(1, 1): "Phase", (7, 1): 7}  # the sheet replaced
    backend.write_ranges([RangeUpdate("Log!A2:B", [[8, "e"]], append=True)])
    assert backend.sheets["Log"][(8, 1)] == 8 and backend.max_row("Log") == 8
    backend.sheets["Log"].clear()
    assert backend.max_row("Log") == 0 and backend.read_ranges(["Log!A2:B"])[0] == []


class _CountedCells(dict):  # type: ignore[type-arg]
    """An openpyxl cell dict that counts the cells looked at."""

    looks = 0

    def items(self) -> Any:
        for item in super().items():
            type(self).looks += 1
            yield item

    def values(self) -> Any:
        for value in super().values():
            type(self).looks += 1
            yield value

    def __getitem__(self, key: Any) -> Any:
        type(self).looks += 1
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        type(self).looks += 1
        return super().get(key, default)


def test_issue9_workbook_append_finds_the_last_log_row_without_looking_at_every_cell() -> None:
    """``excel._last_value_row`` (issue 9): after an append, the last row of a 2,000-row Log
    is found looking at one cell, not 24,000; with styled empty rows below it, at most
    every cell once more; and the row found is the scanned one in every case."""
    import openpyxl
    from openpyxl.styles import Font

    from sheetsync.backends.excel import _last_value_row

    def scanned(ws: Any) -> int:
        return max((r for (r, _c), cell in dict.items(ws._cells) if cell.value not in (None, "")), default=0)

    ws = openpyxl.Workbook().active
    for r in range(1, 2001):
        for c in range(1, 13):
            ws.cell(row=r, column=c, value=f"r{r}c{c}")
    ws._cells = _CountedCells(ws._cells)
    _CountedCells.looks = 0
    assert _last_value_row(ws) == 2000
    assert _CountedCells.looks <= 12, _CountedCells.looks
    for r in range(2001, 2400):  # styled empty rows below the values
        ws.cell(row=r, column=1).font = Font(bold=True)
    ws.cell(row=1990, column=30).value = "far right"
    for r in range(1995, 2001):
        for c in range(1, 13):
            ws._cells[(r, c)].value = "" if c % 2 else None
    _CountedCells.looks = 0
    assert _last_value_row(ws) == scanned(ws) == 1994
    assert _CountedCells.looks <= 2 * len(ws._cells), _CountedCells.looks
    ws.cell(row=2200, column=30).value = "typed far below"
    assert _last_value_row(ws) == scanned(ws) == 2200
    blank = openpyxl.Workbook().active
    blank.cell(row=5, column=2).font = Font(bold=True)
    assert _last_value_row(blank) == 0 and _last_value_row(openpyxl.Workbook().active) == 0


def test_issue9_resolve_reads_the_stamped_orders_rows_without_a_lookup_each(monkeypatch: Any) -> None:
    """``parse_turn`` (issue 9): the Orders rows stamped by earlier phases are skipped on
    their Phase cell alone, so reading a phase's orders takes as many field lookups at
    phase 5 as at phase 1 (each phase stamps 24 more rows)."""
    from sheetsync.systems.bbn.tracker import reader

    calls = [0]
    real = reader._value_at

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(reader, "_value_at", counted)
    backend = _tracker()
    seen = []
    for phase in range(1, 6):
        if phase > 1:
            _type_orders(backend, phase)
        reader._RULES_SEEN.clear()  # the House Rules read afresh each phase, as in phase 1 (issue 12 remembers them)
        calls[0] = 0
        usecases.resolve(backend, LAY)
        seen.append(calls[0])
    assert _stored(backend).battle is not None and _stored(backend).battle.phase == 6  # type: ignore[union-attr]
    assert seen[0] > 0 and len(set(seen)) == 1, seen


def test_issue9_memory_backend_reads_what_trim_grid_makes_of_the_cells() -> None:
    """The memory backend's one-pass read (issue 9) gives the grid ``trim_grid`` gives:
    rows padded to the range, trailing empty rows dropped, a cell poked as ``""`` empty,
    formulas and falsy values kept."""
    from sheetsync.sheets.backend import Formula, trim_grid

    cells: dict[tuple[int, int], Any] = {(2, 1): 0, (2, 3): False, (3, 2): "", (4, 1): Formula("=A2"),
                                         (4, 4): "outside", (5, 2): "", (6, 3): None}
    backend = MemoryBackend({"S": cells})
    rows = [[cells.get((r, c)) for c in range(1, 4)] for r in range(2, 7)]
    assert backend.read_ranges(["S!A2:C"])[0] == trim_grid(rows, 3) == [
        [0, None, False], [None, None, None], [Formula("=A2"), None, None]]
    assert backend.read_ranges(["S!B3:B9"])[0] == []
    assert backend.read_ranges(["S!A1:C1", "S!D2:D"]) == [[], [[None], [None], ["outside"]]]
