"""Issue 12: the battalion step's faster paths write exactly what the plain ones write.

The Resolve step reads each block through a per-block plan, and takes the cohorts and
ranges that the battle and its undo snapshot share from the snapshot's dump instead of
dumping them again.  These tests pin each shortcut to the plain computation it
replaces, byte for byte (the State blob, its step id, the cells and their addresses).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from battles import make_battle

from sheetsync.app import state_journal as sj
from sheetsync.app import usecases
from sheetsync.app.bbn import reader, writer
from sheetsync.app.bbn.layout import layout
from sheetsync.app.bbn.reader import Sheets, parse_turn, read_plan
from sheetsync.app.bbn.steps import journal
from sheetsync.app.steps import mark_updates
from sheetsync.core.registry import find_system
from sheetsync.errors import SheetFormatError
from sheetsync.rules.bbn import Battle, load_battle, resolve_phase
from sheetsync.sheets.backend import MemoryBackend, RangeUpdate

LAY = layout()


def _resolved(cohorts: int = 6) -> tuple[sj.Stored, Battle, Any, list[int]]:
    """A tracker's stored battle, the battle its Orders give, the engine's result and the rows."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(cohorts)), LAY)
    backend.write_ranges(mark_updates(find_system("bbn"), LAY.capacity))
    sh = Sheets.from_grids(backend.read_ranges(read_plan(LAY)))
    stored = journal(LAY, sh).stored
    assert stored.battle is not None
    battle, rows = parse_turn(LAY, sh, stored.battle)
    return stored, battle, resolve_phase(battle), rows


def test_issue12_battle_data_from_the_snapshot_equals_to_data() -> None:
    """R13: the new battle of a resolve keeps the cohorts and ranges its snapshot dumped;
    taking them from that dump gives ``to_data()`` exactly, key order included."""
    _stored, battle, result, _rows = _resolved()
    new = result.battle
    assert new.cohorts is battle.cohorts and new.ranges is battle.ranges
    fast = sj._battle_data(new, sj.SHARED_KEYS)
    plain = new.to_data()
    assert json.dumps(fast) == json.dumps(plain)
    assert fast["cohorts"] is fast["history"][-1]["cohorts"]  # one object, dumped once


def test_issue12_state_write_is_byte_identical_with_the_shared_parts() -> None:
    """The State blob, its step id and the undo record are the same whether the resolve's
    shared parts are taken from the snapshot's dump or the battle is dumped whole."""
    stored, _battle, result, rows = _resolved()
    stamps = [[i, e.outcome, e.damage, writer.result_text(e)] for i, e in zip(rows, result.events, strict=True)]

    def write(kept: tuple[str, ...]) -> sj.StateWrite:
        return sj.state_update(LAY, result.battle, result.to_json(), prior=stored, action="resolve",
                               phase=result.phase, stamps=stamps, kept=kept)

    fast, plain = write(sj.SHARED_KEYS), write(())
    assert fast.update == plain.update and fast.extra == plain.extra
    assert (fast.token, fast.step, fast.rev) == (plain.token, plain.step, plain.rev)
    blob = "".join(str(row[0]) for row in fast.update.values if row[0])
    assert json.loads(blob)["battle"]["history"][0]["cohorts"] == json.loads(blob)["battle"]["cohorts"]


def test_issue12_reader_plans_name_each_layouts_cells() -> None:
    """The per-block plans address every cell as :meth:`Block.cell` does, for layouts of
    different capacities (the blocks under a longer one move down, issue 9)."""
    for lay in (LAY, layout(capacity={"cohorts": 60, "orders": 900})):
        for name in ("Orders_Table", "Ranges_Table", "Characters_Table", "Cohorts_Setup", "HouseRules_Table"):
            block = lay.block(name)
            plan = reader._plan(block)
            for key, (j, col, letter) in plan.by_key.items():
                assert block.columns[j] is col
                for i in (0, 7):
                    assert f"{plan.prefix}{letter}{block.first_row + i}" == block.cell(i, key)
    small, big = layout().block("Cohorts_Pools"), layout(capacity={"cohorts": 60}).block("Cohorts_Pools")
    assert small.first_row != big.first_row and reader._plan(small).block is small and reader._plan(big).block is big


def test_issue12_text_cells_read_as_before_r12() -> None:
    """R12: a cohort typed with spaces, in another case, or as a number reads as it always
    did; a range named by a whitespace cell is refused at its cell."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(4)), LAY)
    orders, ranges = LAY.block("Orders_Table"), LAY.block("Ranges_Table")
    backend.write_ranges([RangeUpdate(orders.cell(0, "cohort"), [["  cohort 0  "]]),
                          RangeUpdate(ranges.cell(0, "a"), [["   "]])])
    sh = Sheets.from_grids(backend.read_ranges(read_plan(LAY)))
    stored = journal(LAY, sh).stored
    assert stored.battle is not None
    with pytest.raises(SheetFormatError) as err:
        parse_turn(LAY, sh, stored.battle)
    assert [(p.where, p.message) for p in err.value.problems] == [
        (ranges.cell(0, "a"), "a range needs two cohorts and a band")]
    backend.write_ranges([RangeUpdate(ranges.cell(0, "a"), [["Cohort 0"]])])
    sh = Sheets.from_grids(backend.read_ranges(read_plan(LAY)))
    battle, _rows = parse_turn(LAY, sh, stored.battle)
    assert battle.orders[0].cohort == "Cohort 0"
