"""Issue 23: an Exalted long tick's undo record keeps only what the tick changed, compactly
(its orders as rows, its changes under short keys), so a tracker's State grows by some
2-3 KB a tick at 100 units; records in the form written before still read, and undo gives
the battle back exactly either way (E5)."""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from exalted_battles import make_exalted_battle  # noqa: E402

from sheetsync.core.dice import RandomRoller
from sheetsync.core.registry import find_system
from sheetsync.systems.exalted.forecast import ExaltedForecast, Sim
from sheetsync.systems.exalted.rules.battle import resolve, undo
from sheetsync.systems.exalted.rules.state import (
    ORDER_ROW,
    SHORT_KEYS,
    Battle,
    Order,
    UndoRecord,
    UnitState,
    expand_record,
)


def _ticks(units: int, count: int) -> list[tuple[Battle, Battle]]:
    """(before, after) of ``count`` long ticks of a battle of ``units`` units, each unit
    repeating its order on every tick it acts."""
    adapter = ExaltedForecast()
    declared = adapter.prepare(find_system("exalted").load(make_exalted_battle(units), "test"))
    now: Sim | None = declared
    roller = RandomRoller("record")
    out = []
    while now is not None and len(out) < count:
        result = resolve(now.battle, None, roller)
        out.append((now.battle, result.battle))
        now = adapter.standing(declared, Sim(result.battle.model_copy(update={"history": ()})))
    return out


def _old_form(record: UndoRecord) -> dict[str, Any]:
    """The record as a tracker wrote it before it was compact: orders and changes spelt out."""
    from sheetsync.systems.exalted.rules.state import _long

    data: dict[str, Any] = expand_record(record.model_dump(mode="json", exclude_defaults=True))
    data["changed"] = {unit: _long(was) for unit, was in data["changed"].items()}
    return data


@pytest.mark.parametrize("units", [10, 100])
def test_e5_issue23_a_compact_record_reads_back_and_undoes_exactly(units: int) -> None:
    for before, after in _ticks(units, 4):
        record = after.history[-1]
        dumped = record.model_dump(mode="json", exclude_defaults=True)
        assert "o" in dumped and "orders" not in dumped and "changed" in dumped
        text = json.dumps(dumped)
        back = UndoRecord.read(json.loads(text)).check()
        assert back == record
        restored = undo(after.model_copy(update={"history": (*before.history, back)}))
        assert restored.state == before.state and restored.orders == before.orders
        assert (restored.tick, restored.started) == (before.tick, before.started)


def test_e5_issue23_a_record_in_the_form_written_before_still_reads_and_undoes() -> None:
    before, after = _ticks(10, 2)[-1]
    record = after.history[-1]
    old = json.loads(json.dumps(_old_form(record)))
    assert "orders" in old and "o" not in old
    back = UndoRecord.read(old).check()
    assert back.states_before(after.state) == record.states_before(after.state) == before.state
    assert undo(after.model_copy(update={"history": (*before.history, back)})).state == before.state


def test_issue23_the_compact_record_at_100_units_is_far_smaller_than_spelt_out() -> None:
    sizes = [(len(json.dumps(a.history[-1].model_dump(mode="json", exclude_defaults=True))),
              len(json.dumps(_old_form(a.history[-1])))) for _, a in _ticks(100, 4)[1:]]
    assert all(compact < 0.7 * spelt for compact, spelt in sizes), sizes


def test_issue23_every_order_field_has_a_place_in_a_row_and_short_keys_are_unambiguous() -> None:
    assert set(ORDER_ROW) == {f.name for f in fields(Order)} and len(set(ORDER_ROW)) == len(ORDER_ROW)
    state_fields = {f.name for f in fields(UnitState)}
    assert set(SHORT_KEYS) <= state_fields
    assert len(set(SHORT_KEYS.values())) == len(SHORT_KEYS)
    assert not set(SHORT_KEYS.values()) & state_fields  # a short key is never some other field's own


@pytest.mark.parametrize("bad", [{"o": "x"}, {"o": [list(range(len(ORDER_ROW) + 1))]}, {"o": [5]}])
def test_issue23_a_damaged_compact_record_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        UndoRecord.read({"tick": 0, "started": True, **bad})


def test_issue23_a_battle_file_keeps_whole_records_and_reads_a_compact_one() -> None:
    """A battle file's history holds each tick's states whole (as before); a compact record
    copied into one from a tracker reads too."""
    from sheetsync.systems.exalted.files.loader import battle_to_file, load_battle

    before, after = _ticks(10, 2)[-1]
    data = dict(battle_to_file(after))
    assert data["history"] and all("states" in h and "o" not in h for h in data["history"])
    data["history"] = [*data["history"][:-1], after.history[-1].model_dump(mode="json", exclude_defaults=True)]
    assert "o" in data["history"][-1]
    loaded = load_battle(data, "test")
    assert undo(loaded).state == before.state and undo(loaded).orders == before.orders
