"""Wall time of each workbook step (openpyxl backend: load, engine, atomic save).

    python benchmarks/bench_workbook.py [--repeat 5] [--cohorts 12] [--members 5]

``new`` lays the tracker out with room for the battle (issue 9): ``--cohorts 60 --members 5``
(300 characters) runs through every step; a battle past the most a tracker holds is refused
at ``new``, naming the limit.
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
    ap.add_argument("--members", type=int, default=0, help="members in every cohort (3 to 5; default 3, 4, 5 in turn)")
    args = ap.parse_args()
    times: dict[str, list[float]] = {"new": [], "resolve": [], "undo": [], "resolve again": [], "end": []}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "battle.yaml"
        data = make_battle(args.cohorts)
        for i, cohort in enumerate(data["cohorts"]):
            while len(cohort["members"]) < args.members:
                cohort["members"].append({"name": f"C{i}M{len(cohort['members'])}", "abilities": {"Brawl": 2}})
        src.write_text(yaml.safe_dump(data))
        characters = sum(len(c["members"]) for c in data["cohorts"])
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
    print(f"{args.cohorts} cohorts, {characters} characters, {args.repeat} runs: median (min..max) ms per step")
    for step, values in times.items():
        ms = [v * 1000 for v in values]
        print(f"  {step:<14} {statistics.median(ms):8.1f}  ({min(ms):.1f}..{max(ms):.1f})")


if __name__ == "__main__":
    main()
