"""The battalion Resolve step alone, on a MemoryBackend, at 12 and 60 cohorts (issue 12).

    python benchmarks/bench_step.py [--cohorts 12,60] [--repeat 200] [--profile N]

A tracker of ``--cohorts`` cohorts (made as :mod:`bench_state_growth` makes it: a battle
file loaded into a MemoryBackend, two orders a cohort pending) is resolved ``--repeat``
times, each run on a fresh copy of the tracker (copied untimed), through
:func:`sheetsync.sheets.marks.run` as every surface runs it: detect the tracker's system, one
read of the step's plan, the pure step, one write.  It prints the median and the 10th and
90th percentiles in milliseconds, the median CPU time of the step's thread (what a busy
machine's other processes do not add), and:

* the floor: what the backend alone takes for the same step, measured in the same run on
  the same copy just before the step: reading the step's ranges (``read_plan``) and writing
  the step's updates into another copy; the step's ratio to it, and the step less the
  floor (``own``);
* ``cold``: the same step on a State this process never wrote nor read (the remembered
  States forgotten first), so the stored battle is parsed and checked in full, as in a
  fresh process.  The step's median is warm: the State was read before, as a server's next
  click reads back the State its last click wrote (``state_journal`` remembers the few
  it wrote or read, by their whole text);
* the budget: issue 12's endpoint Resolve is at most 6 ms server side at 12 cohorts; the
  endpoint's own part (parsing the payload, answering) is about 1.8 ms, which leaves about
  4.2 ms for the step.  Printed beside the 12-cohort median as "met" or "NOT met".

``--profile N`` instead runs N resolves of the first size under cProfile and prints the
top functions by cumulative and by own time; ``--parts`` times each part of the step (the
functions it calls, wrapped: no profiler's overhead) and prints each part's median and
share of the whole.  The script asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run from a clone without installing it too

from battles import make_battle  # noqa: E402

from sheetsync.app import usecases  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.sheets import marks as steps  # noqa: E402
from sheetsync.sheets.backend import MemoryBackend, RangeUpdate  # noqa: E402
from sheetsync.systems.bbn.files.loader import load_battle  # noqa: E402
from sheetsync.systems.bbn.tracker import journal as sj  # noqa: E402
from sheetsync.systems.bbn.tracker import layout as layout_module  # noqa: E402
from sheetsync.systems.bbn.tracker.reader import read_plan  # noqa: E402

ENDPOINT_BUDGET_MS = 6.0
"""Issue 12: an endpoint Resolve, server side, 12 cohorts."""
ENDPOINT_OWN_MS = 1.8
"""The endpoint's own part of it (payload parsing and the answer), measured by bench_endpoint."""


class _Keep:
    """A backend wrapper that keeps the updates of its write (for the floor)."""

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner
        self.updates: list[RangeUpdate] = []

    def read_ranges(self, ranges: Any) -> Any:
        return self.inner.read_ranges(ranges)

    def write_ranges(self, updates: Any) -> None:
        self.updates = list(updates)
        self.inner.write_ranges(updates)


def tracker(cohorts: int) -> tuple[Any, MemoryBackend]:
    """A tracker sized to a ``cohorts``-cohort battle (as ``sheetsync new --from`` sizes it),
    holding that battle with phase 1's orders pending."""
    battle = load_battle(make_battle(cohorts))
    lay = layout_module.layout(capacity=layout_module.capacity_for(battle))
    backend = MemoryBackend({name: {} for name in lay.sheets})
    usecases.load_battle_into(backend, battle, lay)
    backend.write_ranges(steps.mark_updates(find_system("bbn"), lay.capacity))
    return lay, backend


def _copy(backend: MemoryBackend) -> MemoryBackend:
    other = MemoryBackend({name: dict(cells) for name, cells in backend.sheets.items()})
    for name in other.sheets:  # its last rows known, as a tracker read before is
        other.max_row(name)
    return other


def bench(cohorts: int, repeat: int) -> dict[str, float]:
    lay, base = tracker(cohorts)
    steps.run("resolve", _copy(base))  # warm: imports, caches
    took: list[float] = []
    cpu: list[float] = []
    floors: list[float] = []
    cold: list[float] = []
    for _ in range(repeat):
        one, two, three = _copy(base), _copy(base), _copy(base)
        keep = _Keep(one)
        c, t = time.thread_time(), time.perf_counter()
        steps.run("resolve", keep)
        took.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
        sj.forget_states()  # cold: a State this process never wrote nor read, checked in full
        t = time.perf_counter()
        steps.run("resolve", three)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        two.read_ranges(read_plan(lay))
        two.write_ranges(keep.updates)
        floors.append(time.perf_counter() - t)
    q = statistics.quantiles(took, n=10)
    med, floor = statistics.median(took) * 1000, statistics.median(floors) * 1000
    return {"cohorts": cohorts, "ms": med, "p10": q[0] * 1000, "p90": q[-1] * 1000, "floor": floor,
            "own": med - floor, "cpu": statistics.median(cpu) * 1000, "cold": statistics.median(cold) * 1000}


def profile(cohorts: int, runs: int) -> None:
    _lay, base = tracker(cohorts)
    steps.run("resolve", _copy(base))
    copies = [_copy(base) for _ in range(runs)]
    prof = cProfile.Profile()
    prof.enable()
    for c in copies:
        steps.run("resolve", c)
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(30)
    stats.sort_stats("tottime").print_stats(25)


PARTS = {
    "read the State (parse, check)": [("sj", "parse_state")],
    "read the orders, ranges, house rules (check)": [("bsteps", "parse_turn")],
    "the engine (R13; with its undo snapshot)": [("bsteps", "resolve_phase")],
    "write the State (encode, step id, record)": [("sj", "state_update")],
    "the dashboard cells (Battle, Cohorts)": [("writer", "battle_updates")],
    "Orders stamps, Log rows, Health row": [("writer", "order_stamp_updates"), ("writer", "log_updates"),
                                           ("writer", "phase_log_rows"), ("writer", "health_row_update"),
                                           ("writer", "result_text")],
}


def parts(cohorts: int, runs: int) -> None:
    """Each part of the step timed on its own (the functions the step calls, wrapped), its
    median over ``runs`` resolves, beside the backend's read and write (the floor)."""
    from sheetsync.systems.bbn.tracker import steps as bsteps
    from sheetsync.systems.bbn.tracker import writer

    mods = {"sj": sj, "bsteps": bsteps, "writer": writer}
    spent: dict[str, float] = {}

    def wrap(label: str, mod: Any, name: str) -> None:
        inner = getattr(mod, name)

        def timed(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
        setattr(mod, name, timed)

    for label, funcs in PARTS.items():
        for mod, name in funcs:
            wrap(label, mods[mod], name)
    wrap("backend read (floor)", MemoryBackend, "read_ranges")
    wrap("backend write (floor)", MemoryBackend, "write_ranges")
    _lay, base = tracker(cohorts)
    steps.run("resolve", _copy(base))
    samples: dict[str, list[float]] = {}
    totals = []
    for _ in range(runs):
        one = _copy(base)
        spent.clear()
        t = time.perf_counter()
        steps.run("resolve", one)
        totals.append(time.perf_counter() - t)
        spent["the rest (dispatch, Sheets, journal checks)"] = totals[-1] - sum(spent.values())
        for label, seconds in spent.items():
            samples.setdefault(label, []).append(seconds)
    whole = statistics.median(totals) * 1000
    print(f"The Resolve step at {cohorts} cohorts by part, median of {runs} (warm State); whole step {whole:.2f} ms")
    print(f"{'part':48} {'ms':>7} {'share':>6}")
    for label, data in sorted(samples.items(), key=lambda kv: -statistics.median(kv[1])):
        ms = statistics.median(data) * 1000
        print(f"{label:48} {ms:7.3f} {ms / whole:6.0%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cohorts", default="12,60", help="the sizes, comma-separated")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--profile", type=int, default=0, help="profile this many resolves of the first size instead")
    ap.add_argument("--parts", action="store_true", help="time each part of the step at the first size instead")
    args = ap.parse_args()
    sizes = [int(c) for c in args.cohorts.split(",") if c.strip()]
    if args.profile:
        profile(sizes[0], args.profile)
        return
    if args.parts:
        parts(sizes[0], args.repeat)
        return
    budget = ENDPOINT_BUDGET_MS - ENDPOINT_OWN_MS
    print(f"Resolve step alone on a MemoryBackend (steps.run), median of {args.repeat}; "
          f"step budget {ENDPOINT_BUDGET_MS:.1f} - {ENDPOINT_OWN_MS:.1f} = {budget:.1f} ms at 12 cohorts")
    print(f"{'cohorts':>7} {'step ms':>8} {'p10':>7} {'p90':>7} {'cpu ms':>7} {'floor ms':>9} {'x floor':>8} "
          f"{'own ms':>7} {'cold ms':>8}  budget")
    for n in sizes:
        r = bench(n, args.repeat)
        verdict = ("met" if r["ms"] <= budget else "NOT met") if n == 12 else "-"
        print(f"{n:>7} {r['ms']:>8.2f} {r['p10']:>7.2f} {r['p90']:>7.2f} {r['cpu']:>7.2f} {r['floor']:>9.2f} "
              f"{r['ms'] / r['floor']:>8.1f} {r['own']:>7.2f} {r['cold']:>8.2f}  {verdict}")


if __name__ == "__main__":
    main()
