"""Values of Exalted 2e mass combat (RULINGS-exalted.md): house rules, characters, their
weapons, and a unit as the Tracker types it.  Every model is frozen (DESIGN convention 4)
and every label is a :class:`StrEnum` holding the sheet's word."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from sheetsync.core.enums import StrEnum
from sheetsync.core.model import MinLen, Model, Range, model

__all__ = [
    "DamageType",
    "Formation",
    "Frozen",
    "HouseRules",
    "MemberGroup",
    "Mount",
    "RangedKind",
    "Character",
    "UnitSpec",
    "Weapon",
]


class Frozen(Model):
    """Base of every value: a frozen, slotted dataclass on the standard library (issue 24),
    unknown keys an error; pydantic validates it only at the battle-file edge, through a
    ``TypeAdapter`` built on first use (issue 12).  Subclasses carry ``@model``."""

    __slots__ = ()


class DamageType(StrEnum):
    """E9: the three kinds of damage."""

    BASHING = "Bashing"
    LETHAL = "Lethal"
    AGGRAVATED = "Aggravated"


class Formation(StrEnum):
    """X13: a unit's formation."""

    UNORDERED = "Unordered"
    SKIRMISH = "Skirmish"
    RELAXED = "Relaxed"
    CLOSE = "Close"


class Mount(StrEnum):
    """X10, X15: what a unit rides."""

    NONE = "None"
    HORSE = "Horse"
    SIMHATA = "Simhata"
    ELEPHANT = "Elephant"


class RangedKind(StrEnum):
    """X7: the Ability of a ranged weapon, which decides whether Strength adds to damage."""

    ARCHERY = "Archery"
    THROWN = "Thrown"


@model
class HouseRules(Frozen):
    """The house-rule keys of RULINGS-exalted.md this engine reads, with their defaults."""

    extras_double_tens: bool = True
    """E1: an extra's 10 counts twice (false: once)."""
    heroic_weight: Literal["ceil", "exact"] = "ceil"
    """X2: each member weighs ⌈health levels/3⌉, or HL/3 summed and the total rounded up."""
    endurance_stamina: Literal["members", "commander"] = "members"
    """X4: Endurance takes the members' average Stamina, or the commander's."""
    mixed_accuracy: Literal["average", "none"] = "average"
    """X6: with mixed weapons, the ratings take the average Accuracy, or none."""
    ranged_strength_archery: bool = False
    """X7, X33: Strength adds to Archery damage."""
    ranged_strength_thrown: bool = True
    """X7, X33: Strength adds to Thrown damage."""
    hardness_fallback: Literal["zero", "minimum"] = "zero"
    """X8: Hardness when not every member has the average: 0, or the smallest."""
    dv_round: Literal["essence", "up"] = "essence"
    """E8: DVs round up at Essence 2+ and down at Essence 1, or always up."""
    close_doubles_parry: bool = False
    """X14: Close formation does not double X29's Parry bonus."""
    commander_armor: bool = False
    """X29: the commander's own armour soak is ignored (the unit's Armor stands for it)."""
    drill_loss_unorders: bool = True
    """X13: a unit whose effective Drill falls below its formation's need becomes Unordered."""
    mount_formation_multiplier: bool = False
    """X15: a mount's yards hold in any formation (true: scaled by the formation's multiplier / 100)."""
    onslaught: bool = True
    """E5: −1 DV per attack suffered since the unit's last action."""
    same_tick: Literal["simultaneous", "sheet_order"] = "simultaneous"
    """E6: a tick's orders roll against the start-of-tick state, or each applies before the next."""
    inactive_dv: int = 0
    """E11: an Inactive unit's DV."""
    speed: dict[str, int] = field(default_factory=dict)
    """E11 (``speed.X``): an action's Speed, overriding the default table."""
    dv: dict[str, int] = field(default_factory=dict)
    """E11 (``dv.X``): an action's DV penalty (a positive number), overriding the default table."""
    rout_dice: Literal["penalty", "bonus"] = "penalty"
    """X35: the rout pool is Morale − (Magnitude − Drill), or Morale + (Magnitude − Drill)."""
    mob_rule: bool = True
    """X39: a leaderless unit fights on under Mob Rule (false: it disbands)."""
    rally_pool: bool = True
    """X26: each dot lost feeds one rally for numbers."""

    def double_tens(self, roller: Character) -> bool:
        """E1 (``extras_double_tens``): whether a 10 on ``roller``'s pool counts twice: always
        for a character who is not an extra, and for an extra unless the key is false.  (A
        damage roll counts a 10 once whoever rolls it.)"""
        return self.extras_double_tens or not roller.extra

    def ranged_strength(self, kind: RangedKind) -> bool:
        """X7: whether Strength adds to this kind of ranged weapon's damage."""
        return self.ranged_strength_thrown if kind is RangedKind.THROWN else self.ranged_strength_archery


@model
class Weapon(Frozen):
    """E7, E8: a weapon's Accuracy, damage and type, Defense and Speed, and its Ability."""

    name: str = "Unarmed"
    ability: str = "Melee"
    accuracy: int = 0
    damage: int = 0
    damage_type: DamageType = DamageType.BASHING
    defense: int = 0
    speed: Annotated[int, Range(ge=0)] = 5
    ranged: bool = False


DEFAULT_TRACK: tuple[int, ...] = (0, -1, -1, -2, -2, -4)
"""E10: the default health track's wound penalties before Incapacitated (7 levels)."""
EXTRA_TRACK: tuple[int, ...] = (-1, -3)
"""E10: an extra's track before Incapacitated (3 levels)."""


@model
class Character(Frozen):
    """A commander, special character or named member: the traits the mass rules use."""

    name: Annotated[str, MinLen(1)]
    dexterity: Annotated[int, Range(ge=0)] = 2
    strength: Annotated[int, Range(ge=0)] = 2
    stamina: Annotated[int, Range(ge=0)] = 2
    charisma: Annotated[int, Range(ge=0)] = 2
    wits: Annotated[int, Range(ge=0)] = 2
    essence: Annotated[int, Range(ge=0)] = 1
    valor: Annotated[int, Range(ge=0)] = 1
    willpower: Annotated[int, Range(ge=0)] = 5
    abilities: dict[str, int] = field(default_factory=dict)
    extra: bool = False
    mortal: bool = True
    """X40: a mortal survivor checks for infection."""
    health_track: tuple[int, ...] | None = None
    """E10: a typed track (the penalties before Incapacitated) overrides the default."""
    close_weapon: Weapon = Weapon()
    ranged_weapon: Weapon | None = None
    shield_dv: Annotated[int, Range(ge=0)] = 0
    armor_soak: Annotated[int, Range(ge=0)] = 0
    """E9: the armour's lethal (and bashing) soak, ignored per X29 ``commander_armor``."""
    hardness: Annotated[int, Range(ge=0)] = 0

    def ability(self, name: str) -> int:
        """A typed Ability, 0 when not typed."""
        return self.abilities.get(name, 0)

    @property
    def track(self) -> tuple[int, ...]:
        """E10: the wound penalties of the levels before Incapacitated."""
        if self.health_track is not None:
            return self.health_track
        return EXTRA_TRACK if self.extra else DEFAULT_TRACK

    @property
    def health_levels(self) -> int:
        """E10: the number of levels, Incapacitated included (7 by default, 3 for an extra)."""
        return len(self.track) + 1


@model
class MemberGroup(Frozen):
    """X2: members of one kind and their count: ``health_levels`` (3 for extras, 7 for
    heroic mortals) or a typed ``weight`` per member."""

    kind: str = "Extra"
    count: Annotated[int, Range(ge=0)]
    health_levels: Annotated[int, Range(ge=1)] = 3
    weight: Annotated[float | None, Range(gt=0)] = None


@model
class UnitSpec(Frozen):
    """A unit as the Tracker types it (RULINGS-exalted.md "What the Tracker types").

    Averages are over the members; they may be fractions (``2.5``)."""

    name: Annotated[str, MinLen(1)]
    side: str = ""
    commander: Character
    solo: bool = False
    members: tuple[MemberGroup, ...] = ()
    drill: Annotated[int, Range(ge=0, le=5)] = 0
    might: Annotated[int, Range(ge=0)] = 0
    might_bonus: Annotated[int, Range(ge=0)] = 0
    avg_dexterity: Annotated[float, Range(ge=0)] = 2
    avg_strength: Annotated[float, Range(ge=0)] = 2
    avg_stamina: Annotated[float, Range(ge=0)] = 2
    avg_valor: Annotated[float, Range(ge=0)] = 1
    close_weapons: bool = True
    close_ability: Annotated[float, Range(ge=0)] = 0
    close_accuracy: float = 0
    close_damage: Annotated[float, Range(ge=0)] = 0
    close_damage_type: DamageType = DamageType.LETHAL
    ranged_weapons: bool = False
    ranged_kind: RangedKind = RangedKind.ARCHERY
    ranged_ability: Annotated[float, Range(ge=0)] = 0
    ranged_accuracy: float = 0
    ranged_damage: Annotated[float, Range(ge=0)] = 0
    ranged_damage_type: DamageType = DamageType.LETHAL
    mixed_weapons: bool = False
    """X6: members do not all carry the same weapon."""
    avg_lethal_soak: Annotated[float, Range(ge=0)] = 0
    """X8: the members' full lethal soak (natural + armour), averaged."""
    avg_mobility: Annotated[float, Range(ge=0)] = 0
    avg_fatigue: Annotated[float, Range(ge=0)] = 0
    hardness_avg: Annotated[float, Range(ge=0)] = 0
    hardness_min: Annotated[int, Range(ge=0)] = 0
    shields: bool = False
    """X9: most members carry a shield."""
    mount: Mount = Mount.NONE
    steed_valor: Annotated[float | None, Range(ge=0)] = None
    perfect_morale: bool = False
    rested: bool = True
    formation: Formation = Formation.RELAXED
    relays: Annotated[int, Range(ge=0)] = 0
    heroes: Annotated[int, Range(ge=0)] = 0
    sorcerers: Annotated[int, Range(ge=0)] = 0
