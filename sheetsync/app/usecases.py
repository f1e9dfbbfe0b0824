"""The use cases, written once over any rule system (issue 9, "Generic middle").

Build, Resolve, Undo, End, loading a battle file into a tracker, checking the next resolve
and exporting a tracker's state are one envelope here, whatever the system: find the
tracker (its mark and capacity, ``State!B1:B2``), ask its system for its steps at that
capacity (a :class:`~sheetsync.core.system.TrackerSteps`), read the steps' read plan in
ONE ``read_ranges``, let the system's pure step function turn the grids into a report and
the updates, and write them (with any ``extra`` updates riding along) in ONE
``write_ranges``.  On Google Sheets a step is two requests, and a step that fails writes
nothing: the step functions never touch the backend, so an error is raised before the
write.  The one refusal that writes is a step lost to another run at the same moment
(:class:`~sheetsync.core.system.StepRefused`): its repair is that refused step's one write.

The CLI, the Excel buttons, the HTTP endpoint and the Google Sheets watcher are thin
shells around :func:`run` (or a system's ``run_step``, which is :func:`run_steps`).  This
module imports no rule system: a system's steps are found through its mark, and the
battalion wrappers below (:func:`build_cohorts` ...) import theirs when called.

Resolving twice is safe: the phase's dice come from the battle's seed and the phase
number, and a resolve only takes Orders rows that carry no phase stamp yet, so a second
resolve of the same phase either finds nothing pending (and is refused) or, when two
Trackers resolve at the very same moment, writes the same State (the same step id) and is
applied once.  Two different steps run at the same moment are caught by the next step
(:mod:`sheetsync.app.state_journal`): it names the one that stands and the one to run again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sheetsync.app.step_report import StepReport
from sheetsync.core.system import ACTIONS as _VOCABULARY
from sheetsync.core.system import StepRefused, TrackerSteps
from sheetsync.errors import BattleStateError
from sheetsync.sheets.backend import RangeUpdate, SheetBackend

__all__ = ["ACTIONS", "CheckReport", "LayoutHooks", "LayoutSteps", "Refusal", "StepReport", "build_cohorts", "check", "check_battle", "check_steps",
           "end_battle", "export", "export_steps", "load", "load_battle_into", "load_steps", "resolve", "run",
           "run_steps", "tracker_layout", "tracker_steps", "undo"]


# -- the envelope ----------------------------------------------------------------------------

def tracker_steps(backend: SheetBackend) -> TrackerSteps:
    """The steps of the tracker ``backend`` holds: its system (the mark, ``State!B1``) at its
    capacity (``State!B2``).  On Google Sheets the mark comes with the step's read (no
    request of its own, :func:`sheetsync.app.steps.detect`)."""
    from sheetsync.app.steps import detect

    tracker = detect(backend)
    steps: TrackerSteps = tracker.system.tracker_steps(tracker.capacity or None)
    return steps


def _written(report: Any, updates: list[RangeUpdate]) -> Any:
    if hasattr(report, "updates"):
        report.updates = updates
    return report


def run_steps(steps: TrackerSteps, action: str, backend: SheetBackend, *,
              extra: Sequence[RangeUpdate] = ()) -> Any:
    """Run ``action`` with ``steps``: one read of their plan, the pure step, one write of its
    updates and ``extra`` (a button's cleared checkbox, ...).  A refusal writes nothing,
    except a :class:`StepRefused`, whose repair is written alone (``extra`` is not: the
    caller reports the refusal itself)."""
    grids = backend.read_ranges(steps.read_plan(action))
    try:
        report, updates = steps.step(action, grids)
    except StepRefused as refused:
        backend.write_ranges(refused.updates)
        raise
    written = [*updates, *extra]
    backend.write_ranges(written)
    return _written(report, written)


def check_steps(steps: TrackerSteps, backend: SheetBackend) -> CheckReport:
    """What the next resolve would refuse, and why: one read, nothing written."""
    report: CheckReport = steps.check(backend.read_ranges(steps.read_plan()))
    return report


def export_steps(steps: TrackerSteps, backend: SheetBackend) -> dict[str, Any]:
    """The tracker's battle as JSON data: one read, nothing written."""
    return steps.export(backend.read_ranges(steps.read_plan()))


def load_steps(steps: TrackerSteps, backend: SheetBackend, battle: Any) -> Any:
    """Write ``battle`` (from a battle file) into a drawn tracker: at most one read (none
    when the steps' load plan is empty) and one write; a battle that does not fit is
    refused with nothing written."""
    plan = steps.load_plan()
    grids = backend.read_ranges(plan) if plan else []
    report, updates = steps.load(battle, grids)
    backend.write_ranges(updates)
    return _written(report, list(updates))


Step = Callable[[Any], tuple[StepReport, list[RangeUpdate]]]


@dataclass(frozen=True)
class LayoutHooks:
    """What a layout-as-data tracker's module gives :class:`LayoutSteps`, each taking the
    layout or the parsed read: ``layout(capacity)``, ``plan(lay)`` (the one read),
    ``parse(lay, grids)``, ``steps`` (action -> step of the parsed read), ``check(parsed)``,
    ``export(parsed)`` and ``load(lay, battle, parsed)``."""

    layout: Callable[[Mapping[str, int] | None], Any]
    plan: Callable[[Any], list[str]]
    parse: Callable[[Any, Sequence[Any]], Any]
    steps: Mapping[str, Step]
    check: Callable[[Any], Any]
    export: Callable[[Any], dict[str, Any]]
    load: Callable[[Any, Any, Any], tuple[StepReport, list[RangeUpdate]]]
    journal: Callable[[Any], tuple[list[RangeUpdate], str]] | None = None
    """Issue 26, item 2: before every step, the State's lost-step check of the parsed read
    (:func:`sheetsync.sheets.lost_steps.session_guard`): it refuses a step that finds one
    lost, or gives the Log rows to mark and a note for the step's write and message."""


class LayoutSteps:
    """A :class:`~sheetsync.core.system.TrackerSteps` whose steps are pure functions of one
    parsed read of a layout-as-data tracker (the hex wargame's, Exalted's): a subclass sets
    its system's ``title`` and :class:`LayoutHooks`, and gets the protocol and the four
    calls a system's module offers (``run``, ``load_into``, ``check_tracker``,
    ``export_tracker``), each one read and at most one write through this envelope."""

    title: ClassVar[str]
    """The system as a sentence names it ("the hex wargame"), for a step it has not."""
    hooks: ClassVar[LayoutHooks]

    def __init__(self, capacity: Mapping[str, int] | None = None) -> None:
        self.lay = self.hooks.layout(capacity)

    # -- TrackerSteps
    def _known(self, action: str) -> None:
        if action not in self.hooks.steps:
            raise BattleStateError(f"{self.title} has no step {action!r} (its steps: {', '.join(self.hooks.steps)})")

    def read_plan(self, action: str | None = None) -> list[str]:
        return self.hooks.plan(self.lay)  # every step of these systems reads the whole plan

    def step(self, action: str, grids: Sequence[Any]) -> tuple[StepReport, list[RangeUpdate]]:
        self._known(action)
        parsed = self.hooks.parse(self.lay, grids)
        marks, note = self.hooks.journal(parsed) if self.hooks.journal is not None else ([], "")
        report, updates = self.hooks.steps[action](parsed)
        if marks or note:
            updates = [*updates, *marks]
            report.message += note
            if hasattr(report, "updates"):
                report.updates = updates
        return report, updates

    def check(self, grids: Sequence[Any]) -> Any:
        return self.hooks.check(self.hooks.parse(self.lay, grids))

    def export(self, grids: Sequence[Any]) -> dict[str, Any]:
        return self.hooks.export(self.hooks.parse(self.lay, grids))

    def load_plan(self) -> list[str]:
        """Loading reads what a step reads: the State's records to replace, and the sheet ids."""
        return self.hooks.plan(self.lay)

    def load(self, battle: Any, grids: Sequence[Any]) -> tuple[StepReport, list[RangeUpdate]]:
        return self.hooks.load(self.lay, battle, self.hooks.parse(self.lay, grids))

    # -- the calls a system's module offers
    @classmethod
    def run(cls, action: str, backend: SheetBackend, *, extra: Sequence[RangeUpdate] = (),
            capacity: Mapping[str, int] | None = None) -> StepReport:
        """Run ``action`` on the tracker: one read, one write (``extra`` rides along)."""
        steps = cls(capacity)
        steps._known(action)  # before the read: a step the system has not costs nothing
        report: StepReport = run_steps(steps, action, backend, extra=extra)
        return report

    @classmethod
    def load_into(cls, backend: SheetBackend, battle: Any, capacity: Mapping[str, int] | None = None) -> StepReport:
        """What ``sheetsync new tracker.xlsx --from battle.yaml`` does to a drawn tracker:
        one read, one write.  Without ``capacity``, the tracker's own (``State!B2``)."""
        from sheetsync.app.steps import detect

        cap = dict(capacity) if capacity is not None else detect(backend).capacity
        report: StepReport = load_steps(cls(cap), backend, battle)
        return report

    @classmethod
    def check_tracker(cls, backend: SheetBackend, capacity: Mapping[str, int] | None = None
                      ) -> tuple[int, int, list[tuple[str, str, str, str]], bool]:
        """``sheetsync check``: one read, nothing written.  The step to come, the number of
        orders, each refusal as (cell, who, what, why), and whether they are bad cells."""
        report = check_steps(cls(capacity), backend)
        return (report.phase, report.orders, [(r.where, r.cohort, r.task, r.reason) for r in report.refusals],
                report.bad_cells)

    @classmethod
    def export_tracker(cls, backend: SheetBackend, capacity: Mapping[str, int] | None = None) -> dict[str, Any]:
        """The tracker's battle as a battle file's data: one read, nothing written."""
        return export_steps(cls(capacity), backend)


def _steps_for(backend: SheetBackend, lay: Any) -> TrackerSteps:
    """``lay`` as steps: ``None`` is the tracker's own (detected), a :class:`TrackerSteps`
    is itself, anything else a battalion layout (the callers that pass one)."""
    if lay is None:
        return tracker_steps(backend)
    if isinstance(lay, TrackerSteps):
        return lay
    return _bbn(lay)


def run(action: str, backend: SheetBackend, lay: Any = None, *, extra: Sequence[RangeUpdate] = ()) -> Any:
    """Run the step named ``action`` (build, resolve, undo, end) on whatever tracker
    ``backend`` holds (its mark and capacity say which system, at which rows).  ``lay``, when
    given, is the steps to run with (a :class:`TrackerSteps`, or a battalion layout: a
    tracker recording another capacity is then refused at ``State!B2``)."""
    if action not in _VOCABULARY:
        raise BattleStateError(f"unknown action {action!r} (expected one of {', '.join(_VOCABULARY)})")
    return run_steps(_steps_for(backend, lay), action, backend, extra=extra)


def load(backend: SheetBackend, battle: Any, lay: Any = None) -> Any:
    """Load ``battle`` into the drawn tracker ``backend`` holds (its own system and rows)."""
    return load_steps(_steps_for(backend, lay), backend, battle)


# -- the battalion system's use cases, by name (the callers that import them) -------------------

def _bbn(lay: Any = None) -> TrackerSteps:
    from sheetsync.app.bbn.steps import BbnSteps

    return BbnSteps(lay)


def tracker_layout(backend: SheetBackend) -> Any:
    """The battalion layout of the tracker ``backend`` holds, at the capacity it records
    (``State!B2``, issue 9), for callers outside :func:`run` (which finds it itself).
    A step called with no layout takes a blank tracker's and refuses a bigger tracker at
    ``State!B2``; it never reads one at the wrong rows."""
    from sheetsync.app.bbn.layout import layout
    from sheetsync.app.steps import detect

    return layout(capacity=detect(backend).capacity)


def build_cohorts(backend: SheetBackend, lay: Any = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Build Cohorts (Cohort Sheet 1.1-1.7), laid out with ``lay`` (a blank tracker's by default)."""
    report: StepReport = run_steps(_bbn(lay), "build", backend, extra=extra)
    return report


def resolve(backend: SheetBackend, lay: Any = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Resolve Phase (R13), laid out with ``lay`` (a blank tracker's by default)."""
    report: StepReport = run_steps(_bbn(lay), "resolve", backend, extra=extra)
    return report


def undo(backend: SheetBackend, lay: Any = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Undo Phase (R25), laid out with ``lay`` (a blank tracker's by default)."""
    report: StepReport = run_steps(_bbn(lay), "undo", backend, extra=extra)
    return report


def end_battle(backend: SheetBackend, lay: Any = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """End Battle (Battle Aftermath, R26-R30), laid out with ``lay`` (a blank tracker's by default)."""
    report: StepReport = run_steps(_bbn(lay), "end", backend, extra=extra)
    return report


def load_battle_into(backend: SheetBackend, battle: Any, lay: Any = None) -> StepReport:
    """Write a battalion battle (from a battle file) into a blank tracker.  Without ``lay``,
    the tracker's own capacity (``State!B2``, issue 9) says what it holds."""
    report: StepReport = load_steps(_bbn(lay if lay is not None else tracker_layout(backend)), backend, battle)
    return report


def export(backend: SheetBackend, lay: Any = None) -> dict[str, Any]:
    """The battalion tracker's battle state (and its last resolve's events), shaped like
    ``sheetsync resolve --json``, plus the battle file to script against."""
    return export_steps(_bbn(lay), backend)


@dataclass(frozen=True)
class Refusal:
    """One thing the next Resolve Phase would refuse: an order (R13) or a bad cell."""

    where: str
    """The order's cell (``Orders!B7``) or, in a battle file, its path (``orders[3]``)."""
    cohort: str
    task: str
    reason: str


@dataclass
class CheckReport:
    """What :func:`check` found: ``refusals`` is empty when the next resolve refuses nothing."""

    phase: int
    orders: int
    refusals: list[Refusal] = field(default_factory=list)
    bad_cells: bool = False
    """True when the orders could not be read at all: every refusal is then a bad cell."""

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "orders": self.orders, "bad_cells": self.bad_cells,
                "refusals": [vars(r) for r in self.refusals]}



def check_battle(battle: Any, places: Sequence[str] | None = None) -> CheckReport:
    """R13 dry run of a battalion battle file (see :func:`sheetsync.app.bbn.steps.check_battle`)."""
    from sheetsync.app.bbn.steps import check_battle as bbn_check

    return bbn_check(battle, places)


def check(backend: SheetBackend, lay: Any = None) -> CheckReport:
    """``sheetsync check`` on a battalion tracker: what the next Resolve Phase would refuse,
    and why, with nothing written (issue 8, item 21).  It reads once, as a resolve does."""
    return check_steps(_bbn(lay), backend)


ACTIONS = {"build": build_cohorts, "resolve": resolve, "undo": undo, "end": end_battle}
"""The battalion steps by action, as functions of a backend and a layout."""
