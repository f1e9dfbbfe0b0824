"""Wall time of each workbook step (load, engine, atomic save), against the zip-rewrite floor.

    python benchmarks/bench_workbook.py [--repeat 5] [--cohorts 12] [--members 5] [--openpyxl]
    python benchmarks/bench_workbook.py --targets [--repeat 7]

``new`` lays the tracker out with room for the battle (issue 9): ``--cohorts 60 --members 5``
(300 characters) runs through every step; a battle past the most a tracker holds is refused
at ``new``, naming the limit.  ``--openpyxl`` runs the steps on the openpyxl path alone
(``SHEETSYNC_OPENPYXL=1``), for comparison.

Issue 12: every run also measures, in the same run and on the same workbook, the floor: every
member of the .xlsx inflated and deflated again into a new zip, then written with
``atomic_write_bytes`` (what any step that rewrites the file costs at least).  ``--targets``
prints, as medians measured in one run, the issue's three ratios and whether each is met:
Resolve (12 cohorts) / floor <= 4, Resolve (60 cohorts) / floor <= 5, and a Resolve on the
.xlsm tracker / on the .xlsx <= 1.02.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from battles import make_battle  # noqa: E402

from sheetsync.app.workbook_cli import new_workbook, run_workbook  # noqa: E402
from sheetsync.backends.xlsx_package import zip_rewrite  # noqa: E402
from sheetsync.core.errors import SheetSyncError  # noqa: E402
from sheetsync.sheets.disk import atomic_write_bytes  # noqa: E402


def battle_file(folder: Path, cohorts: int, members: int) -> tuple[Path, int]:
    src = folder / f"battle{cohorts}.yaml"
    data = make_battle(cohorts)
    for i, cohort in enumerate(data["cohorts"]):
        while len(cohort["members"]) < members:
            cohort["members"].append({"name": f"C{i}M{len(cohort['members'])}", "abilities": {"Brawl": 2}})
    src.write_text(yaml.safe_dump(data))
    return src, sum(len(c["members"]) for c in data["cohorts"])


def floor_once(path: Path) -> float:
    """One zip rewrite of ``path`` (read, every member inflated and deflated, atomic write)."""
    gc.collect()
    t = time.perf_counter()
    atomic_write_bytes(path, zip_rewrite(path.read_bytes()), backup=True)
    return time.perf_counter() - t


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def steps_table(args: argparse.Namespace) -> None:
    times: dict[str, list[float]] = {"new": [], "resolve": [], "undo": [], "resolve again": [], "end": [],
                                     "zip-rewrite floor": []}
    with tempfile.TemporaryDirectory() as tmp:
        src, characters = battle_file(Path(tmp), args.cohorts, args.members)
        for i in range(args.repeat):
            wb = Path(tmp) / f"b{i}.xlsx"
            t = time.perf_counter()
            try:
                new_workbook(wb, src)
            except SheetSyncError as exc:  # e.g. more cohorts than the tracker holds
                sys.exit(f"can't benchmark {args.cohorts} cohorts: {exc}")
            times["new"].append(time.perf_counter() - t)
            floor = Path(tmp) / f"floor{i}.xlsx"
            shutil.copy(wb, floor)
            times["zip-rewrite floor"].append(floor_once(floor))
            # End needs a resolved phase, so undo is followed by a second resolve
            for label, step in (("resolve", "resolve"), ("undo", "undo"), ("resolve again", "resolve"), ("end", "end")):
                t = time.perf_counter()
                run_workbook(step, wb)
                times[label].append(time.perf_counter() - t)
    path = "openpyxl path" if os.environ.get("SHEETSYNC_OPENPYXL") == "1" else "package path where it applies"
    print(f"{args.cohorts} cohorts, {characters} characters, {args.repeat} runs ({path}): median (min..max) ms per step")
    floor = median_ms(times["zip-rewrite floor"])
    for step, values in times.items():
        ms = [v * 1000 for v in values]
        print(f"  {step:<18} {statistics.median(ms):8.1f}  ({min(ms):.1f}..{max(ms):.1f})"
              f"  {statistics.median(ms) / floor:5.1f}x floor")


def resolve_times(src: Path, folder: Path, repeat: int, suffix: str = ".xlsx") -> tuple[list[float], list[float]]:
    """``repeat`` Resolves of fresh copies of the tracker ``src``, each right after a floor
    measured on the same file: (resolve seconds, floor seconds)."""
    resolves: list[float] = []
    floors: list[float] = []
    run_workbook("resolve", Path(shutil.copy(src, folder / f"warm{suffix}")))  # imports, caches
    for i in range(repeat):
        wb = Path(shutil.copy(src, folder / f"r{i}{suffix}"))
        floor = Path(shutil.copy(src, folder / f"f{i}{suffix}"))
        floors.append(floor_once(floor))
        gc.collect()
        t = time.perf_counter()
        run_workbook("resolve", wb)
        resolves.append(time.perf_counter() - t)
    return resolves, floors


def targets(args: argparse.Namespace) -> None:
    rows: list[tuple[str, float, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        xlsx12 = xlsm12 = None
        for cohorts, members, limit in ((12, 0, 4.0), (60, 5, 5.0)):
            src, _ = battle_file(folder, cohorts, members)
            tracker = folder / f"tracker{cohorts}.xlsx"
            new_workbook(tracker, src)
            resolves, floors = resolve_times(tracker, folder, args.repeat)
            r, f = median_ms(resolves), median_ms(floors)
            rows.append((f"Resolve ({cohorts} cohorts) / zip-rewrite floor", r, f, r / f, f"<= {limit:g}x"))
            if cohorts == 12:  # the same battle in a macro-enabled tracker (VBA project and buttons)
                xlsx12, xlsm12 = tracker, folder / "tracker12.xlsm"
                new_workbook(xlsm12, src)
        assert xlsx12 is not None and xlsm12 is not None
        # .xlsm and .xlsx resolves interleaved (each first, second and third in turn), so a
        # busy machine slows both alike; a second .xlsx (the same bytes, another name) shows
        # how far apart two identical workloads measure
        control = Path(shutil.copy(xlsx12, folder / "control12.xlsx"))
        times: dict[Path, list[float]] = {xlsx12: [], xlsm12: [], control: []}
        order = list(times)
        run_workbook("resolve", Path(shutil.copy(xlsm12, folder / "warm.xlsm")))
        for i in range(3 * args.repeat):  # a small difference: more runs
            for src in order[i % 3:] + order[:i % 3]:
                wb = Path(shutil.copy(src, folder / f"m{i}-{src.name}"))
                gc.collect()
                t = time.perf_counter()
                run_workbook("resolve", wb)
                times[src].append(time.perf_counter() - t)
        m, x, c = median_ms(times[xlsm12]), median_ms(times[xlsx12]), median_ms(times[control])
        rows.append(("Resolve .xlsm / Resolve .xlsx (12 cohorts)", m, x, m / x, "<= 1.02x"))
    print(f"Issue 12 targets, medians of {args.repeat} runs each ({3 * args.repeat} for .xlsm/.xlsx), in one run:")
    print(f"  {'ratio':<46} {'ms':>8} {'vs ms':>8} {'ratio':>7}  {'target':<9} result")
    for label, a, b, ratio, target in rows:
        met = ratio <= float(target.strip("<= x"))
        print(f"  {label:<46} {a:8.1f} {b:8.1f} {ratio:6.2f}x  {target:<9} {'met' if met else 'NOT met'}")
    print(f"  control: the same .xlsx under two names       {c:8.1f} {x:8.1f} {c / x:6.2f}x  (how far two identical "
          "workloads measure apart)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cohorts", type=int, default=12)
    ap.add_argument("--members", type=int, default=0, help="members in every cohort (3 to 5; default 3, 4, 5 in turn)")
    ap.add_argument("--openpyxl", action="store_true", help="run the steps on the openpyxl path only")
    ap.add_argument("--targets", action="store_true", help="the issue 12 ratios and whether each is met")
    args = ap.parse_args()
    if args.openpyxl:
        os.environ["SHEETSYNC_OPENPYXL"] = "1"
    if args.targets:
        targets(args)
    else:
        steps_table(args)


if __name__ == "__main__":
    main()
