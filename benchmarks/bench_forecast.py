"""The forecast's speed on a 4-vs-4 battalion battle (issue 11, part 1).

    python benchmarks/bench_forecast.py [--repeat 5] [--phases 2000] [--battles 10000] [--workers 2]

1. **Phases per second on one core**: ``--phases`` simulated phases, each the forecast's
   step (the engine's ``resolve_phase`` without an undo snapshot, then the standing orders
   for the next phase), battles restarting when one side is out of the fight (R37) or after
   12 phases.  The same loop is timed with the engine's old rollback copy (a
   ``copy.deepcopy`` of every cohort an order touches, before each order) and the ratio
   new/old is printed, since a shared machine's load moves both alike.  Target: 2,500
   phases per second.
2. **Whole battles on every core**: ``sheetsync forecast``'s simulation of ``--battles``
   battles (up to 12 phases each) on ``--workers`` processes, wall time including the
   workers' start.  Target: 10,000 battles in at most 30 s on 2 cores.

Medians of ``--repeat`` runs (min..max).  The battle: four cohorts a side of four members,
each making one Melee Attack a phase on the cohort facing it (d10 + 14 against Defense 20,
a hit on 6 or more, 13 damage a hit), every enemy pair at Personal range.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from typing import Any

from sheetsync.app.forecast import simulate
from sheetsync.app.forecast_systems import BbnForecast
from sheetsync.dice import RandomRoller
from sheetsync.rules.bbn import load_battle
from sheetsync.rules.bbn import phase as engine


def four_vs_four(seed: int = 7) -> dict[str, Any]:
    """Four cohorts a side, four members each, each attacking the enemy facing it."""
    cohorts = []
    for i in range(8):
        side = "players" if i < 4 else "enemy"
        members = [{"name": f"{side[0].upper()}{i}-{j}", "temper": 10,
                    "abilities": {"Brawl": 3 + j % 2, "Dodge": 1}, "disciplines": {"Fortitude": 1, "Potence": 1}}
                   for j in range(4)]
        cohorts.append({"name": f"{'Watch' if i < 4 else 'Pack'} {i % 4 + 1}", "side": side,
                        "sergeant": members[0]["name"], "members": members})
    ranges = [[a["name"], b["name"], "Personal"] for a in cohorts[:4] for b in cohorts[4:]]
    orders = [{"cohort": c["name"], "task": "Melee Attack", "target": cohorts[(i + 4) % 8]["name"]}
              for i, c in enumerate(cohorts)]
    return {"seed": seed, "cohorts": cohorts, "ranges": ranges, "orders": orders}


def _phases(battle: Any, count: int) -> float:
    """``count`` forecast steps; returns the seconds taken."""
    adapter = BbnForecast()
    roller = RandomRoller(1)
    now, steps = battle, 0
    t = time.perf_counter()
    for _ in range(count):
        now, _ = adapter.step(now, roller)
        steps += 1
        nxt = adapter.standing(battle, now) if steps < 12 and len(adapter.sides_in(now)) == 2 else None
        now, steps = (battle, 0) if nxt is None else (nxt, steps)
    return time.perf_counter() - t


def _old_copy(co: Any) -> Any:
    return copy.deepcopy(co)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--phases", type=int, default=2000)
    ap.add_argument("--battles", type=int, default=10000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    battle = BbnForecast().prepare(load_battle(four_vs_four()))
    new_copy = engine._copy
    new_rates, old_rates = [], []
    _phases(battle, 200)  # warm the pools cache
    for _ in range(args.repeat):
        new_rates.append(args.phases / _phases(battle, args.phases))
        engine._copy = _old_copy
        try:
            old_rates.append(args.phases / _phases(battle, args.phases))
        finally:
            engine._copy = new_copy
    ratios = [n / o for n, o in zip(new_rates, old_rates, strict=True)]
    print(f"4-vs-4 battalion battle, {args.phases} phases x {args.repeat}: median (min..max) simulated phases/s "
          "on one core")
    print(f"  forecast step        {statistics.median(new_rates):8.0f}  ({min(new_rates):.0f}..{max(new_rates):.0f})"
          "   target >= 2500")
    print(f"  with the deepcopy    {statistics.median(old_rates):8.0f}  ({min(old_rates):.0f}..{max(old_rates):.0f})")
    print(f"  ratio new/old        {statistics.median(ratios):8.2f}")
    walls = []
    for r in range(max(1, args.repeat // 2)):
        t = time.perf_counter()
        tally = simulate(BbnForecast(), battle, runs=args.battles, phases=12, seed=r, workers=args.workers)
        walls.append(time.perf_counter() - t)
    steps = sum(n * c for n, c in tally.steps.items())
    print(f"{args.battles} whole battles (up to 12 phases; {steps / args.battles:.1f} phases on average) on "
          f"{args.workers} workers: median {statistics.median(walls):.1f} s ({min(walls):.1f}..{max(walls):.1f})"
          "   target <= 30 s on 2 cores")


if __name__ == "__main__":
    main()
