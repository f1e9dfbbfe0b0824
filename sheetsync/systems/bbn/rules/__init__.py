"""Baltimore by Night battalion combat rules (``bbn-battalion-combat.txt`` read through
RULINGS-bbn.md R1-R37, described in ``docs/rules/bbn.md``).  Pure: the standard library only (issue 24)."""

from __future__ import annotations

from sheetsync.systems.bbn.rules.aftermath import AftermathEntry, aftermath, aftermath_json
from sheetsync.systems.bbn.rules.battle import Battle, RangeEntry
from sheetsync.systems.bbn.rules.catalog import Catalog, default_catalog
from sheetsync.systems.bbn.rules.models import (
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
from sheetsync.systems.bbn.rules.phase import (
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
from sheetsync.systems.bbn.rules.pools import CohortPools, compute_pools

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
    "compute_pools",
    "default_catalog",
    "hit_chance",
    "phase_roller",
    "resolve_phase",
    "side_out_of_fight",
    "undo",
]
