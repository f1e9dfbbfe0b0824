"""The battalion system as a :class:`~sheetsync.core.system.RuleSystem` (R1-R37).

The engine stays in this package; the tracker steps are :mod:`sheetsync.systems.bbn.tracker.steps`,
run through the use-case envelope (:mod:`sheetsync.app.usecases`), both imported by name
when a step runs, so this package stays pure and its strict type check does not reach into
the surfaces."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from sheetsync.core.system import FileStep, Step, TrackerSteps

__all__ = ["SYSTEM", "BbnSystem"]


class BbnSystem:
    """Cohorts of 3 to 5 characters with pooled Health, phases of tasks, the aftermath."""

    id = "bbn"
    aliases = ("battalion",)
    version = 1
    title = "Battalion combat"
    steps = (
        Step("build", "Build Cohorts", "BuildCohorts", "Derive each cohort's pools from the Cohorts and Characters sheets."),
        Step("resolve", "Resolve Phase", "ResolvePhase", "Resolve the phase's pending orders."),
        Step("undo", "Undo Phase", "UndoPhase", "Undo the last resolved phase."),
        Step("end", "End Battle", "EndBattle", "End the battle and write the aftermath (R26-R30)."),
    )

    def load(self, data: Any, source: str = "") -> Any:
        from sheetsync.systems.bbn.files.loader import load_battle

        return load_battle(data, source)

    def dump(self, battle: Any) -> dict[str, Any]:
        from sheetsync.systems.bbn.files.loader import battle_to_file

        return battle_to_file(battle)

    def example_data(self) -> str:
        from importlib.resources import files

        return files("sheetsync").joinpath("examples/battle.yaml").read_text(encoding="utf-8")

    def resolve_file(self, battle: Any) -> FileStep:
        from sheetsync.systems.bbn.rules.phase import resolve_phase

        result = resolve_phase(battle)
        return FileStep(result.to_json(), result.battle, result)

    def undo_file(self, battle: Any) -> FileStep:
        from sheetsync.systems.bbn.rules.phase import undo

        before = undo(battle)
        return FileStep({"system": self.id, "phase": before.phase, "pending": len(before.orders)}, before, before)

    def pools_json(self, battle: Any) -> dict[str, Any]:
        return {"cohorts": [{
            "name": p.name, "actions": p.actions, "pools": p.pools,
            "breakdown": {k: [c.model_dump(mode="json") for c in v] for k, v in p.breakdown.items()},
            "not_counted": [n.model_dump(mode="json") for n in p.not_counted],
        } for p in battle.pools.values()]}

    def aftermath_json(self, battle: Any) -> dict[str, Any]:
        from sheetsync.core.dice import RandomRoller
        from sheetsync.systems.bbn.rules.aftermath import aftermath, aftermath_json

        return aftermath_json(aftermath(battle, RandomRoller(f"{battle.seed}:aftermath")))

    def layout(self, capacity: Mapping[str, int] | None = None) -> Any:
        """The tracker's layout with room for ``capacity`` (issue 9; a blank tracker's by default)."""
        return import_module("sheetsync.systems.bbn.tracker.layout").layout(capacity=capacity)

    def tracker_steps(self, capacity: Mapping[str, int] | None = None) -> TrackerSteps:
        """The tracker's steps laid out with ``capacity`` (its ``State!B2``, issue 9), so every
        block is read and written at the tracker's own rows (:mod:`sheetsync.systems.bbn.tracker.steps`)."""
        steps: TrackerSteps = import_module("sheetsync.systems.bbn.tracker.steps").BbnSteps(self.layout(capacity))
        return steps

    def run_step(self, action: str, backend: Any, *, extra: Any = (), capacity: Mapping[str, int] | None = None,
                 read_from: Any = None) -> Any:
        """Run ``action`` at the tracker's ``capacity`` through the use-case envelope (one
        read, one write); the watcher calls it once it has found the tracker's system."""
        envelope = import_module("sheetsync.app.usecases")
        steps = self.tracker_steps(capacity)
        steps.read_from = read_from  # type: ignore[attr-defined]  # issue 23: where a Resolve starts reading
        return envelope.run(action, backend, steps, extra=extra)

SYSTEM = BbnSystem()
