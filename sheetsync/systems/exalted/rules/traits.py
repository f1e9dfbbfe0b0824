"""X1-X10: a unit's derived traits, each with a breakdown saying where it came from.

Every trait is a :class:`Trait`: its value and a tuple of :class:`Entry` rows (source,
amount, rule), the way the battalion pools show who gave what.

Readings where the rulings leave room:

- Averages stay exact (as fractions) inside a formula with its own rounding sign (X6-X8)
  and are rounded down on their own elsewhere (X4, X8's mobility, X10), per the fine print.
- The headcount counts the commander and the typed member groups; special characters are
  counted among the members the Tracker types.
- A headcount of 0 or 1 is Magnitude 0.
- Hardness ``"minimum"`` takes the smallest member Hardness, never more than ⌊avg⌋.
- A solo unit (X1) has no unit ratings, Armor or Might: its commander fights alone.

Derived once (issue 23): the models are frozen, so a unit's traits are a function of its
value.  :func:`derive_traits` and :func:`headcount` remember their result for the unit
they were given, and :func:`unit_as_it_stands` and :func:`traits_as_it_stands` give the
same unit, and the same traits, for the same state, so a long tick (and a forecast's
thousands of them) derives each unit's traits once, not on every attack and check.

Every number a Tracker types has a range (:class:`Bound`, issue 26): the dots of Exalted 2e
(Attributes, Essence and Willpower 1 to 10, Abilities 0 to 10, Valor 1 to 5), the tables of
the mass rules (Drill 0 to 5 X3, Might 0 to 5 and its bonus 0 to 3 X5) and, where the rules
name no top, a bound far past any battle's need (soak and damage 30, 100,000 members a
row, Magnitude 16).  A pool, a distribution or a damage roll then never grows past a few
dozen dice, however a cell is mistyped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from sheetsync.systems.exalted.rules.models import (
    Character,
    DamageType,
    Formation,
    HouseRules,
    MemberGroup,
    Mount,
    UnitSpec,
)

__all__ = [
    "CHARACTER_RANGES",
    "HEADCOUNT_RANGE",
    "HEALTH_LEVELS_RANGE",
    "MEMBER_RANGES",
    "MOUNT_VALOR",
    "ORDER_RANGES",
    "RULE_RANGES",
    "UNIT_RANGES",
    "WEAPON_RANGES",
    "Bound",
    "Entry",
    "Memo",
    "Trait",
    "UnitTraits",
    "armor",
    "close_damage",
    "close_rating",
    "communication_failure",
    "derive_traits",
    "drill",
    "endurance",
    "hardness",
    "headcount",
    "magnitude",
    "magnitude_for_headcount",
    "might",
    "mobility",
    "morale",
    "ranged_damage",
    "ranged_rating",
    "row_minimum",
    "shield",
    "traits_as_it_stands",
    "unit_as_it_stands",
]

MOUNT_VALOR: dict[Mount, int] = {Mount.HORSE: 2, Mount.SIMHATA: 4, Mount.ELEPHANT: 3}
"""X10: default average Valor of the steeds."""

DEFAULT_RULES = HouseRules()
"""The rulings' defaults."""

_ROW_TOPS: tuple[int, ...] = (1, 10, 75, 150, 300, 650, 1250, 2500, 5000, 10000)
"""X2: the largest headcount of Magnitude rows 0 to 9."""


class Memo:
    """Values derived from frozen values, keyed on the identity of those values (issue 23).

    Each entry keeps the values of its key alive, so no other object can take one of
    their ids while the entry stands: a hit is the very same value, hence the same
    result.  (A model's dict, such as a character's Abilities, is never changed in
    place: a change makes a new model.)  Emptied when it holds :attr:`limit` entries."""

    __slots__ = ("entries", "limit")

    def __init__(self, limit: int = 4096) -> None:
        self.entries: dict[tuple[Any, ...], tuple[tuple[object, ...], Any]] = {}
        self.limit = limit

    def get(self, key: tuple[Any, ...]) -> Any:
        entry = self.entries.get(key)
        return None if entry is None else entry[1]

    def put(self, key: tuple[Any, ...], keep: tuple[object, ...], value: Any) -> Any:
        if len(self.entries) >= self.limit:
            self.entries.clear()
        self.entries[key] = (keep, value)
        return value


_HEADCOUNTS = Memo()
_TRAITS = Memo()
_BY_VALUE = Memo(512)
_NOW = Memo()


@dataclass(frozen=True, slots=True)
class Bound:
    """Issue 26: the range a typed number must be in, its name in a message, and why."""

    label: str
    low: int
    high: int
    rule: str

    def problem(self, value: Any, label: str | None = None) -> str | None:
        """What is wrong with ``value`` (``None`` when it is in range, or not a number at
        all: whether it is one is the model's to say)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, float) and not math.isfinite(value) or not self.low <= value <= self.high:
            return f"{label or self.label} {shown(value)} is out of range {self.low}–{self.high} ({self.rule})"
        return None

    def clamp(self, value: int | float) -> int | float:
        """The nearest value in range, standing in for one refused so that the rest of its
        unit is still checked (the battle is refused anyway)."""
        if isinstance(value, float) and math.isnan(value):
            return self.low
        return type(value)(min(max(value, self.low), self.high))


def shown(value: int | float) -> str:
    """A number as a message shows it: a huge one short (``1e+308``, ``a 401-digit
    number``), never its hundreds of digits."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    if abs(value) < 10**15:
        return str(value)
    try:
        return f"{float(value):g}"
    except OverflowError:
        return f"a {len(str(abs(value)))}-digit number"


_ATTRIBUTE = "an Attribute, 1 to 10 dots in Exalted 2e; E8, X28"
_ABILITY = "an Ability, 0 to 10 dots in Exalted 2e; X28"
_SOAK = "E9: no armour soaks more"

CHARACTER_RANGES: dict[str, Bound] = {
    "dexterity": Bound("Dexterity", 1, 10, _ATTRIBUTE),
    "strength": Bound("Strength", 1, 10, _ATTRIBUTE),
    "stamina": Bound("Stamina", 1, 10, _ATTRIBUTE),
    "charisma": Bound("Charisma", 1, 10, _ATTRIBUTE),
    "wits": Bound("Wits", 1, 10, _ATTRIBUTE),
    "essence": Bound("Essence", 1, 10, "1 to 10 in Exalted 2e; E9"),
    "valor": Bound("Valor", 1, 5, "a Virtue, 1 to 5 dots in Exalted 2e; X10"),
    "willpower": Bound("Willpower", 1, 10, "1 to 10 in Exalted 2e; X40"),
    "shield_dv": Bound("Shield DV", 0, 10, "X9"),
    "armor_soak": Bound("Armour soak", 0, 30, _SOAK),
    "hardness": Bound("Hardness", 0, 30, _SOAK),
}
"""Issue 26: a character's typed traits (the Characters sheet, ``characters:``)."""
ABILITY_RANGE = Bound("Ability", 0, 10, _ABILITY)
"""Issue 26: each of a character's Abilities (labelled with its own name)."""
WOUND_RANGE = Bound("wound penalty", -4, 0, "E10")
HEALTH_LEVELS_RANGE = Bound("health levels", 1, 40, "E10: 7, and 3 a purchase of Ox-Body, 10 at most")
"""Issue 26: a track's levels, Incapacitated included."""
WEAPON_RANGES: dict[str, Bound] = {
    "accuracy": Bound("Accuracy", -10, 10, "E7"),
    "damage": Bound("damage", 0, 30, "E7"),
    "defense": Bound("Defense", -10, 10, "E8"),
    "speed": Bound("Speed", 0, 10, "E11"),
}
UNIT_RANGES: dict[str, Bound] = {
    "drill": Bound("Drill", 0, 5, "X3"),
    "might": Bound("Might", 0, 5, "X5: the table tops at 5"),
    "might_bonus": Bound("Might bonus", 0, 3, "X5: the equipment table tops at +3"),
    "avg_dexterity": Bound("avg Dexterity", 0, 10, _ATTRIBUTE),
    "avg_strength": Bound("avg Strength", 0, 10, _ATTRIBUTE),
    "avg_stamina": Bound("avg Stamina", 0, 10, _ATTRIBUTE),
    "avg_valor": Bound("avg Valor", 0, 5, "a Virtue, at most 5; X10"),
    "close_ability": Bound("close Ability", 0, 10, _ABILITY),
    "ranged_ability": Bound("ranged Ability", 0, 10, _ABILITY),
    "close_accuracy": Bound("close Accuracy", -10, 10, "E7, X6"),
    "ranged_accuracy": Bound("ranged Accuracy", -10, 10, "E7, X6"),
    "close_damage": Bound("close damage", 0, 30, "E7, X7"),
    "ranged_damage": Bound("ranged damage", 0, 30, "E7, X7"),
    "avg_lethal_soak": Bound("avg lethal soak", 0, 35, "X8: natural 5 and armour 30 at most"),
    "avg_mobility": Bound("avg mobility", 0, 10, "X8"),
    "avg_fatigue": Bound("avg fatigue", 0, 10, "X4"),
    "hardness_avg": Bound("avg Hardness", 0, 30, "X8"),
    "hardness_min": Bound("least Hardness", 0, 30, "X8"),
    "steed_valor": Bound("steed Valor", 0, 5, "X10"),
    "ammunition": Bound("Ammunition", 0, 999, "X31: 3 a volley"),
}
"""Issue 26: a unit's typed numbers (the Units sheet, ``units:``); its cover, a percentage,
is bounded 0 to 100 by the model (X16)."""
MEMBER_RANGES: dict[str, Bound] = {
    "count": Bound("count", 0, 100000, "X2: a Units row holds at most 100,000 of a kind"),
    "health_levels": HEALTH_LEVELS_RANGE,
    "weight": Bound("weight", 0, 14, "X2: ⌈40 health levels / 3⌉ at most"),
}
HEADCOUNT_RANGE = Bound("headcount", 1, 1280000, "X2: the top of Magnitude 16")
"""Issue 26: a unit's whole headcount (Magnitude sets the least damage dice, X33)."""
ORDER_RANGES: dict[str, Bound] = {"tick": Bound("long tick", 0, 1000, "E5")}
RULE_RANGES: dict[str, Bound] = {
    "inactive_dv": Bound("inactive DV", 0, 10, "E11"),
    "speed": Bound("Speed", 0, 10, "E11"),
    "dv": Bound("DV penalty", 0, 10, "E11"),
}
"""Issue 26: the house rules' numbers (``speed`` and ``dv`` are per action)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of a breakdown: what gave ``amount`` to the trait, and the rule."""

    source: str
    amount: int | float
    rule: str


@dataclass(frozen=True, slots=True)
class Trait:
    """A derived trait and its breakdown."""

    name: str
    value: int
    breakdown: tuple[Entry, ...]


def _q(x: float | int) -> Fraction:
    """A typed average as an exact fraction (``2.5`` is 5/2, not a binary float)."""
    return Fraction(str(x)) if isinstance(x, float) else Fraction(x)


def _num(x: Fraction) -> int | float:
    return int(x) if x.denominator == 1 else float(x)


def _ceil(x: Fraction) -> int:
    return int(-((-x.numerator) // x.denominator))


def _floor(x: Fraction) -> int:
    return int(x.numerator // x.denominator)


def magnitude_for_headcount(count: int) -> int:
    """X2: the Magnitude row of a headcount: 1 → 0, 2-10 → 1, 11-75 → 2, ... 5,001-10,000 → 9;
    each row past 9 ends at twice the previous row's top (row m ends at 10,000 × 2^(m−9))."""
    for row, top in enumerate(_ROW_TOPS):
        if count <= top:
            return row
    row, top = 9, _ROW_TOPS[-1]
    while count > top:
        row, top = row + 1, top * 2
    return row


def row_minimum(row: int) -> int:
    """X2: the smallest headcount of a Magnitude row (after a loss or a rally the headcount
    is this)."""
    if row <= 0:
        return 1
    if row < len(_ROW_TOPS):
        return _ROW_TOPS[row - 1] + 1
    return (10000 << (row - 10)) + 1


def _weight(group: MemberGroup, rules: HouseRules) -> Fraction:
    if group.weight is not None:
        return _q(group.weight)
    exact = Fraction(group.health_levels, 3)
    return exact if rules.heroic_weight == "exact" else Fraction(_ceil(exact))


def headcount(unit: UnitSpec, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X2: the headcount: the commander 1, each extra 1, each other member ⌈health
    levels/3⌉ (a heroic mortal 3) or its typed weight; with ``heroic_weight = "exact"``
    HL/3 each, the total rounded up."""
    key = (id(unit), id(rules))
    got: Trait | None = _HEADCOUNTS.get(key)
    if got is None:
        got = _HEADCOUNTS.put(key, (unit, rules), _headcount(unit, rules))
    return got


def _headcount(unit: UnitSpec, rules: HouseRules) -> Trait:
    rows = [Entry(f"commander {unit.commander.name}", 1, "X2")]
    total = Fraction(1)
    for g in unit.members:
        w = _weight(g, rules)
        how = f"weight {_num(w)}" if g.weight is not None else f"{g.health_levels} health levels → {_num(w)}"
        rows.append(Entry(f"{g.count} × {g.kind} ({how})", _num(w * g.count), "X2"))
        total += w * g.count
    value = _ceil(total)
    if total.denominator != 1:
        rows.append(Entry(f"{_num(total)} rounded up", value - _num(total), "X2"))
    return Trait("Headcount", value, tuple(rows))


def magnitude(unit: UnitSpec, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X1, X2: a solo unit is Magnitude 0; otherwise the row of the headcount."""
    if unit.solo:
        return Trait("Magnitude", 0, (Entry("solo unit", 0, "X1"),))
    count = headcount(unit, rules)
    value = magnitude_for_headcount(count.value)
    low, high = row_minimum(value), (_ROW_TOPS[value] if value < 10 else 10000 << (value - 9))
    return Trait("Magnitude", value, count.breakdown + (
        Entry(f"headcount {count.value} is row {value} ({low}-{high})", value, "X2"),))


def communication_failure(unit: UnitSpec, mag: int) -> bool:
    """X11: Magnitude 3 or more with fewer relays than Magnitude."""
    return not unit.solo and mag >= 3 and unit.relays < mag


def drill(unit: UnitSpec, mag: int) -> Trait:
    """X3, X11: effective Drill = typed Drill, −2 in communication failure, floor 0; a solo
    unit's Drill is 0 (X1)."""
    if unit.solo:
        return Trait("Drill", 0, (Entry("solo unit", 0, "X1"),))
    rows = [Entry("typed Drill", unit.drill, "X3")]
    value = unit.drill
    if communication_failure(unit, mag):
        rows.append(Entry(f"communication failure ({unit.relays} relays, Magnitude {mag})", -2, "X11"))
        value -= 2
    if value < 0:
        rows.append(Entry("floor 0", -value, "X3"))
        value = 0
    return Trait("Drill", value, tuple(rows))


def endurance(unit: UnitSpec, eff_drill: int, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X4: Drill (effective, X3) + ⌊avg member Stamina⌋ (``endurance_stamina``), or for a
    solo unit Stamina + Resistance; − ⌊avg armour fatigue⌋ if unrested; floor 0."""
    c = unit.commander
    if unit.solo:
        rows = [Entry("Stamina", c.stamina, "X4"), Entry("Resistance", c.ability("Resistance"), "X4")]
    else:
        rows = [Entry("Drill", eff_drill, "X4")]
        if rules.endurance_stamina == "commander":
            rows.append(Entry(f"commander {c.name}'s Stamina", c.stamina, "X4"))
        else:
            rows.append(Entry(f"avg Stamina {_num(_q(unit.avg_stamina))}", _floor(_q(unit.avg_stamina)), "X4"))
    if not unit.rested and unit.avg_fatigue:
        rows.append(Entry(f"unrested: avg fatigue {_num(_q(unit.avg_fatigue))}", -_floor(_q(unit.avg_fatigue)), "X4"))
    total = sum(int(e.amount) for e in rows)
    if total < 0:
        rows.append(Entry("floor 0", -total, "X4"))
        total = 0
    return Trait("Endurance", total, tuple(rows))


def might(unit: UnitSpec) -> Trait:
    """X5: the table value plus the best equipment bonus."""
    if unit.solo:
        return Trait("Might", 0, (Entry("solo unit", 0, "X1"),))
    return Trait("Might", unit.might + unit.might_bonus,
                 (Entry("Might table", unit.might, "X5"), Entry("best equipment bonus", unit.might_bonus, "X5")))


def _rating(name: str, has: bool, dex: float, ability: float, accuracy: float, unit: UnitSpec,
            rules: HouseRules) -> Trait:
    if unit.solo:
        return Trait(name, 0, (Entry("solo unit: no unit bonus", 0, "X1"),))
    if not has:
        return Trait(name, 0, (Entry("no such weapons", 0, "X6"),))
    acc = _q(accuracy)
    rows = [Entry("avg Dexterity", _num(_q(dex)), "X6"), Entry("avg Ability", _num(_q(ability)), "X6")]
    if unit.mixed_weapons and rules.mixed_accuracy == "none":
        rows.append(Entry("mixed weapons: no Accuracy", 0, "X6"))
        acc = Fraction(0)
    else:
        rows.append(Entry("weapon Accuracy" + (" (average)" if unit.mixed_weapons else ""), _num(acc), "X6"))
    total = _q(dex) + _q(ability) + acc
    value = max(0, _floor(total / 2))
    rows.append(Entry(f"halved, rounded down ({_num(total)} / 2)", value - _num(total), "X6"))
    return Trait(name, value, tuple(rows))


def close_rating(unit: UnitSpec, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X6: Close Rating = ⌊(avg Dex + avg close Ability + Accuracy)/2⌋; 0 without close weapons."""
    return _rating("Close Rating", unit.close_weapons, unit.avg_dexterity, unit.close_ability,
                   unit.close_accuracy, unit, rules)


def ranged_rating(unit: UnitSpec, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X6: Ranged Rating = ⌊(avg Dex + avg ranged Ability + Accuracy)/2⌋; 0 without ranged weapons."""
    return _rating("Ranged Rating", unit.ranged_weapons, unit.avg_dexterity, unit.ranged_ability,
                   unit.ranged_accuracy, unit, rules)


def _damage(name: str, has: bool, strength: bool, weapon: float, unit: UnitSpec) -> Trait:
    if unit.solo:
        return Trait(name, 0, (Entry("solo unit: no unit bonus", 0, "X1"),))
    if not has:
        return Trait(name, 0, (Entry("no such weapons", 0, "X7"),))
    rows = [Entry("avg Strength" if strength else "Strength does not add (X7 ranged_strength)",
                  _num(_q(unit.avg_strength)) if strength else 0, "X7"),
            Entry("avg weapon damage", _num(_q(weapon)), "X7")]
    total = (_q(unit.avg_strength) if strength else Fraction(0)) + _q(weapon)
    value = _ceil(total / 3)
    rows.append(Entry(f"divided by 3, rounded up ({_num(total)} / 3)", value - _num(total), "X7"))
    return Trait(name, value, tuple(rows))


def close_damage(unit: UnitSpec) -> Trait:
    """X7: Close Damage Rating = ⌈(avg Strength + avg close weapon damage)/3⌉."""
    return _damage("Close Damage", unit.close_weapons, True, unit.close_damage, unit)


def ranged_damage(unit: UnitSpec, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X7: Ranged Damage Rating = ⌈(avg Strength where it adds + avg weapon damage)/3⌉;
    Strength adds per ``ranged_strength`` (Archery no, Thrown yes)."""
    return _damage("Ranged Damage", unit.ranged_weapons, rules.ranged_strength(unit.ranged_kind),
                   unit.ranged_damage, unit)


def armor(unit: UnitSpec) -> Trait:
    """X8: Armor = ⌈avg full lethal soak (natural + armour)/3⌉."""
    if unit.solo:
        return Trait("Armor", 0, (Entry("solo unit: its own soak", 0, "X1"),))
    soak = _q(unit.avg_lethal_soak)
    value = _ceil(soak / 3)
    return Trait("Armor", value, (Entry("avg full lethal soak", _num(soak), "X8"),
                                  Entry(f"divided by 3, rounded up ({_num(soak)} / 3)", value - _num(soak), "X8")))


def mobility(unit: UnitSpec) -> Trait:
    """X8: the mobility penalty is the members' average, rounded down."""
    return Trait("Mobility", _floor(_q(unit.avg_mobility)),
                 (Entry("avg mobility penalty, rounded down", _floor(_q(unit.avg_mobility)), "X8"),))


def hardness(unit: UnitSpec, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X8: Hardness = ⌊avg⌋ if every member has that much; else 0 (``hardness_fallback =
    "zero"``) or the smallest member's (``"minimum"``)."""
    avg = _floor(_q(unit.hardness_avg))
    if unit.hardness_min >= avg:
        return Trait("Hardness", avg, (Entry("avg Hardness, every member has it", avg, "X8"),))
    if rules.hardness_fallback == "minimum":
        return Trait("Hardness", unit.hardness_min,
                     (Entry(f"not every member has {avg}: the smallest", unit.hardness_min, "X8"),))
    return Trait("Hardness", 0, (Entry(f"not every member has {avg}", 0, "X8"),))


def shield(unit: UnitSpec) -> Trait:
    """X9: the commander's shield DV counts only if most members carry one."""
    bonus = unit.commander.shield_dv if unit.shields else 0
    why = "most members carry shields" if unit.shields else "most members carry no shield"
    return Trait("Shield", bonus, (Entry(f"commander's shield; {why}", bonus, "X9"),))


def morale(unit: UnitSpec) -> Trait:
    """X10: Morale = the lower of ⌊avg member Valor⌋ and the commander's Valor, and if
    mounted also ⌊avg steed Valor⌋ (default horse 2, simhata 4, elephant 3)."""
    c = unit.commander
    rows = [Entry("avg member Valor", _floor(_q(unit.avg_valor)), "X10"), Entry(f"commander {c.name}'s Valor", c.valor, "X10")]
    if unit.mount is not Mount.NONE:
        steed = _floor(_q(unit.steed_valor)) if unit.steed_valor is not None else MOUNT_VALOR[unit.mount]
        rows.append(Entry(f"avg {unit.mount.value} Valor", steed, "X10"))
    value = min(int(e.amount) for e in rows)
    return Trait("Morale", value, tuple(rows))


@dataclass(frozen=True, slots=True)
class UnitTraits:
    """X1-X10: every derived trait of a unit."""

    name: str
    headcount: Trait
    magnitude: Trait
    drill: Trait
    endurance: Trait
    might: Trait
    close_rating: Trait
    ranged_rating: Trait
    close_damage: Trait
    close_damage_type: DamageType
    ranged_damage: Trait
    ranged_damage_type: DamageType
    armor: Trait
    mobility: Trait
    hardness: Trait
    shield: Trait
    morale: Trait
    perfect_morale: bool
    communication_failure: bool


def derive_traits(unit: UnitSpec, rules: HouseRules = DEFAULT_RULES) -> UnitTraits:
    """X1-X11: a unit's derived traits with their breakdowns (derived once for a unit, and
    once for equal units: a tracker step loads the same units afresh from its State, issue 23)."""
    key = (id(unit), id(rules))
    got: UnitTraits | None = _TRAITS.get(key)
    if got is None:
        same = (unit.model_dump_json(), rules.model_dump_json())  # the traits depend on these values alone
        got = _BY_VALUE.get(same)
        if got is None:
            got = _BY_VALUE.put(same, (), _derive_traits(unit, rules))
        got = _TRAITS.put(key, (unit, rules), got)
    return got


def _derive_traits(unit: UnitSpec, rules: HouseRules) -> UnitTraits:
    mag = magnitude(unit, rules)
    dr = drill(unit, mag.value)
    return UnitTraits(
        name=unit.name,
        headcount=headcount(unit, rules),
        magnitude=mag,
        drill=dr,
        endurance=endurance(unit, dr.value, rules),
        might=might(unit),
        close_rating=close_rating(unit, rules),
        ranged_rating=ranged_rating(unit, rules),
        close_damage=close_damage(unit),
        close_damage_type=unit.close_damage_type,
        ranged_damage=ranged_damage(unit, rules),
        ranged_damage_type=unit.ranged_damage_type,
        armor=armor(unit),
        mobility=mobility(unit),
        hardness=hardness(unit, rules),
        shield=shield(unit),
        morale=morale(unit),
        perfect_morale=unit.perfect_morale,
        communication_failure=communication_failure(unit, mag.value),
    )



def unit_as_it_stands(typed: UnitSpec, commander: Character, formation: Formation, *, solo: bool, relays: int,
                      heroes: int, sorcerers: int, headcount: int | None) -> UnitSpec:
    """X2, X11, X23, X24, X34: the unit as typed, with its current commander, formation,
    special characters, solo state and (when it changed) headcount: the same value for the
    same inputs, so its traits are derived once (issue 23)."""
    key = (id(typed), id(commander), formation, solo, relays, heroes, sorcerers, headcount)
    got: UnitSpec | None = _NOW.get(key)
    if got is None:
        more: dict[str, Any] = {}
        if headcount is not None:  # X2, X11, X23, X24: the unit as it is now, not as typed
            more["members"] = (MemberGroup(kind="Member", count=max(0, headcount - 1), weight=1),)
        got = _NOW.put(key, (typed, commander), typed.model_copy(update={
            "commander": commander, "formation": formation, "solo": solo, "relays": relays, "heroes": heroes,
            "sorcerers": sorcerers, **more}))
    return got


def traits_as_it_stands(unit: UnitSpec, rules: HouseRules, magnitude: int) -> UnitTraits:
    """X1-X11 of a unit at its current Magnitude, which decides communication failure and
    so the effective Drill (X3, X11), also where a split left a headcount whose row is
    above it (X50)."""
    t = derive_traits(unit, rules)
    if unit.solo or t.magnitude.value == magnitude:
        return t
    key = (id(unit), id(rules), magnitude)
    got: UnitTraits | None = _NOW.get(key)
    if got is None:
        got = _NOW.put(key, (unit, rules), replace(
            t, magnitude=Trait("Magnitude", magnitude, (Entry("Magnitude now", magnitude, "X2, X50"),)),
            drill=drill(unit, magnitude), communication_failure=communication_failure(unit, magnitude)))
    return got
