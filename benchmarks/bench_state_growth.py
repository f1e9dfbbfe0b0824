"""State size, write size and resolve time of a battalion tracker over 50 phases (issue 9).

    python benchmarks/bench_state_growth.py [--cohorts 12] [--phases 1,10,50] [--repeat 5]
                                            [--backend memory,excel]

A tracker of ``--cohorts`` cohorts (two orders a cohort, typed anew each phase, each on an
enemy that changes from phase to phase) is resolved phase after phase, on a MemoryBackend
and on an openpyxl workbook (each step loads and saves the file, as the CLI does).  At each
phase of ``--phases`` it prints:

* the State's size: characters in the blob (``State!A``) and in the undo records
  (``State!C:F``), and the growth a phase since phase 1;
* the size of the resolve's write: characters of every value in its ``write_ranges`` call,
  and its ratio to phase 1's;
* the resolve time, median of ``--repeat`` runs (each run resolves the phase, then Undo puts
  it back; the last run stands; the phases are measured in turn, each on its own copy of
  the tracker), and its ratio to phase 1's; and, of that, the time the
  State's own code takes (reading the blob and records, building the write).  The rest is
  the backend, and the Orders and Log sheets, which grow with the battle whatever the State;
* the floor: what the backend alone takes for the same step, measured in the same run on
  the same tracker just before each resolve.  On the memory backend, reading the step's
  ranges (``read_plan``) and writing its updates into a copy; on a workbook, a bare openpyxl
  load and save of the file as it stands.  Then the resolve time less the floor (``own``),
  and both ratios to phase 1's: what grows in ``floor`` is the backend having more cells
  to read, load or save (the Orders, Log and undo records grow with the battle), what grows
  in ``own`` is sheetsync's.

Targets (issue 9): the State grows by at most 3 KB a phase, the write at phase 50 is at
most 1.2x phase 1's, the resolve at phase 50 takes at most 1.1x phase 1's time.  The script
prints the figures and asserts nothing.

``--exalted 10,100`` (issue 23) measures instead what an Exalted tracker's State gains a
long tick: the undo record each Next Tick appends (``State!C:F``, the engine's
``UndoRecord`` as the tracker dumps it), over ``--ticks`` long ticks of a battle of that
many units (``tests/exalted_battles.py``), each unit repeating its order on every tick it
acts (the forecast's standing orders).  The floor: the same record holding every unit state
whole, as records did before issue 23, measured on the same ticks.  Target: at most 3 KB a
long tick at 100 units.

A tracker holds 40 phases (the rows of its Health-by-phase table).  To reach phase 50 the
script raises that ceiling in this process only; the State code itself has no such limit.
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run from a clone without installing it too

from battles import make_battle  # noqa: E402

from sheetsync.app import usecases  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate  # noqa: E402
from sheetsync.sheets.marks import mark_updates  # noqa: E402
from sheetsync.systems.bbn.files.loader import load_battle  # noqa: E402
from sheetsync.systems.bbn.tracker import journal as state_journal  # noqa: E402
from sheetsync.systems.bbn.tracker import layout as layout_module  # noqa: E402
from sheetsync.systems.bbn.tracker.reader import read_plan  # noqa: E402


class Counting:
    """A backend wrapper that keeps the updates of the last write (counted after the timing,
    so counting is not part of the resolve time)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.updates: list[RangeUpdate] = []

    @property
    def written(self) -> int:
        """Characters of every value of the last write."""
        return sum(len(str(v)) for u in self.updates for row in u.values for v in row if v is not None)

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        grids: list[Grid] = self.inner.read_ranges(ranges)
        return grids

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        self.updates = list(updates)
        self.inner.write_ranges(updates)


def _room_for(phases: int) -> None:
    """Let a tracker hold ``phases`` phases in this process (a tracker holds 40)."""
    layout_module.MAX_CAPACITY["phases"] = max(layout_module.MAX_CAPACITY["phases"], phases)
    setattr(state_journal, "HISTORY_PHASES", max(layout_module.HISTORY_PHASES, phases))  # noqa: B010


STATE_TIME = [0.0]
"""Seconds spent reading and writing the State (parse_state, state_update, undo_snapshot)."""


def _time_state() -> None:
    """Count the time the State's own code takes, apart from the backend, Orders and Log."""
    for name in ("parse_state", "state_update", "undo_snapshot"):
        fn = getattr(state_journal, name)

        def timed(*args: Any, _fn: Any = fn, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return _fn(*args, **kwargs)
            finally:
                STATE_TIME[0] += time.perf_counter() - t

        setattr(state_journal, name, timed)


def _type_orders(backend: Any, lay: Any, phase: int, cohorts: int) -> None:
    block = lay.block("Orders_Table")
    grid = backend.read_ranges([block.range()])[0]
    j = block.index("cohort")
    start = 1 + max((i for i, row in enumerate(grid) if row[j] is not None), default=-1)
    rows = [[f"Cohort {i}", "Melee Attack", f"Cohort {(i + 1 + 2 * ((phase + k) % 3)) % cohorts}"]
            for k in range(2) for i in range(cohorts)]
    r0 = block.first_row + start
    backend.write_ranges([RangeUpdate(f"Orders!{block.letter('cohort')}{r0}:{block.letter('target')}"
                                      f"{r0 + len(rows) - 1}", rows)])


def _state_size(backend: Any, lay: Any) -> tuple[int, int]:
    blob, records = backend.read_ranges([lay.block("State_Blob").range(), lay.block("State_History").range()])
    return (sum(len(str(v)) for row in blob for v in row if v is not None),
            sum(len(str(v)) for row in records for v in row if v is not None))


class _Step:
    """Runs one step on a backend: a MemoryBackend as it is, a workbook loaded and saved."""

    def __init__(self, kind: str, lay: Any, battle: Any, path: Path) -> None:
        self.kind, self.lay, self.path = kind, lay, path
        self.file_floor = 0.0
        if kind == "memory":
            self.backend: Any = MemoryBackend({name: {} for name in lay.sheets})
            usecases.load_battle_into(self.backend, battle, lay)
            self.backend.write_ranges(mark_updates(find_system("bbn"), lay.capacity))
        else:
            from sheetsync.app.workbook_cli import excel_backend
            from sheetsync.systems.bbn.tracker.template import build_template

            self.backend = excel_backend(self.path, workbook=build_template(lay))
            with self.backend.locked():
                usecases.load_battle_into(self.backend, battle, lay)
        self.counting = Counting(self.backend)

    def snapshot(self, path: Path) -> _Step:
        """The tracker as it stands, copied (a workbook to ``path``): each phase measured
        gets its own, so the phases are measured in turn, under the same load."""
        other = object.__new__(_Step)
        other.kind, other.lay, other.path, other.file_floor = self.kind, self.lay, path, 0.0
        if self.kind == "memory":
            other.backend = MemoryBackend({name: dict(cells) for name, cells in self.backend.sheets.items()})
        else:
            from sheetsync.app.workbook_cli import excel_backend

            shutil.copyfile(self.path, path)
            other.backend = excel_backend(path)
        other.counting = Counting(other.backend)
        return other

    def run(self, action: str) -> float:
        STATE_TIME[0] = 0.0
        t = time.perf_counter()
        if self.kind == "memory":
            usecases.run(action, self.counting, self.lay)
        else:
            with self.backend.locked():
                usecases.run(action, self.counting, self.lay)
        return time.perf_counter() - t

    def call(self, fn: Any, *args: Any) -> Any:
        if self.kind == "memory":
            return fn(self.backend, *args)
        with self.backend.locked():
            return fn(self.backend, *args)

    def prepare_floor(self) -> None:
        """Before a resolve: what the floor needs of the tracker as it stands (untimed)."""
        if self.kind == "memory":
            self.copy = MemoryBackend({name: dict(cells) for name, cells in self.backend.sheets.items()})
            for name in self.copy.sheets:  # its last rows known, as the resolved tracker's are
                self.copy.max_row(name)

    def floor(self, updates: Sequence[RangeUpdate]) -> float:
        """The backend alone for the step just run, on the tracker as it stood before it:
        the memory backend reads the step's ranges and writes its ``updates`` (into the copy
        :meth:`prepare_floor` made); a workbook is loaded and saved by openpyxl, bare."""
        if self.kind == "memory":
            t = time.perf_counter()
            self.copy.read_ranges(read_plan(self.lay))
            self.copy.write_ranges(updates)
            return time.perf_counter() - t
        return self.file_floor

    def measure_file_floor(self) -> None:
        """A workbook, before a resolve: a bare openpyxl load and save of the file."""
        if self.kind == "memory":
            return
        import openpyxl

        t = time.perf_counter()
        wb = openpyxl.load_workbook(self.path)
        buf = io.BytesIO()
        wb.save(buf)
        (self.path.parent / "floor.xlsx").write_bytes(buf.getvalue())
        self.file_floor = time.perf_counter() - t


def bench(kind: str, cohorts: int, marks: list[int], repeat: int, tmp: Path) -> list[dict[str, float]]:
    """The battle is played to the last phase measured, the tracker copied as it stands
    before the resolve of each phase measured; then the copies are measured in turn,
    ``repeat`` rounds (each resolve followed by an Undo, but the last), so a change in the
    machine's load falls on every phase alike."""
    last = max(marks)
    lay = layout_module.layout(capacity={"phases": last, "orders": 2 * cohorts * (last + 1)})
    step = _Step(kind, lay, load_battle(make_battle(cohorts)), tmp / "growth.xlsx")
    at: dict[int, _Step] = {}
    for phase in range(1, last + 1):
        if phase > 1:
            step.call(_type_orders, lay, phase, cohorts)
        if phase in marks:
            at[phase] = step.snapshot(tmp / f"growth-{phase}.xlsx")
        if phase < last:
            step.run("resolve")
    keys = ("ms", "state_ms", "floor_ms", "own_ms")
    samples: dict[int, dict[str, list[float]]] = {phase: {k: [] for k in keys} for phase in marks}
    written: dict[int, int] = {}
    for n in range(repeat):
        for phase in marks:
            s, got = at[phase], samples[phase]
            s.prepare_floor()
            s.measure_file_floor()
            took = s.run("resolve")
            got["ms"].append(took)
            got["state_ms"].append(STATE_TIME[0])
            floor = s.floor(s.counting.updates)
            got["floor_ms"].append(floor)
            got["own_ms"].append(took - floor)
            written[phase] = s.counting.written
            if n < repeat - 1:
                s.run("undo")
    out = []
    for phase in marks:
        blob, records = at[phase].call(_state_size, lay)
        out.append({"phase": phase, "blob": blob, "records": records, "write": written[phase],
                    **{k: statistics.median(v) * 1000 for k, v in samples[phase].items()}})
    return out


def exalted_records(units: int, ticks: int) -> tuple[list[int], list[int]]:
    """Issue 23: the characters of each long tick's undo record as a tracker writes it, and
    of the same record with every unit state whole (the form before issue 23)."""
    import json

    from exalted_battles import make_exalted_battle

    from sheetsync.core.dice import RandomRoller
    from sheetsync.systems.exalted.forecast import ExaltedForecast, Sim
    from sheetsync.systems.exalted.rules.battle import resolve

    adapter = ExaltedForecast()
    declared = adapter.prepare(find_system("exalted").load(make_exalted_battle(units), "bench"))
    now: Sim | None = declared
    sizes, whole = [], []
    roller = RandomRoller("growth")
    while now is not None and len(sizes) < ticks:
        battle = now.battle
        result = resolve(battle, None, roller)
        rec = result.battle.history[-1]
        sizes.append(len(json.dumps(rec.model_dump(mode="json", exclude_defaults=True))))
        full = rec.whole(result.battle.state)
        whole.append(len(json.dumps(full.model_dump(mode="json", exclude_defaults=True))))
        now = adapter.standing(declared, Sim(result.battle.model_copy(update={"history": ()})))
    return sizes, whole


def _exalted(counts: list[int], ticks: int) -> None:
    print(f"Exalted undo record a long tick (State!C:F), over up to {ticks} long ticks: median (max) characters; "
          "the floor is the same record with every unit state whole (before issue 23)")
    for n in counts:
        sizes, whole = exalted_records(n, ticks)
        later = sizes[1:] or sizes
        print(f"  {n:>4} units, {len(sizes)} ticks: record {statistics.median(later):>7,.0f} ({max(later):,}) a tick "
              f"after Join War's {sizes[0]:,}; mean {statistics.mean(sizes):,.0f}; whole states "
              f"{statistics.median(whole):>7,.0f}: ratio {statistics.mean(sizes) / statistics.mean(whole):.2f}; "
              f"target <= 3,000 a tick: {'met' if statistics.mean(sizes) <= 3000 else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exalted", default="", help="unit counts of an Exalted battle, comma-separated (issue 23)")
    ap.add_argument("--ticks", type=int, default=30)
    ap.add_argument("--cohorts", type=int, default=12)
    ap.add_argument("--phases", default="1,10,50", help="the phases to measure, comma-separated")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backend", default="memory,excel", help="memory, excel or both")
    args = ap.parse_args()
    if args.exalted:
        _exalted([int(n) for n in args.exalted.split(",")], args.ticks)
        return
    marks = sorted({int(p) for p in args.phases.split(",")})
    _room_for(max(marks))
    _time_state()
    print(f"{args.cohorts} cohorts, 2 orders a cohort a phase; resolve time: median of {args.repeat}")
    head = (f"{'backend':<8} {'phase':>5} {'State A':>9} {'State C:F':>10} {'total':>9} {'growth/phase':>13} "
            f"{'write':>8} {'x ph1':>6} {'resolve ms':>11} {'x ph1':>6} {'State ms':>9} {'x ph1':>6} "
            f"{'floor ms':>9} {'x ph1':>6} {'own ms':>7} {'x ph1':>6}")
    print(head)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in [k.strip() for k in args.backend.split(",") if k.strip()]:
            rows = bench(kind, args.cohorts, marks, args.repeat, Path(tmp))
            first = rows[0]
            base = first["blob"] + first["records"]
            for r in rows:
                total = r["blob"] + r["records"]
                growth = (total - base) / (r["phase"] - first["phase"]) if r["phase"] > first["phase"] else 0.0
                print(f"{kind:<8} {r['phase']:>5} {r['blob']:>9,} {r['records']:>10,} {total:>9,} {growth:>13,.0f} "
                      f"{r['write']:>8,} {r['write'] / first['write']:>6.2f} {r['ms']:>11.1f} "
                      f"{r['ms'] / first['ms']:>6.2f} {r['state_ms']:>9.1f} {r['state_ms'] / first['state_ms']:>6.2f} "
                      f"{r['floor_ms']:>9.1f} {r['floor_ms'] / first['floor_ms']:>6.2f} {r['own_ms']:>7.1f} "
                      f"{r['own_ms'] / first['own_ms']:>6.2f}")


if __name__ == "__main__":
    main()
