"""The arrows between sheetsync's packages (issue 24, docs/ARCHITECTURE.md), as
import-linter contracts in pyproject.toml.  The tree keeps them, and each contract breaks,
naming the import, when a forbidden import is added to a copy of the tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _lint(root: Path, contract: str | None = None) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command())", "--config", str(root / "pyproject.toml"), "--no-cache"]
    if contract:
        args += ["--contract", contract]
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(args, capture_output=True, text=True, cwd=root, env=env, timeout=120)


def test_issue24_the_tree_keeps_every_import_contract() -> None:
    proc = _lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


@pytest.mark.parametrize(("contract", "module", "line", "named"), [
    ("layers", "sheetsync/core/dice.py", "from sheetsync.app import buttons", "sheetsync.core.dice -> sheetsync.app.buttons"),
    ("layers", "sheetsync/systems/hexwar/rules/grid.py", "import sheetsync.app.cli",
     "sheetsync.systems.hexwar.rules.grid -> sheetsync.app.cli"),
    ("independent-systems", "sheetsync/systems/bbn/rules/models.py", "import sheetsync.systems.hexwar.rules.grid",
     "sheetsync.systems.bbn.rules.models -> sheetsync.systems.hexwar.rules.grid"),
    ("core-stdlib", "sheetsync/core/enums.py", "import yaml", "sheetsync.core.enums -> yaml"),
    ("rules-stdlib-exalted", "sheetsync/systems/exalted/rules/dice.py", "import pydantic",
     "sheetsync.systems.exalted.rules.dice -> pydantic"),
    ("rules-stdlib-hexwar", "sheetsync/systems/hexwar/rules/turn.py", "import yaml",
     "sheetsync.systems.hexwar.rules.turn -> yaml"),
    ("rules-stdlib-bbn", "sheetsync/systems/bbn/rules/pools.py", "import pydantic",
     "sheetsync.systems.bbn.rules.pools -> pydantic"),
    ("app-through-registry", "sheetsync/app/buttons.py", "import sheetsync.systems.bbn.rules.models",
     "sheetsync.app.buttons -> sheetsync.systems.bbn.rules.models"),
])
def test_issue24_a_forbidden_import_breaks_its_contract(tmp_path: Path, contract: str, module: str, line: str,
                                                         named: str) -> None:
    copy = tmp_path / "tree"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    shutil.copytree(ROOT / "sheetsync", copy / "sheetsync", ignore=shutil.ignore_patterns("__pycache__"))
    assert _lint(copy, contract).returncode == 0
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    proc = _lint(copy, contract)
    assert proc.returncode != 0
    assert "BROKEN" in proc.stdout and named in proc.stdout, proc.stdout
