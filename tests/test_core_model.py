"""Issue 24: the standard-library models (:mod:`sheetsync.core.model`) dump as pydantic did,
round-trip through ``model_validate``, refuse bad data with its path, and carry their
constraints and descriptions to pydantic at the edge (``TypeAdapter``) and to the JSON
Schema."""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import field
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from sheetsync.core.errors import Problem
from sheetsync.core.model import Alias, Doc, MinLen, Model, ModelError, Pattern, Range, model
from sheetsync.sheets.validation import validate


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@model
class Leaf(Model):
    """A leaf."""

    name: Annotated[str, MinLen(1), Doc("The leaf's name")]
    weight: Annotated[float, Range(gt=0)] = 2
    colour: Colour = Colour.RED


@model
class Tree(Model):
    __pydantic_config__ = {"title": "A tree"}

    kind: Literal["oak", "ash"] = "oak"
    height: Annotated[int, Range(ge=1, le=99)]
    leaves: tuple[Leaf, ...] = ()
    pair: tuple[int, str] = (1, "a")
    tags: dict[str, int] = field(default_factory=dict)
    label: Annotated[str, Pattern(r"^\d{4}$")] = "0101"
    seed: int | str | None = None
    from_: Annotated[str, Alias("from")] = "root"
    extra: Any = None
    first: Leaf = Leaf(name="first")


class PLeaf(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    weight: float = Field(default=2, gt=0)
    colour: Colour = Colour.RED


class PTree(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["oak", "ash"] = "oak"
    height: int = Field(ge=1, le=99)
    leaves: tuple[PLeaf, ...] = ()
    pair: tuple[int, str] = (1, "a")
    tags: dict[str, int] = Field(default_factory=dict)
    label: str = Field(default="0101", pattern=r"^\d{4}$")
    seed: int | str | None = None
    from_: str = Field(default="root", serialization_alias="from")
    extra: Any = None
    first: PLeaf = PLeaf(name="first")


def _tree() -> Tree:
    return Tree(height=3, leaves=(Leaf(name="a", weight=1), Leaf(name="b", colour=Colour.BLUE)),
                tags={"x": 1}, seed="s", extra={"k": [1, 2]})


def _ptree() -> PTree:
    return PTree(height=3, leaves=(PLeaf(name="a", weight=1), PLeaf(name="b", colour=Colour.BLUE)),
                 tags={"x": 1}, seed="s", extra={"k": [1, 2]})


def test_issue24_json_dump_is_pydantics() -> None:
    want = {"kind": "oak", "height": 3,
            "leaves": [{"name": "a", "weight": 1.0, "colour": "red"}, {"name": "b", "weight": 2.0, "colour": "blue"}],
            "pair": [1, "a"], "tags": {"x": 1}, "label": "0101", "seed": "s", "from_": "root",
            "extra": {"k": [1, 2]}, "first": {"name": "first", "weight": 2.0, "colour": "red"}}
    got = _tree().model_dump(mode="json")
    assert got == want == _ptree().model_dump(mode="json")
    assert type(got["leaves"][0]["weight"]) is float  # a float field's whole number is written as a float
    assert _tree().model_dump_json() == _ptree().model_dump_json()


def test_issue24_python_dump_keeps_enums_and_tuples_as_pydantic_does() -> None:
    got = _tree().model_dump()
    assert got == _ptree().model_dump()
    assert got["leaves"] == ({"name": "a", "weight": 1, "colour": Colour.RED},
                             {"name": "b", "weight": 2, "colour": Colour.BLUE})
    assert got["pair"] == (1, "a") and type(got["leaves"][1]["weight"]) is int


@pytest.mark.parametrize("options", [
    {"exclude_defaults": True}, {"exclude_none": True}, {"by_alias": True}, {"include": {"height", "tags"}},
    {"exclude": {"leaves", "first"}}, {"exclude_defaults": True, "by_alias": True},
])
def test_issue24_dump_options_match_pydantic(options: dict[str, Any]) -> None:
    assert _tree().model_dump(mode="json", **options) == _ptree().model_dump(mode="json", **options)


def test_issue24_exclude_defaults_pinned() -> None:
    assert Tree(height=5, from_="x").model_dump(mode="json", exclude_defaults=True, by_alias=True) == {
        "height": 5, "from": "x"}


def test_issue24_round_trip_both_modes() -> None:
    tree = _tree()
    assert Tree.model_validate(tree.model_dump(mode="json")) == tree
    assert Tree.model_validate(tree.model_dump()) == tree
    assert Tree.model_validate(tree.model_dump(mode="json", by_alias=True)) == tree
    assert Tree.model_validate(json.loads(tree.model_dump_json())) == tree


def test_issue24_model_copy_and_construct_and_frozen() -> None:
    tree = _tree()
    other = tree.model_copy(update={"height": 4})
    assert other.height == 4 and tree.height == 3 and other.leaves is tree.leaves
    assert Tree.model_construct(height=3) == Tree(height=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tree.height = 5  # type: ignore[misc]
    assert not hasattr(tree, "__dict__")
    assert hash(Leaf(name="a")) == hash(Leaf(name="a"))


def test_issue24_model_fields_say_what_pydantic_said() -> None:
    fields = Tree.model_fields
    assert list(fields) == list(PTree.model_fields)
    assert fields["height"].annotation is int and fields["height"].is_required()
    assert fields["kind"].annotation == Literal["oak", "ash"] and fields["kind"].default == "oak"
    assert fields["tags"].get_default(call_default_factory=True) == {} and not fields["tags"].is_required()
    assert Leaf.model_fields["name"].description == "The leaf's name"
    assert fields["from_"].alias == "from"


@pytest.mark.parametrize(("data", "errors"), [
    ({}, [("height", "is required")]),
    ({"height": 0}, [("height", "0 is out of range (input should be greater than or equal to 1)")]),
    ({"height": "3"}, [("height", "'3' is not a whole number")]),
    ({"height": 3, "leaves": [{"name": ""}]}, [("leaves[0].name", "must not be empty")]),
    ({"height": 3, "leaves": [{"name": "a", "weight": 0}]},
     [("leaves[0].weight", "0 is out of range (input should be greater than 0)")]),
    ({"height": 3, "leaves": [{"name": "a", "colour": "green"}]}, [("leaves[0].colour", "'green' is not one of 'red', 'blue'")]),
    ({"height": 3, "leaves": [5]}, [("leaves[0]", "5 is not a mapping")]),
    ({"height": 3, "leaves": "ab"}, [("leaves", "'ab' is not a list")]),
    ({"height": 3, "kind": "elm"}, [("kind", "'elm' is not one of 'oak', 'ash'")]),
    ({"height": 3, "tags": {"a": "b"}}, [("tags.a", "'b' is not a whole number")]),
    ({"height": 3, "label": "12"}, [("label", "'12' does not match '^\\\\d{4}$'")]),
    ({"height": 3, "pair": [1]}, [("pair", "[1] is not a list of 2")]),
    ({"height": 3, "seed": 1.5}, [("seed", "1.5 is not a whole number")]),
    ({"height": 3, "colour": "red"}, [("colour", "is not a key sheetsync knows (check its spelling)")]),
    ({"height": True, "first": None}, [("height", "True is not a whole number"), ("first", "None is not a mapping")]),
    ([1], [("", "[1] is not a mapping")]),
])
def test_issue24_model_validate_refuses_bad_data_with_its_path(data: Any, errors: list[tuple[str, str]]) -> None:
    with pytest.raises(ModelError) as exc:
        Tree.model_validate(data)
    assert exc.value.errors == errors
    assert isinstance(exc.value, ValueError)
    assert str(exc.value).startswith(f"{errors[0][0]}: " if errors[0][0] else errors[0][1])


def test_issue24_model_validate_converts_as_pydantic_lax_mode_does() -> None:
    got = Tree.model_validate({"height": 2.0, "from": "x", "seed": 7, "leaves": [{"name": "a", "weight": 3}],
                               "pair": (2, "b")})
    assert got == Tree(height=2, from_="x", seed=7, leaves=(Leaf(name="a", weight=3.0),), pair=(2, "b"))
    assert type(got.leaves[0].weight) is float and type(got.height) is int
    assert Tree.model_validate({"height": 2, "from_": "y"}).from_ == "y"


def test_issue24_pydantic_enforces_the_metadata_through_a_type_adapter() -> None:
    adapter = TypeAdapter(Tree)
    assert adapter.validate_python(_tree().model_dump(mode="json")) == _tree()
    with pytest.raises(ValidationError) as exc:
        adapter.validate_python({"height": 100, "leaves": [{"name": "", "weight": 0}], "label": "x", "zz": 1})
    got = {(e["type"], e["loc"]) for e in exc.value.errors()}
    assert got == {("less_than_equal", ("height",)), ("string_too_short", ("leaves", 0, "name")),
                   ("greater_than", ("leaves", 0, "weight")), ("string_pattern_mismatch", ("label",)),
                   ("unexpected_keyword_argument", ("zz",))}


def test_issue24_the_edge_says_what_it_said_of_pydantic_models() -> None:
    bad = {"height": 0, "leaves": [{"name": "", "weight": "x"}, 3], "zz": 1, "tags": []}
    ours: list[Problem] = []
    theirs: list[Problem] = []
    assert validate(Tree, bad, "tree", ours) is None
    assert validate(PTree, bad, "tree", theirs) is None
    assert ours == theirs
    assert Problem("tree.leaves[1]", "3 is not a mapping") in ours
    assert Problem("tree.zz", "is not a key sheetsync knows (check its spelling)") in ours
    assert validate(Tree, "x", "tree", ours) is None and ours[-1] == Problem("tree", "'x' is not a mapping")


def test_issue24_json_schema_keeps_constraints_descriptions_and_title() -> None:
    schema = TypeAdapter(Tree).json_schema()
    assert schema["title"] == "A tree" and schema["additionalProperties"] is False
    assert schema["properties"]["height"] == {"maximum": 99, "minimum": 1, "title": "Height", "type": "integer"}
    leaf = schema["$defs"]["Leaf"]
    assert leaf["description"] == "A leaf."
    assert leaf["properties"]["name"] == {"description": "The leaf's name", "minLength": 1, "title": "Name",
                                          "type": "string"}
    assert leaf["properties"]["weight"]["exclusiveMinimum"] == 0
    assert schema["properties"]["label"]["pattern"] == r"^\d{4}$"


def test_issue24_a_hex_battle_with_history_round_trips() -> None:
    """A whole battle after two turns (its undo records too) and a turn's result, events
    with their ``from`` key included, rebuild from their dumps."""
    import yaml

    from sheetsync.core.dice import RandomRoller
    from sheetsync.systems.hexwar.files.loader import load_battle
    from sheetsync.systems.hexwar.rules import Battle, TurnResult, example_battle_data, resolve_turn

    battle = load_battle(yaml.safe_load(example_battle_data()))
    first = resolve_turn(battle, RandomRoller(7))
    after = resolve_turn(first.battle.model_copy(update={"orders": battle.orders}), RandomRoller(3)).battle
    assert len(after.history) == 2
    assert Battle.model_validate(after.model_dump(mode="json")) == after
    assert Battle.model_validate(after.model_dump()) == after
    assert TurnResult.model_validate(first.model_dump(mode="json", by_alias=True)) == first
    move = first.events[0].model_dump(mode="json", by_alias=True)
    assert move["kind"] == "move" and "from" in move and "from_" not in move


@model
class Optional_(Model):
    weight: Annotated[float | None, Range(gt=0)] = None
    name: Annotated[str | None, MinLen(1), Pattern(r"^[a-z]+$")] = None


class POptional(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    weight: float | None = Field(default=None, gt=0)
    name: str | None = Field(default=None, min_length=1, pattern=r"^[a-z]+$")


def test_issue24_a_constraint_on_an_optional_value_binds_the_value_as_a_field_did() -> None:
    adapter = TypeAdapter(Optional_)
    assert adapter.validate_python({"weight": None, "name": None}) == Optional_()
    assert adapter.validate_python({"weight": 2}).weight == 2.0
    for bad, kind in (({"weight": 0}, "greater_than"), ({"name": ""}, "string_too_short"),
                      ({"name": "A"}, "string_pattern_mismatch")):
        with pytest.raises(ValidationError) as exc:
            adapter.validate_python(bad)
        assert [e["type"] for e in exc.value.errors()] == [kind]
        with pytest.raises(ModelError):
            Optional_.model_validate(bad)
    ours: list[Problem] = []
    theirs: list[Problem] = []
    validate(Optional_, {"weight": -1, "name": ""}, "x", ours)
    validate(POptional, {"weight": -1, "name": ""}, "x", theirs)
    assert ours == theirs and len(ours) == 2
    schema, pschema = adapter.json_schema(), POptional.model_json_schema()
    assert schema["properties"] == pschema["properties"]
    assert Optional_(weight=2).model_dump(mode="json") == POptional(weight=2).model_dump(mode="json") == {
        "weight": 2.0, "name": None}


def test_issue24_model_copy_is_dataclasses_replace_without_its_cost() -> None:
    tree = _tree()
    update = {"height": 9, "from_": "x", "leaves": ()}
    got = tree.model_copy(update=update)
    assert got == dataclasses.replace(tree, **update) and type(got) is Tree
    assert tree == _tree() and tree.model_copy() is tree and tree.model_copy(update={}) is tree
    with pytest.raises(TypeError, match="unexpected keyword argument 'zz'"):
        tree.model_copy(update={"height": 2, "zz": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.height = 1  # type: ignore[misc]

    @model
    class Checked(Model):
        n: int

        def __post_init__(self) -> None:
            if self.n < 0:
                raise ValueError("negative")

    with pytest.raises(ValueError, match="negative"):
        Checked(n=1).model_copy(update={"n": -1})  # a __post_init__ still runs, through dataclasses.replace


@model
class Bud(Model):
    size: Annotated[int, Range(ge=1)]
    label: Annotated[str, Doc("A label")] = "x"


@model
class Twig(Model):
    buds: tuple[Bud, ...] = ()
    first: Bud | None = None


def test_issue24_a_model_validated_on_its_own_first_says_the_same_nested() -> None:
    """The edge keeps a validated class's core schema on it, for the models it is nested in."""
    assert validate(Bud, {"size": 0}, "bud", []) is None
    assert "__pydantic_core_schema__" in Bud.__dict__
    problems: list[Problem] = []
    assert validate(Twig, {"buds": [{"size": 0}, {"size": 2, "zz": 1}], "first": {"label": 3}}, "twig", problems) is None
    assert problems == [Problem("twig.buds[0].size", "0 is out of range (input should be greater than or equal to 1)"),
                        Problem("twig.buds[1].zz", "is not a key sheetsync knows (check its spelling)"),
                        Problem("twig.first.size", "is required"), Problem("twig.first.label", "3 is not text")]
    assert validate(Twig, {"buds": [{"size": 2}]}, "twig", []) == Twig(buds=(Bud(size=2),))
    assert TypeAdapter(Twig).json_schema()["$defs"]["Bud"]["properties"]["label"]["description"] == "A label"
@model
class Tally(Model):
    """A count whose ``spare`` is left out of its dump while it is 0 (a wrap serializer)."""

    counts: dict[Colour, int] = field(default_factory=dict)
    spare: int = 0

    def model_post_dump(self, data: dict[str, Any]) -> dict[str, Any]:
        if not self.spare:
            data.pop("spare", None)
        return data


@model
class Tallies(Model):
    tallies: tuple[Tally, ...] = ()


def test_issue24_model_post_dump_shapes_every_dump_at_any_depth() -> None:
    quiet, loud = Tally(counts={Colour.RED: 1}), Tally(spare=2)
    assert quiet.model_dump() == {"counts": {Colour.RED: 1}}
    assert quiet.model_dump(mode="json") == {"counts": {"red": 1}}
    assert loud.model_dump(mode="json") == {"counts": {}, "spare": 2}
    both = Tallies(tallies=(quiet, loud))
    assert both.model_dump(mode="json") == {"tallies": [{"counts": {"red": 1}}, {"counts": {}, "spare": 2}]}
    assert both.model_dump_json() == '{"tallies":[{"counts":{"red":1}},{"counts":{},"spare":2}]}'
    assert Tallies.model_validate(both.model_dump(mode="json")) == both


def test_issue24_json_dumps_write_enum_keys_as_their_values() -> None:
    dumped = Tally(counts={Colour.BLUE: 3}).model_dump(mode="json")["counts"]
    assert dumped == {"blue": 3} and type(next(iter(dumped))) is str


def test_r25_a_seeded_roller_rolls_what_randint_rolls_from_the_same_seed() -> None:
    """R25: the same seed gives the same dice.  The roller's quick path must give exactly the
    dice ``random.Random(seed).randint(1, sides)`` gives, or every seeded battle, golden
    value and forecast would change."""
    import random

    from sheetsync.core.dice import RandomRoller

    for seed in (0, 7, "battle", 2**70):
        roller, reference = RandomRoller(seed), random.Random(seed)
        for sides in [10, 6, 100, 1, 2, 1000, 3] * 300:
            assert roller.roll(sides) == reference.randint(1, sides)
