"""The hex engine is pure, and its embedded example battle (7.0, 5.1) resolves a turn."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

import sheetsync.systems.hexwar.rules as hexwar
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.rules import (
    AttackEvent,
    MoveEvent,
    example_battle_data,
    resolve_turn,
    undo,
)


def test_hexwar_rules_core_is_pure() -> None:
    """Importing the engine loads no spreadsheet, network, YAML or terminal library."""
    code = "import sys, json; import sheetsync.systems.hexwar.rules; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert not loaded & {"openpyxl", "gspread", "xlwings", "fastapi", "requests", "yaml", "httpx", "rich", "typer"}
    assert "sheetsync.systems.bbn.rules" not in loaded


def test_hexwar_public_names_exist() -> None:
    for name in hexwar.__all__:
        assert getattr(hexwar, name) is not None, name


def test_hexwar_example_battle_loads_and_resolves_a_turn() -> None:
    battle = load_battle(yaml.safe_load(example_battle_data()), "example.yaml")
    result = resolve_turn(battle)
    moves = [e for e in result.events if isinstance(e, MoveEvent)]
    attacks = [e for e in result.events if isinstance(e, AttackEvent)]
    assert moves and all(m.outcome == "moved" for m in moves)
    assert attacks and all(a.outcome != "refused" for a in attacks)
    knights = next(m for m in moves if m.unit == "Church Knights")
    assert knights.charge and knights.to == "0605"
    # 6.3.1 and 6.3.3: the charging Knights 4 + 2 = 6 and the archers 3 at 3 hexes: 9 / 13 = 69%
    first = attacks[0]
    assert (first.strength, first.defense, first.chance) == (9, 4, 69)
    assert undo(result.battle) == battle
