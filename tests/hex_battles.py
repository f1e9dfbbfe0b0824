"""Hex wargame battles of any size, for tests and benchmarks: two lines of units facing
each other across the map; each unit steps forward one hex and attacks the enemy it then
faces, so every order of the turn is legal (H4, H6, H7)."""

from __future__ import annotations

from typing import Any

__all__ = ["make_hex_battle"]

COUNTERS = ("3 - 3 - 1 - 1", "4 - 4 - 1 - 2(2)", "3+ - 2 - 2 - 1", "4 - 3 - 1 - 2(--)")


def make_hex_battle(units: int = 40, *, seed: int = 3, typed_rolls: bool = False) -> dict[str, Any]:
    """A battle-file dict with ``units`` units (half a side each), their moves and attacks."""
    per_side = (units + 1) // 2
    rows = max(10, per_side + 2)
    data: dict[str, Any] = {
        "system": "hexwar", "seed": seed,
        "map": {"columns": 20, "rows": rows, "impassable": ["0101", "2001"]},
        "units": [], "turn": {"initiative": "Party", "moves": [], "attacks": []},
    }
    for i in range(units):
        side, row = ("Party", i // 2 + 2) if i % 2 == 0 else ("Enemy", i // 2 + 2)
        col, step = (8, 9) if side == "Party" else (11, 10)
        name = f"{side} {i // 2 + 1}"
        data["units"].append({"name": name, "side": side, "counter": COUNTERS[(i // 2) % len(COUNTERS)],
                              "hex": f"{col:02d}{row:02d}"})
        data["turn"]["moves"].append({"unit": name, "to": f"{step:02d}{row:02d}"})
    names = [u["name"] for u in data["units"]]
    for i in range(0, units - 1, 2):
        party, enemy = names[i], names[i + 1]
        for n, (attacker, defender) in enumerate(((party, enemy), (enemy, party))):
            attack: dict[str, Any] = {"defender": defender, "attackers": [attacker]}
            if typed_rolls:
                attack["roll"] = (7 * i + 13 * n) % 100 + 1
            data["turn"]["attacks"].append(attack)
    return data
