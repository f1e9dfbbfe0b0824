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

from sheetsync.app import state_journal as sj
from sheetsync.app import usecases
from sheetsync.app.bbn.layout import STATE_CHUNKS, Layout, layout
from sheetsync.app.steps import mark_updates
from sheetsync.core.registry import find_system
from sheetsync.rules.bbn import Battle, load_battle
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate

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
    from sheetsync.rules.bbn import undo

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

    from sheetsync.errors import BattleStateError

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

    from sheetsync.errors import BattleStateError

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
