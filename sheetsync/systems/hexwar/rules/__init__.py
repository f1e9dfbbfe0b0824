"""The hex wargame (``dark-mysteries-hex-wargame.txt`` read through RULINGS-hexwar.md
H1-H12): counters, the odd-q map, moves, charge, ranges, engagements, simultaneous d100
casualties, proportional reduction, undo and the report.  Pure: the engine imports the
standard library alone (issue 24).  Battle files are read and written by the system's
``files`` room (:mod:`sheetsync.systems.hexwar.files.loader`), which judges them with
pydantic."""

from __future__ import annotations

from sheetsync.systems.hexwar.rules.aftermath import (
    Report,
    SideReport,
    UnitReport,
    UnitValues,
    aftermath,
    battle_over,
    effective_values,
)
from sheetsync.systems.hexwar.rules.counter import (
    Charge,
    Counter,
    RangeKind,
    parse_counter,
    reduce_charge,
    reduce_value,
)
from sheetsync.systems.hexwar.rules.grid import (
    Cube,
    Hex,
    HexMap,
    hex_distance,
    hex_line,
    neighbours,
    parse_hex,
)
from sheetsync.systems.hexwar.rules.models import (
    AttackOrder,
    Battle,
    HouseRules,
    MapSpec,
    MoveOrder,
    TurnOrders,
    UndoRecord,
    Unit,
    UnitBefore,
)
from sheetsync.systems.hexwar.rules.turn import (
    AttackEvent,
    Contribution,
    InitiativeRoll,
    MoveEvent,
    TurnResult,
    attack_value,
    chance,
    expected_casualties,
    preview_attacks,
    reach,
    resolve_turn,
    turn_roller,
    undo,
    units_json,
)

__all__ = [
    "AttackEvent",
    "AttackOrder",
    "Battle",
    "Charge",
    "Contribution",
    "Counter",
    "Cube",
    "Hex",
    "HexMap",
    "HouseRules",
    "InitiativeRoll",
    "MapSpec",
    "MoveEvent",
    "MoveOrder",
    "RangeKind",
    "Report",
    "SideReport",
    "TurnOrders",
    "TurnResult",
    "UndoRecord",
    "Unit",
    "UnitBefore",
    "UnitReport",
    "UnitValues",
    "aftermath",
    "attack_value",
    "battle_over",
    "chance",
    "effective_values",
    "example_battle_data",
    "expected_casualties",
    "hex_distance",
    "hex_line",
    "neighbours",
    "parse_counter",
    "parse_hex",
    "preview_attacks",
    "reach",
    "reduce_charge",
    "reduce_value",
    "resolve_turn",
    "turn_roller",
    "undo",
    "units_json",
]


def example_battle_data() -> str:
    """The embedded example battle file (YAML text): the text's units (7.0) at a pass
    between impassable mountains, as at Vulcan's Gap (5.1)."""
    from importlib.resources import files

    return files("sheetsync.systems.hexwar").joinpath("example.yaml").read_text(encoding="utf-8")
