"""``sheetsync watch``: the buttons of a Google Sheet without a server.

The Battle sheet has one checkbox per step of the tracker's rule system (Build Cohorts,
Resolve Phase, Undo Phase, End Battle on a battalion tracker; Build Units, Resolve Turn,
Undo Turn, End Battle on a hex tracker).  The watcher reads them once per interval; when
one is ticked it runs that step and clears the box in the step's own write.  A step that
fails clears the box and says why on the Battle sheet, so the Tracker sees it.

Which system: the first poll reads the tracker's mark (``State!B1:B2``,
:func:`sheetsync.sheets.marks.detect`) in the same request as the checkboxes, once; from then
on the labels, the layout (the ``Battle_Buttons`` block and the last-action cell) and the
steps are that system's.

Quota: Google allows 60 reads a minute per user.  The default interval (3 s) costs 20
reads a minute while idle and one more read and one write per step, so a whole game stays
well inside it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sheetsync.core.errors import SheetSyncError
from sheetsync.core.registry import find_system, system_ids
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import Grid, RangeUpdate, SheetBackend
from sheetsync.sheets.marks import Tracker

__all__ = ["BUTTON_ACTIONS", "DEFAULT_INTERVAL", "WatchState", "button_actions", "live_watch", "poll_once", "watch"]

DEFAULT_INTERVAL = 3.0
log = logging.getLogger(__name__)


def button_actions(system: Any) -> dict[str, str]:
    """``{checkbox label: action}`` of ``system``, in the order of its boxes: the labels are
    its steps' captions."""
    return {step.caption: step.action for step in system.steps}


BUTTON_ACTIONS: dict[str, dict[str, str]] = {sid: button_actions(find_system(sid)) for sid in system_ids()}
"""The checkboxes of every registered system: ``{system id: {label: action}}``."""


@dataclass
class WatchState:
    """What the live display shows, and the tracker the first poll found."""

    polls: int = 0
    steps: int = 0
    phase: int | None = None
    last: str = "watching: tick a box on the Battle sheet"
    tracker: Tracker | None = None
    layout: Any = None
    """The layout of :attr:`tracker`'s system (its Battle_Buttons block, its last-action cell)."""


class _Served:
    """The mark, already read with the checkboxes, served to :func:`steps.detect` (which
    asks a backend's ``read_mark`` before making a request of its own)."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid

    def read_mark(self, _range: str) -> Grid:
        return self.grid


def _default_layout() -> Any:
    from sheetsync.core.registry import room

    return room("bbn", "tracker.layout").layout()


def _tick_update(lay: Any, index: int) -> RangeUpdate:
    b = lay.block("Battle_Buttons")
    return RangeUpdate(f"{b.sheet}!{b.letter('tick')}{b.first_row + index}", [[False]])


def _read_boxes(backend: SheetBackend, state: WatchState, lay: Any) -> tuple[Any, Grid]:
    """The layout to use and the checkboxes' grid.  The first time, the tracker's mark is
    read in the same request (the Battle_Buttons block is where the battalion layout, or
    ``lay``, has it; if the detected system has it elsewhere, it is read again, once)."""
    if state.tracker is not None:
        use = lay if lay is not None else state.layout
        return use, backend.read_ranges([use.block("Battle_Buttons").range()])[0]
    guess = lay if lay is not None else _default_layout()
    where = guess.block("Battle_Buttons").range()
    grid, mark = backend.read_ranges([where, steps.MARK_RANGE])
    tracker = steps.detect(_Served(mark))  # type: ignore[arg-type]  # only read_mark is asked
    use = lay if lay is not None else tracker.system.layout(tracker.capacity or None)
    if use.block("Battle_Buttons").range() != where:
        grid = backend.read_ranges([use.block("Battle_Buttons").range()])[0]
    state.tracker, state.layout = tracker, use
    return use, grid


def poll_once(backend: SheetBackend, state: WatchState, lay: Any = None) -> str | None:
    """Read the checkboxes once; run the first ticked one.  Returns the action run, if any.

    ``lay`` places the checkboxes and the last-action cell (by default: the layout of the
    tracker's system); the step itself is the system's (:meth:`RuleSystem.run_step`)."""
    lay, grid = _read_boxes(backend, state, lay)
    tracker = state.tracker
    assert tracker is not None
    block = lay.block("Battle_Buttons")
    state.polls += 1
    for i, (label, action) in enumerate(button_actions(tracker.system).items()):
        row = grid[i] if i < len(grid) else []
        tick = row[block.index("tick")] if len(row) > block.index("tick") else None
        if tick is True or (isinstance(tick, str) and tick.upper() == "TRUE"):
            clear = _tick_update(lay, i)
            try:
                # steps.run without its detect: the system was found once, at the first poll
                report = tracker.system.run_step(action, backend, extra=[clear], capacity=tracker.capacity)
                state.phase = getattr(report, "phase", None)
                state.last = report.message
            except SheetSyncError as exc:
                _failed(backend, lay, state, clear, f"{label} failed: {type(exc).__name__}: {exc}")
            except Exception as exc:  # a bug must not kill the watcher and leave the box ticked (issue 8, item 8)
                log.debug("%s failed", label, exc_info=True)
                _failed(backend, lay, state, clear, f"{label} failed: an unexpected problem ({type(exc).__name__}) "
                        f"stopped the step, and the box is cleared. Run `sheetsync gsheet {action}` on this "
                        "sheet to see more")
            state.steps += 1
            return action
    return None


def _failed(backend: SheetBackend, lay: Any, state: WatchState, clear: RangeUpdate, message: str) -> None:
    """A step that failed: clear its box and say why in the Battle sheet's last-action cell,
    so that the Tracker sees it and the next poll does not run it again."""
    state.last = message
    backend.write_ranges([clear, RangeUpdate(lay.cells["Battle_LastAction"].ref, [[message[:45000]]])])


def watch(
    backend: SheetBackend,
    *,
    interval: float = DEFAULT_INTERVAL,
    sleep: Callable[[float], None] = time.sleep,
    max_polls: int | None = None,
    on_poll: Callable[[WatchState], None] | None = None,
    lay: Any = None,
) -> WatchState:
    """Poll until interrupted (Ctrl-C) or ``max_polls``; returns what happened."""
    state = WatchState()
    try:
        while max_polls is None or state.polls < max_polls:
            try:
                poll_once(backend, state, lay)
            except SheetSyncError as exc:  # a transient read failure: say so, keep watching
                state.last = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # anything else: say so briefly and keep watching
                log.debug("poll failed", exc_info=True)
                state.last = f"unexpected problem ({type(exc).__name__}); still watching"
            if on_poll is not None:
                on_poll(state)
            if max_polls is not None and state.polls >= max_polls:
                break
            sleep(interval)
    except KeyboardInterrupt:
        state.last = "stopped"
    return state


def _counted(state: WatchState) -> str:
    """What the tracker's system counts: "Phase" ("Resolve Phase"), "Turn" ("Resolve Turn")."""
    if state.tracker is not None:
        for step in state.tracker.system.steps:
            if step.action == "resolve" and " " in step.caption:
                return str(step.caption.rsplit(" ", 1)[1])
    return "Phase"


def live_watch(backend: SheetBackend, *, interval: float = DEFAULT_INTERVAL, console: object | None = None) -> WatchState:
    """:func:`watch` with a live display: phase, last action, polls and requests; Ctrl-C stops."""
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

    con = console if isinstance(console, Console) else Console()

    def view(state: WatchState) -> Table:
        t = Table(title="sheetsync watch (Ctrl-C to stop)", show_header=False)
        t.add_row(_counted(state), "?" if state.phase is None else str(state.phase))
        t.add_row("Last action", state.last)
        t.add_row("Polls / steps", f"{state.polls} / {state.steps}")
        t.add_row("Requests", str(getattr(backend, "request_count", "?")))
        t.add_row("Interval", f"{interval:g} s")
        return t

    with Live(view(WatchState()), console=con, refresh_per_second=4) as live:
        state = watch(backend, interval=interval, on_poll=lambda s: live.update(view(s)))
    con.print(f"Stopped after {state.polls} polls and {state.steps} steps.")
    return state
