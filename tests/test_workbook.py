"""The tracker workbook through the CLI and the use cases (openpyxl backend).

Section names in test names follow the rules they exercise (R13, Tasks 5.7 ...).
"""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app import usecases
from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import excel_backend, new_workbook, run_workbook, write_template
from sheetsync.core.errors import BattleStateError, SheetFormatError, WorkbookLockedError
from sheetsync.sheets.disk import example_path
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import resolve_phase
from sheetsync.systems.bbn.tracker.layout import layout
from sheetsync.systems.bbn.tracker.template import build_template, defined_names

runner = CliRunner()
LAY = layout()


def _fill_characters(path: Path) -> None:
    """Type the example's cohorts into a blank tracker, as a Tracker would."""
    wb = openpyxl.load_workbook(path)
    setup = LAY.block("Cohorts_Setup")
    chars = LAY.block("Characters_Table")
    cohorts = [("Night Watch", "players", "No", "Marcus"), ("Ghouls", "Sabbat", "No", "G1")]
    for i, (name, side, support, sergeant) in enumerate(cohorts):
        r = setup.first_row + i
        wb["Cohorts"][f"{setup.letter('name')}{r}"] = name
        wb["Cohorts"][f"{setup.letter('side')}{r}"] = side
        wb["Cohorts"][f"{setup.letter('support')}{r}"] = support
        wb["Cohorts"][f"{setup.letter('sergeant')}{r}"] = sergeant
    wb["Cohorts"][f"{setup.letter('set:defense')}{setup.first_row + 1}"] = 14
    wb["Cohorts"][f"{setup.letter('set:temper')}{setup.first_row + 1}"] = 10
    people = [
        ("Night Watch", "Marcus", {"temper": 12, "willpower_spent": 3, "ability:Brawl": 4, "discipline:Fortitude": 4,
                                   "discipline:Potence": 2, "merit:Rugged": "Yes"}),
        ("Night Watch", "Ana", {"temper": 10, "discipline:Fortitude": 4, "ability:Melee": 3}),
        ("Night Watch", "Ben", {"temper": 10, "ability:Brawl": 2, "other_traits": "Lucky; Animalism 2"}),
        ("Night Watch", "Cy", {"temper": 10}),
        ("Ghouls", "G1", {}), ("Ghouls", "G2", {}), ("Ghouls", "G3", {}),
    ]
    for i, (cohort, name, traits) in enumerate(people):
        r = chars.first_row + i
        wb["Characters"][f"{chars.letter('cohort')}{r}"] = cohort
        wb["Characters"][f"{chars.letter('name')}{r}"] = name
        for key, value in traits.items():
            wb["Characters"][f"{chars.letter(key)}{r}"] = value
    rng = LAY.block("Ranges_Table")
    wb["Ranges"][f"A{rng.first_row}"] = "Night Watch"
    wb["Ranges"][f"B{rng.first_row}"] = "Ghouls"
    wb["Ranges"][f"C{rng.first_row}"] = "Personal"
    wb.save(path)


def _type_orders(path: Path, orders: list[dict[str, object]], start: int = 0) -> None:
    wb = openpyxl.load_workbook(path)
    block = LAY.block("Orders_Table")
    for i, o in enumerate(orders):
        for key, value in o.items():
            wb["Orders"][f"{block.letter(key)}{block.first_row + start + i}"] = value
    wb.save(path)


def _cells(path: Path, sheet: str, rng: str) -> list[list[object]]:
    ws = openpyxl.load_workbook(path)[sheet]
    return [[c.value for c in row] for row in ws[rng]]


def test_template_has_every_sheet_and_defined_name(tmp_path: Path) -> None:
    out = write_template(tmp_path / "t.xlsx")
    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames == LAY.sheets
    assert wb["State"].sheet_state == "hidden"
    for name, ref in defined_names(LAY).items():
        assert wb.defined_names[name].attr_text == ref
    assert wb["Orders"].protection.sheet is True
    orders = LAY.block("Orders_Table")
    odds = wb["Orders"][f"{orders.letter('odds')}{orders.first_row}"].value
    assert odds.startswith("=IF(")
    assert wb["Orders"][f"{orders.letter('cohort')}{orders.first_row}"].protection.locked is False
    assert wb["Orders"][f"{orders.letter('outcome')}{orders.first_row}"].protection.locked is True


def test_committed_template_matches_generator() -> None:
    """templates/tracker.xlsx is what `sheetsync template` makes now (values, names, validations)."""
    committed = openpyxl.load_workbook(Path(__file__).resolve().parent.parent / "templates" / "tracker.xlsx")
    fresh = build_template()
    assert committed.sheetnames == fresh.sheetnames
    for ws in fresh.worksheets:
        other = committed[ws.title]
        assert [[c.value for c in r] for r in ws.iter_rows()] == [[c.value for c in r] for r in other.iter_rows()], ws.title
        dv_fresh = sorted((d.sqref.__str__(), d.formula1 or "", d.type or "") for d in ws.data_validations.dataValidation)
        dv_comm = sorted((d.sqref.__str__(), d.formula1 or "", d.type or "") for d in other.data_validations.dataValidation)
        assert dv_fresh == dv_comm, ws.title
    assert {n: d.attr_text for n, d in fresh.defined_names.items()} == {n: d.attr_text for n, d in committed.defined_names.items()}


def test_layout_doc_is_current() -> None:
    from sheetsync.systems.bbn.tracker.layout_doc import layout_markdown

    doc = (Path(__file__).resolve().parent.parent / "docs" / "LAYOUT.md").read_text(encoding="utf-8")
    assert doc == layout_markdown()


def test_cli_template_build_resolve_undo_resolve_end(tmp_path: Path) -> None:
    """The whole workflow on a real file through the CLI (R13, R25, Battle Aftermath)."""
    wb = tmp_path / "battle.xlsx"
    assert runner.invoke(app, ["template", str(wb)]).exit_code == 0
    _fill_characters(wb)
    res = runner.invoke(app, ["build", str(wb)])
    assert res.exit_code == 0, res.output
    pools = LAY.block("Cohorts_Pools")
    row = _cells(wb, "Cohorts", f"A{pools.first_row}:P{pools.first_row}")[0]
    # Health: 4 members x 5 + Rugged 1 + Fortitude 4 + 4 = 29 (Cohort Sheet 1.1.1, R3, R4)
    assert row[0] == "Night Watch" and row[1] == 29 and row[2] == 29
    _type_orders(wb, [
        {"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghouls", "roll": 7},
        {"cohort": "Ghouls", "task": "Melee Attack", "target": "Night Watch", "roll": 1},
        {"cohort": "Night Watch", "task": "Heal", "temper": 2},
    ])
    res = runner.invoke(app, ["resolve", str(wb), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [e["outcome"] for e in out["events"]] == ["hit", "miss", "refused"]
    assert out["events"][0]["damage"] == 13  # Tasks 5.11.1: 4 members x 2 + 5
    block = LAY.block("Orders_Table")
    stamped = _cells(wb, "Orders", f"A{block.first_row}:A{block.first_row + 2}")
    assert [r[0] for r in stamped] == [1, 1, 1]
    log = _cells(wb, "Log", "A2:F5")
    assert [r[3] for r in log[:2]] == ["Build Cohorts", "Melee Attack"]
    # a second resolve of the same phase is refused (nothing pending)
    res = runner.invoke(app, ["resolve", str(wb)])
    assert res.exit_code != 0
    assert (wb.with_name(wb.name + ".bak")).exists()
    # undo: rows pending again, state back
    res = runner.invoke(app, ["undo", str(wb)])
    assert res.exit_code == 0, res.output
    assert [r[0] for r in _cells(wb, "Orders", f"A{block.first_row}:A{block.first_row + 2}")] == [None, None, None]
    res = runner.invoke(app, ["resolve", str(wb), "--json"])
    again = json.loads(res.output)
    assert again["events"] == out["events"]  # same seed and phase: the same dice (R25)
    res = runner.invoke(app, ["end", str(wb), "--json"])
    assert res.exit_code == 0, res.output
    chars = json.loads(res.output)["characters"]
    assert {c["name"] for c in chars} == {"Marcus", "Ana", "Ben", "Cy", "G1", "G2", "G3"}
    after = _cells(wb, "Aftermath", "A3:J3")[0]
    assert after[0] == "Night Watch"


def test_bad_cells_listed_all_at_once_nothing_written(tmp_path: Path) -> None:
    wb = tmp_path / "b.xlsx"
    new_workbook(wb, example_path())
    before = wb.read_bytes()
    _type_orders(wb, [{"task": "Melee"}, {"roll": "lots"}], start=10)
    snapshot = wb.read_bytes()
    with pytest.raises(SheetFormatError) as err:
        run_workbook("resolve", wb)
    text = str(err.value)
    block = LAY.block("Orders_Table")
    r1, r2 = block.first_row + 10, block.first_row + 11
    assert f"Orders!{block.letter('task')}{r1}: task 'Melee' is not a task (expected one of Move, Melee Attack" in text
    assert f"Orders!{block.letter('roll')}{r2}: roll 'lots' is not a whole number" in text
    assert f"Orders!{block.letter('cohort')}{r1}" in text
    assert wb.read_bytes() == snapshot != before


def test_characters_bad_temper_cell_named(tmp_path: Path) -> None:
    wb = tmp_path / "c.xlsx"
    write_template(wb)
    _fill_characters(wb)
    book = openpyxl.load_workbook(wb)
    chars = LAY.block("Characters_Table")
    book["Characters"][f"{chars.letter('temper')}{chars.first_row + 2}"] = "lots"
    book["Characters"][f"{chars.letter('name')}{chars.first_row + 3}"] = "=HYPERLINK(\"x\")"
    book.save(wb)
    with pytest.raises(SheetFormatError) as err:
        run_workbook("build", wb)
    text = str(err.value)
    assert f"Characters!{chars.letter('temper')}{chars.first_row + 2}: temper 'lots' is not a whole number" in text
    assert f"Characters!{chars.letter('name')}{chars.first_row + 3}: character: a formula" in text


def test_locked_workbook_refused_nothing_written(tmp_path: Path) -> None:
    wb = tmp_path / "l.xlsx"
    new_workbook(wb, example_path())
    before = wb.read_bytes()
    lock = tmp_path / ".~lock.l.xlsx#"
    lock.write_text("someone,host,...")
    with pytest.raises(WorkbookLockedError):
        run_workbook("resolve", wb)
    assert wb.read_bytes() == before


def test_formula_like_name_stays_text(tmp_path: Path) -> None:
    """A player named '=IMPORTXML(...)' is written as text, never as a formula."""
    data = yaml.safe_load(example_path().read_text())
    data["cohorts"][0]["members"][0]["name"] = "=IMPORTXML(\"http://x\",\"//a\")"
    data["cohorts"][0]["sergeant"] = data["cohorts"][0]["members"][0]["name"]
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(data))
    wb = tmp_path / "f.xlsx"
    new_workbook(wb, path)
    book = openpyxl.load_workbook(wb)
    chars = LAY.block("Characters_Table")
    cell = book["Characters"][f"{chars.letter('name')}{chars.first_row}"]
    assert cell.data_type == "s" and cell.value.startswith("=IMPORTXML")


def test_r13_workbook_events_equal_engine_events(tmp_path: Path) -> None:
    """The same battle gives the same events on the workbook path as in the engine."""
    battle = load_battle(yaml.safe_load(example_path().read_text()))
    engine = resolve_phase(battle)
    wb = tmp_path / "p.xlsx"
    new_workbook(wb, example_path())
    report = run_workbook("resolve", wb)
    assert report.result is not None
    assert [e.model_dump() for e in report.result.events] == [e.model_dump() for e in engine.events]


def test_export_matches_resolve_json_shape(tmp_path: Path) -> None:
    wb = tmp_path / "e.xlsx"
    new_workbook(wb, example_path())
    report = run_workbook("resolve", wb)
    exported = usecases.export(excel_backend(wb))
    assert exported["events"] == report.to_json()["events"]
    assert exported["cohorts"][0].keys() >= {"name", "health", "temper", "control", "actions_left", "members"}
    assert exported["next_phase"] == 2


def test_build_refused_once_battle_started(tmp_path: Path) -> None:
    wb = tmp_path / "s.xlsx"
    new_workbook(wb, example_path())
    run_workbook("resolve", wb)
    with pytest.raises(BattleStateError):
        run_workbook("build", wb)


def test_r12_a_trait_added_to_the_catalog_gets_its_column() -> None:
    """The Characters columns come from the catalog: extending it adds a column."""
    from sheetsync.systems.bbn.rules import default_catalog

    extended = default_catalog().extend({"pools": {"melee": {"disciplines": ["Feral Claws"]}}})
    lay = layout(extended)
    assert "discipline:Feral Claws" in [c.key for c in lay.block("Characters_Table").columns]
    assert "discipline:Feral Claws" not in [c.key for c in LAY.block("Characters_Table").columns]
    wb = build_template(lay)
    chars = lay.block("Characters_Table")
    assert wb["Characters"][f"{chars.letter('discipline:Feral Claws')}{chars.header_row}"].value == "Feral Claws"


def test_a_save_that_fails_midway_leaves_the_workbook_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saves go through a temporary file: if the final rename fails, the workbook, its .bak
    and the folder are as before (nothing lost, no litter)."""
    import os

    wb = tmp_path / "safe.xlsx"
    new_workbook(wb, example_path())
    before = wb.read_bytes()
    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        if str(dst) == str(wb):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(Exception, match="No space left|can't save"):
        run_workbook("resolve", wb)
    assert wb.read_bytes() == before
    # the step lock file stays (an OS lock on it goes with the process); no temporary file is left
    assert sorted(p.name for p in tmp_path.iterdir()) == [".safe.xlsx.lock", "safe.xlsx", "safe.xlsx.bak"]
