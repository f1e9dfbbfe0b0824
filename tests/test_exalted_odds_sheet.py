"""Issue 10: the Exalted tracker's odds as live formulas that equal the engine (E1-E3, E7,
E9, X28-X33).  The steps write what the odds depend on (pool, successes added, external
penalty, DV, raw damage, soak, minimum dice, Hardness); the successes needed, the chance of
a hit and the expected levels are formulas over those cells and the hidden Odds sheet.
Real LibreOffice recalculates them; the Google drawer (against the fake Sheets API) and the
memory backend hold the same formula text."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.app.gsheet_cli import init_spreadsheet
from sheetsync.app.usecases import export_steps, run_steps
from sheetsync.backends.excel import ExcelBackend
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.core.registry import find_system
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import Formula, MemoryBackend, RangeUpdate
from sheetsync.sheets.draw import draw_workbook
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.rules.attack import AttackKind, AttackPlan, attack_odds
from sheetsync.systems.exalted.rules.battle import odds_json
from sheetsync.systems.exalted.rules.dice import success_distribution
from sheetsync.systems.exalted.rules.models import DamageType, HouseRules
from sheetsync.systems.exalted.rules.traits import Trait
from sheetsync.systems.exalted.tracker import steps as et
from sheetsync.systems.exalted.tracker.cells import ODDS_INPUTS, odds_rows
from sheetsync.systems.exalted.tracker.formulas import ODDS_DICE, ODDS_KEYS, odds_table
from sheetsync.systems.exalted.tracker.layout import house_rule_rows, layout

LAY = layout(None)
SYSTEM = find_system("exalted")
SUBJECT = et.ExaltedSteps(LAY.capacity)
ORDERS_BLOCK = LAY.block("Orders_Table")

CHARACTERS: list[dict[str, Any]] = [
    {"name": "Cathak Reyen", "role": "commander", "dexterity": 4, "strength": 3, "stamina": 3, "charisma": 4,
     "wits": 3, "essence": 2, "valor": 3, "willpower": 7, "abilities": "Melee 4, Archery 3, War 4, Dodge 3, Awareness 3",
     "close_weapon": "Straight sword", "close_accuracy": 1, "close_damage": 3, "close_damage_type": "Lethal",
     "close_defense": 1, "close_speed": 4, "ranged_weapon": "Long bow", "ranged_ability": "Archery",
     "ranged_accuracy": 1, "ranged_damage": 3, "ranged_damage_type": "Lethal", "ranged_speed": 5, "shield_dv": 1,
     "armor_soak": 5},
    {"name": "Talon Sergeant", "role": "relay", "charisma": 3, "wits": 3, "abilities": "War 3, Melee 3"},
    {"name": "Cynis Vel", "role": "commander", "dexterity": 3, "strength": 2, "stamina": 2, "charisma": 3, "wits": 3,
     "essence": 1, "valor": 2, "abilities": "Archery 4, War 3, Dodge 2, Awareness 2", "ranged_weapon": "Short bow",
     "ranged_ability": "Archery", "ranged_accuracy": 1, "ranged_damage": 2, "ranged_damage_type": "Lethal",
     "ranged_speed": 5},
    {"name": "Red Harrow", "role": "commander", "dexterity": 3, "strength": 3, "stamina": 3, "charisma": 3,
     "wits": 2, "valor": 3, "abilities": "Melee 3, War 2, Dodge 1, Awareness 2", "close_weapon": "Axe",
     "close_accuracy": 0, "close_damage": 4, "close_damage_type": "Lethal", "close_defense": 0},
    {"name": "Stone Jaw", "role": "commander", "dexterity": 5, "strength": 5, "stamina": 5, "charisma": 2, "wits": 3,
     "essence": 3, "valor": 4, "abilities": "Melee 5, War 1, Dodge 3, Awareness 3", "close_weapon": "Maul",
     "close_accuracy": 1, "close_damage": 8, "close_damage_type": "Bashing", "armor_soak": 6, "hardness": 4},
]
UNITS: list[dict[str, Any]] = [
    {"name": "Cathak Talon", "side": "Realm", "commander": "Cathak Reyen", "extras": 24, "formation": "Close",
     "drill": 4, "might": 1, "avg_dexterity": 3, "avg_strength": 3, "avg_stamina": 3, "avg_valor": 3,
     "close_ability": 3, "close_accuracy": 1, "close_damage": 3, "ranged_weapons": "Yes", "ranged_ability": 3,
     "ranged_accuracy": 1, "ranged_damage": 3, "avg_lethal_soak": 5, "avg_fatigue": 1, "shields": "Yes",
     "relays": "Talon Sergeant", "join_war": "9 7 10 2 4"},
    {"name": "Vel Archers", "side": "Realm", "commander": "Cynis Vel", "extras": 30, "formation": "Relaxed",
     "drill": 3, "avg_dexterity": 3, "avg_strength": 2, "avg_stamina": 2, "avg_valor": 2, "close_ability": 1,
     "close_damage": 2, "ranged_weapons": "Yes", "ranged_ability": 3, "ranged_accuracy": 1, "ranged_damage": 2,
     "avg_lethal_soak": 1, "join_war": "3s"},
    {"name": "Bandit Mob", "side": "Bandits", "commander": "Red Harrow", "extras": 119, "formation": "Unordered",
     "drill": 1, "avg_dexterity": 2, "avg_strength": 2, "avg_stamina": 2, "avg_valor": 3, "close_ability": 2,
     "close_damage": 3, "avg_lethal_soak": 2, "join_war": "2s"},
    {"name": "Stone Jaw", "side": "Bandits", "commander": "Stone Jaw", "formation": "Unordered", "join_war": "4s"},
]
ORDERS: list[dict[str, Any]] = [
    # X14, X28: Close formation doubles the rating and its War cap; X30: an external penalty
    {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Close"},
    # E4: Join War (typed: 4, 3, 2 and 4 successes) puts the archers on long tick 1, the mob on 2
    {"tick": 1, "unit": "Vel Archers", "action": "Attack", "target": "Stone Jaw", "option": "Ranged"},
    # X32: enveloping adds 2 to the external penalty
    {"tick": 2, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close Envelop"},
    # a commander alone (Magnitude 0)
    {"tick": 0, "unit": "Stone Jaw", "action": "Attack", "target": "Vel Archers", "option": "Close"},
    {"tick": 1, "unit": "Vel Archers", "action": "Guard"},  # not an attack: no odds
    # E5: the mob acts on long tick 2, so an order of long tick 1 is refused, naming 2
    {"tick": 1, "unit": "Bandit Mob", "action": "Attack", "target": "Stone Jaw", "option": "Close"},
]
SEED = 3


def typed(block_name: str, rows: list[dict[str, Any]]) -> RangeUpdate:
    """Rows as a Tracker types them: the input columns only (they come first in each block)."""
    block = LAY.block(block_name)
    inputs = [c for c in block.columns if c.is_input]
    assert block.columns[: len(inputs)] == tuple(inputs)
    r1 = block.first_row
    last = block.letter(inputs[-1].key)
    return RangeUpdate(f"{block.sheet}!{block.letter(inputs[0].key)}{r1}:{last}{r1 + len(rows) - 1}",
                       [[r.get(c.key) for c in inputs] for r in rows])


def tracker(path: Path, characters: list[dict[str, Any]] | None = None, units: list[dict[str, Any]] | None = None,
            rules: HouseRules | None = None) -> ExcelBackend:
    """template -> Characters and Units typed -> Build Units -> Orders typed -> Build Units."""
    draw_workbook(LAY, captions=[s.caption for s in SYSTEM.steps], house_rules=house_rule_rows(rules)).save(path)
    backend = ExcelBackend(path)
    backend.write_ranges([typed("Characters_Table", characters or CHARACTERS), typed("Units_Table", units or UNITS),
                          RangeUpdate("Battle!B6", [[SEED]])])
    run_steps(SUBJECT, "build", backend)
    backend.write_ranges([typed("Orders_Table", ORDERS)])
    run_steps(SUBJECT, "build", backend)
    return backend


def engine_odds(backend: Any) -> dict[int, dict[str, Any]]:
    """The engine's odds of the battle the tracker holds, by order row."""
    battle = load_battle(export_steps(SUBJECT, backend)["battle"])
    return {r["order"]: r for r in odds_json(battle)}


def test_e1_odds_table_is_the_engines_success_distribution_as_floats() -> None:
    table = odds_table()
    assert len(table) == ODDS_DICE + 1 and {len(r) for r in table} == {2 * ODDS_DICE + 1}
    for n in (0, 1, 2, 3, 8, 17, 33, ODDS_DICE):
        exact = success_distribution(n)
        assert table[n][: len(exact)] == pytest.approx([float(p) for p in exact], rel=1e-15, abs=1e-300), n
        assert all(p == 0 for p in table[n][len(exact):])
        assert all(float(f"{p:.16g}") == p for p in table[n])  # a workbook file keeps each as it is
    assert table[1][:3] == (0.6, 0.3, 0.1)


def test_e1_x28_steps_write_the_odds_inputs_and_the_formulas_in_every_pending_row() -> None:
    """The memory backend holds the same formula text the layout draws, and the engine's
    own plan figures beside it."""
    backend = _built_memory()
    cells = backend.sheets["Orders"]
    engine = engine_odds(backend)
    for i in range(len(ORDERS)):
        r = ORDERS_BLOCK.first_row + i
        for key in ODDS_KEYS:
            got = cells.get((r, ORDERS_BLOCK.first_col + ORDERS_BLOCK.index(key)))
            assert got == Formula(LAY.formulas[f"Orders_Table.{key}"](LAY, r)), (i, key)
        pool = cells.get((r, ORDERS_BLOCK.first_col + ORDERS_BLOCK.index("pool")))
        assert pool == (engine[i]["odds"]["pool"] if "odds" in engine.get(i, {}) else None), i
    result = cells.get((ORDERS_BLOCK.first_row + 5, ORDERS_BLOCK.first_col + ORDERS_BLOCK.index("result")))
    assert isinstance(result, str) and result.startswith("would be refused") and "E5" in result
    assert "acts on long tick 2, not 1" in result and "type 2 in" in result


def test_e1_a_pool_beyond_the_odds_sheet_says_so_in_result() -> None:
    data = export_steps(SUBJECT, _built_memory())["battle"]
    data = copy.deepcopy(data)
    data["characters"][0]["abilities"]["Melee"] = 10
    data["characters"][0]["abilities"]["War"] = 10
    data["characters"][0]["close_weapon"]["accuracy"] = 5
    battle = load_battle(data)
    # X28: Dex + min(Ability, War) + Accuracy > 50 once the Ability rises.  No typed Dex can
    # be 40 (issue 26: Attributes are 1 to 10), so the engine is handed one directly.
    unit = battle.units[0]
    commander = unit.spec.commander.model_copy(update={"dexterity": 40})
    battle = battle.model_copy(update={
        "units": (unit.model_copy(update={"spec": unit.spec.model_copy(update={"commander": commander})}),
                  *battle.units[1:]),
        "characters": tuple(commander if c.name == commander.name else c for c in battle.characters)})
    rows = odds_rows(battle)
    big = rows[0]
    assert big["pool"] > ODDS_DICE and f"up to {ODDS_DICE} dice" in big["result"]
    assert set(ODDS_INPUTS) <= set(big)


def _built_memory() -> MemoryBackend:
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    backend.write_ranges(steps.mark_updates(SYSTEM, LAY.capacity))
    backend.write_ranges([RangeUpdate(LAY.block("HouseRules_Table").range(), [list(r) for r in house_rule_rows()]),
                          typed("Characters_Table", CHARACTERS), typed("Units_Table", UNITS), typed("Orders_Table", ORDERS),
                          RangeUpdate("Battle!B6", [[SEED]])])
    run_steps(SUBJECT, "build", backend)
    return backend


def test_e1_formula_text_is_the_same_in_the_workbook_and_the_google_sheet(tmp_path: Path) -> None:
    """Parity of the drawn template: every Orders row's odds formulas and the Odds sheet's
    figures, in the openpyxl workbook and in a Google Sheet (gspread, fake Sheets API)."""
    path = tmp_path / "blank.xlsx"
    draw_workbook(LAY, captions=[s.caption for s in SYSTEM.steps], house_rules=house_rule_rows()).save(path)
    ranges = [ORDERS_BLOCK.range(), LAY.block("Odds_Successes").range(), LAY.block("Odds_Table").range(),
              LAY.block("Odds_Once").range()]
    workbook = ExcelBackend(path).read_ranges(ranges)
    with FakeSheetsServer() as server:
        key = server.create_spreadsheet("odds")
        google = GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None)
        init_spreadsheet(google, system="exalted")
        assert google.read_ranges(ranges) == workbook
    orders, successes, chances, once = workbook
    last = ORDERS_BLOCK.rows or 0
    assert len(orders) == last
    for i in (0, 1, last - 1):
        r = ORDERS_BLOCK.first_row + i
        for key in ODDS_KEYS:
            assert orders[i][ORDERS_BLOCK.index(key)] == Formula(LAY.formulas[f"Orders_Table.{key}"](LAY, r))
    assert successes[0][1:] == list(range(2 * ODDS_DICE + 1))
    assert [row[0] for row in chances] == list(range(ODDS_DICE + 1))
    assert [tuple(row[1:]) for row in chances] == list(odds_table())
    assert [tuple(row[1:]) for row in once] == list(odds_table(double_tens=False))


def plan(dice: int, *, bonus: int = 0, difference: int = 0, external: int = 0, dv: int = 0, raw: int = 3,
         soak: int = 0, minimum: int = 0, hardness: int = 0, double_tens: bool = True) -> AttackPlan:
    """An attack plan the engine's :func:`attack_odds` reads (X28-X33), built by hand."""
    def t(name: str, value: int) -> Trait:
        return Trait(name, value, ())

    return AttackPlan(attacker="A", defender="B", kind=AttackKind.CLOSE, pool=t("Pool", dice), internal_penalty=0,
                      bonus=t("Bonus", bonus), magnitude_difference=t("Magnitude difference", difference),
                      external=t("External", external), dv=t("DV", dv), base_raw=t("Raw", raw), soak=t("Soak", soak),
                      minimum=minimum, hardness=hardness, damage_type=DamageType.LETHAL, defender_magnitude=2,
                      defender_health_levels=3, defender_solo=False, double_tens=double_tens)


HAND_PLANS = [
    plan(7, bonus=3, external=1, dv=4, raw=3, soak=2, minimum=1, hardness=4),  # E9: low thresholds do nothing
    plan(12, bonus=2, difference=3, external=3, dv=9, raw=6, soak=4, minimum=2),  # X30: Magnitude difference adds
    plan(30, bonus=1, external=2, dv=20, raw=10, soak=12, minimum=3),  # a long tail; the minimum binds
    plan(ODDS_DICE, dv=60, raw=5, soak=1, minimum=1),  # the table's last row
    plan(0, bonus=4, dv=2, raw=2, soak=5, minimum=2),  # E1: no dice, a hit on the successes added alone
    plan(0, bonus=1, dv=2),  # ... or no hit at all
    plan(9, bonus=1, dv=4, raw=4, soak=3, minimum=1, double_tens=False),  # E1: an extra's 10 counts once
    plan(ODDS_DICE, dv=40, raw=5, soak=1, minimum=1, double_tens=False),  # ... the second table's last row
]
"""Attacks a typed tracker can't make (Hardness needs a battle file), written into spare
rows' value cells: the formulas must still give the engine's figures."""


def _inputs(p: AttackPlan) -> dict[str, Any]:
    return {"pool": p.dice, "added": p.automatic, "external": p.external.value, "dv": p.dv.value,
            "raw": p.base_raw.value, "soak": p.soak.value, "min_dice": p.minimum, "hardness": p.hardness,
            "tens": 2 if p.double_tens else 1}


@pytest.mark.libreoffice
def test_e1_x28_x33_odds_formulas_equal_engine_in_libreoffice(tmp_path: Path) -> None:
    """E1, E7, E9, X14, X28-X33: every Orders row's needed successes, chance of a hit and
    expected levels, recalculated by LibreOffice, equal the engine's exact figures (to
    1e-9): a Close-formation doubled rating, bonus successes, an external penalty (X30 and
    an envelop), the DV, and by hand Hardness and the table's edges.  Rows with no odds are
    blank (not an attack, refused, a pool beyond the Odds sheet), and no cell of the
    workbook is an error value."""
    from libreoffice import cell_values, error_values, require_libreoffice

    require_libreoffice()
    path = tmp_path / "odds.xlsx"
    backend = tracker(path)
    engine = engine_odds(backend)
    assert {i for i, r in engine.items() if "odds" in r} == {0, 1, 2, 3}
    spare = 10
    hand = [*HAND_PLANS, plan(ODDS_DICE + 1, dv=2)]  # the last is beyond the Odds sheet
    backend.write_ranges([table_row(spare + j, _inputs(p)) for j, p in enumerate(hand)])
    first, last = ORDERS_BLOCK.letter("pool"), ORDERS_BLOCK.letter("expected")
    rng = f"Orders!{first}{ORDERS_BLOCK.first_row}:{last}{ORDERS_BLOCK.first_row + spare + len(hand)}"
    got = cell_values(path, [rng])[rng]
    col = {k: ORDERS_BLOCK.index(k) - ORDERS_BLOCK.index("pool") for k in (*ODDS_INPUTS, *ODDS_KEYS)}

    def check(row: list[Any], needed: int, p_hit: float, expected: float, what: str) -> None:
        assert row[col["needed"]] == needed, what
        assert row[col["p_hit"]] == pytest.approx(100 * p_hit, abs=1e-7), what
        assert row[col["expected"]] == pytest.approx(expected, abs=1e-9), what

    for i in range(len(ORDERS)):
        odds = engine[i].get("odds") if i in engine else None
        if odds is None:
            assert [got[i][col[k]] for k in ODDS_KEYS] == ["", "", ""], (i, got[i])
            continue
        assert [got[i][col[k]] for k in ("pool", "added", "external", "dv")] == [
            odds["pool"], odds["successes_added"], odds["external_penalty"], odds["dv"]]
        check(got[i], odds["successes_needed"], odds["p_hit_float"], odds["expected_levels_float"], f"order {i}")
    rows = [engine[i]["odds"] for i in range(4)]
    assert rows[0]["successes_added"] == 7  # X14, X28: min(2 x Rating 3, 2 x War 4) + Might 1 in Close formation
    assert rows[0]["external_penalty"] == 1 and rows[2]["external_penalty"] == 2  # X30; X32: envelop
    assert any(0 < r["p_hit_float"] < 1 for r in rows) and any(r["dv"] >= 4 for r in rows)
    for j, p in enumerate(HAND_PLANS):
        o = attack_odds(p)
        check(got[spare + j], o.needed, float(o.p_hit), float(o.expected_levels), f"hand plan {j}")
    assert [got[spare + len(HAND_PLANS)][col[k]] for k in ODDS_KEYS] == ["", "", ""]
    assert [got[len(ORDERS)][col[k]] for k in ODDS_KEYS] == ["", "", ""]  # a blank row
    assert error_values(path) == {}


def table_row(offset: int, values: dict[str, Any]) -> RangeUpdate:
    """The value cells the steps write for the odds formulas, of Orders data row ``offset``."""
    keys = list(ODDS_INPUTS)
    r = ORDERS_BLOCK.first_row + offset
    return RangeUpdate(f"{ORDERS_BLOCK.sheet}!{ORDERS_BLOCK.letter(keys[0])}{r}:{ORDERS_BLOCK.letter(keys[-1])}{r}",
                       [[values.get(k) for k in keys]])


def test_e1_odds_table_once_is_the_engines_distribution_with_a_ten_counted_once() -> None:
    table = odds_table(double_tens=False)
    assert len(table) == ODDS_DICE + 1 and {len(r) for r in table} == {2 * ODDS_DICE + 1}
    for n in (0, 1, 2, 9, ODDS_DICE):
        exact = success_distribution(n, double_tens=False)
        assert len(exact) == n + 1
        assert table[n][: n + 1] == pytest.approx([float(p) for p in exact], rel=1e-15, abs=1e-300), n
        assert all(p == 0 for p in table[n][n + 1:])
    assert table[1][:3] == (0.6, 0.4, 0.0)
    assert table[2][:3] == pytest.approx((0.36, 0.48, 0.16), abs=1e-15)  # 0.6^2, 2 x 0.6 x 0.4, 0.4^2


EXTRA_CHARACTERS = [{**c, "extra": "Yes"} if c["name"] == "Red Harrow" else c for c in CHARACTERS]
"""E1: the Bandit Mob's commander is an extra."""
HARD_UNITS = [{**u, "hardness_avg": 2, "hardness_min": 2} if u["name"] == "Bandit Mob" else u for u in UNITS]
"""X8: every bandit has Hardness 2, so the unit has Hardness 2 (and the damage minimum falls to 1, E9)."""


@pytest.mark.libreoffice
def test_e1_x8_odds_formulas_equal_engine_for_an_extra_commander_and_unit_hardness(tmp_path: Path) -> None:
    """E1 with ``extras_double_tens`` No typed on the House Rules sheet and an extra typed as
    the Bandit Mob's commander: its attack reads the second Odds table (a 10 counts once);
    X8, E9: the Hardness typed on the Units sheet reaches the Talon's attack on the mob.
    LibreOffice's figures equal the engine's (to 1e-9) on every row."""
    from libreoffice import cell_values, error_values, require_libreoffice

    require_libreoffice()
    path = tmp_path / "odds-extra.xlsx"
    backend = tracker(path, EXTRA_CHARACTERS, HARD_UNITS, HouseRules(extras_double_tens=False))
    engine = engine_odds(backend)
    battle = load_battle(export_steps(SUBJECT, backend)["battle"])
    assert battle.house_rules.extras_double_tens is False
    first, last = ORDERS_BLOCK.letter("pool"), ORDERS_BLOCK.letter("expected")
    rng = f"Orders!{first}{ORDERS_BLOCK.first_row}:{last}{ORDERS_BLOCK.first_row + len(ORDERS) - 1}"
    got = cell_values(path, [rng])[rng]
    col = {k: ORDERS_BLOCK.index(k) - ORDERS_BLOCK.index("pool") for k in (*ODDS_INPUTS, *ODDS_KEYS)}
    assert [got[i][col["tens"]] for i in range(4)] == [2, 2, 1, 2]  # only the mob's commander is an extra
    assert got[0][col["hardness"]] == 2 and got[0][col["min_dice"]] == 1  # X8, E9
    for i in range(4):
        odds = engine[i]["odds"]
        assert got[i][col["needed"]] == odds["successes_needed"], i
        assert got[i][col["p_hit"]] == pytest.approx(100 * odds["p_hit_float"], abs=1e-7), i
        assert got[i][col["expected"]] == pytest.approx(odds["expected_levels_float"], abs=1e-9), i
    # The mob's pool (Dex 3 + min(Melee 3, War 2) + 0 = 5) read from the second table differs
    # from the first: the formula really switched tables.
    mob = engine[2]["odds"]
    twice = attack_odds(replace(_plans_of(battle)[2], double_tens=True))
    assert mob["pool"] == 5 and float(twice.p_hit) != pytest.approx(mob["p_hit_float"])
    assert error_values(path) == {}


def _plans_of(battle: Any) -> dict[int, AttackPlan]:
    from sheetsync.systems.exalted.rules.battle import attack_plans

    return attack_plans(battle)


def test_e1_the_odds_tables_values_are_computed_only_when_read_and_bound_the_cells_they_fill() -> None:
    """A step never reads the Odds sheet's ten thousand fixed chances (only a template or a
    drawing does), so the layout defers them; the print area's bounds, taken from the deferred
    part, are the bounds of the cells once computed, and reading them gives every one, in order."""
    from sheetsync.core.a1 import cell_position
    from sheetsync.sheets.printing import print_area
    from sheetsync.systems.exalted.tracker.formulas import ODDS_DICE, ODDS_SHEET, odds_table
    from sheetsync.systems.exalted.tracker.layout import layout

    lay = layout()
    assert lay.deferred and not [s for s in lay.fixed if s.sheet == ODDS_SHEET]
    deferred_extent = lay.static_extent(ODDS_SHEET)
    area = print_area(lay, ODDS_SHEET, {})
    assert lay.deferred  # the print area computed none of them
    odds = [s for s in lay.static if s.sheet == ODDS_SHEET]
    assert not lay.deferred and len(odds) == 1 + (2 * ODDS_DICE + 1) + 2 * (ODDS_DICE + 1) * (2 * ODDS_DICE + 2)
    cols, rows = zip(*(cell_position(s.address) for s in odds), strict=True)
    assert deferred_extent == (max(rows), max(cols)) == lay.static_extent(ODDS_SHEET)
    assert print_area(lay, ODDS_SHEET, {}) == area
    chances = [s.value for s in odds if isinstance(s.value, float)]
    assert chances == [p for twice in (True, False) for row in odds_table(ODDS_DICE, double_tens=twice) for p in row]
