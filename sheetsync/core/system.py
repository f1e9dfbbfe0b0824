"""What a rule system is to the rest of sheetsync (DESIGN "Several rule systems on one seam").

A rule system is one object.  The CLI, the buttons, the endpoint, the watcher and the
Google Sheets initializer ask it for its steps, its layout, its battle-file loader and its
step functions, and never import its engine directly.  The steps share one vocabulary
(build, resolve, undo, end); each system gives them its own caption ("Resolve Phase",
"Resolve Turn") and the name of the macro a button runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["ACTIONS", "FileStep", "RuleSystem", "Step", "step_of"]

ACTIONS = ("build", "resolve", "undo", "end")
"""The one vocabulary of steps, in the order a battle meets them."""


@dataclass(frozen=True)
class Step:
    """One step as the surfaces show it: ``action`` is one of :data:`ACTIONS`, ``caption``
    the button label, ``sub`` the VBA / Apps Script sub a button runs, ``help`` one line
    for the CLI."""

    action: str
    caption: str
    sub: str
    help: str = ""


@dataclass
class FileStep:
    """A step run on a battle file: the JSON to print, the battle to write with ``--out``,
    and the object the terminal renderer shows."""

    json: dict[str, Any]
    battle: Any = None
    result: Any = None


@runtime_checkable
class RuleSystem(Protocol):
    """A rule system: identity, steps, battle files and trackers.

    Battle files: :meth:`load` reads the file's data (every problem with its path, all at
    once), :meth:`dump` writes it back.  :meth:`resolve_file`, :meth:`undo_file`,
    :meth:`pools_json` and :meth:`aftermath_json` are the file commands.  Trackers:
    :meth:`layout` is the sheet layout as data, :meth:`run_step` runs one step against a
    :class:`~sheetsync.sheets.backend.SheetBackend` in one read and one write."""

    id: str
    aliases: tuple[str, ...]
    version: int
    title: str
    steps: tuple[Step, ...]

    def load(self, data: Any, source: str = "") -> Any: ...

    def dump(self, battle: Any) -> dict[str, Any]: ...

    def example_data(self) -> str: ...

    def resolve_file(self, battle: Any) -> FileStep: ...

    def undo_file(self, battle: Any) -> FileStep: ...

    def pools_json(self, battle: Any) -> dict[str, Any]: ...

    def aftermath_json(self, battle: Any) -> dict[str, Any]: ...

    def layout(self, capacity: Mapping[str, int] | None = None) -> Any: ...

    def run_step(self, action: str, backend: Any, *, extra: Any = (),
                 capacity: Mapping[str, int] | None = None) -> Any: ...


def step_of(system: RuleSystem, action: str) -> Step:
    """The system's :class:`Step` for ``action``; a clear error for a step it has not."""
    for step in system.steps:
        if step.action == action:
            return step
    have = ", ".join(s.action for s in system.steps)
    raise KeyError(f"{system.title} has no step {action!r} (its steps: {have})")
