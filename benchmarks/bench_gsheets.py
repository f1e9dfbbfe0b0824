"""Requests per step and time per Resolve, Google Sheets backend against the local fake.

    python benchmarks/bench_gsheets.py [--repeat 7] [--read]

For 2, 6 and 20 cohorts: the HTTP requests each step (build is replaced by loading the
battle file, which is the same single write) costs, and the median wall time of a Resolve
Phase (read, engine, write) against the fake on 127.0.0.1.  The bar: 2 requests per
Resolve whatever the number of cohorts.

``--read`` (issue 23): what a Resolve downloads, against what it uses.  For 12 cohorts, over
``--phases`` phases resolved one after another, the characters of JSON the step's read
request brought back (the whole spreadsheet's values: the mark is read with everything
else, so the step needs no request of its own), against the floor: the same ranges the step
reads (its read plan) asked for alone, in the same run.  The goal: only what the step uses,
flat from phase to phase.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from battles import make_battle  # noqa: E402
from fake_sheets_api import FakeSheetsServer, fake_client  # noqa: E402

from sheetsync.app import usecases  # noqa: E402
from sheetsync.app.gsheet_cli import init_spreadsheet  # noqa: E402
from sheetsync.backends.gsheets import GSheetsBackend  # noqa: E402
from sheetsync.systems.bbn.files.loader import load_battle  # noqa: E402


class Timed(GSheetsBackend):
    """Counts the seconds spent in HTTP calls, to tell sheetsync's time from the fake's."""

    io_seconds = 0.0

    def read_ranges(self, ranges):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return super().read_ranges(ranges)
        finally:
            self.io_seconds += time.perf_counter() - t

    def write_ranges(self, updates):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return super().write_ranges(updates)
        finally:
            self.io_seconds += time.perf_counter() - t


def one(server: FakeSheetsServer, cohorts: int) -> tuple[dict[str, int], float, float]:
    key = server.create_spreadsheet("Bench")
    backend = Timed(fake_client(server.url), key)
    init_spreadsheet(backend)
    counts: dict[str, int] = {}

    def step(name: str, fn) -> float:  # type: ignore[no-untyped-def]
        before = backend.request_count
        t = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - t
        counts[name] = backend.request_count - before
        return elapsed

    step("load (new)", lambda: usecases.load_battle_into(backend, load_battle(make_battle(cohorts))))
    backend.io_seconds = 0.0
    resolve_time = step("resolve", lambda: usecases.resolve(backend))
    local = resolve_time - backend.io_seconds
    step("undo", lambda: usecases.undo(backend))
    step("resolve again", lambda: usecases.resolve(backend))
    step("end", lambda: usecases.end_battle(backend))
    return counts, resolve_time, local


class Counted(GSheetsBackend):
    """Keeps the size (characters of JSON) of each GET answer."""

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.got: list[int] = []

    def _call(self, method, url, **kwargs):  # type: ignore[no-untyped-def]
        import json

        body = super()._call(method, url, **kwargs)
        if method == "GET":
            self.got.append(len(json.dumps(body)))
        return body


def read_sizes(server: FakeSheetsServer, cohorts: int, phases: int) -> list[tuple[int, int]]:
    """Issue 23: for each phase resolved, (characters the step's GET brought, characters of
    the step's own ranges asked for alone)."""
    from sheetsync.app.usecases import tracker_steps

    key = server.create_spreadsheet("Bench")
    backend = Counted(fake_client(server.url), key)
    init_spreadsheet(backend)
    usecases.load_battle_into(backend, load_battle(make_battle(cohorts)))
    from bench_state_growth import _type_orders

    from sheetsync.core.registry import room

    lay = room("bbn", "tracker.layout").layout()
    out = []
    for phase in range(1, phases + 1):
        if phase > 1:
            _type_orders(backend, lay, phase, cohorts)  # the phase's orders, as a Tracker types them
        step = Counted(fake_client(server.url), key)  # a fresh click: the CLI's, a button's
        usecases.resolve(step)
        plan = tracker_steps(Counted(fake_client(server.url), key)).read_plan("resolve")
        floor = Counted(fake_client(server.url), key)
        floor.read_ranges(plan)  # the step's ranges alone, on a backend that read no mark
        out.append((sum(step.got), sum(floor.got)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--read", action="store_true", help="issue 23: what a Resolve downloads against what it uses")
    ap.add_argument("--phases", type=int, default=8)
    args = ap.parse_args()
    if args.read:
        with FakeSheetsServer() as server:
            sizes = read_sizes(server, 12, args.phases)
        print("12 cohorts: characters of JSON a Resolve's read brought back, against its own ranges read alone")
        print(f"{'phase':>5} | {'read':>9} | {'own ranges':>10} | ratio")
        for i, (got, floor) in enumerate(sizes, start=1):
            print(f"{i:>5} | {got:>9,} | {floor:>10,} | {got / floor:5.2f}x")
        first, last = sizes[0][0], sizes[-1][0]
        print(f"the read is {max(g / f for g, f in sizes):.2f}x its own ranges at most (goal <= 1.00x: "
              + ("met" if all(g <= f for g, f in sizes) else "NOT met") + f"); phase {len(sizes)} reads "
              f"{last / first:.2f}x phase 1 (goal <= 1.05x, flat: " + ("met" if last <= first * 1.05 else "NOT met")
              + "): the step's own ranges are whole tables (every Orders row, every undo record, the Log's "
              "Step column), so they grow with the phases behind it")
        return
    with FakeSheetsServer() as server:
        print("requests per step, and Resolve Phase wall time (median of", args.repeat, "runs)")
        print(f"{'cohorts':>7} | {'load':>4} | {'resolve':>7} | {'undo':>4} | {'resolve again':>13} | {'end':>3} | "
              f"resolve total (ms) | of which sheetsync (ms) | of which HTTP + fake (ms)")
        for cohorts in (2, 6, 20):
            totals, locals_ = [], []
            counts: dict[str, int] = {}
            for _ in range(args.repeat):
                counts, t, local = one(server, cohorts)
                totals.append(t * 1000)
                locals_.append(local * 1000)
            total, local = statistics.median(totals), statistics.median(locals_)
            print(f"{cohorts:>7} | {counts['load (new)']:>4} | {counts['resolve']:>7} | {counts['undo']:>4} | "
                  f"{counts['resolve again']:>13} | {counts['end']:>3} | {total:>18.1f} | {local:>23.1f} | "
                  f"{total - local:>25.1f}")


if __name__ == "__main__":
    main()
