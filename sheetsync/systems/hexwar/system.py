"""The hex wargame as a :class:`~sheetsync.core.system.RuleSystem` (H1-H12).

Battle files go through the engine here; tracker steps are
:mod:`sheetsync.systems.hexwar.tracker.steps`'s, run through the use-case envelope
(:mod:`sheetsync.app.usecases`), imported by name when a step runs, so this package stays
pure."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from sheetsync.core.system import FileStep, Step, TrackerSteps

__all__ = ["SYSTEM", "HexwarSystem"]


class HexwarSystem:
    """Counters on an odd-q hex map, A/(A+D) odds, d100 casualties (H1-H12)."""

    id = "hexwar"
    aliases = ("hex",)
    version = 1
    title = "Hex wargame"
    steps = (
        Step("build", "Build Units", "BuildUnits", "Read the Units sheet and the map, and place the counters."),
        Step("resolve", "Resolve Turn", "ResolveTurn", "Resolve the turn's moves and attacks (1.0, H3-H9)."),
        Step("undo", "Undo Turn", "UndoTurn", "Undo the last resolved turn."),
        Step("end", "End Battle", "EndBattle", "End the battle and write the report (H12)."),
    )

    def load(self, data: Any, source: str = "") -> Any:
        from sheetsync.systems.hexwar.files.loader import load_battle

        return load_battle(data, source)

    def dump(self, battle: Any) -> dict[str, Any]:
        from sheetsync.systems.hexwar.files.loader import battle_to_file

        return battle_to_file(battle)

    def example_data(self) -> str:
        from sheetsync.systems.hexwar.rules import example_battle_data

        return example_battle_data()

    def resolve_file(self, battle: Any) -> FileStep:
        """1.0, H3-H9: resolve the file's typed turn (``system``, ``turn``, ``events``, ``units``)."""
        from sheetsync.systems.hexwar.rules.turn import resolve_turn

        result = resolve_turn(battle)
        return FileStep(result.to_json(), result.battle, result)

    def undo_file(self, battle: Any) -> FileStep:
        from sheetsync.systems.hexwar.rules.turn import undo, units_json

        before = undo(battle)
        return FileStep({"system": self.id, "turn": before.turn, "units": units_json(before)}, before, before)

    def check_file(self, battle: Any) -> tuple[int, list[tuple[str, str, str, str]]]:
        """H4, H6, H7 dry run: the typed turn resolved on a copy with no dice that matter
        (the engine is pure); returns the number of orders and, for each refused one, its
        path (``turn.moves[2]``), unit, kind and reason."""
        from sheetsync.systems.hexwar.rules.turn import NoDice, resolve_turn

        result = resolve_turn(battle, NoDice())
        out = []
        for e in result.events:
            if e.outcome != "refused":
                continue
            if e.kind == "move":
                out.append((f"turn.moves[{e.order}]", e.unit, "move", f"{e.reason} ({e.rule_ref})"))
            else:
                out.append((f"turn.attacks[{e.order}]", e.defender, "attack", f"{e.reason} ({e.rule_ref})"))
        return len(result.events), out

    def pools_json(self, battle: Any) -> dict[str, Any]:
        """6.2.2, H10, H6: each unit's effective values at its casualties."""
        from sheetsync.systems.hexwar.rules.aftermath import effective_values

        return {"system": self.id, "units": [v.model_dump(mode="json") for v in effective_values(battle)]}

    def aftermath_json(self, battle: Any) -> dict[str, Any]:
        """H12: the report."""
        from sheetsync.systems.hexwar.rules.aftermath import aftermath

        return {"system": self.id, **aftermath(battle).model_dump(mode="json")}

    def layout(self, capacity: Mapping[str, int] | None = None) -> Any:
        from sheetsync.systems.hexwar.tracker.layout import layout

        return layout(capacity)

    def tracker_steps(self, capacity: Mapping[str, int] | None = None) -> TrackerSteps:
        """The tracker's steps at ``capacity`` (its ``State!B2``): :mod:`sheetsync.systems.hexwar.tracker.steps`'s."""
        steps: TrackerSteps = import_module("sheetsync.systems.hexwar.tracker.steps").HexSteps(capacity)
        return steps

    def run_step(self, action: str, backend: Any, *, extra: Any = (), capacity: Mapping[str, int] | None = None,
                 read_from: Any = None) -> Any:
        """Run ``action`` at the tracker's ``capacity`` through the use-case envelope (one
        read, one write); the watcher calls it once it has found the tracker's system.
        ``read_from``: where a Resolve starts reading (``State!B3``, issue 23)."""
        return import_module("sheetsync.systems.hexwar.tracker.steps").run(action, backend, extra=extra, capacity=capacity,
                                                                            read_from=read_from)

SYSTEM = HexwarSystem()
