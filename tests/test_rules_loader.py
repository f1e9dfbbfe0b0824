"""Battle files: one InputError listing every problem with its path; the catalog key; round trips."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError, SheetSyncError
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle
from sheetsync.systems.bbn.rules import Battle, State, Task, resolve_phase


def base() -> dict[str, Any]:
    return {
        "cohorts": [
            {"name": "Alpha", "sergeant": "Ann", "members": ["Ann", "Bob", {"name": "Cat", "temper": 5}]},
            {"name": "Ghouls", "side": "enemy", "members": ["G1", "G2", "G3"]},
        ],
        "ranges": [["Alpha", "Ghouls", "Personal"]],
        "orders": [{"cohort": "Alpha", "task": "Move"}],
    }


def problems(data: Any) -> list[str]:
    with pytest.raises(InputError) as info:
        load_battle(data)
    assert isinstance(info.value, SheetSyncError)
    return [str(p) for p in info.value.problems]


def test_loader_a_malformed_file_gives_one_error_listing_every_problem() -> None:
    data = base()
    data["cohorts"][0]["members"].append({"name": "Dot", "temper": "lots"})
    data["orders"] = [{"cohort": "Alpha", "task": "Move"}] * 3 + [{"cohort": "Alpha", "task": "Melee", "target": "Ghouls"}]
    data["cohorts"][1]["health"] = "plenty"
    data["ranges"].append(["Alpha", "Ghouls", "Near"])
    data["house_rules"] = {"damage_basis": "dice"}
    got = problems(data)
    assert "cohorts[0].members[3].temper: 'lots' is not a whole number" in got
    assert ("orders[3].task: 'Melee' is not a task (expected one of Move, Melee Attack, Ranged Attack, "
            "Mystical Attack, Inspire, Intimidate, Rescue, Analyze, Heal, Hero Moment, Tactical Task)") in got
    assert "cohorts[1].health: 'plenty' is not a whole number" in got
    assert any(p.startswith("ranges[1].band: 'Near' is not a range band") for p in got)
    assert any(p.startswith("house_rules.damage_basis: 'dice' is not one of") for p in got)
    # nothing else: the orders of the malformed cohort are not reported again
    assert len(got) == 5, got


def test_loader_error_message_lists_every_problem_on_its_own_line() -> None:
    data = base()
    data["orders"] = [{"cohort": "Alpha", "task": "Fly"}, {"cohort": "Nobody", "task": "Move"}]
    with pytest.raises(InputError) as info:
        load_battle(data, "battle.yaml")
    text = str(info.value)
    assert text.splitlines()[0] == "2 problems in battle.yaml:"
    assert "  orders[0].task: 'Fly' is not a task" in text
    assert "  orders[1].cohort: 'Nobody' is not a cohort (expected one of Alpha, Ghouls)" in text


def test_loader_a_malformed_cohort_does_not_hide_the_state_of_another() -> None:
    data = base()
    data["cohorts"][0]["members"][0] = {"name": ""}
    data["cohorts"][1]["states"] = {"G2": "Sleeping", "G9": "Dead"}
    got = problems(data)
    assert got[0] == "cohorts[0].members[0].name: must not be empty"
    assert "cohorts[1].states.G9: 'G9' is not a member of Ghouls" in got
    assert any(p.startswith("cohorts[1].states.G2: 'Sleeping' is not a state") for p in got)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("health", 16, "cohorts[0].health: 16 is more than Alpha's maximum Health 15"),
    ("temper", -1, "cohorts[0].temper: -1 is less than 0"),
    ("control", -2, "cohorts[0].control: -2 is less than 0"),
])
def test_loader_impossible_standing_is_refused(key: str, value: int, message: str) -> None:
    data = base()
    data["cohorts"][0][key] = value
    assert any(p.startswith(message) for p in problems(data))


def test_r1_size_limits_name_the_cohort_and_allow_any_size_lifts_them() -> None:
    data = base()
    data["cohorts"][1]["members"] = ["G1", "G2"]
    (p,) = problems(data)
    assert p.startswith("cohorts[1].members: Ghouls has 2 members; a cohort has 3 to 5")
    data["house_rules"] = {"allow_any_size": True}
    assert len(load_battle(data).spec["Ghouls"].members) == 2


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: d["cohorts"].append(copy.deepcopy(d["cohorts"][1])), "cohorts[2].name: 'Ghouls' names two cohorts"),
    (lambda d: d["cohorts"][1].update(members=["G1", "G1", "G3"]), "cohorts[1].members[1].name: 'G1' is in Ghouls twice"),
    (lambda d: d["cohorts"][0].update(sergeant="Zed"), "cohorts[0].sergeant: 'Zed' is not a member of Alpha"),
    (lambda d: d["cohorts"][0].update(aegis={"Zed": 1}), "cohorts[0].aegis.Zed: 'Zed' is not a member of Alpha"),
    (lambda d: d["cohorts"][0].update(aegis={"Ann": 4}), "cohorts[0].aegis.Ann: 4 is more than 3"),
    (lambda d: d["cohorts"][0].update(hero_used=["Zed"]), "cohorts[0].hero_used: 'Zed' is not a member of Alpha"),
    (lambda d: d["cohorts"][1].update(pools={"helth": 3}), "cohorts[1].pools.helth: 'helth' is not a pool (did you mean 'health'?)"),
    (lambda d: d["cohorts"][0].update(colour="red"), "cohorts[0].colour: is not a key sheetsync knows"),
    (lambda d: d.update(weather="rain"), "weather: is not a key sheetsync knows"),
    (lambda d: d.update(phase=0), "phase: 0 is not a phase number"),
    (lambda d: d.update(cohorts=[]), "cohorts: must be a list of at least one cohort"),
    (lambda d: d["ranges"].append(["Alpha", "Nowhere", "Personal"]), "ranges[1][1]: 'Nowhere' is not a cohort"),
    (lambda d: d["ranges"].append(["Alpha"]), "ranges[1]: must be [cohort, cohort, band]"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Melee Attack"}), "orders[1].target: Melee Attack needs a target cohort"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Melee Attack", "target": "X"}), "orders[1].target: 'X' is not a cohort"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Inspire", "target": "Ghouls"}), "orders[1].benefit: Inspire needs a benefit"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Rescue"}), "orders[1].member: Rescue needs the member to rescue"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Rescue", "member": "G1"}), "orders[1].member: 'G1' is not a member of Alpha"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Heal", "temper": 0}), "orders[1].temper: 0 is not 1 to 10"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Melee Attack", "target": "Ghouls", "roll": 11}), "orders[1].roll: 11 is more than 10"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Hero Moment"}), "orders[1].member: a Hero Moment needs its hero"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Hero Moment", "member": "Ann", "moment": "Boost a Pool"}),
     "orders[1].pool: Boost a Pool needs the pool"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Hero Moment", "member": "Ann", "moment": "Save an Ally"}),
     "orders[1].ally: Save an Ally needs the ally to save"),
    (lambda d: d["orders"].append({"cohort": "Alpha", "task": "Hero Moment", "member": "Ann", "moment": "Dance"}),
     "orders[1].moment: 'Dance' is not a Hero Moment (expected one of Save an Ally"),
])
def test_loader_each_problem_has_its_path(change: Any, expected: str) -> None:
    data = base()
    change(data)
    got = problems(data)
    assert any(p.startswith(expected) for p in got), got


def test_loader_not_a_mapping() -> None:
    assert problems([1, 2]) == ["the file must hold a mapping with a 'cohorts' list"]


def test_loader_labels_are_matched_whatever_their_case_and_spacing() -> None:
    data = base()
    data["cohorts"][0]["states"] = {"Bob": "knocked out"}
    data["ranges"] = [["Alpha", "Ghouls", "in-sight"]]
    data["orders"] = [{"cohort": "Alpha", "task": "melee  attack", "target": "Ghouls"},
                      {"cohort": "Alpha", "task": "hero moment", "member": "Ann", "moment": "kill 'em all"}]
    b = load_battle(data)
    assert b.state["Alpha"].states["Bob"] is State.KNOCKED_OUT
    assert [o.task for o in b.orders] == [Task.MELEE, Task.HERO_MOMENT]
    assert b.band("Ghouls", "Alpha").value == "In-Sight"


def test_loader_shorthands_members_as_names_merits_as_text_paths_as_levels() -> None:
    data = base()
    data["cohorts"][0]["members"][1] = {"name": "Bob", "merits": "Rugged, Iron Will", "blood_magic_paths": {"Lure of Flames": 3}}
    b = load_battle(data)
    bob = b.spec["Alpha"].members[1]
    assert bob.merits == ("Rugged", "Iron Will")
    assert bob.blood_magic_paths["Lure of Flames"].level == 3
    assert b.pools["Alpha"].pools["mystical"] == 3


def test_r12_unknown_trait_names_are_kept_and_listed_in_not_counted() -> None:
    data = base()
    data["cohorts"][0]["members"][0] = {"name": "Ann", "disciplines": {"Sorcery of Stars": 2}, "abilities": {"Brawl": 5}}
    b = load_battle(data)
    assert b.spec["Alpha"].members[0].disciplines == {"Sorcery of Stars": 2}
    assert [(n.member, n.trait) for n in b.pools["Alpha"].not_counted] == [("Ann", "Sorcery of Stars")]


def test_loader_catalog_key_extends_the_shipped_catalog() -> None:
    data = base()
    data["cohorts"][0]["members"][0] = {"name": "Ann", "disciplines": {"Sorcery of Stars": 2}, "merits": ["Stout"]}
    data["catalog"] = {"pools": {"mystical": {"disciplines": ["Sorcery of Stars"]},
                                 "health": {"merits": ["Stout Heart"]}},
                       "synonyms": {"Stout": "Stout Heart"}}
    b = load_battle(data)
    assert b.pools["Alpha"].pools["mystical"] == 2
    assert b.pools["Alpha"].pools["health"] == 16
    assert b.pools["Alpha"].not_counted == ()
    assert load_battle(battle_to_file(b)) == b


@pytest.mark.parametrize("catalog", [
    {"pools": {"health": {"merits": "Stout"}}},
    {"pools": ["health"]},
    {"synonyms": ["Stout"]},
    "not a mapping",
])
def test_loader_a_malformed_catalog_is_an_input_error(catalog: Any) -> None:
    data = base()
    data["catalog"] = catalog
    got = problems(data)
    assert len(got) == 1 and got[0].startswith("catalog")


# -- round trips ------------------------------------------------------------------------


def fought() -> tuple[Battle, Any]:
    data = base()
    data["seed"] = 5
    data["house_rules"] = {"damage_basis": "members", "combo_bonus": 2}
    data["cohorts"][0].update(pools={"melee": 12, "temper": 6}, aegis={"Ann": 2}, lasting_rolls={"Bob": 4})
    data["cohorts"][1].update(health=4, states={"G3": "Knocked Out"})
    data["orders"] = [{"cohort": "Alpha", "task": "Melee Attack", "target": "Ghouls", "roll": 7, "picks": [2]},
                      {"cohort": "Alpha", "task": "Hero Moment", "member": "Ann", "moment": "Boost a Pool", "pool": "temper"},
                      {"cohort": "Ghouls", "task": "Melee Attack", "target": "Alpha"},
                      {"cohort": "Alpha", "task": "Tactical Task", "text": "bridge"}]
    b = load_battle(data)
    return b, resolve_phase(b, ScriptedRoller([4]))


def test_loader_battle_to_file_round_trips_before_and_after_a_phase() -> None:
    b, result = fought()
    assert load_battle(battle_to_file(b)) == b
    assert load_battle(battle_to_file(result.battle)) == result.battle
    # and through YAML and JSON text, as the CLI writes it
    assert load_battle(yaml.safe_load(yaml.safe_dump(battle_to_file(result.battle)))) == result.battle
    assert load_battle(json.loads(json.dumps(battle_to_file(result.battle)))) == result.battle


def test_loader_phase_result_json_round_trip() -> None:
    _, result = fought()
    data = result.to_json()
    assert json.loads(json.dumps(data)) == data
    assert len(data["events"]) == 4
    assert data["events"][0]["rolls"][0] == {"value": 7, "sides": 10, "source": "entered", "purpose": "d10 + melee"}
    assert {c["name"] for c in data["cohorts"]} == {"Alpha", "Ghouls"}


def test_loader_the_log_keeps_every_event_with_its_phase() -> None:
    _, result = fought()
    assert [e["phase"] for e in result.battle.log] == [1, 1, 1, 1]
    assert [e["task"] for e in result.battle.log] == ["Melee Attack", "Hero Moment", "Melee Attack", "Tactical Task"]
    assert result.battle.history[0]["phase"] == 1
