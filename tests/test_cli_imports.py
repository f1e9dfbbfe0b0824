"""The command line loads only what a command uses, and its tables are drawn without
rich's ``Table`` yet look the same (issue 12).  No timings here: benchmarks/bench_cli.py
measures them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich import box
from rich.console import Console
from rich.table import Table

from sheetsync.app.files import example_path, read_data_file
from sheetsync.app.render import (
    Col,
    Grid,
    Out,
    print_phase,
    print_pools,
    print_standing,
    wrap_frags,
)
from sheetsync.rules.bbn import load_battle, resolve_phase

HEAVY = {"openpyxl", "gspread", "xlwings", "fastapi", "uvicorn", "PIL", "matplotlib"}


def _cli(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``sheetsync ARGS`` in a fresh interpreter, and the modules it had loaded at exit."""
    dump = tmp_path / "modules.json"
    code = ("import atexit, json, sys\n"
            f"atexit.register(lambda: open({str(dump)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
            f"sys.argv = ['sheetsync', *{list(args)!r}]\n"
            "from sheetsync.app.cli import main\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "COLUMNS": "100"}, check=False)
    return done, set(json.loads(dump.read_text(encoding="utf-8")))


def _packages(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_help_loads_no_backend_no_rules_no_rich_no_pydantic(tmp_path: Path) -> None:
    done, modules = _cli(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert "resolve" in done.stdout and "forecast" in done.stdout and "gsheet" in done.stdout
    assert not _packages(modules) & (HEAVY | {"rich", "pydantic", "yaml"})
    assert not {m for m in modules if m.startswith(("sheetsync.rules", "sheetsync.backends", "sheetsync.sheets"))}


def test_a_command_help_loads_no_backend(tmp_path: Path) -> None:
    done, modules = _cli(tmp_path, "resolve", "--help")
    assert done.returncode == 0, done.stderr
    assert "--seed" in done.stdout
    assert not _packages(modules) & HEAVY


def test_resolving_a_battle_file_loads_no_workbook_library(tmp_path: Path) -> None:
    battle = tmp_path / "battle.yaml"
    battle.write_text(example_path().read_text(encoding="utf-8"), encoding="utf-8")
    done, modules = _cli(tmp_path, "resolve", str(battle))
    assert done.returncode == 0, done.stderr
    assert "Phase 1" in done.stdout and "Ghoul Pack" in done.stdout
    assert not _packages(modules) & HEAVY
    assert "rich.table" not in modules  # the tables are drawn by sheetsync.app.render


def test_resolve_json_loads_no_terminal_library(tmp_path: Path) -> None:
    battle = tmp_path / "battle.yaml"
    battle.write_text(example_path().read_text(encoding="utf-8"), encoding="utf-8")
    done, modules = _cli(tmp_path, "resolve", str(battle), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["phase"] == 1
    assert not _packages(modules) & (HEAVY | {"rich"})


def test_an_error_still_prints_one_line(tmp_path: Path) -> None:
    done, _ = _cli(tmp_path, "resolve", str(tmp_path / "missing.yaml"))
    assert done.returncode == 1
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr


def test_the_console_is_made_on_first_use_and_is_a_rich_console() -> None:
    from sheetsync.app import cli

    assert isinstance(cli.console, Console)
    assert isinstance(cli.err_console, Console) and cli.err_console.stderr


def _rich(console: Console, title: str, cols: list[Col], rows: list[list[str]], narrow: bool) -> None:
    table = (Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False) if narrow
             else Table(title=title, header_style="bold"))
    for c in cols:
        table.add_column(c.header, justify="right" if c.justify == "right" else "left", no_wrap=c.no_wrap,
                         overflow="fold" if c.fold else "ellipsis", min_width=c.min_width or None)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _ours(console: Console, title: str, cols: list[Col], rows: list[list[str]], narrow: bool) -> None:
    grid = Grid(title, cols, narrow=narrow)
    for row in rows:
        grid.add_row(*row)
    out = Out(console)
    grid.print(out)
    out.print()


def _text(draw: object, width: int, *args: object) -> list[str]:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    draw(console, *args)  # type: ignore[operator]
    return [line.rstrip() for line in console.export_text().splitlines()]


COLS = [Col("Cohort", no_wrap=True, min_width=11), Col("N", justify="right"), Col("Rule", fold=True),
        Col("What happened")]
ROWS = [["Night Watch", "3", "Tasks 5.2, 5.11", "the next attack this phase hits, +5 damage, its target's members "
         "Scared"],
        ["Ghoul Pack", "12", "R16", ""],
        ["Lanterns", "", "Hero Moments 1.3, R21", "Supercalifragilisticexpialidocious-and-then-some words"]]


@pytest.mark.parametrize("width", [60, 80, 100, 160])
@pytest.mark.parametrize("narrow", [True, False])
def test_grid_draws_what_rich_table_draws(width: int, narrow: bool) -> None:
    """Widths, wrapping, folding, justification and boxes as rich's Table has them."""
    ours = _text(_ours, width, "Phase 1", COLS, ROWS, narrow)
    assert ours == _text(_rich, width, "Phase 1", COLS, ROWS, narrow)
    assert max(len(line) for line in ours) <= width


@pytest.mark.parametrize("width", [80, 100, 119, 120, 200])
def test_phase_pools_and_standing_tables_whole_names_within_the_width(width: int) -> None:
    battle = load_battle(read_data_file(example_path()))
    result = resolve_phase(battle)
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    print_pools(console, battle.pools.values())
    print_phase(console, result)
    print_standing(console, result.battle)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    for spec in battle.cohorts:
        assert any(spec.name in line for line in text.splitlines())
    assert "Night Watch: who gave what" in text and "Standing before phase 2" in text


def test_styles_reach_a_colour_terminal() -> None:
    battle = load_battle(read_data_file(example_path()))
    result = resolve_phase(battle)
    console = Console(width=200, force_terminal=True, color_system="standard", file=io.StringIO())
    print_phase(console, result)
    raw = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[1;32mhit\x1b[0m" in raw  # the outcome in bold green
    assert "\x1b[1m#\x1b[0m" in raw  # a bold header


def test_wrap_keeps_styles_and_indents() -> None:
    lines = wrap_frags([("    one two ", ""), ("three", "bold"), (" four", "")], 10)
    assert ["".join(t for t, _ in line) for line in lines] == ["    one", "two three", "four"]
    assert ("three", "bold") in lines[1]
