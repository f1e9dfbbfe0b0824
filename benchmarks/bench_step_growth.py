"""A step's cost against the steps behind it, each system, memory and workbook (issue 23).

    python benchmarks/bench_step_growth.py [--repeat 5] [--systems bbn,hexwar,exalted]
                                           [--backends memory,workbook] [--steps 41]
                                           [--profile SYSTEM:BACKEND]

Each system's tracker (battalion: 12 cohorts, two orders a cohort typed each phase as
``bench_state_growth.py`` types them; hex: 40 units, a move of every unit still on the map
typed each turn; Exalted: 10 units, an Attack of every unit on the enemy facing it typed for
the next long tick) is played ``--steps`` steps (41: Resolve, then the next step's orders
typed), on a MemoryBackend and on a workbook ``.xlsx`` (each step loads and saves the file
under its lock, as the CLI does).  The tracker is copied as it stands before step 1, step 2
and the last step; then the copies are measured in turn, ``--repeat`` rounds (each Resolve
followed by an Undo, but the last), so a change in the machine's load falls on each alike.

For each, it prints the CPU time (``time.process_time``) of the step, median of the
rounds, and the ratio last step / step 1 against the goal (issue 23: at most 1.05x, "met"
or "NOT met").  Beside it, the floor: the backend's bare read of the ranges the step read
and write of the updates it wrote, on a copy of the same tracker (a workbook: under its
lock, so loaded and saved as the step is), at step 1 and the last step, and its own ratio:
what grows in the floor is the backend having more cells or a bigger file, not the step.

``--profile bbn:workbook`` instead profiles (cProfile) that system's step 2 and last step (step 1 has no undo record
behind it to read) on
that backend and prints the 25 functions whose cumulative time grew the most between them.
The script asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from battles import make_battle  # noqa: E402
from bench_state_growth import _room_for, _type_orders  # noqa: E402
from exalted_battles import make_exalted_battle  # noqa: E402
from hex_battles import make_hex_battle  # noqa: E402

from sheetsync.core.registry import find_system, room  # noqa: E402
from sheetsync.sheets import marks  # noqa: E402
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate  # noqa: E402

GOAL = 1.05


class Recording:
    """A backend wrapper that keeps the ranges the last step read and the updates it wrote
    (for the floor); it adds a list append to the step, nothing that grows."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.read: list[str] = []
        self.updates: list[RangeUpdate] = []

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        self.read.extend(ranges)
        grids: list[Grid] = self.inner.read_ranges(ranges)
        return grids

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        self.updates.extend(updates)
        self.inner.write_ranges(updates)


def _next_row(backend: Any, block: Any, key: str) -> int:
    grid = backend.read_ranges([block.range()])[0]
    j = block.index(key)
    return int(block.first_row + 1 + max((i for i, row in enumerate(grid) if row[j] is not None), default=-1))


def _hex_orders(lay: Any) -> Callable[[Any, int], None]:
    def type_moves(backend: Any, last: int) -> None:
        """Every unit still on the map moves to the hex it holds (H4: a move of no hexes)."""
        ub, mb = lay.block("Units_Table"), lay.block("Moves_Table")
        units = backend.read_ranges([ub.range()])[0]
        n, h = ub.index("name"), ub.index("hex")
        rows = [[r[n], r[h]] for r in units if r[n] is not None and r[h]]
        r0 = _next_row(backend, mb, "unit")
        backend.write_ranges([RangeUpdate(f"Moves!{mb.letter('unit')}{r0}:{mb.letter('to')}{r0 + len(rows) - 1}",
                                          rows)])
    return type_moves


def _exalted_orders(lay: Any, data: dict[str, Any]) -> Callable[[Any, int], None]:
    foes = [(o["unit"], o["target"]) for o in data["orders"]]

    def type_attacks(backend: Any, last: int) -> None:
        """Every unit attacks the enemy facing it on the long tick after the last resolved."""
        ob = lay.block("Orders_Table")
        rows = [[last + 1, unit, "Attack", foe, "Close"] for unit, foe in foes]
        r0 = _next_row(backend, ob, "unit")
        backend.write_ranges([RangeUpdate(f"Orders!{ob.letter('tick')}{r0}:{ob.letter('option')}"
                                          f"{r0 + len(rows) - 1}", rows)])
    return type_attacks


def _bbn_orders(lay: Any, cohorts: int) -> Callable[[Any, int], None]:
    def type_orders(backend: Any, last: int) -> None:
        _type_orders(backend, lay, last + 1, cohorts)
    return type_orders


def make_tracker(system_id: str, kind: str, steps: int, path: Path) -> tuple[Any, Callable[[Any, int], None]]:
    """A tracker of ``system_id`` on a MemoryBackend or a workbook at ``path``, with room for
    ``steps`` steps, and the function that types a step's orders on it."""
    system = find_system(system_id)
    if system_id == "bbn":
        from sheetsync.systems.bbn.files.loader import load_battle
        from sheetsync.systems.bbn.tracker import layout as layout_module

        _room_for(steps + 1)
        cohorts = 12
        cap = {"phases": steps + 1, "orders": 2 * cohorts * (steps + 2)}
        lay = layout_module.layout(capacity=cap)
        battle = load_battle(make_battle(cohorts))
        typer = _bbn_orders(lay, cohorts)
    else:
        data = make_hex_battle(40) if system_id == "hexwar" else make_exalted_battle(10)
        battle = system.load(data)
        cap = dict(room(system, "tracker.steps").capacity_for(battle))
        if system_id == "hexwar":
            cap["moves"] = cap["attacks"] = 40 * (steps + 2)
        else:
            cap["orders"], cap["ticks"] = 10 * (steps + 2), max(cap["ticks"], 3 * steps)
        lay = system.layout(cap)
        typer = _hex_orders(lay) if system_id == "hexwar" else _exalted_orders(lay, data)
    if kind == "memory":
        backend: Any = MemoryBackend({name: {} for name in lay.sheets})
        backend.write_ranges(marks.mark_updates(system, cap))
        _load(system_id, backend, battle, lay, cap)
    else:
        from sheetsync.app.workbook_cli import excel_backend, system_template

        template = (room("bbn", "tracker.template").build_template(lay) if system_id == "bbn"
                    else system_template(system, cap, "a4"))
        backend = excel_backend(path, workbook=template)
        with backend.locked():
            if system_id == "bbn":
                backend.write_ranges(marks.mark_updates(system, cap))
            _load(system_id, backend, battle, lay, cap)
    return backend, typer


def _load(system_id: str, backend: Any, battle: Any, lay: Any, cap: dict[str, int]) -> None:
    if system_id == "bbn":
        from sheetsync.app import usecases

        usecases.load_battle_into(backend, battle, lay)
    else:
        room(system_id, "tracker.steps").load_into(backend, battle, capacity=cap)


class Tracker:
    """One tracker on one backend: a step run as the CLI runs it (a workbook under its lock)."""

    def __init__(self, kind: str, backend: Any, path: Path) -> None:
        self.kind, self.backend, self.path = kind, backend, path

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self.kind == "memory":
            return fn(self.backend, *args)
        with self.backend.locked():
            return fn(self.backend, *args)

    def step(self, action: str, backend: Any = None) -> Any:
        return self.call(lambda b: marks.run(action, backend if backend is not None else b))

    def copy(self, path: Path) -> Tracker:
        if self.kind == "memory":
            return Tracker("memory", MemoryBackend({n: dict(c) for n, c in self.backend.sheets.items()}), path)
        from sheetsync.app.workbook_cli import excel_backend

        shutil.copyfile(self.path, path)
        return Tracker("workbook", excel_backend(path), path)

    def timed(self, action: str) -> tuple[float, Recording]:
        rec = Recording(self.backend)
        t = time.process_time()
        if self.kind == "memory":
            marks.run(action, rec)
        else:
            with self.backend.locked():
                marks.run(action, rec)
        return time.process_time() - t, rec

    def floor(self, rec: Recording, tmp: Path) -> float:
        """The backend alone: the step's reads and writes on a copy of the tracker as it stood."""
        other = self.copy(tmp / f"floor{self.path.suffix or '.xlsx'}")
        if self.kind == "memory":
            for name in other.backend.sheets:
                other.backend.max_row(name)
        t = time.process_time()
        other.call(lambda b: (b.read_ranges(rec.read), b.write_ranges(rec.updates)))
        return time.process_time() - t


def play(system_id: str, kind: str, steps: int, tmp: Path) -> dict[int, Tracker]:
    """The battle played to the last step, the tracker copied before steps 1, 2 and ``steps``."""
    path = tmp / f"{system_id}.xlsx"
    backend, typer = make_tracker(system_id, kind, steps, path)
    tracker = Tracker(kind, backend, path)
    at: dict[int, Tracker] = {}
    last = 0
    for n in range(1, steps + 1):
        if n > 1:
            tracker.call(typer, last)
        if n in (1, 2, steps):
            at[n] = tracker.copy(tmp / f"{system_id}-{kind}-{n}.xlsx")
        if n < steps:
            last = tracker.step("resolve").phase
    return at


def bench(system_id: str, kind: str, steps: int, repeat: int, tmp: Path) -> dict[int, dict[str, float]]:
    at = play(system_id, kind, steps, tmp)
    got: dict[int, dict[str, list[float]]] = {n: {"step": [], "floor": []} for n in at}
    for r in range(repeat):
        for n, tracker in at.items():
            took, rec = tracker.timed("resolve")
            got[n]["step"].append(took)
            if r < repeat - 1:
                tracker.step("undo")
            got[n]["floor"].append(tracker.floor(rec, tmp) if n != 2 else 0.0)
    return {n: {k: statistics.median(v) * 1000 for k, v in d.items()} for n, d in got.items()}


def profile(system_id: str, kind: str, steps: int, tmp: Path) -> None:
    at = play(system_id, kind, steps, tmp)
    stats: dict[int, dict[str, float]] = {}
    for n in (2, steps):
        prof = cProfile.Profile()
        for _ in range(5):
            prof.enable()
            at[n].timed("resolve")
            prof.disable()
            at[n].step("undo")
        ps = pstats.Stats(prof)
        stats[n] = {f"{Path(f).name}:{line}({fn})": v[3] / 5 * 1000
                    for (f, line, fn), v in ps.stats.items()}  # type: ignore[attr-defined]
    grew = sorted(((stats[steps].get(k, 0.0) - stats[2].get(k, 0.0), k) for k in set(stats[2]) | set(stats[steps])),
                  reverse=True)
    print(f"{system_id} {kind}: cumulative ms a Resolve (profiled), step 2 -> step {steps}, the 25 that grew most")
    for d, k in grew[:25]:
        print(f"  {stats[2].get(k, 0.0):8.2f} -> {stats[steps].get(k, 0.0):8.2f}  (+{d:6.2f})  {k}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--steps", type=int, default=41)
    ap.add_argument("--systems", default="bbn,hexwar,exalted")
    ap.add_argument("--backends", default="memory,workbook")
    ap.add_argument("--profile", default="", help="SYSTEM:BACKEND, e.g. bbn:workbook")
    args = ap.parse_args()
    last = args.steps
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.profile:
            system_id, kind = args.profile.split(":")
            profile(system_id, kind, last, tmp)
            return
        print(f"CPU ms a Resolve, median of {args.repeat}; goal: step {last} <= {GOAL}x step 1 (issue 23)")
        print(f"{'system':<8} {'backend':<9} {'step 1':>8} {'step 2':>8} {f'step {last}':>8} {'ratio':>6} {'goal':>8}"
              f" {'floor 1':>8} {f'floor {last}':>8} {'ratio':>6}")
        for kind in [k.strip() for k in args.backends.split(",") if k.strip()]:
            for system_id in [s.strip() for s in args.systems.split(",") if s.strip()]:
                m = bench(system_id, kind, last, args.repeat, tmp)
                ratio = m[last]["step"] / m[1]["step"]
                print(f"{system_id:<8} {kind:<9} {m[1]['step']:8.1f} {m[2]['step']:8.1f} {m[last]['step']:8.1f} "
                      f"{ratio:6.2f} {'met' if ratio <= GOAL else 'NOT met':>8} {m[1]['floor']:8.1f} "
                      f"{m[last]['floor']:8.1f} {m[last]['floor'] / m[1]['floor']:6.2f}")


if __name__ == "__main__":
    main()
