"""Issue 23: the simulation path (``resolve(odds=False, record=False, detail=False)``, as the
forecast runs it) works out nothing it does not print, and changes nothing else: for the same
dice every long tick ends in the same battle, and every event keeps its outcome and values."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from exalted_battles import make_exalted_battle  # noqa: E402

from sheetsync.core.dice import RandomRoller
from sheetsync.core.registry import find_system
from sheetsync.systems.exalted.forecast import ExaltedForecast, Sim
from sheetsync.systems.exalted.rules.battle import resolve


def _values(x: Any) -> Any:
    """An event with every breakdown and odds left out: what the simulation keeps."""
    if isinstance(x, dict):
        return {k: _values(v) for k, v in x.items() if k not in ("breakdown", "odds")}
    if isinstance(x, list):
        return [_values(v) for v in x]
    return x


@pytest.mark.parametrize("units", [8, 30])
def test_e4_e6_x28_x37_the_simulation_path_ends_each_tick_in_the_same_battle(units: int) -> None:
    adapter = ExaltedForecast()
    declared = adapter.prepare(find_system("exalted").load(make_exalted_battle(units), "test"))
    now: Sim | None = declared
    ticks = 0
    while now is not None and ticks < 12:
        full = resolve(now.battle, None, RandomRoller(f"sim:{ticks}"))
        lean = resolve(now.battle, None, RandomRoller(f"sim:{ticks}"), odds=False, record=False, detail=False)
        assert lean.battle == full.battle.model_copy(update={"history": now.battle.history})
        assert [_values(e) for e in lean.events] == [_values(e) for e in full.events]
        assert any("breakdown" in str(e) for e in full.events)
        ticks += 1
        now = adapter.standing(declared, Sim(full.battle.model_copy(update={"history": ()})))
    assert ticks >= 3
