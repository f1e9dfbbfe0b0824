"""Values of the battalion rules: labels, characters, cohorts, battle state.

Every label is a :class:`StrEnum` whose value is the exact word in the sheet's dropdowns
("Knocked Out", "Melee Attack").  Every model is frozen; a phase makes new ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar, overload

from sheetsync.core.enums import StrEnum
from sheetsync.core.model import MinLen, Model, Range, model

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "Band",
    "Benefit",
    "CharacterSheet",
    "CohortSpec",
    "CohortState",
    "Combination",
    "Frozen",
    "HouseRules",
    "Memo",
    "Moment",
    "Order",
    "PathEntry",
    "PoolName",
    "POOL_NAMES",
    "State",
    "Task",
    "forget",
    "remember",
    "remembered",
]


Frozen = Model
"""Base of every value: a frozen, slotted dataclass (``@model``) on the standard library
(issue 24); unknown keys are an error.  Battle files are validated by pydantic at the
edge (:mod:`sheetsync.systems.bbn.files.loader`), over these same classes."""

_S = TypeVar("_S", bound="Memo")
_T = TypeVar("_T")


class Memo(Model):
    """A value that remembers what it works out from its fields (the battle's pools, the
    catalog's spellings), as ``functools.cached_property`` did on the pydantic models: in
    one slot beside the fields, never dumped, compared or pickled.  ``model_copy`` carries
    what was worked out to the copy, as pydantic's did (the copy's own are its own)."""

    __slots__ = ("_memo",)

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        new = super().model_copy(update=update)
        held = _memo_of(self, create=False)
        if new is not self and held:
            object.__setattr__(new, "_memo", dict(held))
        return new


def _memo_of(obj: Memo, *, create: bool = True) -> dict[str, Any]:
    try:
        memo: dict[str, Any] = obj._memo  # type: ignore[attr-defined]
    except AttributeError:
        memo = {}
        if create:
            object.__setattr__(obj, "_memo", memo)
    return memo


class remembered(Generic[_S, _T]):  # noqa: N801 - used as a decorator, as cached_property
    """A property of a :class:`Memo`, worked out on first use and then remembered."""

    def __init__(self, fn: Callable[[_S], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> remembered[_S, _T]: ...

    @overload
    def __get__(self, obj: _S, owner: type | None = None) -> _T: ...

    def __get__(self, obj: _S | None, owner: type | None = None) -> remembered[_S, _T] | _T:
        if obj is None:
            return self
        memo = _memo_of(obj)
        try:
            got: _T = memo[self.name]
        except KeyError:
            got = memo[self.name] = self.fn(obj)
        return got


def remember(obj: Memo, name: str, value: Any) -> None:
    """Give ``obj``'s :class:`remembered` property ``name`` the value it would work out."""
    _memo_of(obj)[name] = value


def forget(obj: Memo, name: str) -> None:
    """Drop what ``obj``'s :class:`remembered` property ``name`` worked out (a copy's, made
    for other fields), so it is worked out again when read."""
    _memo_of(obj, create=False).pop(name, None)


class State(StrEnum):
    """States 5.12: a member's condition."""

    ACTIVE = "Active"
    SCARED = "Scared"
    KNOCKED_OUT = "Knocked Out"
    STABILIZED = "Stabilized"
    DEAD = "Dead"


class Task(StrEnum):
    """Tasks 5.1-5.13: what a cohort may do with an action."""

    MOVE = "Move"
    MELEE = "Melee Attack"
    RANGED = "Ranged Attack"
    MYSTICAL = "Mystical Attack"
    INSPIRE = "Inspire"
    INTIMIDATE = "Intimidate"
    RESCUE = "Rescue"
    ANALYZE = "Analyze"
    HEAL = "Heal"
    HERO_MOMENT = "Hero Moment"
    TACTICAL = "Tactical Task"


class Band(StrEnum):
    """Ranges (The Battle 3): the band between two cohorts, set by the Storyteller."""

    PERSONAL = "Personal"
    DISTANCED = "Distanced"
    IN_SIGHT = "In-Sight"
    BLINDED = "Blinded"


class Moment(StrEnum):
    """Hero Moments 1.1-1.5, plus a Storyteller's custom moment (R21)."""

    SAVE_AN_ALLY = "Save an Ally"
    PUSH_FORWARD = "Push Forward"
    KILL_EM_ALL = "Kill 'Em All"
    BOOST_A_POOL = "Boost a Pool"
    SPLIT_THE_PARTY = "Split the Party"
    CUSTOM = "Custom"


class Benefit(StrEnum):
    """Inspire 5.5 benefits (R20)."""

    REROLL = "Reroll"
    REMOVE_SCARED = "Remove Scared"
    RESOLVE_BONUS = "+5 Resolve"


class PoolName(StrEnum):
    """The pools of the cohort sheet (Cohort Sheet 1.1-1.7)."""

    HEALTH = "health"
    MELEE = "melee"
    RANGED = "ranged"
    MYSTICAL = "mystical"
    DEFENSE = "defense"
    TEMPER = "temper"
    MOVEMENT = "movement"
    RESOLVE = "resolve"
    CONTROL = "control"


POOL_NAMES: tuple[str, ...] = tuple(p.value for p in PoolName)


@model
class HouseRules(Model):
    """The readings of RULINGS-bbn.md a chronicle may change (keys of R1-R37)."""

    allow_any_size: bool = False
    """R1: allow cohorts of other than 3 to 5 members."""
    ability_bonus: Literal["pooled", "per_ability"] = "pooled"
    """R2: +1 per 5 dots of all listed Abilities together, or per Ability."""
    combo_bonus: Annotated[int, Range(ge=0, le=10)] = 3
    """R5: points a Combination Discipline gives to a pool it feeds."""
    scared_loses_action: bool = True
    """R11: a Scared member gives no action."""
    damage_basis: Literal["able_members", "members", "attack_power"] = "able_members"
    """R15: what a hit's damage counts."""
    health_levels: Annotated[int, Range(ge=1, le=20)] = 7
    """R27: health levels past which aftermath damage means Torpor."""
    casualty_count: Literal["health", "damage"] = "health"
    """R31: casualty steps come from Health crossing each multiple of 10 below zero (again
    after healing), or from the total damage taken at or below zero over the battle."""
    torpor_after_aegis: bool = True
    """R35: Torpor is judged on the aftermath damage after Aegis, or before any burn."""
    heal_spends_declared: bool = False
    """R36: a Heal that would pass the maximum spends only what it needs, or all declared."""

    @classmethod
    def describe(cls) -> dict[str, tuple[str, Any, list[Any]]]:
        """``{key: (ruling text, default, choices)}`` for the House Rules sheet."""
        out: dict[str, tuple[str, Any, list[Any]]] = {}
        for name, info in cls.model_fields.items():
            choices: list[Any]
            ann = info.annotation
            if ann is bool:
                choices = [True, False]
            elif getattr(ann, "__origin__", None) is Literal:
                choices = list(getattr(ann, "__args__", ()))
            else:
                choices = []
            out[name] = (info.description or _DOCS.get(name, ""), info.default, choices)
        return out


_DOCS = {
    "allow_any_size": "R1: allow cohorts of other than 3 to 5 members",
    "ability_bonus": "R2: Ability dots pooled across listed Abilities, or floored per Ability",
    "combo_bonus": "R5: points a Combination Discipline adds to each pool it feeds",
    "scared_loses_action": "R11: a Scared member gives no action",
    "damage_basis": "R15: damage counts able members, all living members, or Attack Power",
    "health_levels": "R27: health levels; aftermath damage past them means Torpor",
    "casualty_count": "R31: casualty steps by Health crossing each -10 (again after healing), or by total damage below zero",
    "torpor_after_aegis": "R35: Torpor is judged after Aegis burns (false: on the damage before them)",
    "heal_spends_declared": "R36: a Heal spends all the temper declared, even past the maximum (false: only what it needs)",
}


@model
class Combination(Model):
    """A Combination Discipline and the Disciplines it includes (R5)."""

    name: str
    includes: tuple[str, ...] = ()


@model
class PathEntry(Model):
    """A Blood Magic path; ``offensive`` overrides the catalog's list (R6)."""

    level: Annotated[int, Range(ge=0, le=10)]
    offensive: bool | None = None


Dots = Annotated[int, Range(ge=0, le=10)]
"""Issue 26: an Ability or Discipline's dots, 0 to 10 as on the tracker (a pool built from
them is damage with ``damage_basis = "attack_power"``, and each 10 of it a casualty step)."""


@model
class CharacterSheet(Model):
    """One member's character sheet, as far as the cohort sheet needs it."""

    name: Annotated[str, MinLen(1)]
    abilities: dict[str, Dots] = field(default_factory=dict)
    merits: tuple[str, ...] = ()
    disciplines: dict[str, Dots] = field(default_factory=dict)
    combination_disciplines: tuple[Combination, ...] = ()
    blood_magic_paths: dict[str, PathEntry] = field(default_factory=dict)
    blood_magic_in_clan: bool = False
    ranged_attack: bool = False
    temper: Annotated[int, Range(ge=0)] = 0
    willpower_spent: Annotated[int, Range(ge=0)] = 0
    movement_discipline: str | None = None
    health_levels: Annotated[int, Range(ge=1, le=20)] | None = None


@model
class CohortSpec(Model):
    """A cohort as declared: who is in it, its roles, and hand-set pools for NPCs (R1)."""

    name: Annotated[str, MinLen(1)]
    side: str = "players"
    support: bool = False
    sergeant: str | None = None
    tracker: str | None = None
    reporter: str | None = None
    members: tuple[CharacterSheet, ...]
    pools: dict[PoolName, Annotated[int, Range(ge=0, le=999)]] | None = None
    """R1: hand-set pools, 0 to 999 as on the tracker (issue 26: a pool is damage with
    ``damage_basis = "attack_power"``, and each 10 of it a casualty step)."""
    aegis: dict[str, Annotated[int, Range(ge=0, le=3)]] = field(default_factory=dict)
    """R27: Aegis each member burns in the aftermath (0 to 3)."""
    lasting_rolls: dict[str, Annotated[int, Range(ge=1, le=10)]] = field(default_factory=dict)
    """R28: lasting-effect d10s typed in, by member (R25)."""

    @property
    def sergeant_name(self) -> str:
        """The Sergeant, or the first member when none is named."""
        return self.sergeant or self.members[0].name


@model
class CohortState(Model):
    """A cohort's standing between phases (Tasks 5.11.2, 5.12, R16-R25)."""

    name: str
    health: int
    temper: int
    control: int
    states: dict[str, State]
    hero_used: tuple[str, ...] = ()
    died_in_phase: dict[str, int] = field(default_factory=dict)
    reroll_tokens: int = 0
    units_moved: int = 0
    below_zero_damage: Annotated[int, Range(ge=0)] = 0
    """R31 (``casualty_count = "damage"``): damage taken at or below zero so far this
    battle.  Left out of the dumped state while 0, so battles under the default reading
    keep the same file and State shape."""

    def model_post_dump(self, data: dict[str, Any]) -> dict[str, Any]:
        """R31: the dump without ``below_zero_damage`` while it is 0 (every dump, at any
        depth: the battle file, the State and the undo snapshots keep their shape)."""
        if not self.below_zero_damage:
            data.pop("below_zero_damage", None)
        return data


@model
class Order(Model):
    """One declared order of a phase (R13).  ``roll`` is a typed d10 (R25)."""

    cohort: str
    task: Task
    target: str | None = None
    roll: Annotated[int, Range(ge=1, le=10)] | None = None
    temper: int | None = None
    member: str | None = None
    moment: Moment | None = None
    pool: PoolName | None = None
    benefit: Benefit | None = None
    ally: str | None = None
    free_task: Literal["Heal", "Rescue"] | None = None
    reroll: Annotated[int, Range(ge=1, le=10)] | None = None
    use_reroll: bool = False
    picks: tuple[int, ...] = ()
    text: str | None = None
