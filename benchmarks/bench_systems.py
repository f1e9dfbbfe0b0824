"""A resolve of a 40-unit hex battle against a 12-cohort battalion resolve, on the same
backend, in the same run (issue 9: the hex resolve should take at most 1.2x).

    python benchmarks/bench_systems.py [--repeat 7] [--units 40] [--cohorts 12]

Each repeat makes a fresh tracker of each system from its battle file (``sheetsync new``),
then times one Resolve: on a workbook (openpyxl: load, engine, atomic save) and on a
MemoryBackend (the engine and the sheet mapping alone).  Medians, and the ratio
hex / battalion.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from battles import make_battle  # noqa: E402
from hex_battles import make_hex_battle  # noqa: E402

from sheetsync.app import usecases
from sheetsync.app.workbook_cli import new_workbook, run_workbook, system_tracker_from  # noqa: E402
from sheetsync.core.registry import find_system  # noqa: E402
from sheetsync.sheets import marks as steps  # noqa: E402
from sheetsync.sheets.backend import MemoryBackend  # noqa: E402
from sheetsync.systems.bbn.files.loader import load_battle  # noqa: E402
from sheetsync.systems.bbn.tracker.layout import layout  # noqa: E402
from sheetsync.systems.hexwar.tracker.steps import capacity_for, load_into  # noqa: E402


def _memory(lay: object, system: object, capacity: dict[str, int] | None) -> MemoryBackend:
    backend = MemoryBackend({name: {} for name in lay.sheets})  # type: ignore[attr-defined]
    backend.write_ranges(steps.mark_updates(system, capacity))
    return backend


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--units", type=int, default=40)
    ap.add_argument("--cohorts", type=int, default=12)
    args = ap.parse_args()
    hexwar = find_system("hexwar")
    hex_data = make_hex_battle(args.units)
    bbn_data = make_battle(args.cohorts)
    times: dict[str, list[float]] = {"workbook bbn": [], "workbook hexwar": [], "memory bbn": [], "memory hexwar": []}
    with tempfile.TemporaryDirectory() as tmp:
        bbn_file = Path(tmp) / "bbn.yaml"
        bbn_file.write_text(yaml.safe_dump(bbn_data))
        for i in range(args.repeat):
            # the two systems alternate, so drift on a shared machine hits both alike
            wb = Path(tmp) / f"bbn{i}.xlsx"
            new_workbook(wb, bbn_file)
            t = time.perf_counter()
            run_workbook("resolve", wb)
            times["workbook bbn"].append(time.perf_counter() - t)
            hx = Path(tmp) / f"hex{i}.xlsx"
            system_tracker_from(hx, hexwar, hexwar.load(hex_data))
            t = time.perf_counter()
            run_workbook("resolve", hx)
            times["workbook hexwar"].append(time.perf_counter() - t)

            mem = MemoryBackend({name: {} for name in layout().sheets})
            usecases.load_battle_into(mem, load_battle(bbn_data))
            t = time.perf_counter()
            steps.run("resolve", mem)
            times["memory bbn"].append(time.perf_counter() - t)
            battle = hexwar.load(hex_data)
            cap = capacity_for(battle)
            mem = _memory(hexwar.layout(cap), hexwar, cap)
            load_into(mem, battle, capacity=cap)
            t = time.perf_counter()
            steps.run("resolve", mem)
            times["memory hexwar"].append(time.perf_counter() - t)
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"{args.units} hex units vs {args.cohorts} battalion cohorts, {args.repeat} runs: median (min..max) ms per resolve")
    for key, values in times.items():
        ms = [v * 1000 for v in values]
        print(f"  {key:<16} {med[key]:8.1f}  ({min(ms):.1f}..{max(ms):.1f})")
    for backend in ("workbook", "memory"):
        print(f"  {backend}: hexwar / bbn = {med[backend + ' hexwar'] / med[backend + ' bbn']:.2f}  (goal <= 1.20)")


if __name__ == "__main__":
    main()
