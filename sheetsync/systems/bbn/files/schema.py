"""The battle file's JSON Schema (``sheetsync schema``), built from the pydantic models.

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

from typing import Annotated, Any

from pydantic import ConfigDict, Field

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


class FileMember(CharacterSheet):
    """A member's sheet as a battle file writes it: a path's level may stand alone, and
    merits may be one comma-separated text."""

    model_config = ConfigDict(title="Member", frozen=True, extra="forbid")

    merits: tuple[str, ...] | str = ()  # type: ignore[assignment]
    blood_magic_paths: dict[str, PathEntry | Annotated[int, Field(ge=0, le=10)]] = Field(  # type: ignore[assignment]
        default_factory=dict)


class FileCohort(CohortSpec):
    """A cohort in a battle file: its declaration, plus its standing so far (all optional;
    a fresh battle starts at full Health with everyone Active)."""

    model_config = ConfigDict(title="Cohort", frozen=True, extra="forbid")

    members: tuple[FileMember | Annotated[str, Field(min_length=1)], ...]  # type: ignore[assignment]
    health: int | None = Field(default=None, description="Health now (may be below zero, R16); default the maximum")
    temper: int | None = Field(default=None, ge=0, description="Temper Pool left; default the built pool")
    control: int | None = Field(default=None, ge=0, description="Control left; default the built pool")
    states: dict[str, State] = Field(default_factory=dict, description="Member name to state; default Active")
    hero_used: tuple[str, ...] = Field(default=(), description="Members who used their Hero Moment (R21)")
    died_in_phase: dict[str, int] = Field(default_factory=dict, description="Member name to the phase they died in (R21)")
    reroll_tokens: int = Field(default=0, ge=0, description="Inspire reroll tokens for the next phase (R20)")
    units_moved: int = Field(default=0, ge=0, description="Units moved so far (R24)")
    below_zero_damage: int = Field(default=0, ge=0, description="Damage taken at or below zero so far, with casualty_count: damage (R31)")


class BattleFile(Frozen):
    """A sheetsync battle file (YAML or JSON): cohorts, ranges, the phase's orders, house
    rules and the dice seed; ``history`` and ``log`` are written by ``--out``."""

    model_config = ConfigDict(title="sheetsync battle file", frozen=True, extra="forbid")

    house_rules: HouseRules = Field(default_factory=HouseRules,
                                    description="Readings of the rulings a chronicle changes (docs/rules/bbn.md)")
    seed: int | str | None = Field(default=None, description="Seed of the dice sheetsync rolls (R25)")
    phase: int = Field(default=1, ge=1, description="The number of the next phase to resolve")
    cohorts: list[FileCohort] = Field(min_length=1)
    ranges: list[tuple[str, str, Band] | RangeEntry] = Field(
        default_factory=list, description="[cohort, cohort, band] for each pair the Storyteller set (R24)")
    orders: list[Order] = Field(default_factory=list, description="The phase's orders, resolved in this order (R13)")
    catalog: dict[str, Any] | None = Field(default=None, description="Additions to the modifier catalog")
    history: list[dict[str, Any]] = Field(default_factory=list, description="Undo snapshots, written by --out")
    log: list[dict[str, Any]] = Field(default_factory=list, description="Every event so far, written by --out")


def battle_file_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a battle file, with each house rule's ruling as
    its description."""
    schema = BattleFile.model_json_schema()
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    rules = schema.get("$defs", {}).get("HouseRules", {}).get("properties", {})
    for key, (text, _default, _choices) in HouseRules.describe().items():
        if key in rules and text:
            rules[key]["description"] = text
    return schema
