"""Wall time of each workbook step (openpyxl backend: load, engine, atomic save).

    python benchmarks/bench_workbook.py [--repeat 5] [--cohorts 12]
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

from sheetsync.app.workbook_cli import new_workbook, run_workbook  # noqa: E402
from sheetsync.errors import SheetSyncError  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cohorts", type=int, default=12)
    args = ap.parse_args()
    times: dict[str, list[float]] = {"new": [], "resolve": [], "undo": [], "resolve again": [], "end": []}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "battle.yaml"
        src.write_text(yaml.safe_dump(make_battle(args.cohorts)))
        for i in range(args.repeat):
            wb = Path(tmp) / f"b{i}.xlsx"
            t = time.perf_counter()
            try:
                new_workbook(wb, src)
            except SheetSyncError as exc:  # e.g. more cohorts than the tracker holds
                sys.exit(f"can't benchmark {args.cohorts} cohorts: {exc}")
            times["new"].append(time.perf_counter() - t)
            # End needs a resolved phase, so undo is followed by a second resolve
            for label, step in (("resolve", "resolve"), ("undo", "undo"), ("resolve again", "resolve"), ("end", "end")):
                t = time.perf_counter()
                run_workbook(step, wb)
                times[label].append(time.perf_counter() - t)
    print(f"{args.cohorts} cohorts, {args.repeat} runs: median (min..max) ms per step")
    for step, values in times.items():
        ms = [v * 1000 for v in values]
        print(f"  {step:<14} {statistics.median(ms):8.1f}  ({min(ms):.1f}..{max(ms):.1f})")


if __name__ == "__main__":
    main()
