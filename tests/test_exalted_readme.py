"""The README's Exalted commands, run literally in order on the embedded example battle
(saved as ``ex.yaml``): each succeeds and does what its comment says."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.core.registry import find_system
from sheetsync.systems.exalted.files.loader import load_battle

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Exalted 2e mass combat")
    return text[start:text.index("\n## ", start + 1)]


def _commands(which: int = 0) -> list[list[str]]:
    blocks = re.findall(r"```bash\n(.*?)```", _section(), re.S)
    assert len(blocks) > which
    lines = [line.split("#", 1)[0].strip() for line in blocks[which].splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("sheetsync ")]


def test_e4_the_readme_exalted_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    system = find_system("exalted")
    (tmp_path / "ex.yaml").write_text(system.example_data(), encoding="utf-8")
    ran = []
    for args in _commands():
        out = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert out.exit_code == 0, (args, out.output)
        ran.append(args[0])
    assert ran == ["demo", "resolve", "pools", "check", "undo", "aftermath"]
    undone = load_battle(yaml.safe_load((tmp_path / "next.yaml").read_text(encoding="utf-8")))
    assert not undone.started and undone.history == ()  # undo brought it back to before Join War


def test_x28_the_readme_order_example_is_a_valid_battle_file_fragment() -> None:
    block = re.search(r"```yaml\n(.*?)```", _section(), re.S)
    assert block is not None
    data = yaml.safe_load(find_system("exalted").example_data())
    data["orders"] = yaml.safe_load(block.group(1))["orders"]
    battle = load_battle(data)
    assert [o.dice for o in battle.orders] == ["7 3 10 2 1 8 9 9", "3s"]


def test_e4_x1_the_readme_tracker_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 10: the section's tracker block (template, new, build, resolve) runs as written
    on the embedded battle, and both workbooks carry the Exalted mark."""
    from openpyxl import load_workbook

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ex.yaml").write_text(find_system("exalted").example_data(), encoding="utf-8")
    ran = []
    for args in _commands(1):
        out = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert out.exit_code == 0, (args, out.output)
        ran.append(args[0])
    assert ran == ["template", "new", "build", "resolve"]
    assert load_workbook(tmp_path / "blank.xlsx")["State"]["B1"].value == "exalted@1"
    assert load_workbook(tmp_path / "ex.xlsx")["State"]["B1"].value == "exalted@1"
