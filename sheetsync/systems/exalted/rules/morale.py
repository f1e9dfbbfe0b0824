"""X35-X37, X39: rout checks on every trigger of the table, hesitation, exhaustion after
each attack, and Mob Rule.

Readings where the rulings leave room (written down here, listed in the issue note):

- X35: the triggers of one event are checked once, at the highest modifier among them; a
  knockback or knockdown of the whole unit (X12) and spreading out under fire (X20) are
  +0 triggers like the table's.
- X35: the engagement tier compares raw Magnitudes and the enemy's Might (fine print); a
  typed tier (0, 1 or 2) overrides it.
- X4: at Endurance 0 every roll, rout and exhaustion checks included, is −2 dice
  (internal).
- X36: dots lost are max(1, difficulty − net successes), never more than the unit has;
  a loss to 0 ends the unit as X34's Magnitude 0 does (no further check).  Relays beyond
  what the new limit (2 × Magnitude, less the heroes and sorcerers, who are not displaced)
  holds fade.
- X37: weather gives only its highest modifier; the difficulty uses ⌊avg armour fatigue⌋.
- X39: the leaderless pool is the X35 rout pool (perfect Morale: 5 dice, nothing else), its
  difficulty only the count of earlier such checks; a failure is a hesitation (X36).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from sheetsync.core.dice import Roller
from sheetsync.core.enums import StrEnum
from sheetsync.systems.exalted.rules.dice import Outcome, PoolRoll, TypedDice, judge, roll_pool
from sheetsync.systems.exalted.rules.formations import effects
from sheetsync.systems.exalted.rules.models import Character, Formation, HouseRules
from sheetsync.systems.exalted.rules.traits import DEFAULT_RULES, Entry, Trait

__all__ = [
    "ExhaustionEvent",
    "MobRule",
    "RoutEvent",
    "RoutTrigger",
    "Weather",
    "command_pool",
    "command_roller",
    "engagement_trigger",
    "exhaustion_check",
    "exhaustion_difficulty",
    "leaderless",
    "mob_rule_check",
    "relays_kept",
    "rout_check",
    "trigger_modifier",
]


class RoutTrigger(StrEnum):
    """X35 (and X12, X20): what calls for a rout check."""

    MAGNITUDE_LOSS = "Magnitude loss from damage"
    FIRST_RANGED = "First ranged attack since its last action"
    FLAME_RANGED = "Flame or Essence ranged attack"
    SPELL = "Subject of a spell"
    ENGAGED = "Becoming engaged"
    ENGAGED_SUPERIOR = "Engaged by a superior or supernatural-led unit"
    ENGAGED_OVERWHELMING = "Engaged by an overwhelming or supernatural unit"
    DISENGAGED = "Disengaging"
    DUEL_MEDDLING = "Meddling in a duel"
    KNOCKDOWN = "Knocked back or down"
    SPREAD_UNDER_FIRE = "Spreading out under fire"


_MODIFIER: dict[RoutTrigger, tuple[int, str]] = {
    RoutTrigger.MAGNITUDE_LOSS: (0, "X34, X35"),
    RoutTrigger.FIRST_RANGED: (0, "X35"),
    RoutTrigger.FLAME_RANGED: (1, "X35"),
    RoutTrigger.SPELL: (1, "X35"),
    RoutTrigger.ENGAGED: (0, "X35"),
    RoutTrigger.ENGAGED_SUPERIOR: (1, "X35"),
    RoutTrigger.ENGAGED_OVERWHELMING: (2, "X35"),
    RoutTrigger.DISENGAGED: (1, "X21, X35"),
    RoutTrigger.DUEL_MEDDLING: (2, "X27, X35"),
    RoutTrigger.KNOCKDOWN: (0, "X12"),
    RoutTrigger.SPREAD_UNDER_FIRE: (0, "X20"),
}


def trigger_modifier(trigger: RoutTrigger, *, circle: int = 1) -> int:
    """X35: a trigger's difficulty modifier; a spell's is +1 per Circle."""
    mod, _ = _MODIFIER[trigger]
    return max(1, circle) * mod if trigger is RoutTrigger.SPELL else mod


def engagement_trigger(own_magnitude: int, enemy_magnitude: int, enemy_might: int,
                       typed_tier: int | None = None) -> RoutTrigger:
    """X35: the trigger of becoming engaged: +0, or +1 against a superior (or
    supernatural-led) enemy, +2 against an overwhelming (or supernatural) one.  Unless a
    tier is typed: a higher Magnitude is +1, 3 or more higher or Might 1+ is +2."""
    if typed_tier is not None:
        tier = typed_tier
    elif enemy_magnitude - own_magnitude >= 3 or enemy_might >= 1:
        tier = 2
    elif enemy_magnitude > own_magnitude:
        tier = 1
    else:
        tier = 0
    return (RoutTrigger.ENGAGED, RoutTrigger.ENGAGED_SUPERIOR, RoutTrigger.ENGAGED_OVERWHELMING)[max(0, min(2, tier))]


def relays_kept(magnitude: int, relays: int, heroes: int = 0, sorcerers: int = 0) -> int:
    """X11, X36: relays a unit keeps when its Magnitude falls: the limit is 2 × Magnitude
    special characters, and heroes and sorcerers are not displaced, so excess relays fade."""
    return max(0, min(relays, 2 * magnitude - heroes - sorcerers))


@dataclass(frozen=True, slots=True)
class RoutEvent:
    """X35, X36: one rout check: its triggers, pool and difficulty with their breakdowns,
    the roll, and what a failure cost (hesitation, dots, an emptied track, fading relays)."""

    unit: str
    triggers: tuple[RoutTrigger, ...]
    checked: bool
    pool: Trait
    difficulty: Trait
    roll: PoolRoll | None
    outcome: Outcome | None
    passed: bool
    hesitating: bool
    magnitude_before: int
    magnitude: int
    dots_lost: int
    marked: int
    relays: int
    rule_ref: str

    @property
    def magnitude_lost(self) -> int:
        return self.dots_lost


def _pool(morale: int, magnitude: int, drill: int, endurance: int | None, rules: HouseRules) -> Trait:
    """X35, X4: the rout pool (:func:`_rout_pool`)."""
    return _rout_pool(morale, magnitude, drill, endurance is not None and endurance <= 0, rules.rout_dice)


@lru_cache(maxsize=1024)
def _rout_pool(morale: int, magnitude: int, drill: int, tired: bool, rout_dice: str) -> Trait:
    """X35, X4: Morale − (Magnitude − Drill) (or + with ``rout_dice = "bonus"``), −2 at
    Endurance 0; once for each set of its inputs (issue 23: a frozen value)."""
    rows = [Entry("Morale", morale, "X35")]
    diff = magnitude - drill
    if rout_dice == "bonus":
        rows.append(Entry(f"Magnitude {magnitude} − Drill {drill} (rout_dice bonus)", diff, "X35"))
    else:
        rows.append(Entry(f"Magnitude {magnitude} − Drill {drill}", -diff, "X35"))
    if tired:
        rows.append(Entry("Endurance 0", -2, "X4"))
    return Trait("Rout pool", sum(int(e.amount) for e in rows), tuple(rows))


def _hesitate(unit: str, triggers: tuple[RoutTrigger, ...], pool: Trait, difficulty: Trait, roll: PoolRoll,
              magnitude: int, marked: int, relays: int, heroes: int, sorcerers: int, ref: str) -> RoutEvent:
    out = judge(roll, difficulty.value)
    if out.success:
        return RoutEvent(unit, triggers, True, pool, difficulty, roll, out, True, False, magnitude, magnitude, 0,
                         marked, relays, ref)
    dots = min(magnitude, max(1, difficulty.value - out.net))
    left = magnitude - dots
    return RoutEvent(unit, triggers, True, pool, difficulty, roll, out, False, True, magnitude, left, dots, 0,
                     relays_kept(left, relays, heroes, sorcerers), ref + ", X36")


@lru_cache(maxsize=1024)
def _rout_difficulty(trig: tuple[RoutTrigger, ...], circle: int, formation: Formation) -> Trait:
    """X35, X14: 1 + the highest trigger modifier + the formation's, floor 0; once for each
    set of its inputs (issue 23: a frozen value)."""
    mod = max((trigger_modifier(t, circle=circle) for t in trig), default=0)
    rows = [Entry("standard difficulty", 1, "X35")]
    if trig:
        top = max(trig, key=lambda t: trigger_modifier(t, circle=circle))
        rows.append(Entry(f"{top.value} (the highest of this event)", mod, _MODIFIER[top][1]))
    form = effects(formation).rout
    if form:
        rows.append(Entry(f"{formation.value} formation", form, "X14"))
    total = sum(int(e.amount) for e in rows)
    if total < 0:
        rows.append(Entry("floor 0", -total, "X35"))
        total = 0
    return Trait("Rout difficulty", total, tuple(rows))


def rout_check(unit: str, triggers: Sequence[RoutTrigger], *, morale: int, magnitude: int, drill: int,
               formation: Formation, roller: Roller, perfect_morale: bool = False, circle: int = 1,
               marked: int = 0, relays: int = 0, heroes: int = 0, sorcerers: int = 0,
               endurance: int | None = None, typed: TypedDice = None, where: str = "",
               rules: HouseRules = DEFAULT_RULES, double_tens: bool = True) -> RoutEvent:
    """X35, X36: a rout check for one event.

    Pool = Morale − (Magnitude − Drill) (``rout_dice``); difficulty = 1 + the highest
    trigger modifier + the formation's (Close −2, Skirmish and Unordered +2), floor 0.
    Perfect Morale passes without a roll, and a unit at Magnitude 0 makes none.  On a
    failure the unit hesitates (no Move or Dash until its next action), loses max(1,
    difficulty − successes) dots at once, its track empties and excess relays fade.
    ``double_tens`` is false when the roller is an extra and ``extras_double_tens`` is off (E1)."""
    trig = tuple(triggers)
    pool = _pool(morale, magnitude, drill, endurance, rules)
    difficulty = _rout_difficulty(trig, circle, formation)
    if magnitude <= 0 or perfect_morale:
        passed_ref = "X35: Magnitude 0 makes no rout check" if magnitude <= 0 else "X10, X35: perfect Morale"
        return RoutEvent(unit, trig, False, pool, difficulty, None, None, True, False, magnitude, magnitude, 0,
                         marked, relays, passed_ref)
    roll = roll_pool(pool.value, roller, typed, where=where, double_tens=double_tens)
    return _hesitate(unit, trig, pool, difficulty, roll, magnitude, marked, relays, heroes, sorcerers, "X35")


# --- X37: exhaustion --------------------------------------------------------------------

class Weather(StrEnum):
    """X37: the weather of an attack."""

    MILD = "Mild"
    HOT = "Hot"
    SNOWY = "Snowy"
    DESERT = "Desert"
    BLIZZARD = "Blizzard"
    EXTREME = "Extreme"


_WEATHER: dict[Weather, int] = {Weather.MILD: 0, Weather.HOT: 1, Weather.SNOWY: 1, Weather.DESERT: 2,
                                Weather.BLIZZARD: 2, Weather.EXTREME: 3}


def command_roller(commander: Character, relays: Sequence[Character] = ()) -> Character:
    """X20, X37 (†): who makes a command roll: the commander, or the best relay if her
    Charisma + War is larger (E1: an extra's 10s follow ``extras_double_tens``)."""
    best = commander
    for r in relays:
        if r.charisma + r.ability("War") > best.charisma + best.ability("War"):
            best = r
    return best


def command_pool(commander: Character, relays: Sequence[Character] = ()) -> Trait:
    """X20, X37 (†): Charisma + War of the commander, or of the best relay if hers is larger."""
    best = command_roller(commander, relays)
    who = "commander" if best is commander else "best relay"
    return Trait("Command pool", best.charisma + best.ability("War"),
                 (Entry(f"{who} {best.name}'s Charisma", best.charisma, "X37"),
                  Entry(f"{who} {best.name}'s War", best.ability("War"), "X37")))


@lru_cache(maxsize=256)
def _floor(x: float) -> int:
    """⌊x⌋ of a typed average read as the decimal it shows (``2.5`` is 5/2), once a value."""
    q = Fraction(str(x))
    return int(q.numerator // q.denominator)


def exhaustion_difficulty(avg_fatigue: float, *, morale: int, perfect_morale: bool = False, engaged: bool = False,
                          charged_last: bool = False, weather: Sequence[Weather] = ()) -> Trait:
    """X37: difficulty = ⌊avg armour fatigue⌋; Morale 3+ −1 or perfect Morale −2 (not
    both); engaged +2; charged as its last action +1; the worst weather (hot or snowy +1,
    desert or blizzard +2, extreme +3); at least 1."""
    rows = [Entry("avg armour fatigue, rounded down", _floor(avg_fatigue), "X37")]
    if perfect_morale:
        rows.append(Entry("perfect Morale", -2, "X37"))
    elif morale >= 3:
        rows.append(Entry("Morale 3+", -1, "X37"))
    if engaged:
        rows.append(Entry("engaged with an enemy unit", 2, "X37"))
    if charged_last:
        rows.append(Entry("charged as its last action", 1, "X37"))
    if weather:
        worst = max(weather, key=lambda w: _WEATHER[w])
        if _WEATHER[worst]:
            rows.append(Entry(f"{worst.value} weather (the worst)", _WEATHER[worst], "X37"))
    total = sum(int(e.amount) for e in rows)
    if total < 1:
        rows.append(Entry("minimum 1", 1 - total, "X37"))
        total = 1
    return Trait("Exhaustion difficulty", total, tuple(rows))


@dataclass(frozen=True, slots=True)
class ExhaustionEvent:
    """X37: one unit's exhaustion roll after an attack it made or suffered."""

    unit: str
    pool: Trait
    difficulty: Trait
    roll: PoolRoll
    outcome: Outcome
    endurance_before: int
    endurance: int
    rule_ref: str = "X37"

    @property
    def endurance_lost(self) -> int:
        return self.endurance_before - self.endurance


def exhaustion_check(unit: str, pool: Trait, difficulty: Trait, endurance: int, roller: Roller, *,
                     typed: TypedDice = None, where: str = "", double_tens: bool = True) -> ExhaustionEvent:
    """X37, X4: after an attack, the reflexive command roll (always rolled); a failure costs
    1 Endurance, never below 0.  At Endurance 0 the roll is −2 dice (X4).  ``double_tens``:
    E1, false for an extra's roll with ``extras_double_tens`` off."""
    tired = endurance <= 0
    if tired:  # X4: the pool logged says so
        pool = Trait(pool.name, pool.value - 2, (*pool.breakdown, Entry("Endurance 0", -2, "X4")))
    roll = roll_pool(pool.value, roller, typed, where=where, double_tens=double_tens)
    out = judge(roll, difficulty.value)
    after = endurance if out.success else max(0, endurance - 1)
    return ExhaustionEvent(unit, pool, difficulty, roll, out, endurance, after, "X37" + (", X4" if tired else ""))


# --- X39: Mob Rule ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class MobRule:
    """X39: a unit that lost its commander with no hero to replace him."""

    unit: str
    disbanded: bool
    formation: Formation
    health_levels: int
    marked: int
    relays: int
    sorcerers: int
    called_shots_allowed: bool
    rule_ref: str = "X39"


def leaderless(unit: str, *, member_health_levels: int = 3, rules: HouseRules = DEFAULT_RULES) -> MobRule:
    """X39 (``mob_rule``): a leaderless unit becomes Unordered under a typed average member
    (default an extra: 3 levels) with its track reset; relays fade and sorcerers leave or
    fade, so no one in it can be singled out.  With ``mob_rule = false`` it disbands."""
    if not rules.mob_rule:
        return MobRule(unit, True, Formation.UNORDERED, member_health_levels, 0, 0, 0, False, "X39: disbands")
    return MobRule(unit, False, Formation.UNORDERED, member_health_levels, 0, 0, 0, False)


def mob_rule_check(unit: str, *, morale: int, magnitude: int, drill: int, earlier_checks: int, roller: Roller,
                   perfect_morale: bool = False, marked: int = 0, endurance: int | None = None,
                   typed: TypedDice = None, where: str = "", rules: HouseRules = DEFAULT_RULES,
                   double_tens: bool = True) -> RoutEvent:
    """X39: at the start of each long tick it waits idle, a leaderless unit checks for rout:
    the rout pool (perfect Morale: 5 dice, no other modifier, and it must roll), at a
    difficulty of the number of earlier such checks.  A failure is a hesitation (X36)."""
    if perfect_morale:
        pool = Trait("Rout pool", 5, (Entry("perfect Morale: 5 dice", 5, "X39"),))
    else:
        pool = _pool(morale, magnitude, drill, endurance, rules)
    difficulty = Trait("Rout difficulty", earlier_checks,
                       (Entry("earlier leaderless rout checks", earlier_checks, "X39"),))
    if magnitude <= 0:
        return RoutEvent(unit, (), False, pool, difficulty, None, None, True, False, magnitude, magnitude, 0,
                         marked, 0, "X35: Magnitude 0 makes no rout check")
    roll = roll_pool(pool.value, roller, typed, where=where, double_tens=double_tens)
    return _hesitate(unit, (), pool, difficulty, roll, magnitude, marked, 0, 0, 0, "X39")
