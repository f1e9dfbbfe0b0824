"""What a button click pays in imports: each RunPython click starts a fresh Python.

    python benchmarks/bench_import.py [--repeat 15]

Times, in fresh interpreters run alternately (so drift hits every variant alike):

* ``import xlwings`` (the floor: every RunPython click loads it),
* ``import xlwings, sheetsync.app.buttons`` (the entry point the macro imports),
* ``import xlwings, sheetsync.app.buttons, sheetsync.app.usecases,
  sheetsync.backends.xlwings_backend`` (what the click really loads before it runs).

Reports each median and what it adds to ``import xlwings``.  The bar: the entry point's
import adds under 150 ms.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

VARIANTS = {
    "xlwings": "import xlwings",
    "+ buttons": "import xlwings, sheetsync.app.buttons",
    "+ buttons, usecases, backend": (
        "import xlwings, sheetsync.app.buttons, sheetsync.app.usecases, "
        "sheetsync.backends.xlwings_backend"
    ),
}
GOAL_MS = 150.0


def run(code: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    for code in VARIANTS.values():  # warm the file cache and write the .pyc files
        run(code)
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(args.repeat):
        for name, code in VARIANTS.items():
            times[name].append(run(code))

    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"{args.repeat} fresh interpreters per variant, alternating; wall time of `python -c ...`\n")
    floor = statistics.median(times["xlwings"]) * 1000
    print(f"{'variant':32} | {'median (ms)':>11} | {'min (ms)':>8} | {'added (ms)':>10}")
    print("-" * 32 + "-+-" + "-+-".join("-" * w for w in (11, 8, 10)))
    for name, data in times.items():
        med = statistics.median(data) * 1000
        print(f"{name:32} | {med:11.0f} | {min(data) * 1000:8.0f} | {med - floor:10.0f}")
    entry = statistics.median(times["+ buttons"]) * 1000 - floor
    click = statistics.median(times["+ buttons, usecases, backend"]) * 1000 - floor
    print(f"\nentry point adds {entry:.0f} ms (goal < {GOAL_MS:.0f} ms: {'met' if entry < GOAL_MS else 'NOT met'}); "
          f"the full click adds {click:.0f} ms")


if __name__ == "__main__":
    main()
