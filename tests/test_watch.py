"""The watcher's loop and live display (issue: Google Sheets without a server)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from sheetsync.app.watch import DEFAULT_INTERVAL, live_watch, watch
from sheetsync.errors import BackendError
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate
from sheetsync.sheets.layout import layout

LAY = layout()


class Flaky(MemoryBackend):
    """Fails the second read (a quota blip), then is interrupted on the fourth (Ctrl-C)."""

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        if self.reads == 1:
            self.reads += 1
            raise BackendError("Google Sheets answered 429 (quota) 5 times over 15 s")
        if self.reads == 3:
            raise KeyboardInterrupt
        return super().read_ranges(ranges)

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        super().write_ranges(updates)


def _blank() -> Flaky:
    return Flaky({s: {} for s in LAY.sheets})


def test_default_interval_keeps_a_game_inside_the_read_quota() -> None:
    idle_reads_a_minute = 60 / DEFAULT_INTERVAL
    # a step costs one more read; even a step every poll stays under Google's 60 reads a minute
    assert 2 * idle_reads_a_minute <= 60


def test_watch_keeps_going_after_a_failed_read_and_stops_on_ctrl_c() -> None:
    backend = _blank()
    sleeps: list[float] = []
    state = watch(backend, interval=2.5, sleep=sleeps.append)
    assert state.last == "stopped"
    assert state.polls == 2 and sleeps == [2.5, 2.5, 2.5]


def test_a_failing_step_clears_the_tick_and_says_why_on_the_battle_sheet() -> None:
    backend = MemoryBackend({s: {} for s in LAY.sheets})
    buttons = LAY.block("Battle_Buttons")
    tick = (buttons.first_row + 1, buttons.first_col + 1)  # Resolve Phase, on a tracker with no cohorts
    backend.sheets["Battle"][tick] = True
    state = watch(backend, sleep=lambda s: None, max_polls=1)
    assert state.steps == 1 and "Resolve Phase failed: BattleStateError" in state.last
    assert backend.sheets["Battle"][tick] is False
    row, col = 5, 2  # Battle!B5, the last-action cell
    assert "no cohorts yet" in str(backend.sheets["Battle"][(row, col)])


def test_live_display_shows_phase_action_and_requests_and_stops_cleanly() -> None:
    console = Console(record=True, width=100, force_terminal=False)
    state = live_watch(_blank(), interval=0.0, console=console)
    text = console.export_text()
    assert "sheetsync watch (Ctrl-C to stop)" in text
    assert "Requests" in text and "Last action" in text
    assert f"Stopped after {state.polls} polls and 0 steps." in text
