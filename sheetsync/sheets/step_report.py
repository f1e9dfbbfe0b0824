"""What a step did, whatever the rule system: the one report the CLI, the buttons' message
box, the endpoint and the watcher show.  It imports no rule system, so a click on a hex
tracker loads no battalion code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sheetsync.sheets.backend import RangeUpdate

__all__ = ["StepReport"]


@dataclass
class StepReport:
    """``phase`` is the phase or turn the step was about; ``result`` the engine's result
    (anything with ``to_json()``: a battalion phase, a hex turn)."""

    action: str
    phase: int
    message: str
    result: Any = None
    aftermath: dict[str, Any] | None = None
    updates: list[RangeUpdate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What the Tracker should fix though the step went ahead (Build: enemy pairs with no range, R24)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "phase": self.phase, "message": self.message}
        if self.result is not None:
            out.update(self.result.to_json())
        if self.aftermath is not None:
            out.update(self.aftermath)
        return out
