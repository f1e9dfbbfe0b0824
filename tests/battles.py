"""Battle files made to order for tests and benchmarks: ``n`` cohorts on two sides."""

from __future__ import annotations

from typing import Any


def make_battle(n: int, *, seed: int = 11, orders_per_cohort: int = 2) -> dict[str, Any]:
    """``n`` cohorts of 3 to 5 members, alternating sides, every enemy pair in Personal
    range, each cohort attacking its neighbour with typed and rolled dice."""
    cohorts = []
    for i in range(n):
        size = 3 + i % 3
        members = [{"name": f"C{i}M{j}", "temper": 10, "willpower_spent": 3,
                    "abilities": {"Brawl": 2 + (i + j) % 3, "Dodge": 1 + j % 2},
                    "disciplines": {"Fortitude": (i + j) % 4, "Potence": j % 3, "Celerity": (i * j) % 3}}
                   for j in range(size)]
        cohorts.append({"name": f"Cohort {i}", "side": "players" if i % 2 == 0 else "enemy",
                        "sergeant": members[0]["name"], "members": members})
    ranges = [[f"Cohort {a}", f"Cohort {b}", "Personal"] for a in range(n) for b in range(a + 1, n) if (a + b) % 2]
    orders: list[dict[str, Any]] = []
    for k in range(orders_per_cohort):
        for i in range(n):
            target = f"Cohort {(i + 1) % n}" if n > 1 else None
            order: dict[str, Any] = {"cohort": f"Cohort {i}", "task": "Melee Attack", "target": target}
            if (i + k) % 2 == 0:
                order["roll"] = 1 + (i * 7 + k * 3) % 10
            orders.append(order)
    return {"seed": seed, "cohorts": cohorts, "ranges": ranges, "orders": orders}
