"""The Exalted engine is pure (DESIGN convention 1) and its public names exist."""

from __future__ import annotations

import json
import subprocess
import sys

import sheetsync.systems.exalted.rules as exalted


def test_exalted_rules_core_is_pure() -> None:
    """Importing the engine loads no spreadsheet, network, YAML or terminal library."""
    code = "import sys, json; import sheetsync.systems.exalted.rules; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert not loaded & {"openpyxl", "gspread", "xlwings", "fastapi", "requests", "yaml", "httpx", "rich", "typer"}
    assert "sheetsync.systems.bbn.rules" not in loaded and "sheetsync.systems.hexwar.rules" not in loaded


def test_exalted_public_names_exist() -> None:
    assert len(set(exalted.__all__)) == len(exalted.__all__)
    for name in exalted.__all__:
        assert getattr(exalted, name) is not None, name
