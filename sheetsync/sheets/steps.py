"""The use-case envelope, written once over any rule system (issue 9, "Generic middle"):
find the tracker's steps, read their plan in ONE ``read_ranges``, run the pure step, write
its updates in ONE ``write_ranges``.  :class:`LayoutSteps` gives a layout-as-data tracker
(the hex wargame's, Exalted's) these steps from its :class:`LayoutHooks`.  It lives below
the rule systems and the shells (DESIGN "One package per rule system"): a system builds on
it, and the shells in :mod:`sheetsync.app.usecases` call it.  It imports no rule system."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sheetsync.core.errors import BattleStateError
from sheetsync.core.system import StepRefused, TrackerSteps
from sheetsync.sheets import read_from as rf
from sheetsync.sheets.backend import RangeUpdate, SheetBackend
from sheetsync.sheets.step_report import StepReport

__all__ = ["CheckReport", "LayoutHooks", "LayoutSteps", "Refusal", "StepReport", "check_steps", "export_steps",
           "load_steps", "run_steps", "tracker_steps"]



def tracker_steps(backend: SheetBackend) -> TrackerSteps:
    """The steps of the tracker ``backend`` holds: its system (the mark, ``State!B1``) at its
    capacity (``State!B2``).  On Google Sheets the mark comes with the step's read (no
    request of its own, :func:`sheetsync.sheets.marks.detect`)."""
    from sheetsync.sheets.marks import detect

    tracker = detect(backend)
    steps: TrackerSteps = tracker.system.tracker_steps(tracker.capacity or None)
    if hasattr(steps, "read_from"):  # issue 23: where its Resolve starts reading (State!B3)
        steps.read_from = tracker.read_from
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
    caller reports the refusal itself).

    Issue 23: a Resolve may read the rows that grow with the battle from where the last one
    left them (:mod:`sheetsync.sheets.read_from`); when that does not hold for what it read
    (:class:`~sheetsync.sheets.read_from.ReadAgain`), it reads the whole plan instead."""
    grids = backend.read_ranges(steps.read_plan(action))
    try:
        try:
            report, updates = steps.step(action, grids)
        except rf.ReadAgain:
            steps.read_from = None  # type: ignore[attr-defined]  # only steps that shift their read raise it
            report, updates = steps.step(action, backend.read_ranges(steps.read_plan(action)))
    except StepRefused as refused:
        _plan_next(steps, backend, refused.updates)
        backend.write_ranges(refused.updates)
        raise
    written = [*updates, *extra]
    _plan_next(steps, backend, written)
    backend.write_ranges(written)
    return _written(report, written)


def _plan_next(steps: TrackerSteps, backend: SheetBackend, updates: Sequence[RangeUpdate]) -> None:
    """Tell a backend that serves a step's read from named ranges (Google Sheets) what the
    next Resolve will read, from the ``State!B3`` this step writes (issue 23): its write
    then moves those ranges there."""
    plan_next = getattr(backend, "plan_next", None)
    if not callable(plan_next) or not hasattr(steps, "read_from"):
        return
    cell = next((u for u in updates if u.range == rf.READ_FROM_CELL), None)
    if cell is None:
        return
    steps.read_from = rf.parse(cell.values[0][0] if cell.values and cell.values[0] else None)
    plan_next(steps.read_plan("resolve"))


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
    _plan_next(steps, backend, updates)
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
    stamps: Mapping[str, str] = field(default_factory=dict)
    """Issue 23: the tables a Resolve stamps (block name -> its stamp column), which the
    next Resolve reads from the first row not stamped (:mod:`sheetsync.sheets.read_from`);
    the parsed read then has the State as ``session``."""


class LayoutSteps:
    """A :class:`~sheetsync.core.system.TrackerSteps` whose steps are pure functions of one
    parsed read of a layout-as-data tracker (the hex wargame's, Exalted's): a subclass sets
    its system's ``title`` and :class:`LayoutHooks`, and gets the protocol and the four
    calls a system's module offers (``run``, ``load_into``, ``check_tracker``,
    ``export_tracker``), each one read and at most one write through this envelope."""

    title: ClassVar[str]
    """The system as a sentence names it ("the hex wargame"), for a step it has not."""
    hooks: ClassVar[LayoutHooks]

    def __init__(self, capacity: Mapping[str, int] | None = None, read_from: rf.ReadFrom | None = None) -> None:
        self.lay = self.hooks.layout(capacity)
        self.read_from = read_from
        """Where a Resolve starts reading its stamped tables and the Log (``State!B3``)."""
        self._skipped: list[int] | None = None

    # -- TrackerSteps
    def _known(self, action: str) -> None:
        if action not in self.hooks.steps:
            raise BattleStateError(f"{self.title} has no step {action!r} (its steps: {', '.join(self.hooks.steps)})")

    def read_plan(self, action: str | None = None) -> list[str]:
        """Every step of these systems reads the whole plan, but a Resolve, which reads its
        stamped tables and the Log's Step column from where the step before it left them
        (issue 23)."""
        plan = self.hooks.plan(self.lay)
        self._skipped = None
        if action != "resolve" or self.read_from is None or not self.hooks.stamps:
            return plan
        shifted, self._skipped = rf.shift_plan(plan, rf.starts(plan, self.lay, self.hooks.stamps, self.read_from))
        return shifted

    def step(self, action: str, grids: Sequence[Any]) -> tuple[StepReport, list[RangeUpdate]]:
        self._known(action)
        skipped, self._skipped = self._skipped, None
        if skipped is not None:
            grids = rf.pad(grids, skipped)
        parsed = self.hooks.parse(self.lay, grids)
        plan = self.hooks.plan(self.lay) if self.hooks.stamps else []
        held = self.read_from if skipped is not None else None
        if held is not None and not rf.holds_all(plan, self.lay, self.hooks.stamps, grids, held, parsed.session.rev):
            raise rf.ReadAgain(action)
        try:
            marks, note = self.hooks.journal(parsed) if self.hooks.journal is not None else ([], "")
            report, updates = self.hooks.steps[action](parsed)
        except StepRefused as refused:
            if self.hooks.stamps:
                refused.updates.append(rf.update(None))  # a repair: the next step reads everything
            raise
        if marks or note:
            updates = [*updates, *marks]
            report.message += note
        if self.hooks.stamps:  # every step says where the next Resolve starts reading
            ahead = rf.ahead(plan, self.lay, self.hooks.stamps, grids, updates, held, parsed.session.rev + 1)
            updates = [*updates, rf.update(ahead)]
        if (marks or note or self.hooks.stamps) and hasattr(report, "updates"):
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
        report, updates = self.hooks.load(self.lay, battle, self.hooks.parse(self.lay, grids))
        if not self.hooks.stamps:
            return report, updates
        updates = [*updates, rf.update(None)]  # a new battle: its first Resolve reads it all
        if hasattr(report, "updates"):
            report.updates = updates
        return report, updates

    # -- the calls a system's module offers
    @classmethod
    def run(cls, action: str, backend: SheetBackend, *, extra: Sequence[RangeUpdate] = (),
            capacity: Mapping[str, int] | None = None, read_from: rf.ReadFrom | None = None) -> StepReport:
        """Run ``action`` on the tracker: one read, one write (``extra`` rides along);
        ``read_from`` is the tracker's ``State!B3`` (issue 23)."""
        steps = cls(capacity, read_from)
        steps._known(action)  # before the read: a step the system has not costs nothing
        report: StepReport = run_steps(steps, action, backend, extra=extra)
        return report

    @classmethod
    def load_into(cls, backend: SheetBackend, battle: Any, capacity: Mapping[str, int] | None = None) -> StepReport:
        """What ``sheetsync new tracker.xlsx --from battle.yaml`` does to a drawn tracker:
        one read, one write.  Without ``capacity``, the tracker's own (``State!B2``)."""
        from sheetsync.sheets.marks import detect

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
