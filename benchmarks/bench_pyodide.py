"""The workbook path under Pyodide against CPython, in one run (issue 25 §1).

    python benchmarks/bench_pyodide.py [--cohorts 12] [--repeat 7]

Needs Node.js and ``bash .ci/install-pyodide.sh`` (Pyodide and the openpyxl and et_xmlfile
wheels in ``.cache/pyodide``); the sheetsync wheel is built into a temporary folder. It
prints:

* Pyodide's cold start in Node (``loadPyodide`` from the local npm folder), the wheels
  unpacked, and ``import sheetsync.app.browser`` (with openpyxl) there, against the same
  import in a fresh CPython;
* a Resolve of a ``--cohorts``-cohort battalion tracker (the battle of
  ``tests/battles.py``, two orders a cohort pending) through
  :func:`sheetsync.app.browser.run_step`, ``--repeat`` times from the same bytes, under
  Pyodide and under CPython (this process): the medians (min..max) and their ratio.  The
  first run of each is a warm-up (imports, caches) and is not counted.

Target: Pyodide's Resolve ≤ 3× CPython's.  The script asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from battles import make_battle  # noqa: E402

from sheetsync.app import browser  # noqa: E402

CACHE = ROOT / ".cache" / "pyodide"
RUNNER = ROOT / "tests" / "pyodide" / "run.mjs"
TARGET = 3.0

PROGRAM = """
import json, time
t = time.perf_counter()
from sheetsync.app import browser
import openpyxl
imported = time.perf_counter() - t
spec = json.load(open("/host/spec.json"))
data = open("/host/tracker.xlsx", "rb").read()
times = []
for i in range(spec["repeat"] + 1):
    t = time.perf_counter()
    answer = browser.run_step(data, "tracker.xlsx", "resolve")
    times.append(time.perf_counter() - t)
    assert answer["ok"], answer["message"]
RESULT = {"import_s": imported, "resolve_s": times[1:], "message": answer["message"]}
"""


def tracker(cohorts: int) -> bytes:
    """A built battalion tracker of ``cohorts`` cohorts with its first phase's orders pending."""
    data = make_battle(cohorts)
    return browser.new_tracker("bbn", battle=json.loads(json.dumps(data)))


def cpython_resolves(data: bytes, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat + 1):
        t = time.perf_counter()
        answer = browser.run_step(data, "tracker.xlsx", "resolve")
        times.append(time.perf_counter() - t)
        assert answer["ok"], answer["message"]
    return times[1:]


def cpython_import() -> float:
    code = ("import time; t = time.perf_counter(); from sheetsync.app import browser; import openpyxl; "
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return float(out.stdout.strip())


def wheels(folder: Path) -> list[Path]:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--disable-pip-version-check", "-w", str(folder), str(ROOT)], check=True, capture_output=True)
    return [*folder.glob("sheetsync-*.whl"), *(CACHE / "wheels").glob("*.whl")]


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.1f} ms ({min(values) * 1000:.1f}..{max(values) * 1000:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cohorts", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if shutil.which("node") is None or not (CACHE / "node_modules" / "pyodide").is_dir():
        sys.exit("Pyodide is not installed: bash .ci/install-pyodide.sh")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = tracker(args.cohorts)
        (folder / "tracker.xlsx").write_bytes(data)
        (folder / "spec.json").write_text(json.dumps({"repeat": args.repeat}))
        (folder / "program.py").write_text(PROGRAM)
        whl = wheels(folder / "wheels")
        out = subprocess.run(["node", str(RUNNER), str(folder / "program.py"), *map(str, whl), "--host", str(folder)],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.split("=== RESULT ===\n", 1)[1])
        timings = json.loads([ln for ln in out.stderr.splitlines() if ln.startswith('{"load_ms"')][-1])
        native = cpython_resolves(data, args.repeat)
        native_import = cpython_import()
    cold = timings["load_ms"] / 1000 + timings["wheels_ms"] / 1000 + result["import_s"]
    print(f"Pyodide cold start + import sheetsync: {cold:.2f} s (loadPyodide {timings['load_ms'] / 1000:.2f} s, "
          f"wheels {timings['wheels_ms'] / 1000:.2f} s, import sheetsync.app.browser {result['import_s']:.2f} s); "
          f"CPython's import {native_import:.2f} s")
    print(f"Resolve, {args.cohorts} cohorts ({result['message']}), {args.repeat} runs each:")
    print(f"  Pyodide {ms(result['resolve_s'])}")
    print(f"  CPython {ms(native)}")
    ratio = statistics.median(result["resolve_s"]) / statistics.median(native)
    print(f"  ratio   {ratio:.2f}x (target <= {TARGET:g}x: {'met' if ratio <= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
