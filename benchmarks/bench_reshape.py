"""This tree against an earlier revision, in one run (issue 24: the reshape into one package
per rule system must not cost speed).

    python benchmarks/bench_reshape.py REV [--repeat 7] [--seconds 1.0]

``REV`` is checked out in a temporary git worktree.  Every sample is a fresh interpreter,
and the two trees take turns, so that the machine's load moves both alike.  For each tree:

1. **Engine**: 4-vs-4 battalion phases resolved per CPU second on one core, each phase the
   whole file command (``resolve_file``: the phase with its record, events and JSON), and
   the forecast's own step (``adapter.step``); the goal is 2,500 phases a second.
2. **A hex and an Exalted step**: CPU milliseconds for one resolve of each system's
   embedded example battle (``resolve_file``), median over the samples of one process.
3. **``sheetsync --help``** as a whole process, in CPU milliseconds, against ``python -c
   pass`` (the floor).
4. **A workbook resolve as a whole process** (``sheetsync resolve tracker.xlsx`` on a
   4-vs-4 tracker made by ``sheetsync new --from``), in CPU milliseconds, a fresh copy of
   the tracker for each sample.

CPU time, not wall time: the machines are shared.  Medians, with min..max.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ENGINE = r"""
import json, random, sys, time
tree = sys.argv[1]; seconds = float(sys.argv[2])
sys.path[:0] = [tree, tree + "/benchmarks", tree + "/tests"]
import yaml
from sheetsync.core.registry import find_system
from sheetsync.app.forecast_systems import adapter_for
from bench_forecast import four_vs_four

def rate(fn):
    fn()
    start = time.process_time(); n = 0
    while time.process_time() - start < seconds:
        fn(); n += 1
    return n / (time.process_time() - start)

out = {}
bbn = find_system("bbn")
battle = bbn.load(four_vs_four())
out["bbn phases/s (resolve_file)"] = rate(lambda: bbn.resolve_file(battle))
adapter = adapter_for("bbn")
prepared = adapter.prepare(bbn.load(four_vs_four()))

class Roller:
    def __init__(self):
        self.r = random.Random(7)
    def roll(self, sides):
        return self.r.randint(1, sides)

out["bbn phases/s (forecast step)"] = rate(lambda: adapter.step(prepared, Roller()))
for sid in ("hexwar", "exalted"):
    system = find_system(sid)
    b = system.load(yaml.safe_load(system.example_data()), "example")
    out[f"{sid} step ms"] = 1000 / rate(lambda: system.resolve_file(b))
print(json.dumps(out))
"""


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _process_ms(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    before = _child_cpu()
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (_child_cpu() - before) * 1000


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": ""}


def _tracker(tree: Path, work: Path) -> Path:
    """A 4-vs-4 battalion tracker, made by this tree's own ``sheetsync new --from``."""
    code = ("import sys, yaml; sys.path[:0] = [sys.argv[1] + '/benchmarks']; import bench_forecast as b; "
            "yaml.safe_dump(b.four_vs_four(), open(sys.argv[2], 'w'))")
    subprocess.run([sys.executable, "-c", code, str(tree), str(work / "battle.yaml")], cwd=work, env=_env(tree),
                   check=True)
    subprocess.run([sys.executable, "-m", "sheetsync", "new", str(work / "tracker.xlsx"), "--from",
                    str(work / "battle.yaml")], cwd=work, env=_env(tree), check=True, stdout=subprocess.DEVNULL)
    return work / "tracker.xlsx"


def _spread(xs: list[float], fmt: str) -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}..{max(xs):{fmt}})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the earlier revision (a commit, a tag, a branch)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=1.0, help="CPU seconds behind each engine rate")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-reshape-"))
    old = tmp / "old"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old), args.rev], cwd=ROOT, check=True)
    try:
        trees = {args.rev: old, "this tree": ROOT}
        work = {name: tmp / f"work-{i}" for i, name in enumerate(trees)}
        for name, tree in trees.items():
            work[name].mkdir()
            _tracker(tree, work[name])
        engine: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
        procs: dict[str, dict[str, list[float]]] = {name: {"python -c pass": [], "sheetsync --help": [],
                                                           "workbook resolve": []} for name in trees}
        for i in range(args.repeat):
            print(f"\rround {i + 1}/{args.repeat}", end="", file=sys.stderr, flush=True)
            for name, tree in trees.items():  # taking turns
                env = _env(tree)
                out = subprocess.run([sys.executable, "-c", ENGINE, str(tree), str(args.seconds)], env=env,
                                     capture_output=True, text=True, check=True, cwd=tmp)
                for k, v in json.loads(out.stdout).items():
                    engine[name].setdefault(k, []).append(v)
                procs[name]["python -c pass"].append(_process_ms([sys.executable, "-c", "pass"], tmp, env))
                procs[name]["sheetsync --help"].append(
                    _process_ms([sys.executable, "-m", "sheetsync", "--help"], tmp, env))
                copy = work[name] / "run.xlsx"
                shutil.copy(work[name] / "tracker.xlsx", copy)
                procs[name]["workbook resolve"].append(
                    _process_ms([sys.executable, "-m", "sheetsync", "resolve", str(copy)], work[name], env))
        print(file=sys.stderr)
        keys = list(next(iter(engine.values())))
        width = max(len(k) for k in [*keys, *procs[args.rev]]) + 2
        print(f"{'measure':<{width}}" + "".join(f"{n:>26}" for n in trees) + f"{'new/old':>10}")
        for k in keys:
            meds = [statistics.median(engine[n][k]) for n in trees]
            fmt = ".0f" if "/s" in k else ".2f"
            print(f"{k:<{width}}" + "".join(f"{_spread(engine[n][k], fmt):>26}" for n in trees)
                  + f"{meds[1] / meds[0]:>9.2f}x")
        for k in procs[args.rev]:
            meds = [statistics.median(procs[n][k]) for n in trees]
            print(f"{k + ' ms':<{width}}" + "".join(f"{_spread(procs[n][k], '.0f'):>26}" for n in trees)
                  + f"{meds[1] / meds[0]:>9.2f}x")
        for n in trees:
            floor = statistics.median(procs[n]["python -c pass"])
            print(f"{n}: --help / python -c pass = {statistics.median(procs[n]['sheetsync --help']) / floor:.2f}x; "
                  f"4-vs-4 phases per CPU second (resolve_file) {statistics.median(engine[n][keys[0]]):.0f} "
                  f"(goal >= 2,500: {'met' if statistics.median(engine[n][keys[0]]) >= 2500 else 'NOT met'})")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
