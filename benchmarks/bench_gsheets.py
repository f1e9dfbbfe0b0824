"""Requests per step and time per Resolve, Google Sheets backend against the local fake.

    python benchmarks/bench_gsheets.py [--repeat 7] [--phases 40]

For 2, 6 and 20 cohorts: the HTTP requests each step (build is replaced by loading the
battle file, which is the same single write) costs, and the median wall time of a Resolve
Phase (read, engine, write) against the fake on 127.0.0.1.  The bar: 2 requests per
Resolve whatever the number of cohorts.

Then, for each system (the battalion tracker with 12 cohorts, the hex wargame's and
Exalted's example battles): the KB of the step's GET answer at the first resolve and at
resolve ``--phases``, when the step reads the mark and the tracker's named read ranges and
when it reads the whole spreadsheet (the tracker made before the read ranges), and the
requests of every one of those resolves (the bar: 2 each).
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
from sheetsync.sheets import marks  # noqa: E402
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


class Sized(GSheetsBackend):
    """Counts the bytes of the GET answers, and reads the whole spreadsheet if ``whole``."""

    def __init__(self, *args, whole: bool = False, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.whole = whole
        self.read_bytes = 0
        if whole:
            self._named_read = False

    def _attempt(self, method, url, params, json, limit):  # type: ignore[no-untyped-def]
        status, body = super()._attempt(method, url, params, json, limit)
        if method == "GET":
            self.read_bytes += len(body)
        return status, body


COHORTS = 12


class Typist(GSheetsBackend):
    """A Tracker typing into the sheet: cells only.  The typing goes through sheetsync's
    backend here, but a person's typing never moves the tracker's named read ranges, so
    this backend leaves them alone (its own read would otherwise move them)."""

    def _slot_requests(self, plan):  # type: ignore[no-untyped-def]
        return []


def _type_orders(backend: GSheetsBackend, phase: int) -> None:
    """Two orders a cohort for ``phase``, typed in the Orders sheet's next empty rows (as
    ``bench_state_growth.py`` types them)."""
    from bench_state_growth import _type_orders as type_orders

    from sheetsync.core.registry import find_system
    from sheetsync.sheets.marks import detect

    type_orders(backend, find_system("bbn").layout(detect(backend).capacity or None), phase, COHORTS)


def _setup(server: FakeSheetsServer, system: str, phases: int) -> str:
    import yaml

    key = server.create_spreadsheet(system)
    backend = GSheetsBackend(fake_client(server.url), key)
    if system == "bbn":
        init_spreadsheet(backend, capacity={"phases": phases, "orders": 2 * COHORTS * (phases + 1)})
        usecases.load_battle_into(backend, load_battle(make_battle(COHORTS)))
        return key
    from sheetsync.core.registry import find_system

    chosen = find_system(system)
    battle = chosen.load(yaml.safe_load(chosen.example_data()))
    mod = __import__(f"sheetsync.systems.{system}.tracker.steps", fromlist=["load_into"])
    capacity = mod.capacity_for(battle) if system == "exalted" else None
    init_spreadsheet(backend, system=system, capacity=capacity)
    if capacity is None:
        mod.load_into(backend, battle)
    else:
        mod.load_into(backend, battle, capacity)
    return key


def read_sizes(server: FakeSheetsServer, system: str, phases: int,
               whole: bool) -> tuple[float, float, set[int], int]:
    """KB read by the first and the last resolve (the ``phases``-th, or the last before
    the example battle runs out of typed moves), the request counts seen and that last
    resolve's number."""
    from sheetsync.core.errors import BattleStateError

    key = _setup(server, system, phases)
    sizes: list[int] = []
    counts: set[int] = set()
    for phase in range(1, phases + 1):
        if system == "bbn" and phase > 1:
            _type_orders(Typist(fake_client(server.url), key), phase)
        backend = Sized(fake_client(server.url), key, whole=whole)
        try:
            marks.run("resolve", backend)
        except BattleStateError:  # no more orders typed in the example battle
            break
        sizes.append(backend.read_bytes)
        counts.add(backend.request_count)
    return sizes[0] / 1024, sizes[-1] / 1024, counts, len(sizes)


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
    ap.add_argument("--phases", type=int, default=40)
    ap.add_argument("--sizes-only", action="store_true", help="only the KB read per step")
    args = ap.parse_args()
    with FakeSheetsServer() as server:
        print(f"KB read per resolve (the step's GET answer), at resolve 1 and resolve {args.phases}")
        print(f"{'system':>8} | {'N':>3} | {'named 1':>8} | {'named N':>8} | {'whole 1':>8} | {'whole N':>8} | "
              "named/whole at N | requests per resolve")
        for system in ("bbn", "hexwar", "exalted"):
            n1, nn, ncounts, last = read_sizes(server, system, args.phases, whole=False)
            w1, wn, wcounts, _ = read_sizes(server, system, args.phases, whole=True)
            print(f"{system:>8} | {last:>3} | {n1:>8.1f} | {nn:>8.1f} | {w1:>8.1f} | {wn:>8.1f} | {nn / wn:>16.2f} | "
                  f"named {sorted(ncounts)}, whole {sorted(wcounts)}")
    if args.sizes_only:
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
