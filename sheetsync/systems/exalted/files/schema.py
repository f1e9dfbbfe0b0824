"""The Exalted battle file's JSON Schema (``sheetsync schema --system exalted``), built from
the engine's own models.

:func:`~sheetsync.systems.exalted.files.loader.load_battle` reads characters with an optional
``role``, units as their :class:`UnitSpec` plus who is in them, and orders, state and undo
records as the engine's models; the models below add only what the file spreads out.  The
loader stays the judge: it also checks what a schema can't (names that exist, one unit per
character, dice that fit their pool, E1-E11 and X1-X52), and a test keeps the schema's keys
equal to the loader's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from sheetsync.systems.exalted.rules.models import Character, Frozen, HouseRules, UnitSpec, Weapon
from sheetsync.systems.exalted.rules.state import Dice, Duel, Order, UndoRecord, UnitState

__all__ = ["ExaltedBattleFile", "FileCharacter", "FileUnit", "battle_file_schema"]


class FileCharacter(Character):
    """A character and, optionally, the part it plays."""

    model_config = ConfigDict(title="Character", frozen=True, extra="forbid")

    role: Literal["commander", "hero", "sorcerer", "relay", "member"] | None = None


class SpecialCharacters(Frozen):
    """X11: a unit's special characters by kind, each a character's name."""

    model_config = ConfigDict(title="Special characters", frozen=True, extra="forbid")

    heroes: list[str] = Field(default_factory=list)
    sorcerers: list[str] = Field(default_factory=list)
    relays: list[str] = Field(default_factory=list)


class FileUnit(UnitSpec):
    """A unit as the file holds it: its traits, and who is in it."""

    model_config = ConfigDict(title="Unit", frozen=True, extra="forbid")

    commander: str = Field(description="The name of a character (X1)")  # type: ignore[assignment]
    special_characters: SpecialCharacters = Field(default_factory=SpecialCharacters)
    named_members: list[str] = Field(default_factory=list, description="Characters in the ranks (X40)")
    ammunition: int | None = Field(default=None, description="Volleys' ammunition (X31)")
    fortified: bool = False
    cover: int = Field(default=0, ge=0, le=100, description="Cover in percent (X16)")
    join_war: Dice = Field(default=None, description="Join War's dice: faces or successes (E4)")
    split_from: str | None = Field(default=None, description="Written by sheetsync for a unit split off (X23)")


class ExaltedBattleFile(Frozen):
    """An Exalted 2e mass combat battle file (YAML or JSON); ``started``, ``tick``,
    ``state``, ``history``, ``ended`` and ``duel`` are written by ``--out``."""

    model_config = ConfigDict(title="sheetsync Exalted battle file", frozen=True, extra="forbid")

    system: Literal["exalted"]
    seed: int | str | None = Field(default=None, description="Seed of the dice sheetsync rolls (E1)")
    house_rules: HouseRules = Field(default_factory=HouseRules,
                                    description="Readings of the rulings a chronicle changes (docs/rules/exalted.md)")
    characters: list[FileCharacter] = Field(default_factory=list)
    units: list[FileUnit]
    orders: list[Order] = Field(default_factory=list, description="Orders by long tick, each in sheet order (E6)")
    started: bool = False
    tick: int = Field(default=0, ge=0)
    state: list[UnitState] = Field(default_factory=list, description="Each unit's standing, written by --out")
    history: list[UndoRecord] = Field(default_factory=list, description="Undo records, written by --out")
    ended: bool = False
    duel: Duel | None = None


def battle_file_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an Exalted battle file."""
    Weapon.model_rebuild(force=True)  # its default instance is shown; the models build lazily (issue 12)
    schema = ExaltedBattleFile.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
