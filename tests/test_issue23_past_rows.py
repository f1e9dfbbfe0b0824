"""Issue 23, "O(P) battles": a step does not parse again what the steps behind it left.

* An Exalted Next Tick reads only the newest undo record (E1 counts the records; Undo Tick
  takes the newest): an older record damaged by hand no longer stops the tick, which
  resolves exactly as on an undamaged tracker, and Undo Tick still refuses it at its cell
  once it reaches it.
* A resolved Orders row (E5: its Resolved column holds the tick) is history: a cell of it
  edited afterwards is not an order, so the next step neither decodes nor refuses it, and
  the row is left as it is.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from test_exalted_tracker import ORDERS, SUBJECT, blank, type_battle, typed_rows

from sheetsync.app.usecases import run_steps
from sheetsync.core.errors import SheetFormatError
from sheetsync.sheets.backend import RangeUpdate

MORE_ORDERS: list[dict[str, Any]] = [
    {"tick": 6, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close"},
    {"tick": 8, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Close"},
]


def _three_ticks() -> Any:
    backend = blank()
    type_battle(backend)
    backend.write_ranges([typed_rows("Orders_Table", MORE_ORDERS, offset=len(ORDERS))])
    run_steps(SUBJECT, "build", backend)
    run_steps(SUBJECT, "resolve", backend)
    run_steps(SUBJECT, "resolve", backend)
    return backend


def _records(backend: Any) -> list[tuple[int, int]]:
    """The State cells holding an undo record, oldest first."""
    sheet = backend.sheets["State"]
    return sorted(a for a, v in sheet.items() if isinstance(v, str) and '"record"' in v)


def test_e1_issue23_next_tick_reads_only_the_newest_undo_record() -> None:
    clean, damaged = _three_ticks(), _three_ticks()
    oldest = _records(damaged)[0]
    data = json.loads(damaged.sheets["State"][oldest])
    data["record"] = {"not": "a record"}
    damaged.sheets["State"][oldest] = json.dumps(data)
    for backend in (clean, damaged):
        run_steps(SUBJECT, "resolve", backend)
    # the dice of the tick are seeded by the count of records (E1): the same tick either way
    assert damaged.sheets["Units"] == clean.sheets["Units"]
    assert damaged.sheets["Orders"] == clean.sheets["Orders"]
    run_steps(SUBJECT, "undo", damaged)
    run_steps(SUBJECT, "undo", damaged)
    with pytest.raises(SheetFormatError) as exc:
        run_steps(SUBJECT, "undo", damaged)
    row, col = oldest
    assert str(exc.value) == (f"State!{chr(64 + col)}{row}: this undo record is not sheetsync's: restore the "
                              "previous copy")


def test_e5_issue23_a_resolved_order_edited_afterwards_is_not_read_again() -> None:
    edited, clean = _three_ticks(), _three_ticks()
    first = edited.sheets["Orders"]
    block = SUBJECT.lay.block("Orders_Table")
    action = (block.first_row, block.columns.index(block.column("action")) + 1)
    assert first[action] == "Attack"  # the first order, resolved on the first tick
    edited.write_ranges([RangeUpdate(block.cell(0, "action"), [["Fly to the moon"]])])
    before = copy.deepcopy(edited.sheets["Orders"])
    for backend in (edited, clean):
        run_steps(SUBJECT, "resolve", backend)
    assert edited.sheets["Units"] == clean.sheets["Units"]
    assert edited.sheets["Orders"][action] == before[action] == "Fly to the moon"

