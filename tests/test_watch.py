"""The watcher's loop and live display (issue: Google Sheets without a server)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from rich.console import Console

from sheetsync.app.watch import DEFAULT_INTERVAL, live_watch, watch
from sheetsync.core.errors import BackendError
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate
from sheetsync.systems.bbn.tracker.layout import layout

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


def _tick(backend: MemoryBackend, index: int) -> tuple[int, int]:
    buttons = LAY.block("Battle_Buttons")
    cell = (buttons.first_row + index, buttons.first_col + 1)
    backend.sheets["Battle"][cell] = True
    return cell


def test_issue8_item8_a_huge_roll_clears_the_tick_and_names_the_cell() -> None:
    from input_trackers import orders, two_cohorts

    from sheetsync.app import usecases

    backend = two_cohorts()
    usecases.run("build", backend)
    orders(backend, [{"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghouls", "roll": "1" * 5000}])
    tick = _tick(backend, 1)
    state = watch(backend, sleep=lambda s: None, max_polls=1)
    assert backend.sheets["Battle"][tick] is False
    assert state.last.startswith("Resolve Phase failed: SheetFormatError: Orders!M4: roll '1111")
    assert str(backend.sheets["Battle"][(5, 2)]) == state.last


def test_issue8_item8_an_unexpected_failure_clears_the_tick_says_so_and_keeps_watching(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sheetsync.app import usecases

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    monkeypatch.setattr(usecases, "run", broken)
    backend = MemoryBackend({s: {} for s in LAY.sheets})
    tick = _tick(backend, 1)
    state = watch(backend, sleep=lambda s: None, max_polls=3)
    assert state.polls == 3 and state.steps == 1, "the watcher kept going, and ran the step once"
    assert backend.sheets["Battle"][tick] is False
    reason = str(backend.sheets["Battle"][(5, 2)])
    assert reason.startswith("Resolve Phase failed: an unexpected problem (ValueError) stopped the step")
    assert "4300" not in reason, "no internal text reaches the sheet"


def test_issue8_item8_an_unexpected_read_failure_does_not_stop_the_watcher() -> None:
    class Broken(MemoryBackend):
        failed = False

        def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
            if not self.failed:
                self.failed = True
                raise OSError("connection reset")
            return super().read_ranges(ranges)

    backend = Broken({s: {} for s in LAY.sheets})
    state = watch(backend, sleep=lambda s: None, max_polls=2)
    assert backend.failed and backend.reads == 2 and state.polls == 2, "the failed read was followed by two good ones"
    assert state.last == "unexpected problem (OSError); still watching"
