"""X28-X34 (with E7-E10): one unit's attack on another, planned, priced and resolved.

:func:`plan_attack` works out every number known before the roll (the pool, the successes
added after it, the external penalties, the DV, soak, the damage minimum); :func:`attack_odds`
gives the exact chance of a hit and the expected levels of damage from the plan, and
:func:`resolve_attack` rolls it (or takes the typed dice) and puts the levels on the
defender's track, cycling into Magnitude loss (:func:`apply_levels`).

Readings where the rulings leave room:

- X30 compares the attacker's and defender's current Magnitudes; a solo unit is Magnitude 0.
- X33: the damage type is the unit's weapon type (X7), a solo unit's own weapon's.
- E9, X29: the unit's Hardness (X8) stands against every damage type, and a defender with
  any Hardness lowers the damage minimum to 1.
- X14 effects on DV (shield and cover doubling, Skirmish's +3 against ranged) apply to
  complementary units only; a solo unit keeps its own shield and cover once.
- X34: a solo defender marks levels on its own track (at most its health levels) and
  loses no Magnitude.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from sheetsync.core.dice import Roller
from sheetsync.core.enums import StrEnum
from sheetsync.core.errors import InputError, Problem
from sheetsync.systems.exalted.rules.dice import (
    PoolRoll,
    TypedDice,
    roll_pool,
    success_counts,
)
from sheetsync.systems.exalted.rules.formations import (
    COVER_DV,
    cover_dv,
    magnitude_multiplier,
    shield_cover_factor,
)
from sheetsync.systems.exalted.rules.models import (
    Character,
    DamageType,
    Formation,
    HouseRules,
    RangedKind,
    UnitSpec,
    Weapon,
)
from sheetsync.systems.exalted.rules.traits import (
    DEFAULT_RULES,
    Entry,
    Memo,
    Trait,
    UnitTraits,
    derive_traits,
)

__all__ = [
    "COVER_DV",
    "AttackEvent",
    "AttackKind",
    "AttackOdds",
    "AttackPlan",
    "Loss",
    "apply_levels",
    "attack_odds",
    "attack_pool",
    "bonus_successes",
    "called_shot_penalty",
    "cover_dv",
    "damage_dice",
    "dodge_dv",
    "magnitude_difference",
    "parry_dv",
    "plan_attack",
    "resolve_attack",
]

_PLANS = Memo()
"""Issue 23: the plans worked out, by the identity of their units (:class:`Memo`)."""


class AttackKind(StrEnum):
    """X28: close or ranged."""

    CLOSE = "Close"
    RANGED = "Ranged"


def _half(x: int, essence: int, rules: HouseRules) -> int:
    """E8: halve, rounding up at Essence 2+ (or always with ``dv_round = "up"``), down at 1."""
    return -(-x // 2) if rules.dv_round == "up" or essence >= 2 else x // 2


def parry_dv(c: Character, rules: HouseRules = DEFAULT_RULES) -> int:
    """E8: Parry DV = (Dex + the close weapon's Ability + its Defense)/2, rounded per Essence."""
    w = c.close_weapon
    return _half(c.dexterity + c.ability(w.ability) + w.defense, c.essence, rules)


def dodge_dv(c: Character, rules: HouseRules = DEFAULT_RULES) -> int:
    """E8: Dodge DV = (Dex + Dodge + Essence)/2, rounded per Essence."""
    return _half(c.dexterity + c.ability("Dodge") + c.essence, c.essence, rules)


def attack_pool(c: Character, weapon: Weapon, *, solo: bool = False) -> Trait:
    """X28: the commander's Dex + min(Ability, War) + Accuracy (War caps every unit-action
    pool); a solo unit's pool is Dex + Ability + Accuracy (fine print, X28)."""
    ability = c.ability(weapon.ability)
    rows = [Entry("Dexterity", c.dexterity, "X28")]
    if solo:
        rows.append(Entry(weapon.ability, ability, "X28"))
    else:
        war = c.ability("War")
        used = min(ability, war)
        note = f"{weapon.ability} {ability}, capped by War {war}" if ability > war else f"{weapon.ability} {ability}"
        rows.append(Entry(note, used, "X28"))
    rows.append(Entry(f"{weapon.name} Accuracy", weapon.accuracy, "X28"))
    return Trait("Pool", sum(int(e.amount) for e in rows), tuple(rows))


def bonus_successes(rating: int, war: int, might: int, *, doubled: bool = False) -> Trait:
    """X28: after the roll add min(Rating, War) successes, or min(2 × Close Rating, 2 × War)
    for a close attack in Close formation (X14), then the unit's Might."""
    factor = 2 if doubled else 1
    used = min(rating * factor, war * factor)
    how = f"Rating {rating}, War {war}" + (", both doubled in Close formation (X14)" if doubled else "")
    rows = (Entry(f"min({how})", used, "X28"), Entry("Might", might, "X28"))
    return Trait("Bonus successes", used + might, rows)


def magnitude_difference(att_mag: int, def_mag: int, kind: AttackKind, att_formation: Formation,
                         def_formation: Formation) -> Trait:
    """X30, X14: Δ = the attacker's Magnitude (×2 with a ranged attack on a Close unit or a
    close attack on a Skirmish unit, ×3 for that close attack from Close formation) − the
    defender's, capped at ±3: positive adds successes, negative is an external penalty."""
    mult = magnitude_multiplier(kind is AttackKind.RANGED, att_formation, def_formation)
    delta = att_mag * mult - def_mag
    value = max(-3, min(3, delta))
    rows = [Entry(f"attacker's Magnitude {att_mag}" + (f" × {mult} (X14)" if mult > 1 else ""), att_mag * mult, "X30"),
            Entry("defender's Magnitude", -def_mag, "X30")]
    if value != delta:
        rows.append(Entry("capped at ±3", value - delta, "X30"))
    return Trait("Magnitude difference", value, tuple(rows))


def called_shot_penalty(drill: int, magnitude: int, *, unordered: bool, sorcerer: bool = False) -> Trait:
    """X32: a called shot at a commander or special character takes −⌈X/2⌉ external, X the
    lower of the target unit's Drill and Magnitude if it is Unordered, else the higher; the
    Magnitude is doubled first for a sorcerer (fine print, X32)."""
    mag = magnitude * 2 if sorcerer else magnitude
    x = min(drill, mag) if unordered else max(drill, mag)
    value = -(-x // 2)
    how = "lower" if unordered else "higher"
    return Trait("Called shot", value, (Entry(f"half the {how} of Drill {drill} and Magnitude {mag}, rounded up",
                                              value, "X32"),))


def damage_dice(raw: int, soak: int, minimum: int, hardness: int) -> int:
    """E7, E9, X33: no effect if Hardness ≥ raw damage; else raw − soak, at least the minimum."""
    if hardness >= raw:
        return 0
    return max(raw - soak, minimum)


@dataclass(frozen=True, slots=True)
class Loss:
    """X34: levels put on a unit's track and what they cost."""

    magnitude_before: int
    magnitude: int
    marked: int
    dots_lost: int
    rout_check: bool
    rule_ref: str = "X34"


def apply_levels(marked: int, levels: int, health_levels: int, magnitude: int, *, solo: bool = False) -> Loss:
    """X34: with L marked, d new levels and a track of H, the unit loses ⌊(L + d)/H⌋ dots and
    keeps (L + d) mod H marked.  At Magnitude 0 the rest is discarded; any loss from one
    attack calls for one rout check (+0, X35), except by a unit fallen to 0 (fine print X35).
    A solo unit marks its own track, up to its health levels."""
    total = marked + levels
    if solo or magnitude <= 0:
        return Loss(magnitude, magnitude, min(total, health_levels), 0, False, "E10")
    dots = total // health_levels
    if dots >= magnitude:
        return Loss(magnitude, 0, 0, magnitude, False)
    return Loss(magnitude, magnitude - dots, total % health_levels, dots, dots > 0)


@dataclass(frozen=True, slots=True)
class AttackPlan:
    """X28-X33: every figure of an attack known before the roll."""

    attacker: str
    defender: str
    kind: AttackKind
    pool: Trait
    internal_penalty: int
    bonus: Trait
    magnitude_difference: Trait
    external: Trait
    dv: Trait
    base_raw: Trait
    soak: Trait
    minimum: int
    hardness: int
    damage_type: DamageType
    defender_magnitude: int
    defender_health_levels: int
    defender_solo: bool
    double_tens: bool = True
    """E1: a 10 on the attack dice counts twice (false: an extra attacks with
    ``extras_double_tens`` off, and a 10 counts once)."""

    @property
    def dice(self) -> int:
        """E3: the pool after internal penalties."""
        return max(0, self.pool.value - self.internal_penalty)

    @property
    def automatic(self) -> int:
        """X28, X30: the successes added after the roll."""
        return self.bonus.value + max(0, self.magnitude_difference.value)

    def dice_for(self, threshold: int) -> int:
        """X33: damage dice for a hit with this threshold."""
        return damage_dice(self.base_raw.value + threshold, self.soak.value, self.minimum, self.hardness)


def _weapon(c: Character, kind: AttackKind) -> Weapon:
    if kind is AttackKind.RANGED:
        if c.ranged_weapon is None:
            raise InputError([Problem(c.name, "has no ranged weapon, so cannot make a ranged attack (X31)")])
        return c.ranged_weapon
    return c.close_weapon


def _shield_cover_factor(formation: Formation, kind: AttackKind) -> int:
    """X14: Close doubles shield and cover against close attacks, Relaxed against ranged,
    Skirmish always (the table is in :mod:`.formations`)."""
    return shield_cover_factor(formation, kind is AttackKind.RANGED)


def _unit_dv(unit: UnitSpec, t: UnitTraits, kind: AttackKind, cover: int, action_dv: int, onslaught: int,
             rules: HouseRules) -> Trait:
    """X29, X14, X16, E5: the better of Parry DV (+ ⌊Close Rating/2⌋ + shield) and Dodge
    DV, then cover, formation, the action's DV penalty and onslaught; never below 0."""
    c = unit.commander
    factor = 1 if unit.solo else _shield_cover_factor(unit.formation, kind)
    shield = (c.shield_dv if unit.solo else t.shield.value) * factor
    parry = parry_dv(c, rules) + (0 if unit.solo else t.close_rating.value // 2) + shield
    dodge = dodge_dv(c, rules)
    rows = [Entry(f"Parry DV {parry} (commander {parry_dv(c, rules)}, ⌊Close Rating/2⌋, shield ×{factor})"
                  if parry >= dodge else f"Dodge DV {dodge}", max(parry, dodge), "X29")]
    if cover:
        rows.append(Entry(f"cover {cover}%" + (f" × {factor} (X14)" if factor > 1 else ""), cover_dv(cover) * factor,
                          "X16"))
    if not unit.solo and unit.formation is Formation.SKIRMISH and kind is AttackKind.RANGED:
        rows.append(Entry("Skirmish against ranged", 3, "X14"))
    if action_dv:
        rows.append(Entry("its last action's DV penalty", -action_dv, "E5"))
    if onslaught:
        rows.append(Entry("onslaught", -onslaught, "E5"))
    total = sum(int(e.amount) for e in rows)
    if total < 0:
        rows.append(Entry("floor 0", -total, "X29"))
        total = 0
    return Trait("DV", total, tuple(rows))


def _soak(unit: UnitSpec, t: UnitTraits, dtype: DamageType, rules: HouseRules) -> Trait:
    """X29, E9: the commander's natural soak of that type (bashing Stamina, lethal
    ⌊Stamina/2⌋, aggravated 0) + the unit's Armor (his own armour only when solo or with
    ``commander_armor``)."""
    c = unit.commander
    natural = {DamageType.BASHING: c.stamina, DamageType.LETHAL: c.stamina // 2, DamageType.AGGRAVATED: 0}[dtype]
    rows = [Entry(f"natural {dtype.value.lower()} soak", natural, "E9")]
    if unit.solo or rules.commander_armor:
        rows.append(Entry("his armour", c.armor_soak, "E9"))
    if not unit.solo:
        rows.append(Entry("unit Armor", t.armor.value, "X29"))
    return Trait("Soak", sum(int(e.amount) for e in rows), tuple(rows))


def plan_attack(attacker: UnitSpec, defender: UnitSpec, kind: AttackKind, *, rules: HouseRules = DEFAULT_RULES,
                attacker_magnitude: int | None = None, defender_magnitude: int | None = None,
                attacker_endurance: int | None = None, cover: int = 0, defender_action_dv: int = 0,
                onslaught: int = 0, extra_external: int = 0) -> AttackPlan:
    """X28-X33: the figures of ``attacker``'s attack on ``defender`` before the roll.

    Current Magnitudes and Endurance default to the derived ones; Endurance 0 is −2
    internal (X4).  Worked out once for the same units and figures (issue 23: the units
    are frozen values, and a battle prices the same attack tick after tick)."""
    key = (id(attacker), id(defender), kind, id(rules), attacker_magnitude, defender_magnitude, attacker_endurance,
           cover, defender_action_dv, onslaught, extra_external)
    got: AttackPlan | None = _PLANS.get(key)
    if got is None:
        got = _PLANS.put(key, (attacker, defender, rules), _plan_attack(
            attacker, defender, kind, rules, attacker_magnitude, defender_magnitude, attacker_endurance, cover,
            defender_action_dv, onslaught, extra_external))
    return got


def _plan_attack(attacker: UnitSpec, defender: UnitSpec, kind: AttackKind, rules: HouseRules,
                 attacker_magnitude: int | None, defender_magnitude: int | None, attacker_endurance: int | None,
                 cover: int, defender_action_dv: int, onslaught: int, extra_external: int) -> AttackPlan:
    at, dt = derive_traits(attacker, rules), derive_traits(defender, rules)
    c = attacker.commander
    weapon = _weapon(c, kind)
    a_mag = at.magnitude.value if attacker_magnitude is None else attacker_magnitude
    d_mag = dt.magnitude.value if defender_magnitude is None else defender_magnitude
    endurance = at.endurance.value if attacker_endurance is None else attacker_endurance
    pool = attack_pool(c, weapon, solo=attacker.solo)
    internal = 2 if endurance <= 0 else 0
    close = kind is AttackKind.CLOSE
    if attacker.solo:
        bonus = Trait("Bonus successes", 0, (Entry("solo unit: no unit bonus", 0, "X28"),))
    else:
        rating = at.close_rating.value if close else at.ranged_rating.value
        bonus = bonus_successes(rating, c.ability("War"), at.might.value,
                                doubled=close and attacker.formation is Formation.CLOSE)
    diff = magnitude_difference(a_mag, d_mag, kind, attacker.formation, defender.formation)
    ext_rows = [Entry("Magnitude difference", max(0, -diff.value), "X30")]
    if extra_external:
        ext_rows.append(Entry("other external penalties", extra_external, "E3"))
    external = Trait("External penalty", sum(int(e.amount) for e in ext_rows), tuple(ext_rows))
    dv = _unit_dv(defender, dt, kind, cover, defender_action_dv, onslaught, rules)
    strength = not weapon.ranged or rules.ranged_strength(
        RangedKind.THROWN if weapon.ability == RangedKind.THROWN.value else RangedKind.ARCHERY)
    raw_rows = [Entry("commander's Strength" if strength else "Strength does not add (X7)",
                      c.strength if strength else 0, "X33"),
                Entry(f"{weapon.name} damage", weapon.damage, "X33")]
    if attacker.solo:
        dtype = weapon.damage_type
        minimum = c.essence
    else:
        dmg = at.close_damage if close else at.ranged_damage
        raw_rows.append(Entry(dmg.name, dmg.value, "X33"))
        dtype = at.close_damage_type if close else at.ranged_damage_type
        minimum = a_mag
    hardness = defender.commander.hardness if defender.solo else dt.hardness.value
    if hardness > 0:
        minimum = 1
    base_raw = Trait("Raw damage before threshold", sum(int(e.amount) for e in raw_rows), tuple(raw_rows))
    return AttackPlan(
        attacker=attacker.name, defender=defender.name, kind=kind, pool=pool, internal_penalty=internal,
        bonus=bonus, magnitude_difference=diff, external=external, dv=dv, base_raw=base_raw,
        soak=_soak(defender, dt, dtype, rules), minimum=minimum, hardness=hardness, damage_type=dtype,
        defender_magnitude=d_mag, defender_health_levels=defender.commander.health_levels,
        defender_solo=defender.solo, double_tens=rules.double_tens(c))


@dataclass(frozen=True, slots=True)
class AttackOdds:
    """The odds of an attack before rolling: the exact chance of a hit and the expected
    levels of damage (as fractions; a sheet shows them rounded)."""

    dice: int
    automatic: int
    external: int
    dv: int
    needed: int
    """Successes the dice must show for a hit."""
    p_hit: Fraction
    expected_levels: Fraction


def attack_odds(plan: AttackPlan) -> AttackOdds:
    """E1, E7: a hit needs dice + automatic − external − DV ≥ 1 (successes equal to the DV
    miss, fine print E7); the expected levels sum, over every roll, its chance times 2/5 of
    the damage dice its threshold gives (E1: a damage die succeeds on 7-10).  An extra's
    attack with ``extras_double_tens`` off counts a 10 once (``plan.double_tens``)."""
    need = plan.dv.value + 1 + plan.external.value - plan.automatic
    # issue 23: in whole numbers, each roll's chance its count over 10^dice; a damage die
    # succeeds on 4 faces of 10, so n dice average 4n/10 successes
    counts = success_counts(plan.dice, double_tens=plan.double_tens)
    rolls = 10 ** plan.dice
    lift = plan.automatic - plan.external.value
    damage_successes = 0
    for s, count in enumerate(counts):
        threshold = max(0, s + lift) - plan.dv.value
        if threshold >= 1 and count:
            damage_successes += count * 4 * plan.dice_for(threshold)
    hits = sum(counts[need:]) if need > 0 else rolls
    return AttackOdds(plan.dice, plan.automatic, plan.external.value, plan.dv.value, max(need, 0),
                      Fraction(hits, rolls), Fraction(damage_successes, 10 * rolls))


@dataclass(frozen=True, slots=True)
class AttackEvent:
    """E7, X28-X34: one resolved attack with its inputs, its rolls and its rules."""

    attacker: str
    defender: str
    kind: AttackKind
    pool: int
    attack_roll: PoolRoll
    successes: int
    bonus_successes: int
    external_penalty: int
    dv: int
    hit: bool
    threshold: int
    raw_damage: int
    soak: int
    damage_dice: int
    damage_roll: PoolRoll | None
    levels: int
    loss: Loss
    rule_ref: str

    @property
    def magnitude_lost(self) -> int:
        """X34: dots of Magnitude this attack cost the defender."""
        return self.loss.dots_lost


def resolve_attack(plan: AttackPlan, roller: Roller, *, marked: int = 0, attack_dice: TypedDice = None,
                   damage_dice_typed: TypedDice = None, attack_where: str = "",
                   damage_where: str = "") -> AttackEvent:
    """E7, X28-X34: roll the plan's pool (or take the typed dice), add the automatic
    successes, subtract the external penalty and the DV; on a hit roll the damage dice
    (10s count once) and put the levels on the defender's track (X34).

    ``marked`` is the defender's track before the attack.  Typed dice are checked against
    their pools (``attack_where`` and ``damage_where`` name their cells, such as
    ``Orders!L7``); a miss rolls no damage."""
    roll = roll_pool(plan.dice, roller, attack_dice, where=attack_where, double_tens=plan.double_tens)
    net = max(0, roll.successes + plan.automatic - plan.external.value)
    threshold = net - plan.dv.value
    hit = threshold >= 1
    raw = plan.base_raw.value + threshold if hit else 0
    n_dice = plan.dice_for(threshold) if hit else 0
    damage: PoolRoll | None = None
    levels = 0
    if n_dice > 0:
        damage = roll_pool(n_dice, roller, damage_dice_typed, where=damage_where, damage=True)
        levels = damage.successes
    loss = apply_levels(marked, levels, plan.defender_health_levels, plan.defender_magnitude,
                        solo=plan.defender_solo)
    refs = "E7, X28, X30, X33" + (", X34" if loss.dots_lost else "")
    return AttackEvent(
        attacker=plan.attacker, defender=plan.defender, kind=plan.kind, pool=plan.dice, attack_roll=roll,
        successes=roll.successes, bonus_successes=plan.automatic, external_penalty=plan.external.value,
        dv=plan.dv.value, hit=hit, threshold=max(threshold, 0) if hit else 0, raw_damage=raw,
        soak=plan.soak.value, damage_dice=n_dice, damage_roll=damage, levels=levels, loss=loss, rule_ref=refs)
