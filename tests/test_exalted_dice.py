"""E1-E3: Exalted success pools, typed dice, and the exact odds of a pool."""

from __future__ import annotations

from fractions import Fraction

import pytest

from sheetsync.core.dice import RandomRoller, ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules.dice import (
    DiceSource,
    at_least,
    botch_chance,
    count_successes,
    expected_successes,
    judge,
    parse_dice,
    roll_pool,
    success_distribution,
)


def test_e1_seven_to_nine_is_one_ten_is_two() -> None:
    # 7 + 3 + 10 + 2 + 1: 7 -> 1, 10 -> 2: 3 successes
    assert count_successes([7, 3, 10, 2, 1]) == 3
    assert count_successes([6, 7, 8, 9]) == 3


def test_e1_damage_rolls_count_a_ten_once() -> None:
    assert count_successes([10, 10, 7], damage=True) == 3


def test_e1_extras_double_tens_off_counts_a_ten_once() -> None:
    assert count_successes([10, 10, 7], double_tens=False) == 3


def test_e1_typed_faces_are_the_roll_and_the_source_says_so() -> None:
    roll = roll_pool(5, ScriptedRoller([]), "7 3 10 2 1")
    assert (roll.successes, roll.faces, roll.source) == (3, (7, 3, 10, 2, 1), DiceSource.FACES)


def test_e1_typed_success_count_is_the_roll() -> None:
    roll = roll_pool(5, ScriptedRoller([]), "4s")
    assert (roll.successes, roll.faces, roll.source) == (4, (), DiceSource.SUCCESSES)
    assert roll_pool(5, ScriptedRoller([]), "2 successes").successes == 2


def test_e1_a_one_die_pool_types_its_face_with_a_separator() -> None:
    assert roll_pool(1, ScriptedRoller([]), "10,").faces == (10,)
    assert roll_pool(1, ScriptedRoller([]), [1]).faces == (1,)


def test_e1_blank_rolls_from_the_roller() -> None:
    roll = roll_pool(3, ScriptedRoller([7, 10, 1]), "  ")
    assert (roll.successes, roll.faces, roll.source) == (3, (7, 10, 1), DiceSource.ROLLED)


def test_e1_pool_of_zero_or_less_rolls_nothing_and_cannot_botch() -> None:
    roll = roll_pool(-2, ScriptedRoller([]))
    assert (roll.dice, roll.successes, roll.source) == (0, 0, DiceSource.NO_DICE)
    assert not judge(roll, 0).botch


@pytest.mark.parametrize("typed", ["7 3 11 2 1", "7 3 0 2 1", [7, 3, 10, 2, 12]])
def test_e1_typed_face_outside_1_to_10_is_an_input_error_naming_the_cell(typed: object) -> None:
    with pytest.raises(InputError) as err:
        roll_pool(5, ScriptedRoller([]), typed, where="Orders!L7")  # type: ignore[arg-type]
    assert "Orders!L7" in str(err.value) and "not a d10 face" in str(err.value)


def test_e1_wrong_number_of_faces_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"Orders!L7: 3 faces typed for a 5-die pool"):
        roll_pool(5, ScriptedRoller([]), "7 3 10", where="Orders!L7")


def test_e1_success_count_above_the_pool_is_an_input_error() -> None:
    # 3 dice: at most 6 successes (three 10s); 7 is impossible
    with pytest.raises(InputError, match=r"Orders!L7: 7 successes is more than a 3-die pool can roll"):
        parse_dice("7s", 3, "Orders!L7")
    # on damage a 10 is one success: at most 3
    with pytest.raises(InputError, match="more than a 3-die pool"):
        parse_dice("4s", 3, "Orders!L7", damage=True)
    assert parse_dice("6s", 3, "Orders!L7") == (None, 6)


@pytest.mark.parametrize("typed", ["many", "7 three", True, "-1"])
def test_e1_nonsense_in_a_die_cell_is_an_input_error(typed: object) -> None:
    with pytest.raises(InputError, match="Orders!L7"):
        parse_dice(typed, 3, "Orders!L7")  # type: ignore[arg-type]


def test_e2_threshold_is_the_excess_over_the_difficulty() -> None:
    out = judge(roll_pool(4, ScriptedRoller([]), "10 8 2 3"), 2)
    assert (out.net, out.success, out.threshold, out.botch) == (3, True, 1, False)


def test_e2_botch_is_no_success_and_a_one() -> None:
    out = judge(roll_pool(3, ScriptedRoller([]), "1 4 6"), 1)
    assert out.botch and not out.success
    assert not judge(roll_pool(3, ScriptedRoller([]), "2 4 6"), 1).botch


def test_e2_automatic_successes_add_and_prevent_a_botch() -> None:
    out = judge(roll_pool(3, ScriptedRoller([]), "1 4 6"), 1, automatic=2)
    assert (out.botch, out.net, out.success, out.threshold) == (False, 2, True, 1)


def test_e2_at_difficulty_0_only_a_botch_fails() -> None:
    assert judge(roll_pool(2, ScriptedRoller([]), "2 3"), 0).success
    assert not judge(roll_pool(2, ScriptedRoller([]), "1 3"), 0).success


def test_e3_external_penalty_comes_off_after_the_roll_never_below_0() -> None:
    # 9 10 -> 3 successes; -2 external -> 1; -5 external -> 0, not negative
    roll = roll_pool(2, ScriptedRoller([]), "9 10")
    assert judge(roll, 1, external=2).net == 1
    assert judge(roll, 0, external=5).net == 0


def test_e3_botch_is_judged_on_the_dice_before_external_penalties() -> None:
    # 7 successes on the dice never botch, whatever the external penalty
    out = judge(roll_pool(2, ScriptedRoller([]), "7 1"), 1, external=3)
    assert not out.botch and not out.success


@pytest.mark.parametrize("dice", [0, 1, 2, 5, 12])
@pytest.mark.parametrize("damage", [False, True])
def test_e1_distribution_sums_to_1(dice: int, damage: bool) -> None:
    dist = success_distribution(dice, damage=damage)
    assert sum(dist) == 1
    assert len(dist) == (dice if damage else 2 * dice) + 1


def test_e1_distribution_of_one_die_is_6_3_1_tenths() -> None:
    assert success_distribution(1) == (Fraction(6, 10), Fraction(3, 10), Fraction(1, 10))
    assert success_distribution(1, damage=True) == (Fraction(6, 10), Fraction(4, 10))


def test_e1_two_dice_by_hand() -> None:
    # 0: .6^2 = .36; 1: 2(.6)(.3) = .36; 2: .3^2 + 2(.6)(.1) = .21; 3: 2(.3)(.1) = .06; 4: .01
    assert success_distribution(2) == tuple(Fraction(x, 100) for x in (36, 36, 21, 6, 1))
    assert at_least(2, 3) == Fraction(7, 100)
    assert at_least(2, 0) == 1


@pytest.mark.parametrize("damage", [False, True])
def test_e1_distribution_matches_a_100000_roll_simulation(damage: bool) -> None:
    dice, n = 7, 100_000
    roller = RandomRoller(20261201)
    counts: dict[int, int] = {}
    for _ in range(n):
        s = count_successes([roller.roll(10) for _ in range(dice)], damage=damage)
        counts[s] = counts.get(s, 0) + 1
    for k, p in enumerate(success_distribution(dice, damage=damage)):
        assert abs(counts.get(k, 0) / n - float(p)) < 0.005, k


def test_e1_expected_successes_half_a_die_or_two_fifths_on_damage() -> None:
    assert expected_successes(7) == Fraction(7, 2)
    assert expected_successes(5, damage=True) == 2
    dist = success_distribution(7)
    assert sum(k * p for k, p in enumerate(dist)) == expected_successes(7)


def test_e2_botch_chance_is_no_success_minus_no_success_and_no_one() -> None:
    # 2 dice: .36 - .25 = .11
    assert botch_chance(2) == Fraction(11, 100)
    assert botch_chance(0) == 0
