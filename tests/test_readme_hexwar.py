"""The README's hex wargame commands, run literally in order on the embedded example
battle (saved as ``hex.yaml``): each succeeds and does what its comment says.  The Google
Sheets line needs a spreadsheet and is covered by ``test_gsheet_cli_hexwar.py``."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import excel_backend
from sheetsync.core.registry import find_system
from sheetsync.sheets import marks as steps

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The hex wargame"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("sheetsync ")]


def test_h1_the_readme_hex_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hex.yaml").write_text(find_system("hexwar").example_data(), encoding="utf-8")
    ran = []
    for args in _commands():
        if args[0] == "gsheet":
            continue
        out = runner.invoke(app, args)
        assert out.exit_code == 0, (args, out.output, out.exception)
        ran.append(args[0])
    assert ran[:2] == ["demo", "resolve"] and {"template", "new", "build", "map", "check"} <= set(ran)
    assert os.path.exists("next.yaml") and os.path.exists("map.png") and os.path.exists("blank.xlsx")
    tracker = steps.detect(excel_backend(Path("hex.xlsx")))
    assert str(tracker.mark) == "hexwar@1"
    assert steps.detect(excel_backend(Path("blank.xlsx"))).system.id == "hexwar"
