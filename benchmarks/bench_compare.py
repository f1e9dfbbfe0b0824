"""The endpoint's server-side Resolve of this tree against an earlier revision, in one run.

    python benchmarks/bench_compare.py REV [--rounds 6] [--calls 150] [--cohorts 12] [--instructions | --served]
                                           [--system bbn|hexwar|exalted]

A speed-up measured across two sessions mixes in how busy the machine was each time; this
measures both in the same run.  ``REV`` is checked out in a temporary git worktree.  Each
round starts a fresh Python for each tree in turn (which goes first alternates), and each
child builds its own tree's tracker of ``--cohorts`` cohorts and the VBA payload an xlwings
client posts for it (``--system hexwar`` / ``exalted``: the endpoint benchmark's
40-unit hex battle or 10-unit Exalted one instead), then times ``--calls`` calls of the server's step on that payload
(``sheetsync.app.server._step("resolve", payload)``: the payload read, the step, the
answer encoded; from the second call on, the State is one that process has read before,
as a server's next click reads back what its last click wrote) and prints their median.
Printed: each round's medians, the median of the rounds for each tree, and their ratio.
``--instructions`` counts each tree's machine instructions per step with valgrind instead
(hash seeds fixed, the collector off after the set-up): a count that does not move with how
busy the machine is, for a change too small to see through the noise of timing.
``--served`` times the step as each tree's server serves it instead: every call is a
request to that tree's own app (``create_app``, started and posted to by starlette's
``TestClient`` in the child), the payload parsed afresh from the request's bytes, and the
figure is the app's own record of its step (``app.state.timings``): what the endpoint
benchmark's "server resolve" reads, collector and all.  A revision from before the payload
engine serves through ``xw.Book``, as its server did.
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

SETUP = """
import json, os, statistics, sys, tempfile, time
from pathlib import Path
root = sys.argv[1]
sys.path[:0] = [root + "/benchmarks", root, root + "/tests"]
os.environ.setdefault("XLWINGS_LICENSE_KEY", "noncommercial")
import sheetsync
if not sheetsync.__file__.startswith(root):
    raise SystemExit(f"imported {sheetsync.__file__}, not the tree {root}")
import bench_endpoint
with tempfile.TemporaryDirectory() as tmp:
    payload, _size = bench_endpoint.payload_for(int(sys.argv[3]), "VBA", Path(tmp), sys.argv[4])
"""
"""What both children start with: the tree's own sheetsync, and the VBA payload of its tracker
(argv: the tree, the number of calls, the cohorts, the system)."""

CHILD = SETUP + """
from sheetsync.app.server import _step
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

SERVED_CHILD = SETUP + """
from fastapi.testclient import TestClient
from sheetsync.app.server import create_app
body = json.dumps(payload).encode()
app = create_app(api_key="bench-key")
warmup, calls = 5, int(sys.argv[2])
with TestClient(app) as client:
    for _ in range(warmup + calls):
        answer = client.post("/api/resolve", content=body,
                             headers={"Authorization": "bench-key", "Content-Type": "application/json"})
        answer.raise_for_status()
        if not any(a["func"] == "setValues" for a in answer.json()["actions"]):
            raise SystemExit(f"resolve did not resolve: {answer.text[:300]}")
took = [seconds for action, seconds in app.state.timings if action == "resolve"][warmup:]
print(json.dumps(statistics.median(took) * 1000 if took else 0.0))
"""


def instructions(tree: Path, calls: int, cohorts: int, system: str = "bbn") -> float:
    """Machine instructions per step on ``tree`` (millions), counted by valgrind: the same
    child run with ``calls`` timed steps and with none, their difference over ``calls``.
    Hash seeds are fixed and the collector is off after the set-up (where its collections
    fall shifts with every allocation), so the count is the same run after run."""
    counts = []
    for n in (calls, 0):
        done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                               sys.executable, "-c", CHILD, str(tree), str(n), str(cohorts), system],
                              capture_output=True, text=True, cwd=tempfile.gettempdir(),
                              env={**os.environ, "PYTHONHASHSEED": "0", "BENCH_GC_OFF": "1"})
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if done.returncode or found is None:
            raise SystemExit(f"the count on {tree} failed:\n{done.stderr[-2000:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[0] - counts[1]) / calls / 1e6


def once(tree: Path, calls: int, cohorts: int, served: bool = False, system: str = "bbn") -> float:
    """One fresh Python on ``tree``: the median milliseconds of its ``calls`` steps (``served``:
    of its app's ``calls`` requests)."""
    done = subprocess.run([sys.executable, "-c", SERVED_CHILD if served else CHILD, str(tree), str(calls),
                           str(cohorts), system], capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode:
        raise SystemExit(f"the run on {tree} failed:\n{done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the earlier revision (a commit, tag or branch)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=150)
    ap.add_argument("--cohorts", type=int, default=12)
    ap.add_argument("--system", choices=("bbn", "hexwar", "exalted"), default="bbn",
                    help="the tracker: a battalion of --cohorts cohorts (the default), or the endpoint benchmark's "
                         "hex or Exalted battle")
    ap.add_argument("--instructions", action="store_true",
                    help="count each tree's machine instructions per step with valgrind instead of timing it "
                         "(one round; the same count on a busy machine as on a quiet one)")
    ap.add_argument("--served", action="store_true",
                    help="time each call as a request to the tree's own app (the payload parsed afresh, the "
                         "collector as the server runs it), the app's own record of its step")
    args = ap.parse_args()
    if args.instructions and args.served:
        raise SystemExit("--instructions and --served are two different measures: choose one")
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        old = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old), args.rev], cwd=ROOT, check=True)
        try:
            trees = {args.rev: old, "this tree": ROOT}
            times: dict[str, list[float]] = {name: [] for name in trees}
            if args.instructions:
                counts = {name: instructions(tree, min(args.calls, 60), args.cohorts, args.system) for name, tree in trees.items()}
            for i in range(0 if args.instructions else args.rounds):
                for name in (list(trees) if i % 2 == 0 else list(reversed(trees))):
                    times[name].append(once(trees[name], args.calls, args.cohorts, args.served, args.system))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    label = f"{args.cohorts} cohorts" if args.system == "bbn" else f"the {args.system} battle"
    if args.instructions:
        print(f"server-side Resolve (payload engine), {label}: machine instructions per step "
              f"(valgrind, {min(args.calls, 60)} steps, the collector off)\n")
        for name, count in counts.items():
            print(f"{name:>12}: {count:8.2f} M instructions")
        print(f"\n{args.rev} / this tree: {counts[args.rev] / counts['this tree']:.2f}x")
        return
    what = ("requests to the tree's own app (its recorded step time) per fresh Python" if args.served
            else "calls per fresh Python")
    print(f"server-side Resolve ({'as served' if args.served else 'payload engine'}), {label}: "
          f"median of {args.calls} {what}, {args.rounds} rounds, the trees taking turns\n")
    medians = {name: statistics.median(data) for name, data in times.items()}
    for name, data in times.items():
        print(f"{name:>12}: {' '.join(f'{x:6.2f}' for x in data)}   median {medians[name]:.2f} ms")
    print(f"\n{args.rev} / this tree: {medians[args.rev] / medians['this tree']:.2f}x")


if __name__ == "__main__":
    main()
