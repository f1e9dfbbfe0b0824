"""Counters in the text's notation (3.0, 7.0, H1) and proportional reduction (6.2.2, H10)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.systems.hexwar.rules import (
    Charge,
    Counter,
    RangeKind,
    parse_counter,
    reduce_charge,
    reduce_value,
)

SETTINGS = settings(max_examples=200, deadline=None, database=None)


@pytest.mark.parametrize(("text", "attack", "charge", "kind", "n"), [
    ("3+ - 2 - 4 - 1", 3, "+", "plain", None),
    ("4++ - 4 - 3 - 1", 4, "++", "plain", None),
    ("4 - 3 - 1 - 2(3)", 4, "", "reduced", 3),
    ("4 - 4 - 1 - 2(2)", 4, "", "reduced", 2),
    ("4 - 3 - 1 - 2(--)", 4, "", "extended", None),
    ("5-4-1-2(2)", 5, "", "reduced", 2),
    ("3+ \u2013 2 \u2013 4 \u2013 1", 3, "+", "plain", None),
])
def test_h1_counters_of_3_0_and_7_0_parse(text: str, attack: int, charge: str, kind: str, n: int | None) -> None:
    c = parse_counter(text)
    assert (c.attack, c.charge.value, c.range_kind.value, c.reduced_attack) == (attack, charge, kind, n)


def test_h1_counter_prints_in_the_texts_notation() -> None:
    assert str(parse_counter("4-4-1-2(2)")) == "4 - 4 - 1 - 2(2)"
    assert str(parse_counter("4++ -4- 3 -1")) == "4++ - 4 - 3 - 1"
    assert str(parse_counter("4 - 3 - 1 - 2( -- )")) == "4 - 3 - 1 - 2(--)"


@SETTINGS
@given(st.integers(0, 12), st.sampled_from(list(Charge)), st.integers(1, 12), st.integers(0, 9), st.integers(1, 9),
       st.sampled_from(list(RangeKind)), st.integers(1, 9))
def test_h1_counter_print_parse_round_trips(a: int, ch: Charge, d: int, m: int, r: int, kind: RangeKind,
                                            n: int) -> None:
    c = Counter(attack=a, charge=ch, defense=d, movement=m, range=r, range_kind=kind,
                reduced_attack=n if kind is RangeKind.REDUCED else None)
    assert parse_counter(str(c)) == c


@pytest.mark.parametrize("bad", ["3+ - x - 4", "3 - 3 - 1", "3+++ - 2 - 4 - 1", "3 - 3 - 1 - 1(x)", "", None, 3,
                                 "3 - 3 - 1 - 1 - 1"])
def test_h1_a_malformed_counter_says_what_a_counter_looks_like(bad: object) -> None:
    with pytest.raises(ValueError, match=r"is not a counter \(expected attack - defense - movement - range"):
        parse_counter(bad)


@pytest.mark.parametrize(("text", "what"), [("4 - 0 - 1 - 1", "defense 0"), ("4 - 3 - 1 - 0", "range 0"),
                                            ("4 - 3 - 1 - 2(0)", "reduced range value of 0")])
def test_h1_zero_values_that_cannot_work_are_refused(text: str, what: str) -> None:
    with pytest.raises(ValueError, match=what):
        parse_counter(text)


@pytest.mark.parametrize(("v", "c", "want"), [
    (4, 0, 4), (4, 24, 4), (4, 25, 3), (4, 49, 3), (4, 50, 2), (4, 74, 2), (4, 75, 1), (4, 99, 1),
    (3, 32, 3), (3, 33, 2), (3, 65, 2), (3, 66, 1), (2, 49, 2), (2, 50, 1), (1, 99, 1), (5, 20, 4), (5, 80, 1),
])
def test_h10_6_2_2_reduction_steps(v: int, c: int, want: int) -> None:
    assert reduce_value(v, c) == want
    assert reduce_value(v, c, proportional=False) == v


@SETTINGS
@given(st.integers(1, 12), st.integers(0, 150), st.integers(0, 150))
def test_h10_reduction_never_rises_with_casualties_and_keeps_1(v: int, c1: int, c2: int) -> None:
    lo, hi = sorted((c1, c2))
    assert reduce_value(v, hi) <= reduce_value(v, lo) <= v
    assert reduce_value(v, hi) >= 1


def test_h10_6_2_2_charge_marks_at_50_percent() -> None:
    assert reduce_charge(Charge.ONE, 49) is Charge.ONE
    assert reduce_charge(Charge.ONE, 50) is Charge.NONE
    assert reduce_charge(Charge.TWO, 50) is Charge.ONE
    assert reduce_charge(Charge.TWO, 90, proportional=False) is Charge.TWO
    assert Charge.TWO.bonus == 2 and Charge.ONE.bonus == 1 and Charge.NONE.bonus == 0
