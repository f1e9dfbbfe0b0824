"""Exalted battles of any size, for tests and benchmarks: two lines of units facing each
other, each unit's commander leading a Close attack on the enemy unit facing it on every
long tick it acts (X28-X34), so every order is legal and the battle runs to its end."""

from __future__ import annotations

from typing import Any

__all__ = ["make_exalted_battle"]


def _commander(name: str, i: int) -> dict[str, Any]:
    return {"name": name, "role": "commander", "dexterity": 3 + i % 2, "strength": 3, "stamina": 3, "charisma": 3,
            "wits": 3, "essence": 1 + i % 2, "valor": 3, "willpower": 5,
            "abilities": {"Melee": 3 + i % 2, "War": 3, "Dodge": 2, "Awareness": 2},
            "close_weapon": {"name": "Spear", "ability": "Melee", "accuracy": 1, "damage": 4,
                             "damage_type": "Lethal", "defense": 1, "speed": 5},
            "armor_soak": 3}


def make_exalted_battle(units: int = 8, *, seed: int = 7, members: int = 24) -> dict[str, Any]:
    """A battle-file dict with ``units`` units (half a side each, ``members`` extras
    each), every unit attacking the enemy facing it on long tick 0."""
    per_side = (units + 1) // 2
    data: dict[str, Any] = {"system": "exalted", "seed": seed, "characters": [], "units": [], "orders": []}
    for i in range(units):
        side = "Realm" if i < per_side else "Bandits"
        k = i % per_side
        name = f"{'Talon' if side == 'Realm' else 'Mob'} {k + 1}"
        chief = f"{name} leader"
        data["characters"].append(_commander(chief, i))
        data["units"].append({
            "name": name, "side": side, "commander": chief, "members": [{"kind": "Extra", "count": members}],
            "drill": 2 + i % 3, "might": i % 2, "formation": "Relaxed" if i % 2 else "Close",
            "avg_dexterity": 2 + i % 2, "avg_strength": 3, "avg_stamina": 2.5, "avg_valor": 3,
            "close_ability": 2 + i % 2, "close_accuracy": 1, "close_damage": 3, "avg_lethal_soak": 4.5,
            "avg_fatigue": 1, "shields": bool(i % 2)})
    names = [u["name"] for u in data["units"]]
    for i, name in enumerate(names):
        foe = names[(i + per_side) % units] if units > 1 else name
        data["orders"].append({"tick": 0, "unit": name, "action": "Attack", "target": foe, "option": "Close"})
    return data
