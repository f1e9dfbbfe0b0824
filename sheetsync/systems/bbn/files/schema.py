"""The battle file's JSON Schema (``sheetsync schema``), built by pydantic from the engine's models.

A battle file is what :func:`~sheetsync.systems.bbn.files.loader.load_battle` reads: the
:class:`Battle` spread out for hand editing.  Each cohort holds its declaration
(:class:`CohortSpec`) and, optionally, its standing between phases (the
:class:`CohortState` keys); a member may be just a name; a range is ``[cohort, cohort,
band]``.  The models below describe exactly that shape, reusing the engine's models for
everything else, so the schema follows the code.  The loader stays the judge: it also
accepts dropdown labels in any case ("melee attack") and merits as one comma-separated
text, and it checks what a schema can't (names that exist, 3 to 5 members, R1-R37).
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Any

from pydantic import TypeAdapter

from sheetsync.core.model import Doc, MinLen, Range, model
from sheetsync.systems.bbn.rules.battle import RangeEntry
from sheetsync.systems.bbn.rules.models import (
    Band,
    CharacterSheet,
    CohortSpec,
    Frozen,
    HouseRules,
    Order,
    PathEntry,
    State,
)

__all__ = ["BattleFile", "FileCohort", "FileMember", "battle_file_schema"]


@model
class FileMember(CharacterSheet):
    """A member's sheet as a battle file writes it: a path's level may stand alone, and
    merits may be one comma-separated text."""

    __pydantic_config__ = {"title": "Member"}

    merits: tuple[str, ...] | str = ()  # type: ignore[assignment]
    blood_magic_paths: dict[str, PathEntry | Annotated[int, Range(ge=0, le=10)]] = field(  # type: ignore[assignment]
        default_factory=dict)


@model
class FileCohort(CohortSpec):
    """A cohort in a battle file: its declaration, plus its standing so far (all optional;
    a fresh battle starts at full Health with everyone Active)."""

    __pydantic_config__ = {"title": "Cohort"}

    members: tuple[FileMember | Annotated[str, MinLen(1)], ...]  # type: ignore[assignment]
    health: Annotated[int | None, Doc("Health now (may be below zero, R16); default the maximum")] = None
    temper: Annotated[Annotated[int, Range(ge=0)] | None, Doc("Temper Pool left; default the built pool")] = None
    control: Annotated[Annotated[int, Range(ge=0)] | None, Doc("Control left; default the built pool")] = None
    states: Annotated[dict[str, State], Doc("Member name to state; default Active")] = field(default_factory=dict)
    hero_used: Annotated[tuple[str, ...], Doc("Members who used their Hero Moment (R21)")] = ()
    died_in_phase: Annotated[dict[str, int], Doc("Member name to the phase they died in (R21)")] = field(
        default_factory=dict)
    reroll_tokens: Annotated[int, Range(ge=0), Doc("Inspire reroll tokens for the next phase (R20)")] = 0
    units_moved: Annotated[int, Range(ge=0), Doc("Units moved so far (R24)")] = 0
    below_zero_damage: Annotated[int, Range(ge=0), Doc(
        "Damage taken at or below zero so far, with casualty_count: damage (R31)")] = 0


@model
class BattleFile(Frozen):
    """A sheetsync battle file (YAML or JSON): cohorts, ranges, the phase's orders, house
    rules and the dice seed; ``history`` and ``log`` are written by ``--out``."""

    __pydantic_config__ = {"title": "sheetsync battle file"}

    house_rules: Annotated[HouseRules, Doc("Readings of the rulings a chronicle changes (docs/rules/bbn.md)")] = field(
        default_factory=HouseRules)
    seed: Annotated[int | str | None, Doc("Seed of the dice sheetsync rolls (R25)")] = None
    phase: Annotated[int, Range(ge=1), Doc("The number of the next phase to resolve")] = 1
    cohorts: Annotated[list[FileCohort], MinLen(1)]
    ranges: Annotated[list[tuple[str, str, Band] | RangeEntry], Doc(
        "[cohort, cohort, band] for each pair the Storyteller set (R24)")] = field(default_factory=list)
    orders: Annotated[list[Order], Doc("The phase's orders, resolved in this order (R13)")] = field(
        default_factory=list)
    catalog: Annotated[dict[str, Any] | None, Doc("Additions to the modifier catalog")] = None
    history: Annotated[list[dict[str, Any]], Doc("Undo snapshots, written by --out")] = field(default_factory=list)
    log: Annotated[list[dict[str, Any]], Doc("Every event so far, written by --out")] = field(default_factory=list)


def battle_file_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a battle file, with each house rule's ruling as
    its description."""
    schema = TypeAdapter(BattleFile).json_schema()
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    rules = schema.get("$defs", {}).get("HouseRules", {}).get("properties", {})
    for key, (text, _default, _choices) in HouseRules.describe().items():
        if key in rules and text:
            rules[key]["description"] = text
    return schema
