"""The hex tracker workbook drawn from its layout data (sheets/draw.py, rules/hexwar/sheet.py)
and its live odds (H11, rules/hexwar/formulas.py), the odds checked in real LibreOffice
against the engine's ``preview_attacks``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from openpyxl.workbook.workbook import Workbook

from sheetsync.core.layout import Layout
from sheetsync.sheets.draw import draw_workbook
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.rules import Battle, HouseRules, example_battle_data, preview_attacks
from sheetsync.systems.hexwar.rules.grid import parse_hex
from sheetsync.systems.hexwar.system import SYSTEM
from sheetsync.systems.hexwar.tracker.formulas import HELPER_COLUMNS, helper_values, house_rule_rows
from sheetsync.systems.hexwar.tracker.layout import SIDE_COLOURS, layout

CAPTIONS = [s.caption for s in SYSTEM.steps]


def _draw(lay: Layout | None = None) -> tuple[Layout, Workbook]:
    lay = lay or layout()
    return lay, draw_workbook(lay, captions=CAPTIONS, house_rules=house_rule_rows())


def _validations(ws: Any) -> dict[str, Any]:
    """``{"C3:C42": validation}`` for every data validation of a sheet."""
    out = {}
    for dv in ws.data_validations.dataValidation:
        for rng in str(dv.sqref).split():
            out[rng] = dv
    return out


# -- the drawn workbook ----------------------------------------------------------------------

def test_every_sheet_is_drawn_in_order_with_state_lists_and_calc_hidden() -> None:
    lay, wb = _draw()
    assert wb.sheetnames == lay.sheets
    hidden = {ws.title for ws in wb.worksheets if ws.sheet_state == "hidden"}
    assert hidden == {"Lists", "State", "Calc"}
    assert wb.active.title == "Battle"


def test_the_mark_and_capacity_say_hexwar_at_1() -> None:
    lay, wb = _draw(layout({"units": 60}))
    assert wb["State"]["B1"].value == "hexwar@1"
    cap = json.loads(wb["State"]["B2"].value)
    assert cap == lay.capacity and cap["units"] == 60
    assert wb["State"]["B2"].value == json.dumps(lay.capacity, sort_keys=True, separators=(",", ":"))


def test_validations_on_size_moves_unit_attacks_and_roll() -> None:
    lay, wb = _draw()
    units, moves, attacks = (lay.block(n) for n in ("Units_Table", "Moves_Table", "Attacks_Table"))

    def rng(block: Any, key: str) -> str:
        letter = block.letter(key)
        return f"{letter}{block.first_row}:{letter}{block.last_row}"

    uv = _validations(wb["Units"])
    assert uv[rng(units, "size")].formula1 == "=List_Sizes"
    assert (uv[rng(units, "men")].formula1, uv[rng(units, "men")].formula2) == ("1", "100000")
    assert _validations(wb["Moves"])[rng(moves, "unit")].formula1 == "=Unit_Names"
    av = _validations(wb["Attacks"])
    for key in ("defender", *(f"attacker{i}" for i in range(1, 7))):
        assert av[rng(attacks, key)].formula1 == "=Unit_Names", key
    roll = av[rng(attacks, "roll")]
    assert (roll.type, roll.formula1, roll.formula2) == ("whole", "1", "100")
    # the computed S column has none
    assert rng(attacks, "strength") not in av
    # a named input cell with bounds: the map's width
    bv = _validations(wb["Battle"])
    assert bv["B9"].formula2 == str(lay.capacity["map_columns"])


def test_protected_sheets_with_inputs_unlocked_and_computed_locked() -> None:
    lay, wb = _draw()
    for sheet in lay.protected:
        assert wb[sheet].protection.sheet, sheet
    units = lay.block("Units_Table")
    ws = wb["Units"]
    row = units.first_row + 5
    assert ws[f"{units.letter('name')}{row}"].protection.locked is False
    assert ws[f"{units.letter('counter')}{row}"].protection.locked is False
    assert ws[f"{units.letter('attack')}{row}"].protection.locked is True
    assert ws[f"{units.letter('calc_q')}{row}"].protection.locked is True
    assert wb["Battle"]["B4"].protection.locked is False  # Battle_Initiative, an input cell
    assert wb["Battle"]["B3"].protection.locked is True   # Battle_Turn, computed
    assert wb["Battle"]["A4"].value == "Initiative this turn"


def test_defined_names_for_blocks_cells_lists_and_unit_names() -> None:
    lay, wb = _draw()
    names = {n: wb.defined_names[n].attr_text for n in wb.defined_names}
    assert names["Unit_Names"] == f"Units!$A$3:$A${2 + lay.capacity['units']}"
    assert names["Battle_Turn"] == "Battle!$B$3"
    assert names["List_Sizes"] == "Lists!$B$2:$B$4"
    assert [wb["Lists"].cell(row=r, column=2).value for r in (2, 3, 4)] == ["battalion", "squadron", "company"]
    assert names["HouseRules_Table"].startswith("'House Rules'!$A$3:")
    assert "Map_Grid" in names and "Attacks_Table" in names and "Side_Names" in names


def test_helper_columns_are_hidden_at_the_end_of_units_and_captions_fill_the_buttons() -> None:
    lay, wb = _draw()
    units = lay.block("Units_Table")
    keys = [c.key for c in units.columns]
    assert keys[-len(HELPER_COLUMNS):] == [c.key for c in HELPER_COLUMNS]
    for c in HELPER_COLUMNS:
        assert wb["Units"].column_dimensions[units.letter(c.key)].hidden, c.key
    assert not wb["Units"].column_dimensions[units.letter("status")].hidden
    buttons = lay.block("Battle_Buttons")
    got = [wb["Battle"].cell(row=buttons.first_row + i, column=buttons.first_col).value for i in range(4)]
    assert got == ["Build Units", "Resolve Turn", "Undo Turn", "End Battle"]


def test_house_rules_rows_come_from_the_argument_not_guessed() -> None:
    lay = layout()
    block = lay.block("HouseRules_Table")
    wb = draw_workbook(lay)
    assert wb["House Rules"].cell(row=block.first_row, column=1).value is None
    rows = house_rule_rows()
    wb = draw_workbook(lay, house_rules=rows)
    got = [tuple(wb["House Rules"].cell(row=block.first_row + i, column=1 + j).value for j in range(4))
           for i in range(len(rows))]
    assert got == rows
    assert ("proportional_reduction", "Yes", "Yes") == got[-1][:3] and got[-1][3].startswith("H10")
    changed = dict((r[0], r[1:3]) for r in house_rule_rows(HouseRules(charge_by="path", stack_limit=1.5)))
    assert changed["charge_by"] == ("path", "distance") and changed["stack_limit"] == ("1.5", "2")


def test_h11_live_formulas_in_every_attacks_row_and_side_colours_by_slot() -> None:
    lay, wb = _draw()
    attacks = lay.block("Attacks_Table")
    ws = wb["Attacks"]
    for key in ("strength", "defense", "chance", "expected"):
        for row in (attacks.first_row, attacks.last_row):
            assert str(ws[f"{attacks.letter(key)}{row}"].value).startswith("="), (key, row)
    assert f"Attacks!$B{attacks.last_row}" in ws[f"{attacks.letter('defense')}{attacks.last_row}"].value
    rules = [r for cf in wb["Map"].conditional_formatting for r in cf.rules]
    assert any("Battle!$A$15" in r.formula[0] for r in rules)
    assert any('"impassable"' in r.formula[0] for r in rules)
    side_fills = {r.dxf.fill.fgColor.rgb[-6:] for cf in wb["Units"].conditional_formatting for r in cf.rules}
    assert set(SIDE_COLOURS) <= side_fills


def test_map_cells_are_square_ish_and_each_hex_is_outlined() -> None:
    lay, wb = _draw()
    area = lay.areas["Map_Grid"]
    ws = wb["Map"]
    assert ws.column_dimensions["B"].width == area.cell_width
    assert ws.row_dimensions[area.first_row].height == area.cell_height
    # hex 0101 (odd column) sits one cell lower: rows 4-5 of column B, outlined top and bottom
    top, bottom = ws.cell(row=area.first_row + 1, column=2), ws.cell(row=area.first_row + 2, column=2)
    assert (top.border.top.style, top.border.bottom.style) == ("medium", None)
    assert (bottom.border.top.style, bottom.border.bottom.style) == (None, "medium")
    assert top.border.left.style == bottom.border.right.style == "medium"
    above = ws.cell(row=area.first_row, column=2)  # the half cell above the odd column's first hex
    assert above.border.bottom.style is None and above.border.top.style is None
    assert len(area.outlines) == lay.capacity["map_columns"] * lay.capacity["map_rows"]


def test_h11_helper_values_match_the_counters_and_hexes() -> None:
    battle = load_battle(yaml.safe_load(example_battle_data()))
    hv = helper_values(battle)
    assert len(hv) == len(battle.units)
    by = {u.name: h for u, h in zip(battle.units, hv, strict=True)}
    assert by["Church Knights"] | {} == {"calc_attack": 4, "calc_bonus": 2, "calc_n": 0, "calc_range": 1,
                                        "calc_kind": 0, "calc_reach": 1, "calc_defense": 4, "calc_q": 3,
                                        "calc_r": 4}
    assert (by["1st Fist"]["calc_kind"], by["1st Fist"]["calc_n"], by["1st Fist"]["calc_reach"]) == (1, 2, 2)
    archers = by["First Archer Company"]
    assert (archers["calc_kind"], archers["calc_reach"]) == (2, 5)
    cube = parse_hex("0805").cube()
    assert (by["1st Fist"]["calc_q"], by["1st Fist"]["calc_r"]) == (cube.q, cube.r)
    assert set(by["Sun Knights"]) == {c.key for c in HELPER_COLUMNS}


def test_h10_helper_values_fall_with_casualties_and_a_destroyed_unit_adds_nothing() -> None:
    data = yaml.safe_load(example_battle_data())
    data["units"][1]["casualties"] = 50   # Church Knights 4++ - 4: attack 2, ++ becomes +
    data["units"][6]["casualties"] = 100  # 1st Fist destroyed
    battle = load_battle(data)
    hv = helper_values(battle)
    assert (hv[1]["calc_attack"], hv[1]["calc_bonus"], hv[1]["calc_defense"]) == (2, 1, 2)
    assert (hv[6]["calc_attack"], hv[6]["calc_reach"], hv[6]["calc_n"]) == (0, 0, 0)


# -- LibreOffice: the live odds equal the engine's ----------------------------------------------

def _fill(lay: Layout, wb: Workbook, battle: Battle, *, to_as_number: bool = False,
          resolved: tuple[tuple[str, str], ...] = ()) -> None:
    """Type the battle into the drawn workbook as a Tracker would, and write the computed
    Units columns a build writes (``views.unit_rows``: Hex now, values, the helper columns)."""
    from sheetsync.systems.hexwar.tracker.cells import unit_rows

    units, moves, attacks = (lay.block(n) for n in ("Units_Table", "Moves_Table", "Attacks_Table"))
    ws = wb["Units"]
    computed = unit_rows(battle)
    assert all(set(helper_values(battle)[i]) <= set(computed[i]) for i in range(len(computed)))
    for i, u in enumerate(battle.units):
        row = units.first_row + i
        values: dict[str, Any] = {"name": u.name, "side": u.side, "counter": str(u.counter), "start_hex": u.hex,
                                  "size": "company" if u.size == 0.5 else "battalion", "men": u.men,
                                  **computed[i]}
        for key, value in values.items():
            ws[f"{units.letter(key)}{row}"] = value
    ws = wb["Moves"]
    for i, (unit, to) in enumerate(resolved):  # rows of an earlier turn, stamped: not pending
        for key, value in (("turn", 1), ("unit", unit), ("to", to), ("outcome", "moved")):
            ws[f"{moves.letter(key)}{moves.first_row + i}"] = value
    for i, m in enumerate(battle.orders.moves):
        row = moves.first_row + len(resolved) + i
        ws[f"{moves.letter('unit')}{row}"] = m.unit
        if m.path is not None:
            ws[f"{moves.letter('path')}{row}"] = ", ".join(m.path) if i % 2 else " ".join(m.path)
        elif m.to is not None:
            ws[f"{moves.letter('to')}{row}"] = int(m.to) if to_as_number else m.to
    ws = wb["Attacks"]
    for i, a in enumerate(battle.orders.attacks):
        row = attacks.first_row + i
        ws[f"{attacks.letter('defender')}{row}"] = a.defender
        for j, name in enumerate(a.attackers, start=1):
            ws[f"{attacks.letter(f'attacker{j}')}{row}"] = name
        if a.roll is not None:
            ws[f"{attacks.letter('roll')}{row}"] = a.roll


def _errors(path: Path) -> list[str]:
    wb = openpyxl.load_workbook(path, data_only=True)
    out = []
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and (c.value.startswith("#") and c.value.endswith(("!", "?", "A"))
                                                 or c.value.startswith("Err:")):
                    out.append(f"{ws.title}!{c.coordinate}={c.value}")
    return out


def _live_odds_match(tmp_path: Path, battle: Battle, *, to_as_number: bool = False,
                     resolved: tuple[tuple[str, str], ...] = ()) -> int:
    from libreoffice import recalc_and_convert, require_libreoffice

    require_libreoffice()
    lay, wb = _draw()
    _fill(lay, wb, battle, to_as_number=to_as_number, resolved=resolved)
    src = tmp_path / "hex.xlsx"
    wb.save(src)
    calc = recalc_and_convert(src, tmp_path / "calc")
    assert _errors(calc) == []
    values = openpyxl.load_workbook(calc, data_only=True)["Attacks"]
    attacks = lay.block("Attacks_Table")
    checked = 0
    for event in preview_attacks(battle):
        row = attacks.first_row + event.order
        got = [values[f"{attacks.letter(k)}{row}"].value for k in ("strength", "defense", "chance", "expected")]
        assert event.outcome != "refused", event.reason
        assert got[:3] == [event.strength, event.defense, event.chance], (row, event.defender, got)
        assert got[3] == pytest.approx(event.expected)
        checked += 1
    blank = attacks.first_row + len(battle.orders.attacks) + 2
    assert [values[f"{attacks.letter(k)}{blank}"].value for k in ("strength", "chance")] in ([None, None], ["", ""])
    return checked


def _second_battle() -> Battle:
    """R(n) at 2 hexes, R(--) at 4 and 5, a charge by To and a charge along a typed path of a
    unit at 50% (++ fallen to +), a one-hex move (no charge), a defender that moves and one
    at 25% casualties (D 4 counts 3)."""
    return load_battle({
        "system": "hexwar", "seed": 11, "map": {"columns": 12, "rows": 10, "impassable": ["1001"]},
        "units": [
            {"name": "Orc Fist", "side": "Party", "counter": "4 - 4 - 1 - 2(2)", "hex": "0405"},
            {"name": "Archers", "side": "Party", "counter": "4 - 3 - 1 - 2(--)", "hex": "0205"},
            {"name": "Far Archers", "side": "Party", "counter": "4 - 3 - 1 - 2(--)", "hex": "0105", "size": "company"},
            {"name": "Knights", "side": "Party", "counter": "4++ - 4 - 3 - 1", "hex": "0305"},
            {"name": "Hurt Knights", "side": "Party", "counter": "3++ - 3 - 3 - 1", "hex": "0308", "casualties": 50},
            {"name": "Lancers", "side": "Party", "counter": "3+ - 2 - 4 - 1", "hex": "0710"},
            {"name": "Target", "side": "Enemy", "counter": "2 - 5 - 1 - 1", "hex": "0605"},
            {"name": "Runner", "side": "Enemy", "counter": "3 - 4 - 2 - 1", "hex": "0809", "casualties": 25},
        ],
        "turn": {
            "initiative": "Party",
            "moves": [
                {"unit": "Knights", "to": "0505"},
                {"unit": "Runner", "to": "0609"},
                {"unit": "Hurt Knights", "path": ["0408", "0508"]},
                {"unit": "Lancers", "to": "0709"},
            ],
            "attacks": [
                {"defender": "Target", "attackers": ["Orc Fist", "Archers", "Far Archers", "Knights"]},
                {"defender": "Runner", "attackers": ["Hurt Knights", "Lancers"], "roll": 40},
                {"defender": "Knights", "attackers": ["Target"]},
            ],
        },
    })


def test_h11_second_battle_engine_values_are_what_the_sheet_must_show() -> None:
    events = preview_attacks(_second_battle())
    assert [(e.strength, e.defense, e.chance) for e in events] == [(11, 5, 68), (6, 3, 66), (2, 4, 33)]
    assert {c.unit: (c.distance, c.value) for c in events[0].contributions} == {
        "Orc Fist": (2, 2), "Archers": (4, 2), "Far Archers": (5, 1), "Knights": (1, 6)}


@pytest.mark.libreoffice
def test_h11_live_odds_match_the_engine_example_battle(tmp_path: Path) -> None:
    battle = load_battle(yaml.safe_load(example_battle_data()))
    assert _live_odds_match(tmp_path, battle, to_as_number=True) == len(battle.orders.attacks)


@pytest.mark.libreoffice
def test_h11_live_odds_match_the_engine_ranges_and_charges(tmp_path: Path) -> None:
    battle = _second_battle()
    # stamped rows of last turn send the Orc Fist and the Target far away:
    # only pending rows count, so the odds stay the engine's
    assert _live_odds_match(tmp_path, battle, resolved=(("Orc Fist", "0101"), ("Target", "1110"))) == 3


@pytest.mark.libreoffice
def test_h11_live_odds_of_a_tracker_made_from_a_battle_file_match_the_engine(tmp_path: Path) -> None:
    """The real path: ``sheetsync new --from`` draws the workbook, writes the battle through
    the tracker's steps, and LibreOffice's odds are the engine's."""
    from libreoffice import recalc_and_convert, require_libreoffice

    from sheetsync.app.workbook_cli import system_tracker_from

    require_libreoffice()
    battle = _second_battle()
    out = tmp_path / "tracker.xlsx"
    system_tracker_from(out, SYSTEM, battle)
    calc = recalc_and_convert(out, tmp_path / "calc")
    assert _errors(calc) == []
    values = openpyxl.load_workbook(calc, data_only=True)["Attacks"]
    block = layout().block("Attacks_Table")
    got = [tuple(values[f"{block.letter(k)}{block.first_row + e.order}"].value for k in ("strength", "defense", "chance"))
           for e in preview_attacks(battle)]
    assert got == [(11, 5, 68), (6, 3, 66), (2, 4, 33)]
