"""The forecast's speed on a 4-vs-4 battalion battle (issue 11, part 1).

    python benchmarks/bench_forecast.py [--repeat 5] [--phases 2000] [--battles 10000]
                                        [--workers 2] [--old-battles 200]

1. **Phases per second per core**: ``--phases`` simulated phases, each the forecast's
   step (the engine's :func:`~sheetsync.systems.bbn.rules.phase.simulate_phase`, then the
   standing orders for the next phase), battles restarting when one side is out of the
   fight (R37) or after 12 phases.  Rated on the process's CPU time, which is what "per
   core" means and what other work on a shared machine disturbs least (wall-clock rates
   are printed too).  The same loop runs, in the same run, on the engine's old path: a
   ``copy.deepcopy`` of every cohort an order names before each order, restored on a
   refusal, and the full event records of ``resolve_phase(record=False)``; and on the
   path just before verify-then-apply (the one-level rollback copy, full records).
   Target: 2,500 phases per second per core.
2. **Whole battles on every core**: ``sheetsync forecast``'s simulation of ``--battles``
   battles (up to 12 phases each) on ``--workers`` processes, wall time including the
   workers' start.  Target: 10,000 battles in at most 30 s on 2 cores.  The workers' CPU
   time is printed with it: divided by the workers, it is the floor this machine's cores
   could reach with nothing else running.  The ratio against the old path compares the
   CPU time per battle of ``--old-battles`` battles run here, new and old.

Medians of ``--repeat`` runs (min..max); the whole-battle run is repeated half as often.
The battle: four cohorts a side of four members, each making one Melee Attack a phase on
the cohort facing it (d10 + 14 against Defense 20, a hit on 6 or more, 13 damage a hit),
every enemy pair at Personal range.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sheetsync.app.forecast import _run, simulate
from sheetsync.core.dice import RandomRoller, Roller
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.forecast import BbnForecast
from sheetsync.systems.bbn.rules import phase as engine

PHASE_TARGET = 2500
BATTLES_TARGET_S = 30.0


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


class OldPath(BbnForecast):
    """The forecast's step as it was: ``resolve_phase(record=False)`` (every roll, effect
    and event built) with the rollback copy ``rollback`` taken before each order."""

    def __init__(self, rollback: Callable[[Any], Any]) -> None:
        self.rollback = rollback

    def step(self, battle: Any, roller: Roller) -> tuple[Any, list[bool | None]]:
        with rollback_copy(self.rollback):
            result = engine.resolve_phase(battle, roller, record=False)
        return result.battle, [None if e.outcome == "refused" else e.outcome != "miss" for e in result.events]


@contextmanager
def rollback_copy(fn: Callable[[Any], Any]) -> Iterator[None]:
    saved = engine._ROLLBACK
    engine._ROLLBACK = fn
    try:
        yield
    finally:
        engine._ROLLBACK = saved


def _phases(adapter: BbnForecast, battle: Any, count: int) -> tuple[float, float]:
    """``count`` forecast steps; returns (CPU seconds, wall seconds)."""
    roller = RandomRoller(1)
    now, steps = battle, 0
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(count):
        now, _ = adapter.step(now, roller)
        steps += 1
        nxt = adapter.standing(battle, now) if steps < 12 and len(adapter.sides_in(now)) == 2 else None
        now, steps = (battle, 0) if nxt is None else (nxt, steps)
    return time.process_time() - cpu, time.perf_counter() - wall


def _battles_cpu(adapter: BbnForecast, battle: Any, count: int) -> float:
    """CPU seconds per whole battle (up to 12 phases), in this process."""
    cpu = time.process_time()
    _run(adapter, battle, "bench", 0, count, 12)
    return (time.process_time() - cpu) / count


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _spread(xs: list[float], fmt: str) -> str:
    """``median  (min..max)``."""
    return f"{format(statistics.median(xs), fmt)}  ({format(min(xs), fmt).strip()}..{format(max(xs), fmt).strip()})"


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--phases", type=int, default=2000)
    ap.add_argument("--battles", type=int, default=10000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--old-battles", type=int, default=200)
    args = ap.parse_args()
    new = BbnForecast()
    battle = new.prepare(load_battle(four_vs_four()))
    paths = {"forecast step": new, "one-level copy": OldPath(engine._copy), "old deepcopy": OldPath(copy.deepcopy)}
    _phases(new, battle, 200)  # warm the pools and bands
    cpu_rates: dict[str, list[float]] = {k: [] for k in paths}
    wall_rates: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(args.repeat):
        for name, adapter in paths.items():  # interleaved, so the machine's load moves them alike
            cpu, wall = _phases(adapter, battle, args.phases)
            cpu_rates[name].append(args.phases / cpu)
            wall_rates[name].append(args.phases / wall)
    ratio = [n / o for n, o in zip(cpu_rates["forecast step"], cpu_rates["old deepcopy"], strict=True)]
    ratio1 = [n / o for n, o in zip(cpu_rates["forecast step"], cpu_rates["one-level copy"], strict=True)]
    best = statistics.median(cpu_rates["forecast step"])
    print(f"1. 4-vs-4 battalion battle, {args.phases} phases x {args.repeat}: simulated phases per CPU second "
          "(per core), median (min..max); wall-clock rate after")
    for name in paths:
        print(f"  {name:16} {_spread(cpu_rates[name], '7.0f')}   wall {statistics.median(wall_rates[name]):5.0f}/s")
    print(f"  ratio new/old deepcopy {statistics.median(ratio):5.2f}  ({min(ratio):.2f}..{max(ratio):.2f}); "
          f"new/one-level copy {statistics.median(ratio1):.2f}")
    wall_best = statistics.median(wall_rates["forecast step"])
    print(f"  target >= {PHASE_TARGET} phases/s/core: median {best:.0f} per CPU second: {_met(best >= PHASE_TARGET)}"
          f"   (wall clock here {wall_best:.0f}/s: {_met(wall_best >= PHASE_TARGET)})")

    walls, cpus = [], []
    tally = None
    for r in range(max(1, args.repeat // 2)):
        before = _children_cpu()
        t = time.perf_counter()
        tally = simulate(new, battle, runs=args.battles, phases=12, seed=r, workers=args.workers)
        walls.append(time.perf_counter() - t)
        cpus.append(_children_cpu() - before)
    assert tally is not None
    steps = sum(n * c for n, c in tally.steps.items())
    per_new = statistics.median([_battles_cpu(new, battle, args.old_battles) for _ in range(3)])
    per_old = _battles_cpu(paths["old deepcopy"], battle, args.old_battles)
    wall = statistics.median(walls)
    cpu = statistics.median(cpus)
    print(f"2. {args.battles} whole battles (up to 12 phases; {steps / args.battles:.1f} on average) on "
          f"{args.workers} workers: wall median {_spread(walls, '.1f')} s")
    print(f"  workers' CPU {cpu:.1f} s in all: {cpu / args.workers:.1f} s a worker, {cpu / steps * 1e6:.0f} us a "
          f"phase with the battle's bookkeeping ({steps / cpu:.0f} phases per CPU second)")
    print(f"  CPU per battle, {args.old_battles} battles here: new {per_new * 1e3:.2f} ms, old deepcopy path "
          f"{per_old * 1e3:.2f} ms: ratio new/old speed {per_old / per_new:.2f}")
    share = cpu / wall
    print(f"  target <= {BATTLES_TARGET_S:.0f} s on 2 cores: median {wall:.1f} s wall: {_met(wall <= BATTLES_TARGET_S)}"
          f"   (the workers had {share:.2f} of a core's time on average; on {args.workers} free cores the floor is "
          f"{cpu / args.workers:.1f} s of CPU each + the workers' start)")


if __name__ == "__main__":
    main()
