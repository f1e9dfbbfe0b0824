"""``sheetsync watch``: the buttons of a Google Sheet without a server.

The Battle sheet has four checkboxes (Build Cohorts, Resolve Phase, Undo Phase, End
Battle).  The watcher reads them once per interval; when one is ticked it runs that use
case and clears the box in the use case's own write.  A step that fails clears the box and
says why on the Battle sheet, so the Tracker sees it.

Quota: Google allows 60 reads a minute per user.  The default interval (3 s) costs 20
reads a minute while idle and one more read and one write per step, so a whole game stays
well inside it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from sheetsync.app import usecases
from sheetsync.errors import SheetSyncError
from sheetsync.sheets.backend import RangeUpdate, SheetBackend
from sheetsync.sheets.layout import Layout, layout
from sheetsync.sheets.template import BUTTON_LABELS

__all__ = ["BUTTON_ACTIONS", "DEFAULT_INTERVAL", "WatchState", "poll_once", "watch"]

DEFAULT_INTERVAL = 3.0
log = logging.getLogger(__name__)
BUTTON_ACTIONS = dict(zip(BUTTON_LABELS, ("build", "resolve", "undo", "end"), strict=True))


@dataclass
class WatchState:
    """What the live display shows."""

    polls: int = 0
    steps: int = 0
    phase: int | None = None
    last: str = "watching: tick a box on the Battle sheet"


def _tick_update(lay: Layout, index: int) -> RangeUpdate:
    b = lay.block("Battle_Buttons")
    return RangeUpdate(f"{b.sheet}!{b.letter('tick')}{b.first_row + index}", [[False]])


def poll_once(backend: SheetBackend, state: WatchState, lay: Layout | None = None) -> str | None:
    """Read the checkboxes once; run the first ticked one.  Returns the action run, if any."""
    lay = lay or layout()
    block = lay.block("Battle_Buttons")
    grid = backend.read_ranges([block.range()])[0]
    state.polls += 1
    for i, label in enumerate(BUTTON_LABELS):
        row = grid[i] if i < len(grid) else []
        tick = row[block.index("tick")] if len(row) > block.index("tick") else None
        if tick is True or (isinstance(tick, str) and tick.upper() == "TRUE"):
            action = BUTTON_ACTIONS[label]
            clear = _tick_update(lay, i)
            try:
                report = usecases.run(action, backend, lay, extra=[clear])
                state.phase = report.phase
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


def _failed(backend: SheetBackend, lay: Layout, state: WatchState, clear: RangeUpdate, message: str) -> None:
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
    lay: Layout | None = None,
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


def live_watch(backend: SheetBackend, *, interval: float = DEFAULT_INTERVAL, console: object | None = None) -> WatchState:
    """:func:`watch` with a live display: phase, last action, polls and requests; Ctrl-C stops."""
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

    con = console if isinstance(console, Console) else Console()

    def view(state: WatchState) -> Table:
        t = Table(title="sheetsync watch (Ctrl-C to stop)", show_header=False)
        t.add_row("Phase", "?" if state.phase is None else str(state.phase))
        t.add_row("Last action", state.last)
        t.add_row("Polls / steps", f"{state.polls} / {state.steps}")
        t.add_row("Requests", str(getattr(backend, "request_count", "?")))
        t.add_row("Interval", f"{interval:g} s")
        return t

    with Live(view(WatchState()), console=con, refresh_per_second=4) as live:
        state = watch(backend, interval=interval, on_poll=lambda s: live.update(view(s)))
    con.print(f"Stopped after {state.polls} polls and {state.steps} steps.")
    return state
