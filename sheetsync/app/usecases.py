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
(:mod:`sheetsync.systems.bbn.tracker.journal`): it names the one that stands and the one to run again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sheetsync.core.errors import BattleStateError
from sheetsync.core.system import ACTIONS as _VOCABULARY
from sheetsync.core.system import TrackerSteps
from sheetsync.sheets.backend import RangeUpdate, SheetBackend
from sheetsync.sheets.step_report import StepReport
from sheetsync.sheets.steps import (  # the envelope, below every system
    CheckReport,
    LayoutHooks,
    LayoutSteps,
    Refusal,
    check_steps,
    export_steps,
    load_steps,
    run_steps,
    tracker_steps,
)

__all__ = ["ACTIONS", "CheckReport", "LayoutHooks", "LayoutSteps", "Refusal", "StepReport", "build_cohorts", "check", "check_battle", "check_steps",
           "end_battle", "export", "export_steps", "load", "load_battle_into", "load_steps", "resolve", "run",
           "run_steps", "tracker_layout", "tracker_steps", "undo"]


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
    ahead = getattr(backend, "step_ahead", None)
    if callable(ahead):  # Google Sheets: the named ranges this step's one GET asks for (issue 23)
        ahead(action)
    return run_steps(_steps_for(backend, lay), action, backend, extra=extra)


def load(backend: SheetBackend, battle: Any, lay: Any = None) -> Any:
    """Load ``battle`` into the drawn tracker ``backend`` holds (its own system and rows)."""
    return load_steps(_steps_for(backend, lay), backend, battle)


# -- the battalion system's use cases, by name (the callers that import them) -------------------

def _bbn(lay: Any = None) -> TrackerSteps:
    from sheetsync.core.registry import room

    steps: TrackerSteps = room("bbn", "tracker.steps").BbnSteps(lay)
    return steps


def tracker_layout(backend: SheetBackend) -> Any:
    """The battalion layout of the tracker ``backend`` holds, at the capacity it records
    (``State!B2``, issue 9), for callers outside :func:`run` (which finds it itself).
    A step called with no layout takes a blank tracker's and refuses a bigger tracker at
    ``State!B2``; it never reads one at the wrong rows."""
    from sheetsync.core.registry import room
    from sheetsync.sheets.marks import detect

    return room("bbn", "tracker.layout").layout(capacity=detect(backend).capacity)


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


def check_battle(battle: Any, places: Sequence[str] | None = None) -> CheckReport:
    """R13 dry run of a battalion battle file (see :func:`sheetsync.systems.bbn.tracker.steps.check_battle`)."""
    from sheetsync.core.registry import room

    report: CheckReport = room("bbn", "tracker.steps").check_battle(battle, places)
    return report


def check(backend: SheetBackend, lay: Any = None) -> CheckReport:
    """``sheetsync check`` on a battalion tracker: what the next Resolve Phase would refuse,
    and why, with nothing written (issue 8, item 21).  It reads once, as a resolve does."""
    return check_steps(_bbn(lay), backend)


ACTIONS = {"build": build_cohorts, "resolve": resolve, "undo": undo, "end": end_battle}
"""The battalion steps by action, as functions of a backend and a layout."""
