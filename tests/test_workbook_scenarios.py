"""Every golden scenario (tests/scenarios) on the workbook path gives the same events and
standing as the engine: the battle file becomes a tracker (``new``), each phase's orders are
typed into the Orders sheet, and Resolve runs through the openpyxl backend (R13, R25)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml

from sheetsync.app import usecases
from sheetsync.app.workbook_cli import excel_backend, new_workbook
from sheetsync.core.errors import InputError
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle
from sheetsync.systems.bbn.rules import resolve_phase
from sheetsync.systems.bbn.rules.phase import cohorts_json
from sheetsync.systems.bbn.tracker.layout import layout

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))
LAY = layout()
SEED = 4242


def _scenario(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _type_orders(wb: Path, orders: list[dict[str, Any]], start: int) -> None:
    """Type orders into empty Orders rows as a Tracker would."""
    book = openpyxl.load_workbook(wb)
    block = LAY.block("Orders_Table")
    ws = book["Orders"]
    for i, order in enumerate(orders):
        row = block.first_row + start + i
        for key, value in order.items():
            if key == "picks":
                value = " ".join(str(v) for v in value)
            elif key == "use_reroll":
                if value and "reroll" not in order:
                    ws[f"{block.letter('reroll')}{row}"] = "Yes"
                continue
            ws[f"{block.letter(key)}{row}"] = value
    book.save(wb)


def _unplaced(event: dict) -> dict:
    """An event with every order reference in its reason, a cell or ``orders[i]``, as one word."""
    reason = event.get("reason")
    if isinstance(reason, str):
        event = {**event, "reason": re.sub(r"Orders!B\d+|orders\[\d+\]", "ORDER", reason)}
    return event


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_on_the_workbook_path(path: Path, tmp_path: Path) -> None:
    scn = _scenario(path)
    data = dict(scn["battle"])
    data["seed"] = SEED
    try:
        battle = load_battle(data)
    except InputError:
        pytest.skip("an input-error scenario: the loader's own tests cover it")
    phases = [battle.orders] + [load_battle({**battle_to_file(battle), "orders": s.get("orders") or []}).orders
                                for s in scn.get("next") or []]
    source = tmp_path / "battle.yaml"
    source.write_text(yaml.safe_dump(data), encoding="utf-8")
    wb = tmp_path / "battle.xlsx"
    new_workbook(wb, source)
    # the Cohorts sheet shows the engine's pools (Cohort Sheet 1.1-1.7)
    block = LAY.block("Cohorts_Pools")
    (grid,) = excel_backend(wb).read_ranges([block.range()])
    shown = {row[0]: dict(zip([c.key for c in block.columns], row, strict=True)) for row in grid if row[0]}
    for name, pools in battle.pools.items():
        for pool in ("melee", "ranged", "mystical", "defense", "movement", "resolve"):
            assert shown[name][pool] == pools.pools[pool], (name, pool)
        assert (shown[name]["max_health"], shown[name]["max_temper"]) == (pools.pools["health"], pools.pools["temper"])
    if not any(phases):
        return
    typed = len(battle.orders)
    engine = battle
    for n, orders in enumerate(phases, start=1):
        engine = load_battle({**battle_to_file(engine), "orders": [o.model_dump(mode="json", exclude_defaults=True)
                                                                   for o in orders]})
        if n > 1:
            _type_orders(wb, [o.model_dump(mode="json", exclude_defaults=True) for o in orders], typed)
            typed += len(orders)
        expected = resolve_phase(engine)
        got = usecases.resolve(excel_backend(wb))
        assert got.result is not None
        # issue 22: a tracker names an order by its cell (Orders!B8) where the engine says orders[4]
        assert [_unplaced(e.model_dump()) for e in got.result.events] == [_unplaced(e.model_dump())
                                                                            for e in expected.events], f"phase {n}"
        assert [e.model_dump() for e in got.result.end_of_phase] == [e.model_dump() for e in expected.end_of_phase]
        assert usecases.export(excel_backend(wb))["cohorts"] == cohorts_json(expected.battle)
        engine = expected.battle
