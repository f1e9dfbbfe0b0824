"""The hex battle file's JSON Schema (``sheetsync schema --system hexwar``), built from
pydantic models of the file's shape.

:func:`~sheetsync.systems.hexwar.files.loader.load_battle` reads that shape by hand (a counter is
one label or one value per key, a hex id four digits or the number a spreadsheet makes of
it), so the models below describe the file as typed and reuse the engine's models where the
file holds them as they are (house rules, undo records).  The loader stays the judge: it
also checks what a schema can't (hexes on the map, names that exist, stacking, H1-H12), and
a test keeps the schema's keys equal to the loader's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sheetsync.systems.hexwar.rules.models import HouseRules, UndoRecord

__all__ = ["HexBattleFile", "battle_file_schema"]

HexId = Annotated[str, Field(pattern=r"^\s*\d{4}\s*$", description="A hex id CCRR, such as \"0405\" (H2)")] | \
    Annotated[int, Field(ge=0, le=9999, description="A hex id as the number a spreadsheet makes of it (405)")]


class Frozen(BaseModel):
    """Base of the file's shapes: frozen, and unknown keys are an error.  The engine's
    models it holds (house rules, undo records) are standard-library dataclasses that
    pydantic reads through their ``Annotated`` metadata (issue 24)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


Counter = Annotated[str, Field(description="The counter as written, such as \"3+ - 2 - 4 - 1\" or "
                                           "\"4 - 3 - 1 - 2(3)\" (H1)")]


class FileMap(Frozen):
    """H2, 5.1: the map's size and its impassable hexes."""

    model_config = ConfigDict(title="Map", frozen=True, extra="forbid")

    columns: int = Field(ge=1, le=99)
    rows: int = Field(ge=1, le=99)
    impassable: list[HexId] = Field(default_factory=list)


class FileUnit(Frozen):
    """H1: a unit: its counter (or its four values one per key), hex and standing."""

    model_config = ConfigDict(title="Unit", frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    side: str = Field(min_length=1)
    counter: Counter | None = None
    attack: str | int | None = Field(default=None, description="With defense, movement and range instead of "
                                                               "counter: the attack value, such as \"3+\"")
    defense: str | int | None = None
    movement: str | int | None = None
    range: str | int | None = Field(default=None, description="Such as 1, \"2(2)\" or \"2(--)\" (H6)")
    hex: HexId
    size: float | Literal["battalion", "squadron", "fist", "company"] = Field(
        default=1.0, description="In battalions, or battalion, squadron, company (H1)")
    men: int = Field(default=500, ge=1, description="Head count of a battalion, for the report (H12)")
    casualties: int = Field(default=0, ge=0, description="In percent (H8, H9)")
    destroyed_turn: int | None = None
    destroyed_by: list[str] = Field(default_factory=list)


class FileMove(Frozen):
    """H4: a move, to a destination or along a path (one of the two)."""

    model_config = ConfigDict(title="Move", frozen=True, extra="forbid")

    unit: str
    to: HexId | None = None
    path: list[HexId] | str | None = None


class FileAttack(Frozen):
    """H7, H8: one engagement: the defender, the attackers and a typed d100 if any."""

    model_config = ConfigDict(title="Attack", frozen=True, extra="forbid")

    defender: str
    attackers: list[str] | str = Field(min_length=1)
    roll: int | str | None = Field(default=None, description="A d100, 1 to 100 (00 means 100); blank: rolled (H8)")


class FileTurn(Frozen):
    """H3: the turn's number, initiative, moves and attacks."""

    model_config = ConfigDict(title="Turn", frozen=True, extra="forbid")

    number: int = Field(default=1, ge=1)
    initiative: str | None = Field(default=None, description="The side that has initiative (H3)")
    initiative_rolls: dict[str, Annotated[int, Field(ge=3, le=18)]] = Field(
        default_factory=dict, description="With initiative: contest, each side's typed 3d6 (H3)")
    moves: list[FileMove] = Field(default_factory=list)
    attacks: list[FileAttack] = Field(default_factory=list)


class HexBattleFile(Frozen):
    """A hex wargame battle file (YAML or JSON); ``initiative_holder`` and ``history`` are
    written by ``--out``."""

    model_config = ConfigDict(title="sheetsync hex wargame battle file", frozen=True, extra="forbid")

    system: Literal["hexwar"] = "hexwar"
    seed: int | str | None = Field(default=None, description="Seed of the dice sheetsync rolls (H8)")
    house_rules: HouseRules = Field(default_factory=HouseRules,
                                    description="Readings of the rulings a chronicle changes (docs/rules/hexwar.md)")
    map: FileMap
    units: list[FileUnit] = Field(min_length=1)
    turn: FileTurn = Field(default_factory=FileTurn)
    generals: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict, description="Each side's general's Military Science, for initiative: contest (H3)")
    initiative_holder: str | None = None
    history: list[UndoRecord] = Field(default_factory=list, description="Undo records, written by --out")


def battle_file_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a hex battle file."""
    schema = HexBattleFile.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
