"""The package's surface: public names, a pure rules core, cheap imports, errors that
never leak a foreign exception (DESIGN conventions 1, 6, 7, 8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sheetsync
from sheetsync.core.errors import BackendError, SheetSyncError

EXPECTED = {
    "Battle", "BackendError", "BattleStateError", "ExcelBackend", "Formula", "InputError", "MemoryBackend", "Problem",
    "RandomRoller", "RangeUpdate", "Roller", "ScriptedRoller", "SheetBackend", "SheetFormatError", "SheetSyncError",
    "WorkbookLockedError", "aftermath", "build_template", "compute_pools", "layout", "load_battle", "resolve_phase",
    "run", "undo", "__version__",
}


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_public_names_are_exactly_the_exported_list() -> None:
    assert set(sheetsync.__all__) == EXPECTED
    for name in sheetsync.__all__:
        assert getattr(sheetsync, name) is not None, name
    with pytest.raises(AttributeError):
        sheetsync.no_such_name  # noqa: B018


def test_private_modules_declare_all() -> None:
    root = Path(sheetsync.__file__).parent
    missing = [str(p.relative_to(root)) for p in root.rglob("*.py")
               if p.name not in ("__init__.py", "__main__.py") and "__all__" not in p.read_text(encoding="utf-8")]
    assert missing == []


def test_rules_core_is_pure() -> None:
    """The rules core loads no spreadsheet, network or YAML library (DESIGN convention 1)."""
    loaded = _modules_after("import sheetsync.systems.bbn.rules")
    assert not loaded & {"openpyxl", "gspread", "xlwings", "fastapi", "requests", "yaml", "httpx", "rich", "typer"}


def test_importing_sheetsync_is_cheap() -> None:
    loaded = _modules_after("import sheetsync")
    assert not loaded & {"pydantic", "openpyxl", "gspread", "xlwings", "fastapi", "yaml", "rich", "typer"}


def test_excel_backend_turns_a_broken_file_into_backend_error(tmp_path: Path) -> None:
    from sheetsync.backends.excel import ExcelBackend

    bad = tmp_path / "broken.xlsx"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(BackendError, match="can't be opened as a workbook"):
        ExcelBackend(bad).read_ranges(["Orders!A1:B2"])
    with pytest.raises(BackendError, match="no such workbook"):
        ExcelBackend(tmp_path / "missing.xlsx").read_ranges(["Orders!A1:B2"])


def test_cli_prints_the_problem_first_without_class_name_or_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "broken.xlsx"
    bad.write_bytes(b"junk")
    out = subprocess.run([sys.executable, "-m", "sheetsync", "resolve", str(bad)], capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: {bad} can't be opened as a workbook")
    assert "BackendError" not in out.stderr and "Traceback" not in out.stderr + out.stdout


def test_every_error_is_a_sheetsync_error() -> None:
    from sheetsync.core import errors

    for name in errors.__all__:
        cls = getattr(errors, name)
        if isinstance(cls, type) and issubclass(cls, Exception):
            assert issubclass(cls, SheetSyncError), name
