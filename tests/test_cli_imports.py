"""The command line loads only what a command uses, and its tables are drawn without
rich's ``Table`` yet look the same (issue 12).  No timings here: benchmarks/bench_cli.py
measures them."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich import box
from rich.console import Console
from rich.table import Table

from sheetsync.sheets import terminal as render
from sheetsync.sheets.disk import example_path, read_data_file
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import resolve_phase
from sheetsync.systems.bbn.views import (
    Col,
    Grid,
    Out,
    print_phase,
    print_pools,
    print_standing,
    wrap_frags,
)

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
    assert not {m for m in modules if m.startswith(("sheetsync.systems", "sheetsync.backends", "sheetsync.sheets"))}


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
    assert "rich.table" not in modules  # the tables are drawn by sheetsync.systems.bbn.views


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


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \n"), max_size=40), st.integers(1, 12), st.booleans())
def test_wrapping_by_spaces_finds_the_lines_word_by_word_wrapping_finds(text: str, width: int, fold: bool) -> None:
    """The quick wrap of ASCII text (looking back for a space) and the word-by-word one
    break, indent and fold alike (issue 12)."""
    assert render._spaced_spans(text, width, fold) == render._word_spans(text, width, fold)


def test_text_with_tabs_or_odd_spaces_is_wrapped_word_by_word() -> None:
    assert render._line_spans("one\ttwo three", 7, False) == render._word_spans("one\ttwo three", 7, False)
    assert render._line_spans("one\u00a0two three", 7, True) == [(0, 7), (8, 13)]


TALL = [["Ann\nBee", "x y", "R7"], ["Cy", "a long detail that wraps over lines", "R2"],
        ["Dee\n\nEve-with-a-name-much-too-long-for-its-column", "z", "Tasks\n5.2"]]


@pytest.mark.parametrize("width", [30, 60, 80])
@pytest.mark.parametrize("narrow", [True, False])
def test_a_newline_in_a_cell_that_never_wraps_starts_a_line_as_in_rich_table(width: int, narrow: bool) -> None:
    """A name typed with a line break (Alt+Enter) is drawn on two lines, as rich's Table
    draws it: plain rows and styled ones."""
    cols = [Col("Name", no_wrap=True), Col("Detail"), Col("Rule", no_wrap=True)]
    assert _text(_ours, width, "t", cols, TALL, narrow) == _text(_rich, width, "t", cols, TALL, narrow)
    styled = [[[(row[0], "bold")], *row[1:]] for row in TALL]
    assert _text(_ours_mixed, width, "t", cols, styled, narrow) == _text(_rich_mixed, width, "t", cols, styled, narrow)
    assert "Bee" in "\n".join(_text(_ours, width, "t", cols, TALL, narrow))


_CELL = st.text(alphabet=st.sampled_from("ab \n-"), max_size=30)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_CELL, _CELL, _CELL), min_size=1, max_size=4), st.integers(6, 60), st.booleans(),
       st.sampled_from([0, 5, 12]), st.booleans(), st.booleans(), st.sampled_from(["left", "right"]),
       st.integers(0, 3))
def test_grid_draws_what_rich_table_draws_for_any_texts_and_console_width(
        rows: list[tuple[str, str, str]], width: int, narrow: bool, min_width: int, rule_no_wrap: bool, fold: bool,
        justify: str, styled: int) -> None:
    """Any texts (words, spaces, line breaks, words longer than their column), any console
    width down to one too narrow for the names (a column narrowed to nothing is left out,
    a table wider than the console cut at its edge), plain and styled cells: rich's Table
    draws the same lines."""
    cols = [Col("Name", no_wrap=True, min_width=min_width), Col("Detail", fold=fold),
            Col("Rule", no_wrap=rule_no_wrap, justify=justify)]
    cells: list[list[Any]] = [[[(c, "bold")] if k == styled else c for k, c in enumerate(row)] for row in rows]
    assert _text(_ours_mixed, width, "title here", cols, cells, narrow) == \
        _text(_rich_mixed, width, "title here", cols, cells, narrow)


MIXED = [["Night Watch", "3", "Tasks 5.2, 5.11", "the next attack this phase hits, +5 damage"],
         [[("Ghoul Pack", "bold")], "12", "R16", [("hit", "bold green"), (" and then a long tail of words that wraps", "")]],
         ["Lanterns", "", "Hero Moments 1.3, R21", "Supercalifragilisticexpialidocious-and-then-some words"],
         ["Night Watch", "3", "Tasks 5.2, 5.11", "the next attack this phase hits, +5 damage"],
         [[("Ghoul Pack", "red")], "1", "R1", "short"],
         ["Lanterns", "7", "R2", "a\nsecond line"]]


def _rich_mixed(console: Console, title: str, cols: list[Col], rows: list[list[Any]], narrow: bool) -> None:
    from rich.text import Text

    _rich(console, title, cols, [[c if isinstance(c, str) else Text.assemble(*c) for c in row] for row in rows], narrow)


def _ours_mixed(console: Console, title: str, cols: list[Col], rows: list[list[Any]], narrow: bool) -> None:
    _ours(console, title, cols, rows, narrow)


@pytest.mark.parametrize("width", [60, 80, 160])
@pytest.mark.parametrize("narrow", [True, False])
def test_grid_rows_with_and_without_styles_in_one_table_keep_their_order(width: int, narrow: bool) -> None:
    """Plain rows are drawn as lines and styled ones as segments: a table that mixes them
    prints every row once, in order, as rich's Table does (colours included)."""
    ours = _text(_ours_mixed, width, "Mixed", COLS, MIXED, narrow)
    assert ours == _text(_rich_mixed, width, "Mixed", COLS, MIXED, narrow)
    assert sum("Night Watch" in line for line in ours) == 2

    console = Console(width=width, force_terminal=True, color_system="standard", file=io.StringIO())
    _ours_mixed(console, "Mixed", COLS, MIXED, narrow)
    raw = console.file.getvalue()  # type: ignore[attr-defined]
    bold, green, red = raw.index("\x1b[1mGhoul Pack"), raw.index("\x1b[1;32mhit"), raw.index("\x1b[31mGhoul Pack")
    assert bold < green < raw.index("Lanterns") < red  # each styled row in its place among the plain ones
    assert [line.rstrip() for line in re.sub("\x1b\\[[0-9;]*m", "", raw).splitlines()] == ours


WIDE = [["東京の騎士団", "2", "R1", "漢字とかなの説明がここに続きます、長い長い説明です"],
        ["Café crème", "3", "R2", "e\u0301 combining accents and 🐉 dragons 🐉 in the detail column"],
        ["Zero\u200bwidth", "4", "R3", "plain ascii detail that is long enough to wrap at sixty columns for sure"]]


@pytest.mark.parametrize("width", [80, 120])  # narrower, a wide-character word cut with "…" differs from rich's
def test_grid_measures_wide_and_combining_characters_as_rich_does(width: int) -> None:
    for narrow in (True, False):
        assert _text(_ours, width, "Wide", COLS, WIDE, narrow) == _text(_rich, width, "Wide", COLS, WIDE, narrow)


def test_tables_of_one_shape_in_a_row_each_draw_what_rich_draws() -> None:
    """The drawn cells are remembered by column shape and text: tables with the same
    columns, one after another (the pools' who-gave-what tables), with the same texts at
    other widths and other texts at the same widths, each come out as rich's."""
    tables = [("One", ROWS), ("Two", [["Night Watch", "3", "Tasks 5.2, 5.11", "other words here"], *ROWS[1:]]),
              ("Three", [*ROWS, ["A much longer cohort name", "1", "R1", "the next attack this phase hits"]]),
              ("Four", ROWS)]
    for width in (60, 100, 60):
        for narrow in (True, False):
            for title, rows in tables:
                assert _text(_ours, width, title, COLS, rows, narrow) == _text(_rich, width, title, COLS, rows, narrow)


def test_add_rows_is_add_row_for_each() -> None:
    one, many = Grid("T", COLS, narrow=True), Grid("T", COLS, narrow=True)
    for row in ROWS:
        one.add_row(*row)
    many.add_rows(tuple(row) for row in ROWS)

    def drawn(grid: Grid) -> str:
        console = Console(width=70, record=True, color_system=None, file=io.StringIO())
        out = Out(console)
        grid.print(out)
        out.print()
        return console.export_text()

    assert drawn(one) == drawn(many)
    assert all(row[0] in drawn(many) for row in ROWS)


def test_pools_tables_of_a_hundred_cohorts_are_rich_tables_at_80_columns() -> None:
    """Issue 12: the who-gave-what tables of a 100-cohort battle, drawn fast, are the
    tables rich's Table draws (every one of them, at 80 columns)."""
    from battles import make_battle
    from rich.text import Text

    battle = load_battle(make_battle(100))
    pools = list(battle.pools.values())
    ours = _text(print_pools, 80, pools)

    def theirs(console: Console) -> None:
        _rich(console, "Cohort pools", [Col("Cohort", no_wrap=True, min_width=max(len(p.name) for p in pools)),
                                         *[Col(h, justify="right", no_wrap=True) for h in
                                           ("Act", "HP", "Mel", "Rng", "Mys", "Def", "Tmp", "Mov", "Res", "Ctl")]],
              [[p.name, str(p.actions), *(str(p.pools[k]) for k in ("health", "melee", "ranged", "mystical",
                                                                     "defense", "temper", "movement", "resolve",
                                                                     "control"))] for p in pools], True)
        cols = [Col("Pool", no_wrap=True), Col("From", no_wrap=True), Col("Trait", fold=True),
                Col("+", justify="right", fold=True), Col("Rule", fold=True), Col("Detail", fold=True)]
        for p in pools:
            _rich(console, f"{p.name}: who gave what", cols,
                  [[pool, c.member or "cohort", c.trait, str(c.amount), c.rule_ref, c.detail]
                   for pool, lines in p.breakdown.items() for c in lines if not (c.amount == 0 and c.kind == "base")],
                  True)
            if p.not_counted:
                console.print(Text("  Not counted: " + "; ".join(f"{n.member}: {n.trait} ({n.reason})"
                                                               for n in p.not_counted), style="dim"))

    assert ours == _text(theirs, 80)
    assert sum("who gave what" in line for line in ours) == 100


def test_importing_the_battalion_rules_builds_no_validator() -> None:
    """Issue 12: every model's validator is built on first use; importing the battalion
    rules builds none (pydantic's plugin scan, its first build, waits too), and a battle
    without house rules gets exactly ``HouseRules()``."""
    code = ("import sys\nimport sheetsync.systems.bbn.rules as bbn\n"
            "built = [m.__name__ for m in (bbn.Battle, bbn.HouseRules, bbn.CohortSpec) if getattr(m, '__pydantic_complete__', False)]\n"
            "print(built, 'pydantic.plugin._loader' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["[]", "False"]

    from sheetsync.systems.bbn.rules import HouseRules
    from sheetsync.systems.bbn.rules.battle import Battle

    battle = load_battle(read_data_file(example_path()))
    data = battle.to_data()
    data.pop("house_rules")
    assert Battle.from_data(data).house_rules == HouseRules()
    assert Battle.from_data(data).to_data() == Battle.from_data({**data, "house_rules": {}}).to_data()
    assert Battle.model_fields["house_rules"].default == HouseRules()


def test_hex_and_exalted_defaults_equal_their_validated_models() -> None:
    from sheetsync.systems.exalted.rules.models import Character, Weapon
    from sheetsync.systems.hexwar.rules.models import Battle, HouseRules, TurnOrders

    assert Battle.model_fields["house_rules"].default == HouseRules()
    assert Battle.model_fields["orders"].default == TurnOrders()
    assert Character.model_fields["close_weapon"].default == Weapon()
    assert Character.model_validate({"name": "Ana"}).close_weapon.model_dump() == Weapon().model_dump()
