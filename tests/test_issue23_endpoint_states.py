"""Issue 23: the server remembers the battle of a hex or Exalted State it read before
(:func:`sheetsync.sheets.session.stored_battle`), as the battalion's server path remembers
its States; what it answers must not change.

(a) Resolves through the server with the remembered battle warm answer exactly the cell
updates a cold server (a fresh app, nothing remembered) answers for the same payload, also
over a Resolve, Undo, Resolve sequence applied to the workbook in turn.  (b) A State that
changed (after an Undo, or one edited by hand) is loaded afresh, never answered from the
battle remembered for the text before.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import pytest
from exalted_battles import make_exalted_battle
from hex_battles import make_hex_battle
from test_server import serving  # uvicorn on a free loopback port, for real

from sheetsync.app.server import create_app
from sheetsync.app.workbook_cli import system_tracker_from
from sheetsync.backends.xlwings_remote import apply_actions, payload_from_openpyxl
from sheetsync.core.registry import find_system
from sheetsync.sheets import session as ss

KEY = "k"
SYSTEMS = {"hexwar": lambda: make_hex_battle(12), "exalted": lambda: make_exalted_battle(4)}


@pytest.fixture(scope="module", autouse=True)
def noncommercial_license() -> Iterator[None]:
    old = os.environ.get("XLWINGS_LICENSE_KEY")
    os.environ["XLWINGS_LICENSE_KEY"] = "noncommercial"
    yield
    if old is None:
        os.environ.pop("XLWINGS_LICENSE_KEY", None)
    else:
        os.environ["XLWINGS_LICENSE_KEY"] = old


@pytest.fixture(params=sorted(SYSTEMS))
def tracker(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    system = find_system(request.param)
    out = tmp_path / f"{request.param}.xlsx"
    system_tracker_from(out, system, system.load(SYSTEMS[request.param]()))
    return out


def post(app: Any, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    with serving(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        answer = http.post(f"/api/{action}", json=payload, headers={"Authorization": KEY})
    assert answer.status_code == 200, answer.text
    out: dict[str, Any] = answer.json()
    return out


def cold(action: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The answer of a server that remembers nothing: a fresh app, every battle forgotten."""
    ss.forget_battles()
    return post(create_app(api_key=KEY), action, payload)


def updates(answer: dict[str, Any]) -> list[Any]:
    return [a for a in answer["actions"] if a["func"] == "setValues"]


def state_text(payload: dict[str, Any]) -> str:
    (state,) = [s for s in payload["sheets"] if s["name"] == "State"]
    return "".join(row[0] for row in state["values"][1:] if row and isinstance(row[0], str))


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stored battles loaded from a State (each a cache miss), by system."""
    seen: list[str] = []
    for name in SYSTEMS:
        module = __import__(f"sheetsync.systems.{name}.tracker.steps", fromlist=["load_battle"])
        original = module.load_battle

        def counted(data: Any, *args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
            if args == ("the State sheet",):
                seen.append(_name)
            return _original(data, *args, **kw)

        monkeypatch.setattr(module, "load_battle", counted)
    return seen


def test_two_warm_resolves_answer_as_a_cold_server(tracker: Path, loads: list[str]) -> None:
    payload = payload_from_openpyxl(openpyxl.load_workbook(tracker), "VBA")
    expected = cold("resolve", payload)
    assert updates(expected), expected  # the turn resolved: there are cells to compare
    assert len(loads) == 1
    warm = create_app(api_key=KEY)
    first, second = post(warm, "resolve", payload), post(warm, "resolve", payload)
    assert len(loads) == 1  # both warm resolves took the battle remembered, loaded by neither
    assert first == expected and second == expected


def test_a_resolve_undo_resolve_sequence_answers_as_cold_servers(tracker: Path) -> None:
    """Each answer applied to the workbook before the next click, as a client does: the warm
    server's answers are the cold ones, byte for byte, and the Undo's State is a new text."""
    warm_wb, cold_wb = openpyxl.load_workbook(tracker), openpyxl.load_workbook(tracker)
    warm = create_app(api_key=KEY)
    ss.forget_battles()
    texts = []
    for action in ("resolve", "undo", "resolve"):
        warm_payload = payload_from_openpyxl(warm_wb, "VBA")
        texts.append(state_text(warm_payload))
        got = post(warm, action, warm_payload)
        cold_payload = payload_from_openpyxl(cold_wb, "VBA")
        assert cold_payload == warm_payload
        expected = cold(action, cold_payload)
        assert json.dumps(got) == json.dumps(expected), action
        apply_actions(warm_wb, got, client="VBA", alerts=[])
        apply_actions(cold_wb, expected, client="VBA", alerts=[])
    assert len(set(texts)) == 3  # every click read a State the one before had changed


def test_a_state_edited_by_hand_is_loaded_afresh_not_answered_from_the_one_before(
        tracker: Path, loads: list[str]) -> None:
    wb = openpyxl.load_workbook(tracker)
    payload = payload_from_openpyxl(wb, "VBA")
    warm = create_app(api_key=KEY)
    ss.forget_battles()
    before = post(warm, "resolve", payload)
    (state,) = [s for s in payload["sheets"] if s["name"] == "State"]
    edited = json.loads(json.dumps(payload))
    (edited_state,) = [s for s in edited["sheets"] if s["name"] == "State"]
    row = next(i for i, r in enumerate(state["values"]) if r and isinstance(r[0], str) and '"seed":' in r[0])
    old = edited_state["values"][row][0]
    new_seed = old.replace('"seed":3,', '"seed":4,', 1).replace('"seed":7,', '"seed":8,', 1)
    assert new_seed != old
    edited_state["values"][row][0] = new_seed  # the dice seed of the stored battle, typed over
    loaded = len(loads)
    got = post(warm, "resolve", edited)
    assert len(loads) == loaded + 1  # the edited text is a State never read: loaded in full
    assert updates(got) != updates(before)  # another seed, other dice
    assert got == cold("resolve", edited)


def _layout_shape(lay: Any) -> Any:
    """What a step looks a layout up by: its blocks, cells, areas, formulas and capacity."""
    return ({n: (b.sheet, b.first_row, b.first_col, b.rows, tuple(c.key for c in b.columns))
             for n, b in lay.blocks.items()}, {n: c.ref for n, c in lay.cells.items()},
            {n: a.range() for n, a in lay.areas.items()}, sorted(lay.formulas), dict(lay.capacity),
            len(lay.deferred), len(lay.fixed))


def test_the_steps_share_one_layout_a_capacity_which_no_step_changes(tracker: Path) -> None:
    """The steps of one capacity share the layout built for it (a click no longer builds it
    again), another capacity gets its own, a drawing still builds a fresh one, and a
    Resolve, Undo, Resolve sequence leaves the shared one as it was built."""
    system = find_system(tracker.stem)
    capacity = {"units": 60}
    shared = system.tracker_steps(capacity).lay
    assert system.tracker_steps(dict(capacity)).lay is shared
    assert system.tracker_steps(None).lay is not shared
    assert system.layout(capacity) is not shared and _layout_shape(system.layout(capacity)) == _layout_shape(shared)
    wb = openpyxl.load_workbook(tracker)
    app = create_app(api_key=KEY)
    lay = system.tracker_steps(json.loads(wb["State"]["B2"].value or "{}") or None).lay
    before = _layout_shape(lay)
    for action in ("resolve", "undo", "resolve"):
        apply_actions(wb, post(app, action, payload_from_openpyxl(wb, "VBA")), client="VBA", alerts=[])
    assert _layout_shape(lay) == before
    assert _layout_shape(lay) == _layout_shape(system.layout(json.loads(wb["State"]["B2"].value or "{}") or None))


def test_row_updates_write_each_run_of_rows_as_block_update_writes_it() -> None:
    """A hex Resolve's stamps (each run of rows' Turns, then their results) through
    ``table.row_updates``: one ``table.block_update`` per run of consecutive rows, in row
    order, which writes the very cells ``block_update`` writes one row at a time; its
    refusals are the same, and a row given twice is refused."""
    from sheetsync.sheets import table
    from sheetsync.sheets.backend import Formula, MemoryBackend
    from sheetsync.systems.hexwar.tracker.steps import _ATTACK_SPAN, _MOVE_RESULTS, HexSteps

    lay = HexSteps(None).lay
    mb, ab = lay.block("Moves_Table"), lay.block("Attacks_Table")
    moves = [(3, {"from": "0101", "ends": "0203", "charge": True, "outcome": "moved", "result": "ok"}),
             (0, {"from": "0405", "outcome": "refused", "result": None}),
             (4, {"outcome": "moved"}), (1, {"result": "x"})]
    attacks = [(7, {"roll": 4, "strength": 3.5, "chance": 0.25, "outcome": "hit", "casualties": 12,
                    "roll_source": "rolled"}), (1, {"roll": Formula("=1+2"), "result": "x"})]
    for block, rows, keys, runs in ((mb, moves, _MOVE_RESULTS, [[0, 1], [3, 4]]),
                                    (ab, attacks, _ATTACK_SPAN, [[1], [7]])):
        by_offset = dict(rows)
        for cols, rows_now in ((keys, rows), (["turn"], [(off, {"turn": 5}) for off, _ in rows])):
            rows_by = dict(rows_now)
            got = table.row_updates(block, rows_now, keys=cols)
            assert got == [table.block_update(block, [rows_by[o] for o in run], run[0], keys=cols) for run in runs]
            one, each = MemoryBackend({block.sheet: {}}), MemoryBackend({block.sheet: {}})
            one.write_ranges(got)
            each.write_ranges([table.block_update(block, [row], off, keys=cols) for off, row in rows_now])
            assert one.read_ranges([block.range()]) == each.read_ranges([block.range()])
        assert set(by_offset) == {o for run in runs for o in run}
    with pytest.raises(ValueError, match="written twice"):
        table.row_updates(mb, [(2, {"turn": 1}), (2, {"turn": 1})], keys=["turn"])
    for bad in ([(0, {"unit": "A"})], [(mb.rows or 0, {"from": "0101"})]):
        with pytest.raises((KeyError, ValueError)) as want:
            table.block_update(mb, [bad[0][1]], bad[0][0], keys=_MOVE_RESULTS)
        with pytest.raises(want.type, match=str(want.value.args[0])[:30]):
            table.row_updates(mb, bad, keys=_MOVE_RESULTS)
