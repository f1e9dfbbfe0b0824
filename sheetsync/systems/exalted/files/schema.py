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

from dataclasses import field
from typing import Annotated, Any, Literal

from pydantic import TypeAdapter

from sheetsync.core.model import Doc, Range, model
from sheetsync.systems.exalted.rules.models import Character, Frozen, HouseRules, UnitSpec
from sheetsync.systems.exalted.rules.state import Dice, Duel, Order, UndoRecord, UnitState

__all__ = ["ExaltedBattleFile", "FileCharacter", "FileUnit", "battle_file_schema"]


@model
class FileCharacter(Character):
    """A character and, optionally, the part it plays."""

    __pydantic_config__ = {"title": "Character"}

    role: Literal["commander", "hero", "sorcerer", "relay", "member"] | None = None


@model
class SpecialCharacters(Frozen):
    """X11: a unit's special characters by kind, each a character's name."""

    __pydantic_config__ = {"title": "Special characters"}

    heroes: list[str] = field(default_factory=list)
    sorcerers: list[str] = field(default_factory=list)
    relays: list[str] = field(default_factory=list)


@model
class FileUnit(UnitSpec):
    """A unit as the file holds it: its traits, and who is in it."""

    __pydantic_config__ = {"title": "Unit"}

    commander: Annotated[str, Doc("The name of a character (X1)")]  # type: ignore[assignment]
    special_characters: SpecialCharacters = field(default_factory=SpecialCharacters)
    named_members: Annotated[list[str], Doc("Characters in the ranks (X40)")] = field(default_factory=list)
    ammunition: Annotated[int | None, Doc("Volleys' ammunition (X31)")] = None
    fortified: bool = False
    cover: Annotated[int, Range(ge=0, le=100), Doc("Cover in percent (X16)")] = 0
    join_war: Annotated[Dice, Doc("Join War's dice: faces or successes (E4)")] = None
    split_from: Annotated[str | None, Doc("Written by sheetsync for a unit split off (X23)")] = None


@model
class ExaltedBattleFile(Frozen):
    """An Exalted 2e mass combat battle file (YAML or JSON); ``started``, ``tick``,
    ``state``, ``history``, ``ended`` and ``duel`` are written by ``--out``."""

    __pydantic_config__ = {"title": "sheetsync Exalted battle file"}

    system: Literal["exalted"]
    seed: Annotated[int | str | None, Doc("Seed of the dice sheetsync rolls (E1)")] = None
    house_rules: Annotated[HouseRules, Doc("Readings of the rulings a chronicle changes (docs/rules/exalted.md)")] = (
        field(default_factory=HouseRules))
    characters: list[FileCharacter] = field(default_factory=list)
    units: list[FileUnit]
    orders: Annotated[list[Order], Doc("Orders by long tick, each in sheet order (E6)")] = field(default_factory=list)
    started: bool = False
    tick: Annotated[int, Range(ge=0)] = 0
    state: Annotated[list[UnitState], Doc("Each unit's standing, written by --out")] = field(default_factory=list)
    history: Annotated[list[UndoRecord], Doc("Undo records, written by --out")] = field(default_factory=list)
    ended: bool = False
    duel: Duel | None = None


def battle_file_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an Exalted battle file, from pydantic's reading of
    the models above (a ``TypeAdapter`` over the dataclasses, issue 24)."""
    schema = TypeAdapter(ExaltedBattleFile).json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
