"""Issue 25, §4: a wheel that installs.  The wheel built from the source tree carries every
data file (the examples, the macros, the Grapevine map and the catalog), and installed into
a fresh virtual environment away from the source tree it runs ``sheetsync demo`` and
``sheetsync rules`` for every system, and writes the macro-enabled and the xlwings Lite
trackers.

The environment sees the system's site-packages so that the dependencies need no download;
the sheetsync that runs is the wheel's (checked by its ``__file__``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sheetsync.core.registry import tracker_system_ids

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = tracker_system_ids()
RULES_TITLE = {"bbn": "Baltimore by Night battalion rules", "hexwar": "Hex wargame",
               "exalted": "Exalted 2e mass combat"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the source tree (the build leaves nothing in the tree)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("sheetsync", "macros"):
        shutil.copytree(ROOT / name, src / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "-w", str(tmp / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    (built,) = (tmp / "dist").glob("sheetsync-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env)], check=True, timeout=300)
    run = subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--force-reinstall",
                          "--no-index", "-q", str(wheel)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return env


def _run(env: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    clean["PATH"] = f"{env / 'bin'}{os.pathsep}{clean.get('PATH', '')}"
    clean["COLUMNS"] = "200"
    return subprocess.run(list(args), capture_output=True, text=True, cwd=cwd, env=clean, timeout=300)


def test_issue25_the_wheel_carries_every_data_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / "sheetsync").rglob("*")
               if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}
    shipped |= {f"sheetsync/macros/{p.name}" for p in (ROOT / "macros").iterdir() if p.suffix in (".bas", ".gs")}
    assert shipped and shipped <= names, sorted(shipped - names)
    for needed in ("sheetsync/examples/battle.yaml", "sheetsync/systems/hexwar/example.yaml",
                   "sheetsync/systems/exalted/example.yaml", "sheetsync/systems/bbn/grapevine_map.json",
                   "sheetsync/systems/bbn/rules/catalog.json", "sheetsync/macros/Sheetsync.bas",
                   "sheetsync/macros/sheetsync.gs", "sheetsync/lite.py"):
        assert needed in names
    assert "sheetsync = sheetsync.app.entry:main" in zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("entry_points.txt"))).decode()


def test_issue25_the_installed_wheel_is_what_runs(venv: Path, tmp_path: Path) -> None:
    run = _run(venv, tmp_path, str(venv / "bin" / "python"), "-c", "import sheetsync; print(sheetsync.__file__)")
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).resolve().is_relative_to(venv.resolve())
    assert shutil.which("sheetsync", path=str(venv / "bin"))


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_the_installed_wheel_runs_the_demo_and_the_rules(venv: Path, tmp_path: Path, system_id: str) -> None:
    demo = _run(venv, tmp_path, "sheetsync", "demo", "--system", system_id, "--out-dir", "out")
    assert demo.returncode == 0, demo.stderr
    assert "sheetsync demo" in demo.stdout
    books = list((tmp_path / "out").glob("*.xlsx"))
    assert books, "the demo wrote its tracker workbook"
    rules = _run(venv, tmp_path, "sheetsync", "rules", "--system", system_id)
    assert rules.returncode == 0, rules.stderr
    assert RULES_TITLE[system_id] in rules.stdout and len(rules.stdout.splitlines()) > 20


def test_issue25_the_installed_wheel_finds_its_macros_and_lite_buttons(venv: Path, tmp_path: Path) -> None:
    macros = _run(venv, tmp_path, "sheetsync", "template", "battle.xlsm", "--macros")
    assert macros.returncode == 0, macros.stderr
    with zipfile.ZipFile(tmp_path / "battle.xlsm") as z:
        assert "xl/vbaProject.bin" in z.namelist()
    lite = _run(venv, tmp_path, "sheetsync", "template", "lite.xlsx", "--lite", "--system", "exalted")
    assert lite.returncode == 0, lite.stderr
    with zipfile.ZipFile(tmp_path / "lite.xlsx") as z:
        assert any(n.startswith("xl/drawings/drawing") for n in z.namelist())
