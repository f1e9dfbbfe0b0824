"""Exalted 2e mass combat as a :class:`~sheetsync.core.system.RuleSystem` (E1-E11,
X1-X41).

Battle files go through the engine here; the tracker workbook's layout is
:mod:`sheetsync.systems.exalted.tracker.layout` and its steps :mod:`sheetsync.systems.exalted.tracker.steps`."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from sheetsync.core.system import FileStep, Step, TrackerSteps

__all__ = ["SYSTEM", "ExaltedSystem"]


class ExaltedSystem:
    """Units worn by their commanders on a long-tick timeline, with rout and exhaustion
    (exalted-2e-mass-combat.txt read through RULINGS-exalted.md)."""

    id = "exalted"
    aliases = ("exalted2e", "ex2e", "mass-combat")
    version = 1
    title = "Exalted 2e mass combat"
    has_tracker = True
    """The tracker workbook (Battle, Characters, Units, Ticks, Orders, Log, Aftermath); the
    step subs are the generic Apps Script functions (``resolveTurn`` runs the step
    ``resolve`` of whatever tracker it is in)."""
    steps = (
        Step("build", "Build Units", "BuildUnits", "Derive every unit's traits (X1-X11) and roll Join War (E4)."),
        Step("resolve", "Next Tick", "ResolveTurn", "Resolve the next long tick's orders (E5, E6, X17-X39)."),
        Step("undo", "Undo Tick", "UndoTurn", "Undo the last resolved long tick."),
        Step("end", "End Battle", "EndBattle", "End the battle: casualties (X40) and healing (X41)."),
    )

    def load(self, data: Any, source: str = "") -> Any:
        from sheetsync.systems.exalted.files.loader import load_battle

        return load_battle(data, source)

    def dump(self, battle: Any) -> dict[str, Any]:
        from sheetsync.systems.exalted.files.loader import battle_to_file

        return battle_to_file(battle)

    def example_data(self) -> str:
        """The embedded example battle (YAML text): a Dragon-Blooded-led talon against a
        mob of hill bandits."""
        from importlib.resources import files

        return files("sheetsync.systems.exalted").joinpath("example.yaml").read_text(encoding="utf-8")

    def resolve_file(self, battle: Any, tick: int | None = None) -> FileStep:
        """E4-E6, X17-X39: the next long tick (``system``, ``tick``, ``events``, ``units``)."""
        from sheetsync.systems.exalted.rules.battle import resolve

        result = resolve(battle, tick)
        return FileStep(result.to_json(), result.battle, result)

    def undo_file(self, battle: Any) -> FileStep:
        from sheetsync.systems.exalted.rules.battle import undo, units_json

        before = undo(battle)
        return FileStep({"system": self.id, "tick": before.tick, "started": before.started,
                         "units": units_json(before)}, before, before)

    def check_file(self, battle: Any) -> tuple[int, list[tuple[str, str, str, str]]]:
        """E5, X17-X39 dry run of the next long tick: resolved on a copy (the engine is pure,
        nothing is kept); returns the number of orders and, for each refused one, its path
        (``orders[2]``), unit, action and reason with its rule."""
        from sheetsync.systems.exalted.rules.battle import resolve

        result = resolve(battle)
        refused = [(f"orders[{e['order']}]", e["unit"], e["action"], f"{e['reason']} ({e['rule_ref']})")
                   for e in result.events if e.get("kind") == "refused"]
        rows = {e["order"] for e in result.events if e.get("kind") == "refused"}  # E5: a later tick's too
        return sum(1 for o in battle.orders if o.tick <= result.tick or o.row in rows), refused

    def pools_json(self, battle: Any) -> dict[str, Any]:
        """X1-X11: every unit's derived traits with their breakdowns, and each typed attack's
        odds before rolling (E1, E7, X28-X33)."""
        from sheetsync.systems.exalted.rules.breakdowns import pools_json

        return pools_json(battle)

    def aftermath_json(self, battle: Any) -> dict[str, Any]:
        """X40, X41: the casualty rolls per named member and each unit's healing days."""
        from sheetsync.systems.exalted.rules.breakdowns import aftermath_json

        return aftermath_json(battle)

    def layout(self, capacity: Mapping[str, int] | None = None) -> Any:
        from sheetsync.systems.exalted.tracker.layout import layout

        return layout(capacity)

    def tracker_steps(self, capacity: Mapping[str, int] | None = None) -> TrackerSteps:
        """The tracker's steps at ``capacity`` (its ``State!B2``): :mod:`sheetsync.systems.exalted.tracker.steps`'s."""
        steps: TrackerSteps = import_module("sheetsync.systems.exalted.tracker.steps").ExaltedSteps(capacity)
        return steps

    def run_step(self, action: str, backend: Any, *, extra: Any = (), capacity: Mapping[str, int] | None = None,
                 read_from: Any = None) -> Any:
        """Run ``action`` at the tracker's ``capacity`` through the use-case envelope (one
        read, one write); the watcher calls it once it has found the tracker's system.
        ``read_from``: where a Resolve starts reading (``State!B3``, issue 23)."""
        return import_module("sheetsync.systems.exalted.tracker.steps").run(action, backend, extra=extra, capacity=capacity,
                                                                            read_from=read_from)


SYSTEM = ExaltedSystem()
