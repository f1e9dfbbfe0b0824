"""A hand-edited State sheet (issue 8, item 10): every damage is a BattleStateError that
names what is wrong and how to recover, never a KeyError, ValueError or TypeError, and
nothing is written."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from battles import make_battle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sheetsync.app import usecases
from sheetsync.core.errors import BattleStateError, SheetSyncError
from sheetsync.sheets.backend import MemoryBackend, RangeUpdate
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.tracker.layout import STATE_CHUNKS, layout

LAY = layout()
STATE = LAY.block("State_Blob")
STEPS: dict[str, Callable[[MemoryBackend], Any]] = {
    "build": usecases.build_cohorts, "resolve": usecases.resolve, "undo": usecases.undo,
    "end": usecases.end_battle, "export": usecases.export,
}


def _tracker() -> MemoryBackend:
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(3)))
    usecases.resolve(backend)
    return backend


def _payload(backend: MemoryBackend) -> dict[str, Any]:
    rows = backend.read_ranges([STATE.range()])[0]
    return json.loads("".join(r[0] for r in rows if r and isinstance(r[0], str)))


def _put(backend: MemoryBackend, text: str) -> None:
    backend.write_ranges([RangeUpdate(STATE.range(rows=STATE_CHUNKS), [[text]] + [[None]] * (STATE_CHUNKS - 1))])


def _edit(backend: MemoryBackend, change: Callable[[dict[str, Any]], None]) -> None:
    payload = _payload(backend)
    change(payload)
    _put(backend, json.dumps(payload))


def _refused(backend: MemoryBackend, step: str, match: str) -> str:
    before = {k: dict(v) for k, v in backend.sheets.items()}
    with pytest.raises(BattleStateError, match=match) as err:
        STEPS[step](backend)
    assert backend.sheets == before  # nothing written
    text = str(err.value)
    assert text.startswith("State!A1: the stored battle state is damaged") or "State!A1" in text
    return text


@pytest.mark.parametrize("step", ["resolve", "undo", "end", "export", "build"])
def test_issue8_10_missing_cohort_standing_is_a_clear_error(step: str) -> None:
    backend = _tracker()
    _edit(backend, lambda p: p["battle"]["state"].pop("Cohort 1"))
    msg = _refused(backend, step, "cohort 'Cohort 1' has no standing")
    assert ".bak" in msg and "Build Cohorts" in msg


@pytest.mark.parametrize("step", ["resolve", "undo", "end", "export"])
def test_issue8_10_phase_10_to_the_18_is_a_clear_error(step: str) -> None:
    backend = _tracker()
    _edit(backend, lambda p: p["battle"].__setitem__("phase", 10**18))
    _refused(backend, step, "phase 1000000000000000000 is past the last phase")


@pytest.mark.parametrize("last", ["x", 7, {"phase": "one"}, {"phase": 1, "events": "none"}, [1, 2]])
def test_issue8_10_malformed_last_refuses_export_and_lets_steps_run(last: Any) -> None:
    backend = _tracker()
    _edit(backend, lambda p: p.__setitem__("last", last))
    msg = _refused(backend, "export", "the last resolve's")
    assert "Undo Phase" in msg
    assert usecases.undo(backend).phase == 1  # the battle itself is intact; undo rewrites it
    assert usecases.export(backend)["next_phase"] == 1


def _no_log_length(entry: dict[str, Any]) -> Any:
    return {k: v for k, v in entry.items() if k != "log_length"}


@pytest.mark.parametrize("damage", [
    _no_log_length,
    lambda entry: "snapshot",
    lambda entry: None,
    lambda entry: {**entry, "log_length": "3"},
    lambda entry: {**entry, "state": {}},
])
def test_issue8_10_damaged_undo_history_is_a_clear_error_before_any_step(damage: Callable[[Any], Any]) -> None:
    backend = _tracker()
    _edit(backend, lambda p: p["battle"]["history"].__setitem__(0, damage(p["battle"]["history"][0])))
    _refused(backend, "undo", r"undo history entry 1|history\.0")


def test_issue8_10_member_without_a_state_is_a_clear_error() -> None:
    backend = _tracker()
    _edit(backend, lambda p: p["battle"]["state"]["Cohort 0"]["states"].pop("C0M1"))
    _refused(backend, "resolve", "Cohort 0 has no state for C0M1")


def test_issue8_10_standing_for_a_cohort_that_does_not_exist_is_a_clear_error() -> None:
    backend = _tracker()
    _edit(backend, lambda p: p["battle"]["state"].__setitem__("Ghosts", p["battle"]["state"]["Cohort 0"]))
    _refused(backend, "resolve", "standing for 'Ghosts', which is not a cohort")


@pytest.mark.parametrize(("text", "match"), [
    ("{not json", "not readable JSON"),
    ("[1, 2]", "holds no battle"),
    ('{"battle": 3}', "the battle is not a record"),
    ('{"battle": {"cohorts": "x"}}', "the battle:"),
])
def test_issue8_10_unreadable_state_is_a_clear_error(text: str, match: str) -> None:
    backend = _tracker()
    _put(backend, text)
    _refused(backend, "resolve", match)


@pytest.mark.parametrize(("key", "value", "match"), [
    ("rev", "seven", "revision"),
    ("rev", -1, "revision"),
    ("steps", [["x"]], "journal"),
    ("reported", [1], "reported"),
    ("stamps", {"1": [["a", None, None, None]]}, "stamps"),
])
def test_issue8_2_10_damaged_journal_is_a_clear_error(key: str, value: Any, match: str) -> None:
    backend = _tracker()
    _edit(backend, lambda p: p.__setitem__(key, value))
    _refused(backend, "undo", match)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.text(max_size=5),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                     max_leaves=6)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


BASE = _payload(_tracker())
PATHS = [p for p in _paths(BASE) if p][:4000]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(PATHS), value=_JSON, drop=st.booleans(), step=st.sampled_from(sorted(STEPS)))
def test_issue8_10_fuzzed_state_never_leaks_a_foreign_exception(path: tuple[Any, ...], value: Any, drop: bool,
                                                                step: str) -> None:
    """Any one value of the State replaced (or removed): the step works, or it fails with
    a SheetSyncError; never a KeyError, ValueError, TypeError or the like."""
    payload = json.loads(json.dumps(BASE))
    node = payload
    for key in path[:-1]:
        node = node[key]
    if drop and isinstance(node, dict):
        node.pop(path[-1])
    else:
        node[path[-1]] = value
    backend = _tracker()
    _put(backend, json.dumps(payload))
    try:
        STEPS[step](backend)
    except SheetSyncError:
        pass
