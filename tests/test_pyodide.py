"""Issue 25 §1: the workbook path under Pyodide, in Node, offline.

Pyodide comes from the pinned npm package and openpyxl and et_xmlfile from their wheels,
all in ``.cache/pyodide`` (``.ci/install-pyodide.sh``, run by ``scripts/test.sh``); the
sheetsync wheel is built here.  ``tests/pyodide/run.mjs`` loads Pyodide from that folder,
unpacks the wheels into site-packages and refuses every fetch.  One Pyodide start runs, for
each system, the embedded example through a tracker by :mod:`sheetsync.app.browser`:
template, new, build, resolve, undo, resolve, end; every visible cell after every step and
the ``export`` JSON equal what the CLI writes on CPython for the same battle."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_pure_path import PROGRAM, SYSTEMS, cli_run, compare, program_input

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "pyodide"
RUNNER = ROOT / "tests" / "pyodide" / "run.mjs"
STEPS = ("build", "resolve", "undo", "resolve", "end")


def wheels(folder: Path) -> list[Path]:
    """The sheetsync wheel, built into ``folder``, and the cached openpyxl and et_xmlfile."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--disable-pip-version-check", "-w", str(folder), str(ROOT)], check=True, capture_output=True)
    own = sorted(folder.glob("sheetsync-*.whl"))
    deps = sorted((CACHE / "wheels").glob("*.whl"))
    assert own and {w.name.split("-")[0] for w in deps} == {"openpyxl", "et_xmlfile"}
    return [*own, *deps]


def run_pyodide(program: Path, host: Path, wheel_files: list[Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run ``program`` under Pyodide with ``host`` at /host: its RESULT and the timings."""
    out = subprocess.run(["node", str(RUNNER), str(program), *map(str, wheel_files), "--host", str(host)],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-4000:]
    result = json.loads(out.stdout.split("=== RESULT ===\n", 1)[1])
    timings = json.loads([ln for ln in out.stderr.splitlines() if ln.startswith('{"load_ms"')][-1])
    return result, timings


@pytest.fixture(scope="module")
def pyodide_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("node") is None or not (CACHE / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        pytest.skip("Pyodide is not installed: bash .ci/install-pyodide.sh")
    host = tmp_path_factory.mktemp("pyodide")
    (host / "in.json").write_text(json.dumps(program_input(STEPS)), encoding="utf-8")
    result, timings = run_pyodide(PROGRAM, host, wheels(tmp_path_factory.mktemp("wheels")))
    pure = {s: json.loads((host / f"out-{s}.json").read_text(encoding="utf-8")) for s in SYSTEMS}
    return {"result": result, "timings": timings, "pure": pure}


def test_issue25_pyodide_is_python_in_the_browser_runtime(pyodide_run: dict[str, Any]) -> None:
    assert pyodide_run["result"]["platform"] == "emscripten"
    assert pyodide_run["result"]["python"].startswith("3.12.")


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_under_pyodide_every_step_writes_what_the_cli_writes(
        pyodide_run: dict[str, Any], system_id: str, tmp_path: Path) -> None:
    assert pyodide_run["result"]["systems"][system_id]["steps"] == [f"{s}:ok" for s in STEPS]
    compare(pyodide_run["pure"][system_id], cli_run(system_id, tmp_path, STEPS))
