"""The endpoint's server-side Resolve of this tree against an earlier revision, in one run.

    python benchmarks/bench_compare.py REV [--rounds 6] [--calls 150] [--cohorts 12] [--instructions]

A speed-up measured across two sessions mixes in how busy the machine was each time; this
measures both in the same run.  ``REV`` is checked out in a temporary git worktree.  Each
round starts a fresh Python for each tree in turn (which goes first alternates), and each
child builds its own tree's tracker of ``--cohorts`` cohorts and the VBA payload an xlwings
client posts for it, then times ``--calls`` calls of the server's step on that payload
(``sheetsync.app.server._step("resolve", payload)``: the payload read, the step, the
answer encoded; from the second call on, the State is one that process has read before,
as a server's next click reads back what its last click wrote) and prints their median.
Printed: each round's medians, the median of the rounds for each tree, and their ratio.
``--instructions`` counts each tree's machine instructions per step with valgrind instead
(hash seeds fixed, the collector off after the set-up): a count that does not move with how
busy the machine is, for a change too small to see through the noise of timing.
The script asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, os, statistics, sys, tempfile, time
from pathlib import Path
root = sys.argv[1]
sys.path[:0] = [root + "/benchmarks", root, root + "/tests"]
os.environ.setdefault("XLWINGS_LICENSE_KEY", "noncommercial")
import sheetsync
if not sheetsync.__file__.startswith(root):
    raise SystemExit(f"imported {sheetsync.__file__}, not the tree {root}")
import bench_endpoint
from sheetsync.app.server import _step
with tempfile.TemporaryDirectory() as tmp:
    payload, _size = bench_endpoint.payload_for(int(sys.argv[3]), "VBA", Path(tmp))
for _ in range(5):
    _step("resolve", payload)
if os.environ.get("BENCH_GC_OFF"):
    import gc
    gc.disable()
took = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    _step("resolve", payload)
    took.append(time.perf_counter() - t)
print(json.dumps(statistics.median(took) * 1000 if took else 0.0))
"""


def instructions(tree: Path, calls: int, cohorts: int) -> float:
    """Machine instructions per step on ``tree`` (millions), counted by valgrind: the same
    child run with ``calls`` timed steps and with none, their difference over ``calls``.
    Hash seeds are fixed and the collector is off after the set-up (where its collections
    fall shifts with every allocation), so the count is the same run after run."""
    counts = []
    for n in (calls, 0):
        done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                               sys.executable, "-c", CHILD, str(tree), str(n), str(cohorts)],
                              capture_output=True, text=True, cwd=tempfile.gettempdir(),
                              env={**os.environ, "PYTHONHASHSEED": "0", "BENCH_GC_OFF": "1"})
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if done.returncode or found is None:
            raise SystemExit(f"the count on {tree} failed:\n{done.stderr[-2000:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[0] - counts[1]) / calls / 1e6


def once(tree: Path, calls: int, cohorts: int) -> float:
    """One fresh Python on ``tree``: the median milliseconds of its ``calls`` steps."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(calls), str(cohorts)], capture_output=True,
                          text=True, cwd=tempfile.gettempdir())
    if done.returncode:
        raise SystemExit(f"the run on {tree} failed:\n{done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the earlier revision (a commit, tag or branch)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=150)
    ap.add_argument("--cohorts", type=int, default=12)
    ap.add_argument("--instructions", action="store_true",
                    help="count each tree's machine instructions per step with valgrind instead of timing it "
                         "(one round; the same count on a busy machine as on a quiet one)")
    args = ap.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        old = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old), args.rev], cwd=ROOT, check=True)
        try:
            trees = {args.rev: old, "this tree": ROOT}
            times: dict[str, list[float]] = {name: [] for name in trees}
            if args.instructions:
                counts = {name: instructions(tree, min(args.calls, 60), args.cohorts) for name, tree in trees.items()}
            for i in range(0 if args.instructions else args.rounds):
                for name in (list(trees) if i % 2 == 0 else list(reversed(trees))):
                    times[name].append(once(trees[name], args.calls, args.cohorts))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    if args.instructions:
        print(f"server-side Resolve (payload engine), {args.cohorts} cohorts: machine instructions per step "
              f"(valgrind, {min(args.calls, 60)} steps, the collector off)\n")
        for name, count in counts.items():
            print(f"{name:>12}: {count:8.2f} M instructions")
        print(f"\n{args.rev} / this tree: {counts[args.rev] / counts['this tree']:.2f}x")
        return
    print(f"server-side Resolve (payload engine), {args.cohorts} cohorts: median of {args.calls} calls per fresh "
          f"Python, {args.rounds} rounds, the trees taking turns\n")
    medians = {name: statistics.median(data) for name, data in times.items()}
    for name, data in times.items():
        print(f"{name:>12}: {' '.join(f'{x:6.2f}' for x in data)}   median {medians[name]:.2f} ms")
    print(f"\n{args.rev} / this tree: {medians[args.rev] / medians['this tree']:.2f}x")


if __name__ == "__main__":
    main()
