"""The forecast's speed on a 4-vs-4 battle of each rule system (issue 11, part 1; issue 23).

    python benchmarks/bench_forecast.py [--repeat 5] [--phases 2000] [--battles 10000]
                                        [--workers 2] [--old-battles 200]
                                        [--systems bbn,hexwar,exalted]

1. **Steps per second per core**, for each system in ``--systems``: ``--phases`` simulated
   steps (a battalion phase, a hex turn, an Exalted long tick), each the forecast's step
   (the adapter's ``step``, then its standing orders for the next one), battles restarting
   when one side is out of the fight or after 12 steps; the systems take turns, and each
   one's rate is also given as a ratio to the battalion's in the same run (the yardstick a
   busy machine moves alike).  For the battalion, the forecast's
   step (the engine's :func:`~sheetsync.systems.bbn.rules.phase.simulate_phase`, then the
   standing orders for the next phase), battles restarting when one side is out of the
   fight (R37) or after 12 phases.  Rated on the process's CPU time, which is what "per
   core" means and what other work on a shared machine disturbs least (wall-clock rates
   are printed too).  The same loop runs, in the same run, on the engine's old path: a
   ``copy.deepcopy`` of every cohort an order names before each order, restored on a
   refusal, and the full event records of ``resolve_phase(record=False)``; and on the
   path just before verify-then-apply (the one-level rollback copy, full records).
   Target: 2,500 steps per second per core, each system.
2. **Whole battles on every core**, each system: ``sheetsync forecast``'s simulation of
   ``--battles`` battles (up to 12 steps each) on ``--workers`` processes, wall time
   including the workers' start.  Target: 10,000 battles in at most 30 s on 2 cores.  The workers' CPU
   time is printed with it: divided by the workers, it is the floor this machine's cores
   could reach with nothing else running.  The ratio against the old path compares the
   CPU time per battle of ``--old-battles`` battles run here, new and old (battalion).

Medians of ``--repeat`` runs (min..max); the whole-battle run is repeated half as often.
The battles: four cohorts a side of four members, each making one Melee Attack a phase on
the cohort facing it (d10 + 14 against Defense 20, a hit on 6 or more, 13 damage a hit),
every enemy pair at Personal range; four hex units a side stepping forward and attacking
the unit they face (``tests/hex_battles.py``); four Exalted units a side of 25 (Magnitude
2), each commander leading a Close attack on the unit facing his (``tests/exalted_battles.py``).
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from exalted_battles import make_exalted_battle  # noqa: E402
from hex_battles import make_hex_battle  # noqa: E402

from sheetsync.app.forecast import _run, adapter_for, simulate  # noqa: E402
from sheetsync.core.dice import RandomRoller, Roller  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.systems.bbn.forecast import BbnForecast  # noqa: E402
from sheetsync.systems.bbn.rules import phase as engine  # noqa: E402

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


SYSTEMS = ("bbn", "hexwar", "exalted")


def four_vs_four_of(system: str) -> tuple[Any, Any]:
    """The 4-vs-4 battle of ``system`` and its forecast adapter, prepared."""
    data = {"bbn": four_vs_four, "hexwar": lambda: make_hex_battle(8),
            "exalted": lambda: make_exalted_battle(8)}[system]()
    adapter = BbnForecast() if system == "bbn" else adapter_for(system)
    return adapter, adapter.prepare(find_system(system).load(data))


def _engine_rates(args: argparse.Namespace, systems: list[str]) -> dict[str, float]:
    """Part 1: steps per CPU second of each system's forecast step (and the battalion's old
    paths), the paths taking turns; returns each path's median rate."""
    paths: dict[str, tuple[Any, Any]] = {s: four_vs_four_of(s) for s in systems}
    if "bbn" in systems:
        battle = paths["bbn"][1]
        paths["bbn one-level copy"] = (OldPath(engine._copy), battle)
        paths["bbn old deepcopy"] = (OldPath(copy.deepcopy), battle)
    for adapter, battle in paths.values():
        _phases(adapter, battle, 200)  # warm the pools, bands and caches
    cpu_rates: dict[str, list[float]] = {k: [] for k in paths}
    wall_rates: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(args.repeat):
        for name, (adapter, battle) in paths.items():  # interleaved, so the machine's load moves them alike
            cpu, wall = _phases(adapter, battle, args.phases)
            cpu_rates[name].append(args.phases / cpu)
            wall_rates[name].append(args.phases / wall)
    print(f"1. 4-vs-4 battles, {args.phases} steps x {args.repeat}: simulated steps per CPU second (per core), "
          "median (min..max); wall-clock rate after; ratio to the battalion's forecast step in the same run")
    for name in paths:
        ratio = ""
        if "bbn" in cpu_rates and name != "bbn":
            r = [n / b for n, b in zip(cpu_rates[name], cpu_rates["bbn"], strict=True)]
            ratio = f"   x bbn {statistics.median(r):5.2f}  ({min(r):.2f}..{max(r):.2f})"
        print(f"  {name:18} {_spread(cpu_rates[name], '7.0f')}   wall {statistics.median(wall_rates[name]):5.0f}/s"
              + ratio)
    for name in systems:
        best = statistics.median(cpu_rates[name])
        print(f"  {name}: target >= {PHASE_TARGET} steps/s/core: median {best:.0f} per CPU second: "
              f"{_met(best >= PHASE_TARGET)}")
    return {k: statistics.median(v) for k, v in cpu_rates.items()}


def _whole_battles(args: argparse.Namespace, systems: list[str]) -> None:
    """Part 2: ``--battles`` whole battles of each system on ``--workers`` processes."""
    runs = {s: four_vs_four_of(s) for s in systems}
    walls: dict[str, list[float]] = {s: [] for s in systems}
    cpus: dict[str, list[float]] = {s: [] for s in systems}
    steps: dict[str, int] = {}
    for r in range(max(1, args.repeat // 2)):
        for name, (adapter, battle) in runs.items():  # the systems take turns
            before, own = _children_cpu(), time.process_time()
            t = time.perf_counter()
            tally = simulate(adapter, battle, runs=args.battles, phases=12, seed=r, workers=args.workers)
            walls[name].append(time.perf_counter() - t)
            # a single chunk runs in this process, not in a worker
            cpus[name].append(_children_cpu() - before + time.process_time() - own)
            steps[name] = sum(n * c for n, c in tally.steps.items())
    print(f"2. {args.battles} whole battles (up to 12 steps) on {args.workers} workers: wall median (min..max); "
          "the workers' CPU; ratio to the battalion's wall time in the same run")
    for name in systems:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        ratio = ""
        if "bbn" in walls and name != "bbn":
            ratio = f"; x bbn {wall / statistics.median(walls['bbn']):.2f}"
        print(f"  {name:8} {_spread(walls[name], '6.1f')} s ({steps[name] / args.battles:.1f} steps a battle); "
              f"workers' CPU {cpu:.1f} s ({steps[name] / cpu:.0f} steps per CPU second){ratio}")
        print(f"  {name:8} target <= {BATTLES_TARGET_S:.0f} s on 2 cores (for 10,000 battles): "
              + (f"median {wall:.1f} s wall: {_met(wall <= BATTLES_TARGET_S)}" if args.battles == 10000 else
                 f"{wall * 10000 / args.battles:.1f} s scaled to 10,000: "
                 f"{_met(wall * 10000 / args.battles <= BATTLES_TARGET_S)}")
              + f"   (the workers had {cpu / wall:.2f} of a core's time on average)")
    if "bbn" in systems:
        adapter, battle = runs["bbn"]
        per_new = statistics.median([_battles_cpu(adapter, battle, args.old_battles) for _ in range(3)])
        per_old = _battles_cpu(OldPath(copy.deepcopy), battle, args.old_battles)
        print(f"  bbn CPU per battle, {args.old_battles} battles here: new {per_new * 1e3:.2f} ms, old deepcopy path "
              f"{per_old * 1e3:.2f} ms: ratio new/old speed {per_old / per_new:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--phases", type=int, default=2000, help="steps a run of part 1")
    ap.add_argument("--battles", type=int, default=10000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--old-battles", type=int, default=200)
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="bbn, hexwar, exalted, comma-separated")
    ap.add_argument("--part", choices=("1", "2", "both"), default="both")
    args = ap.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if args.part in ("1", "both"):
        _engine_rates(args, systems)
    if args.part in ("2", "both"):
        _whole_battles(args, systems)


if __name__ == "__main__":
    main()
