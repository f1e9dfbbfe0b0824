"""What a rule system is to the rest of sheetsync (DESIGN "Several rule systems on one seam").

A rule system is one object.  The CLI, the buttons, the endpoint, the watcher and the
Google Sheets initializer ask it for its steps, its layout, its battle-file loader and its
step functions, and never import its engine directly.  The steps share one vocabulary
(build, resolve, undo, end); each system gives them its own caption ("Resolve Phase",
"Resolve Turn") and the name of the macro a button runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sheetsync.core.errors import BattleStateError

__all__ = ["ACTIONS", "FileStep", "RuleSystem", "Step", "StepRefused", "TrackerSteps", "step_of"]

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


class StepRefused(BattleStateError):
    """A step refused, with the cells its one write must still carry.

    A step lost to another one run at the same moment is refused (see
    :mod:`sheetsync.systems.bbn.tracker.journal`), and the refusal's write repairs what the lost step
    left behind and records the report.  A pure step cannot write, so it raises this: the
    use-case envelope writes ``updates`` (that is the step's one write) and the user sees
    the refusal like any other :class:`~sheetsync.core.errors.BattleStateError`."""

    def __init__(self, message: str, updates: Sequence[Any]) -> None:
        super().__init__(message)
        self.updates = list(updates)


@runtime_checkable
class TrackerSteps(Protocol):
    """A system's tracker steps at one layout (one capacity), as pure functions of grids.

    The use cases (:mod:`sheetsync.app.usecases`) are written once over this: they read
    :meth:`read_plan` (of the action about to run: a system may leave out what that step
    never reads; ``None``, every range) in one ``read_ranges``, hand the grids (one per
    range, in order) to
    :meth:`step`, :meth:`check` or :meth:`export`, and write what :meth:`step` returns in
    one ``write_ranges``.  Nothing here touches a backend, so a step that raises has
    written nothing (:class:`StepRefused` aside, whose updates are the step's write).

    * :meth:`step` runs ``action`` (one of :data:`ACTIONS`) and returns the report
      (a :class:`~sheetsync.sheets.step_report.StepReport`) and the updates to write;
    * :meth:`check` is the dry run of the next resolve (a ``CheckReport``), nothing written;
    * :meth:`export` is the tracker's battle as JSON data;
    * :meth:`load` writes a battle (from a battle file) into a drawn tracker: it reads
      :meth:`load_plan` first (no read at all when it is empty)."""

    def read_plan(self, action: str | None = None) -> list[str]: ...

    def step(self, action: str, grids: Sequence[Any]) -> tuple[Any, list[Any]]: ...

    def check(self, grids: Sequence[Any]) -> Any: ...

    def export(self, grids: Sequence[Any]) -> dict[str, Any]: ...

    def load_plan(self) -> list[str]: ...

    def load(self, battle: Any, grids: Sequence[Any]) -> tuple[Any, list[Any]]: ...


@runtime_checkable
class RuleSystem(Protocol):
    """A rule system: identity, steps, battle files and trackers.

    Battle files: :meth:`load` reads the file's data (every problem with its path, all at
    once), :meth:`dump` writes it back.  :meth:`resolve_file`, :meth:`undo_file`,
    :meth:`pools_json` and :meth:`aftermath_json` are the file commands.  Trackers:
    :meth:`layout` is the sheet layout as data, :meth:`tracker_steps` the tracker's steps at
    a capacity (:class:`TrackerSteps`), and :meth:`run_step` runs one step against a
    :class:`~sheetsync.sheets.backend.SheetBackend` in one read and one write, through the
    use-case envelope (:func:`sheetsync.app.usecases.run_steps`)."""

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

    def tracker_steps(self, capacity: Mapping[str, int] | None = None) -> TrackerSteps: ...

    def run_step(self, action: str, backend: Any, *, extra: Any = (),
                 capacity: Mapping[str, int] | None = None, read_from: Any = None) -> Any: ...


def step_of(system: RuleSystem, action: str) -> Step:
    """The system's :class:`Step` for ``action``; a clear error for a step it has not."""
    for step in system.steps:
        if step.action == action:
            return step
    have = ", ".join(s.action for s in system.steps)
    raise KeyError(f"{system.title} has no step {action!r} (its steps: {have})")
