"""Baltimore by Night battalion combat rules (``bbn-battalion-combat.txt`` read through
RULINGS-bbn.md R1-R37, described in ``docs/rules/bbn.md``).  Pure: the standard library and pydantic only."""

from __future__ import annotations

from sheetsync.rules.bbn.aftermath import AftermathEntry, aftermath, aftermath_json
from sheetsync.rules.bbn.battle import Battle, RangeEntry
from sheetsync.rules.bbn.catalog import Catalog, default_catalog
from sheetsync.rules.bbn.loader import battle_to_file, load_battle
from sheetsync.rules.bbn.models import (
    Band,
    Benefit,
    CharacterSheet,
    CohortSpec,
    CohortState,
    HouseRules,
    Moment,
    Order,
    PoolName,
    State,
    Task,
)
from sheetsync.rules.bbn.phase import (
    Effect,
    Event,
    PhaseResult,
    Roll,
    hit_chance,
    phase_roller,
    resolve_phase,
    side_out_of_fight,
    undo,
)
from sheetsync.rules.bbn.pools import CohortPools, compute_pools

__all__ = [
    "AftermathEntry",
    "Band",
    "Battle",
    "Benefit",
    "Catalog",
    "CharacterSheet",
    "CohortPools",
    "CohortSpec",
    "CohortState",
    "Effect",
    "Event",
    "HouseRules",
    "Moment",
    "Order",
    "PhaseResult",
    "PoolName",
    "RangeEntry",
    "Roll",
    "State",
    "Task",
    "aftermath",
    "aftermath_json",
    "battle_to_file",
    "compute_pools",
    "default_catalog",
    "hit_chance",
    "load_battle",
    "phase_roller",
    "resolve_phase",
    "side_out_of_fight",
    "undo",
]
