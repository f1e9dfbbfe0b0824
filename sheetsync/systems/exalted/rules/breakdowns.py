"""Computed views of an Exalted battle file: the derived traits with their breakdowns
(X1-X11), each typed attack's odds (E1, E7, X28-X33), and the aftermath (X40, X41)."""

from __future__ import annotations

from typing import Any

from sheetsync.core.dice import RandomRoller, Roller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules.aftermath import Fate, casualties, healing_days
from sheetsync.systems.exalted.rules.battle import (
    acting_ticks,
    current_unit,
    departures_at_end,
    odds_json,
    roll_json,
    trait_json,
)
from sheetsync.systems.exalted.rules.health import essence_against_magic
from sheetsync.systems.exalted.rules.state import Battle

__all__ = ["aftermath_json", "pools_json"]

_TRAITS = ("headcount", "magnitude", "drill", "endurance", "might", "close_rating", "ranged_rating", "close_damage",
           "ranged_damage", "armor", "mobility", "hardness", "shield", "morale")


def pools_json(battle: Battle) -> dict[str, Any]:
    """X1-X11: each unit's traits as it stands now (its current commander, formation and
    special characters), each with its breakdown; X5's Essence against magic; the long tick
    each unit acts on next (E4, E5: before the first resolve, with the Join War rolls that
    decide it); and the odds of every typed attack."""
    units = []
    for u in battle.units:
        spec, t, st = current_unit(battle, u.name)
        units.append({"name": u.name, "side": u.spec.side, "commander": st.commander, "solo": st.solo,
                      "traits": {k: trait_json(getattr(t, k)) for k in _TRAITS},
                      "essence_against_magic": trait_json(essence_against_magic(spec)),
                      "close_damage_type": t.close_damage_type.value, "ranged_damage_type": t.ranged_damage_type.value,
                      "perfect_morale": t.perfect_morale, "communication_failure": t.communication_failure,
                      "formation": st.formation.value, "magnitude_now": st.magnitude,
                      "endurance_now": st.endurance})
    return {"system": "exalted", "tick": battle.tick, "started": battle.started, "units": units,
            "acting": _acting(battle), "orders": odds_json(battle)}


def _acting(battle: Battle) -> dict[str, Any]:
    """E4, E5: the long tick each unit acts on next and, before the first resolve, the Join
    War rolls that decide it (as that resolve will roll them); a Join War die typed wrong
    is said instead."""
    try:
        ticks, join = acting_ticks(battle)
    except InputError as exc:
        return {"ticks": {}, "join_war": None, "problem": "; ".join(f"{p.where}: {p.message}" for p in exc.problems),
                "rule_ref": "E4"}
    return {"ticks": ticks, "join_war": join, "rule_ref": "E4, E5" if join else "E5"}


def aftermath_json(battle: Battle, roller: Roller | None = None) -> dict[str, Any]:
    """X40, X41: for each unit that lost dots, each named rank-and-file member's casualty
    rolls (Wits + Willpower against the largest loss in one event, then against the total),
    and each unit's healing days back to its starting Magnitude; X11: the special characters
    beyond a unit's limit leave at battle end (``leaving``).  Dice come from the seed
    (``f"{seed}:aftermath"``)."""
    roller = roller if roller is not None else RandomRoller(f"{battle.seed}:aftermath")
    leaving = departures_at_end(battle)  # X11
    units = []
    for u in battle.units:
        st = battle.state_of(u.name)
        assert st is not None
        members = [c for n in u.named_members if (c := battle.character(n)) is not None]
        fates: list[dict[str, Any]] = []
        if st.destroyed:  # X34: destroyed by damage, everyone is dead save the former commander
            fates = [{"character": c.name, "fate": Fate.DEAD.value, "levels": 0, "first_roll": None,
                      "second_roll": None, "wound_roll": None, "infection_check": False, "rule_ref": "X34"}
                     for c in members]
        elif st.dots_lost and members:
            for cas in casualties(u.name, members, largest_loss=st.largest_loss, total_loss=st.dots_lost,
                                  roller=roller, rules=battle.house_rules):
                fates.append({"character": cas.character, "fate": cas.fate.value, "levels": cas.levels,
                              "first_roll": roll_json(cas.first_roll), "second_roll": roll_json(cas.second_roll),
                              "wound_roll": roll_json(cas.wound_roll), "infection_check": cas.infection_check,
                              "rule_ref": "X40"})
        days = healing_days(st.magnitude, st.starting_magnitude)
        units.append({"name": u.name, "side": u.spec.side, "magnitude": st.magnitude,
                      "starting_magnitude": st.starting_magnitude, "dots_lost": st.dots_lost,
                      "largest_loss": st.largest_loss, "fallen": list(st.fallen), "casualties": fates,
                      "healing_days": trait_json(days), "leaving": leaving.get(u.name, []),
                      "rule_ref": "X40, X41, X11"})
    return {"system": "exalted", "tick": battle.tick, "units": units}
