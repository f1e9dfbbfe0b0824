"""Requests per step and time per Resolve, Google Sheets backend against the local fake.

    python benchmarks/bench_gsheets.py [--repeat 7]

For 2, 6 and 20 cohorts: the HTTP requests each step (build is replaced by loading the
battle file, which is the same single write) costs, and the median wall time of a Resolve
Phase (read, engine, write) against the fake on 127.0.0.1.  The bar: 2 requests per
Resolve whatever the number of cohorts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
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
