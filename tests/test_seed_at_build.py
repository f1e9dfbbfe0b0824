"""Issue 22: the hex and Exalted trackers fill the dice seed on the Battle sheet at Build
(a seed drawn when none is typed, as the battalion tracker does, R25), and a seed edited
after Build is named, never silently ignored: the battle keeps the seed it was built
with (its dice replay the same after an undo, E1, H8), and the resolve's warning says so.
(The hex tracker's warning was already tested: test_hexwar_tracker_edits.
test_h2_a_map_changed_after_build_is_named_and_the_built_map_kept.)"""

from __future__ import annotations

import copy

from test_exalted_tracker import FILE, SUBJECT, blank, type_battle
from test_exalted_tracker import cell as ex_cell
from test_hexwar_tracker import cell, loaded, put, stored_battle

from sheetsync.app.usecases import run_steps
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import RangeUpdate
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.rules.battle import resolve


def test_h8_a_hex_build_with_no_seed_draws_one_and_writes_it() -> None:
    """H8: the seed cell blank at Build: a seed is drawn, written to Battle!B7 and stored;
    the resolve that follows uses it with no warning."""
    backend = loaded()
    put(backend, "Battle!B7", None)
    steps.run("build", backend)
    seed = cell(backend, "Battle!B7")
    assert isinstance(seed, int) and stored_battle(backend)["seed"] == seed
    report = steps.run("resolve", backend)
    assert report.warnings == []


def test_h8_a_hex_build_keeps_a_typed_seed() -> None:
    backend = loaded()
    put(backend, "Battle!B7", "dawn")
    steps.run("build", backend)
    assert cell(backend, "Battle!B7") == "dawn" and stored_battle(backend)["seed"] == "dawn"


def test_e1_an_exalted_build_with_no_seed_draws_one_and_writes_it() -> None:
    """E1: the seed cell blank at Build Units: a seed is drawn and written to Battle!B6;
    the Join War shown before the first resolve and the resolve use it, with no warning."""
    backend = blank()
    type_battle(backend)
    backend.write_ranges([RangeUpdate("Battle!B6", [[None]])])
    run_steps(SUBJECT, "build", backend)
    seed = ex_cell(backend, "Battle!B6")
    assert isinstance(seed, int)
    report = run_steps(SUBJECT, "resolve", backend)
    assert report.warnings == []
    engine = resolve(load_battle({**copy.deepcopy(FILE), "seed": seed}))
    assert report.result.to_json()["events"][0] == engine.events[0]  # Join War from that seed


def test_e1_an_exalted_seed_edited_after_build_is_named_and_the_built_one_kept() -> None:
    """E1: Battle!B6 changed from 6 to 99 after Build Units: the resolve keeps seed 6 (its
    dice are the battle file's with seed 6) and its warning names the cell."""
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    backend.write_ranges([RangeUpdate("Battle!B6", [[99]])])
    report = run_steps(SUBJECT, "resolve", backend)
    assert report.warnings == ["Battle!B6 (Dice seed) was changed after Build Units; the battle keeps 6: Build "
                               "Units again before the first long tick, or start a new tracker"]
    assert report.result.to_json()["events"] == resolve(load_battle(copy.deepcopy(FILE))).to_json()["events"]


def test_e1_an_exalted_seed_left_as_built_gives_no_warning() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    assert ex_cell(backend, "Battle!B6") == 6
    assert run_steps(SUBJECT, "resolve", backend).warnings == []

