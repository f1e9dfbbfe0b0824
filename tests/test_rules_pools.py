"""Cohort Sheet 1.1-1.7 and rulings R1-R12: the pools built from the members' sheets."""

from __future__ import annotations

from typing import Any

import pytest

from sheetsync.systems.bbn.rules import (
    CohortSpec,
    HouseRules,
    State,
    compute_pools,
    default_catalog,
)
from sheetsync.systems.bbn.rules.catalog import normalize
from sheetsync.systems.bbn.rules.models import CharacterSheet
from sheetsync.systems.bbn.rules.pools import actions_available, member_movement, temper_cap


def spec(*members: Any, **extra: Any) -> CohortSpec:
    """A cohort of the given members (dicts or plain names), padded to 3 with plain members."""
    people = [m if isinstance(m, dict) else {"name": m} for m in members]
    while len(people) < 3:
        people.append({"name": f"Extra{len(people)}"})
    return CohortSpec.model_validate({"name": "Test", "members": people, **extra})


def levels(paths: dict[str, int]) -> dict[str, dict[str, int]]:
    return {k: {"level": v} for k, v in paths.items()}


def pools(*members: Any, rules: HouseRules | None = None, **extra: Any) -> dict[str, int]:
    return compute_pools(spec(*members, **extra), rules).pools


# -- R7 bases --------------------------------------------------------------------------


@pytest.mark.parametrize("size", [3, 4, 5])
def test_r7_base_values_scale_with_members(size: int) -> None:
    got = pools(*[f"M{i}" for i in range(size)])
    assert got == {"health": 5 * size, "melee": 2 * size, "ranged": 0, "mystical": 0, "defense": 5 * size,
                   "temper": 0, "movement": 1, "resolve": 0, "control": 0}


def test_cohort_sheet_1_2_1_2_ranged_base_counts_only_members_with_a_ranged_attack() -> None:
    assert pools({"name": "A", "ranged_attack": True}, "B", "C")["ranged"] == 2
    assert pools({"name": "A", "ranged_attack": True}, {"name": "B", "ranged_attack": True}, "C")["ranged"] == 4


def test_r6_mystical_is_0_without_modifiers_even_with_other_traits() -> None:
    got = pools({"name": "A", "disciplines": {"Potence": 5}, "abilities": {"Brawl": 5}}, "B", "C")
    assert got["mystical"] == 0
    assert got["melee"] == 6 + 5 + 1


# -- Modifiers, R2-R5 --------------------------------------------------------------------


def test_modifiers_fortitude_4_on_two_characters_gives_8() -> None:
    got = pools({"name": "A", "disciplines": {"Fortitude": 4}}, {"name": "B", "disciplines": {"Fortitude": 4}}, "C")
    assert got["health"] == 15 + 8


@pytest.mark.parametrize(("basis", "melee"), [("pooled", 6 + 2), ("per_ability", 6 + 1)])
def test_r2_ability_bonus_pooled_or_per_ability(basis: str, melee: int) -> None:
    # Brawl 3 + 2 = 5, Rending 4, Melee 4: pooled 13 -> 2; per Ability 1 + 0 + 0
    members = ({"name": "A", "abilities": {"Brawl": 3, "Rending": 4}},
               {"name": "B", "abilities": {"Brawl": 2}},
               {"name": "C", "abilities": {"Melee": 4}})
    assert pools(*members, rules=HouseRules(ability_bonus=basis))["melee"] == melee


def test_r2_the_rulings_example_brawl_3_melee_4_brawl_2_is_plus_1() -> None:
    members = ({"name": "A", "abilities": {"Brawl": 3}}, {"name": "B", "abilities": {"Melee": 4}},
               {"name": "C", "abilities": {"Brawl": 2}})
    assert pools(*members)["melee"] == 6 + 1


def test_r2_abilities_of_one_pool_do_not_add_to_another() -> None:
    # Dodge 4 (defense) + Brawl 4 (melee): neither pool reaches 5
    got = pools({"name": "A", "abilities": {"Dodge": 4, "Brawl": 4}}, "B", "C")
    assert (got["defense"], got["melee"]) == (15, 6)


def test_r3_natural_leader_and_enchanting_voice_give_one_point_per_character() -> None:
    both = pools({"name": "A", "merits": ["Natural Leader", "Enchanting Voice"]}, "B", "C")
    split = pools({"name": "A", "merits": ["Natural Leader"]}, {"name": "B", "merits": ["Enchanting Voice"]}, "C")
    assert both["resolve"] == 1
    assert split["resolve"] == 2


def test_r3_a_merit_counts_once_per_character() -> None:
    assert pools({"name": "A", "merits": ["Rugged", "rugged", "Huge Size"]}, "B", "C")["health"] == 15 + 2


def test_r4_shape_changing_only_the_highest_counts_per_character() -> None:
    got = compute_pools(spec({"name": "A", "disciplines": {"Protean": 3, "Vicissitude": 4, "Serpentis": 1}}))
    assert got.pools["melee"] == 6 + 4
    line = next(c for c in got.breakdown["melee"] if c.member == "A")
    assert "Vicissitude" in line.trait and "only the highest" in line.detail


@pytest.mark.parametrize(("path", "feeds"), [
    ("Path of Mars", {"defense": 3, "resolve": 3}),
    ("Path of Blood", {"temper": 3}),
    ("Weather Control", {"control": 3}),
])
def test_r4_thaumaturgy_paths_named_as_modifiers_count_their_level(path: str, feeds: dict[str, int]) -> None:
    base = pools("A", "B", "C")
    got = pools({"name": "A", "disciplines": {path: 3}}, "B", "C")
    changed = {k: got[k] - base[k] for k in got if got[k] != base[k]}
    assert changed == feeds


def test_r5_combination_gives_plus_3_once_per_pool_and_two_give_6() -> None:
    one = pools({"name": "A", "combination_disciplines": [{"name": "Marble", "includes": ["Fortitude", "Visceratika"]}]})
    two = pools({"name": "A", "combination_disciplines": [
        {"name": "Marble", "includes": ["Fortitude", "Visceratika"]},
        {"name": "Armor", "includes": ["Fortitude", "Potence"]},
    ]})
    assert one["health"] == 15 + 3
    assert two["health"] == 15 + 6
    assert two["melee"] == 6 + 3


def test_r5_combinations_never_count_toward_movement() -> None:
    member = {"name": "A", "combination_disciplines": [{"name": "Blur", "includes": ["Celerity", "Temporis"]}]}
    got = pools(member, {"name": "B", "disciplines": {"Celerity": 4}}, {"name": "C", "disciplines": {"Celerity": 4}})
    assert got["movement"] == 1  # A has no movement discipline of their own
    assert got["defense"] == 15 + 3 + 4 + 4


def test_r5_combo_bonus_house_rule() -> None:
    member = {"name": "A", "combination_disciplines": [{"name": "Armor", "includes": ["Fortitude"]}]}
    assert pools(member, rules=HouseRules(combo_bonus=5))["health"] == 15 + 5
    assert pools(member, rules=HouseRules(combo_bonus=0))["health"] == 15


# -- R6 Mystical -----------------------------------------------------------------------


def test_r6_best_three_offensive_paths_at_most_15() -> None:
    paths = {"Lure of Flames": 5, "Path of Conjuring": 5, "Hands of Destruction": 5, "Ash Path": 5}
    assert pools({"name": "A", "blood_magic_paths": levels(paths)})["mystical"] == 15


def test_r6_the_best_three_are_kept_not_the_first_three() -> None:
    paths = {"Ash Path": 1, "Bone Path": 2, "Lure of Flames": 4, "Vitreous Path": 3}
    assert pools({"name": "A", "blood_magic_paths": levels(paths)})["mystical"] == 4 + 3 + 2


def test_r6_offensive_flag_on_the_sheet_overrides_the_catalog() -> None:
    off = {"name": "A", "blood_magic_paths": {"Lure of Flames": {"level": 3, "offensive": False},
                                              "Green Path": {"level": 2, "offensive": True}}}
    got = compute_pools(spec(off))
    assert got.pools["mystical"] == 2
    assert [n.trait for n in got.not_counted] == ["Lure of Flames"]


def test_r6_occult_and_thanatology_pool_as_abilities() -> None:
    got = pools({"name": "A", "abilities": {"Occult": 3}}, {"name": "B", "abilities": {"Thanatology": 2}})
    assert got["mystical"] == 1


# -- R8 Temper -------------------------------------------------------------------------


@pytest.mark.parametrize(("temper", "in_clan", "given"), [
    (10, False, 10), (30, False, 30), (31, False, 30), (45, False, 30),
    (45, True, 45), (50, True, 50), (80, True, 50),
])
def test_cohort_sheet_1_4_3_temper_caps_30_and_50(temper: int, in_clan: bool, given: int) -> None:
    member = {"name": "A", "temper": temper, "blood_magic_in_clan": in_clan}
    assert temper_cap(CharacterSheet.model_validate(member)) == (50 if in_clan else 30)
    assert pools(member)["temper"] == given


def test_r8_caps_bind_only_the_contribution_not_the_modifiers() -> None:
    member = {"name": "A", "temper": 99, "disciplines": {"Celerity": 5, "Temporis": 5}}
    assert pools(member)["temper"] == 30 + 5 + 5


# -- R9 Resolve ------------------------------------------------------------------------


@pytest.mark.parametrize(("spent", "resolve"), [((0, 0, 0), 0), ((2, 0, 0), 0), ((1, 1, 1), 1), ((4, 4, 0), 2), ((5, 5, 5), 5)])
def test_r9_resolve_is_the_cohorts_willpower_spent_over_3(spent: tuple[int, int, int], resolve: int) -> None:
    members = [{"name": f"M{i}", "willpower_spent": w} for i, w in enumerate(spent)]
    assert pools(*members)["resolve"] == resolve


# -- R10 Movement ----------------------------------------------------------------------


def test_cohort_sheet_1_5_1_movement_example_celerity_2_and_5_gives_3() -> None:
    members = [{"name": "A", "disciplines": {"Celerity": 2}}, {"name": "B", "disciplines": {"Celerity": 5}},
               {"name": "C", "disciplines": {"Celerity": 5}}]
    got = compute_pools(spec(*members))
    assert got.pools["movement"] == 3
    assert got.member_movement == {"A": 2, "B": 5, "C": 5}


def test_r10_single_highest_level_a_lower_pick_and_none_gives_0() -> None:
    cat = default_catalog()
    best = CharacterSheet.model_validate({"name": "A", "disciplines": {"Celerity": 2, "Flight": 4}})
    pick = CharacterSheet.model_validate({"name": "B", "disciplines": {"Celerity": 2, "Flight": 4},
                                          "movement_discipline": "celerity"})
    none = CharacterSheet.model_validate({"name": "C", "disciplines": {"Potence": 4}})
    assert member_movement(best, cat) == (4, "Flight")
    assert member_movement(pick, cat) == (2, "Celerity")
    assert member_movement(none, cat) == (0, None)


# -- R11 Actions -----------------------------------------------------------------------


@pytest.mark.parametrize(("states", "scared_loses", "actions"), [
    ([State.ACTIVE] * 5, True, 5),
    ([State.ACTIVE, State.SCARED, State.KNOCKED_OUT, State.STABILIZED, State.DEAD], True, 1),
    ([State.ACTIVE, State.SCARED, State.KNOCKED_OUT, State.STABILIZED, State.DEAD], False, 2),
    ([State.DEAD] * 3, True, 0),
])
def test_r11_actions_are_members_able_to_act(states: list[State], scared_loses: bool, actions: int) -> None:
    assert actions_available(states, HouseRules(scared_loses_action=scared_loses)) == actions


# -- R12 Names -------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b"), [
    ("Path of Mars", "path  of MARS"),
    ("Thaumaturgy: Path of Mars", "Path of Mars"),
    ("Thaumaturgy - Lure of Flames", "lure of flames"),
    ("Neptune's Might", "Neptunes Might"),
])
def test_r12_names_match_without_case_spacing_or_leading_thaumaturgy(a: str, b: str) -> None:
    assert normalize(a) == normalize(b)


def test_r12_synonyms_path_of_weather_control() -> None:
    cat = default_catalog()
    assert cat.canonical("Path of Weather Control") == "Weather Control"
    assert cat.canonical("Thaumaturgy: Path of Weather Control") == "Weather Control"
    assert pools({"name": "A", "disciplines": {"Path of Weather Control": 2}})["control"] == 2


def test_r12_unknown_trait_is_kept_listed_and_never_counted() -> None:
    member = {"name": "A", "abilities": {"Knitting": 5}, "merits": ["Lucky"], "disciplines": {"Chimerstry": 3}}
    got = compute_pools(spec(member))
    assert got.pools == compute_pools(spec("A")).pools
    assert sorted((n.member, n.trait, n.kind) for n in got.not_counted) == [
        ("A", "Chimerstry", "discipline"), ("A", "Knitting", "ability"), ("A", "Lucky", "merit")]
    assert all("R12" in n.reason for n in got.not_counted)


def test_r12_a_misspelled_trait_is_not_counted_and_gets_a_did_you_mean() -> None:
    member = {"name": "A", "disciplines": {"Fortitud": 3}, "abilities": {"Knitting": 5}}
    reasons = {n.trait: n.reason for n in compute_pools(spec(member)).not_counted}
    assert reasons["Fortitud"].endswith("(did you mean 'Fortitude'?)")
    assert "did you mean" not in reasons["Knitting"]


def test_r12_breakdown_lists_every_trait_that_counted_with_who_gave_it() -> None:
    got = compute_pools(spec({"name": "A", "disciplines": {"Fortitude": 2}, "merits": ["Rugged"]},
                             {"name": "B", "disciplines": {"Fortitude": 1}}))
    lines = {(c.member, c.trait, c.amount) for c in got.breakdown["health"]}
    assert {("A", "Fortitude 2", 2), ("A", "Rugged", 1), ("B", "Fortitude 1", 1)} <= lines
    for pool, value in got.pools.items():
        assert sum(c.amount for c in got.breakdown[pool]) == value
        assert all(c.rule_ref for c in got.breakdown[pool])


# -- R1 hand-set pools, catalog --------------------------------------------------------


def test_r1_hand_set_pools_replace_only_those_pools() -> None:
    got = compute_pools(spec("A", "B", "C", "D", pools={"health": 40, "defense": 7}))
    assert got.pools["health"] == 40
    assert got.pools["defense"] == 7
    assert got.pools["melee"] == 8
    assert [c.kind for c in got.breakdown["health"]] == ["manual"]


def test_catalog_extension_makes_a_new_trait_count() -> None:
    cat = default_catalog().extend({"pools": {"health": {"merits": ["Tough as Nails"]}},
                                    "synonyms": {"Tough": "Tough as Nails"}})
    got = compute_pools(spec({"name": "A", "merits": ["Tough"]}), catalog=cat)
    assert got.pools["health"] == 16
    assert got.not_counted == ()
    # the shipped catalog is unchanged
    assert compute_pools(spec({"name": "A", "merits": ["Tough"]})).pools["health"] == 15
