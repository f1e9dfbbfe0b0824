"""X40, X41 and X26's Second Wind: casualties per named member, healing days, Endurance
restored."""

from __future__ import annotations

import pytest

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import Character, Fate, casualties, healing_days, second_wind

# Wits 2 + Willpower 3 = 5 dice each
ANNA = Character(name="Anna", wits=2, willpower=3)
BORO = Character(name="Boro", wits=2, willpower=3)
CYRA = Character(name="Cyra", wits=2, willpower=3, mortal=False)
DUNN = Character(name="Dunn", wits=2, willpower=3, extra=True)


def test_x41_healing_days_worked_example_magnitude_2_to_4_is_7_days() -> None:
    days = healing_days(2, 4)
    assert days.value == 7 and [e.amount for e in days.breakdown] == [3, 4]  # (2 + 1) + (3 + 1)
    assert "clears the track" in days.breakdown[0].source and "clears" not in days.breakdown[1].source
    assert healing_days(0, 2).value == 3  # 1 + 2
    assert healing_days(4, 4).value == 0


def test_x26_second_wind_worked_example_and_its_caps() -> None:
    assert second_wind(2, 0, 2, 5).value == 2  # Drill 0 gives 1, capped at Magnitude 2
    assert second_wind(1, 3, 5, 6).value == 4  # + 3
    assert second_wind(1, 3, 5, 3).value == 3  # the starting Endurance caps it (X41)
    assert second_wind(4, 1, 2, 5).value == 4  # never lowered
    assert second_wind(0, 0, 3, 3).value == 1


def test_x40_first_roll_against_the_largest_loss_then_the_total() -> None:
    typed = {"Anna": ["7 8 1 2 3", "7 2 3 4 5", 6],   # 2 >= 2 lives; 1 < 3: 1d10 = 6 levels
             "Boro": ["1 2 3 4 5", "10 9 2 2 2"],      # botch: maimed, lives; 3 >= 3: no wound
             "Cyra": ["7 2 3 4 5"],                    # 1 < 2, no botch: dead
             "Dunn": ["9 9 2 2 2", "2 2 2 2 2", "5"]}  # lives; fails: 5 levels fill an extra's 3
    out = casualties("Foot", [ANNA, BORO, CYRA, DUNN], largest_loss=2, total_loss=3, roller=ScriptedRoller([]),
                     typed=typed)
    assert [(c.character, c.fate, c.levels) for c in out] == [("Anna", Fate.WOUNDED, 6), ("Boro", Fate.MAIMED, 0),
                                                               ("Cyra", Fate.DEAD, 0), ("Dunn", Fate.WOUNDED, 5)]
    anna, boro, cyra, dunn = out
    assert anna.infection_check and not anna.incapacitated and anna.pool == 5
    assert boro.maimed and boro.second is not None and boro.second.success
    assert cyra.second_roll is None and not cyra.infection_check
    assert dunn.incapacitated
    assert all(c.rule_ref == "X40" for c in out)


def test_x40_a_unit_that_lost_no_dots_rolls_nothing() -> None:
    assert casualties("Foot", [ANNA], largest_loss=0, total_loss=0, roller=ScriptedRoller([])) == ()


def test_x40_bad_casualty_dice_are_all_named_and_nothing_is_returned() -> None:
    with pytest.raises(InputError) as err:
        casualties("Foot", [ANNA, BORO], largest_loss=1, total_loss=1, roller=ScriptedRoller([]),
                   typed={"Anna": ["7 8 11 2 3"], "Boro": ["7 7 2 2 2", "11s"]},
                   where={"Anna": ["Aftermath!D2"], "Boro": ["Aftermath!D3", "Aftermath!E3"]})
    # Boro's second roll would never be reached if Anna's first stopped the pass: both are named
    assert [str(p) for p in err.value.problems] == [
        "Aftermath!D2: die 3: 11 is not a d10 face (1 to 10, E1)",
        "Aftermath!E3: 11 successes is more than a 5-die pool can roll (0 to 10, E1)"]


def test_x40_a_typed_wound_die_is_one_face_1_to_10() -> None:
    with pytest.raises(InputError, match=r"Aftermath!F2: die 1: 12 is not a d10 face"):
        casualties("Foot", [ANNA], largest_loss=1, total_loss=1, roller=ScriptedRoller([]),
                   typed={"Anna": ["7 2 2 2 2", "2 2 2 2 2", 12]},
                   where={"Anna": ["Aftermath!D2", "Aftermath!E2", "Aftermath!F2"]})
