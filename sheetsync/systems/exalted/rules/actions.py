"""X17-X27: the actions of mass combat other than the attack, each with its roll, its
difficulty and its modifiers.  Speeds and DV penalties are in :mod:`.timeline`.

A command roll is Charisma + War of the commander, or of the best relay where the rulings
mark it †, at max(1, Magnitude − Drill) plus the listed modifiers; at Endurance 0 it is −2
dice (X4).  Each function checks first and refuses with the reason (naming ``where``) before
anything changes (DESIGN: verify, can, do).

Readings where the rulings leave room (written down here, listed in the issue note):

- X17, X18: Dash, like Move, is refused while engaged or hesitating.  A Dash's Endurance
  cost is ⌊avg armour fatigue⌋, on success only, never below 0.
- X20: the reflexive spread under fire counts as attacked since the last action (+1).
- X23: the parent's new Magnitude is the lower of its new headcount's row and one less
  than before; the hero who commands the new unit is not one of its special characters.
- X24: with equal Magnitudes the absorbing unit's commander leads; excess special
  characters leave (the last listed first).
- X26: a unit at its special-character limit cannot rally for Organization; Numbers needs a
  dot in the rally pool (``rally_pool``), and its new headcount is the new row's minimum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sheetsync.core.dice import Roller
from sheetsync.core.enums import StrEnum
from sheetsync.core.errors import InputError, Problem
from sheetsync.systems.exalted.rules.aftermath import second_wind
from sheetsync.systems.exalted.rules.dice import Outcome, PoolRoll, TypedDice, judge, roll_pool
from sheetsync.systems.exalted.rules.formations import formation_refusal
from sheetsync.systems.exalted.rules.models import Character, Formation, HouseRules
from sheetsync.systems.exalted.rules.morale import RoutTrigger, command_pool, command_roller
from sheetsync.systems.exalted.rules.traits import (
    DEFAULT_RULES,
    Entry,
    Trait,
    magnitude_for_headcount,
    row_minimum,
)

__all__ = [
    "MAX_AIM",
    "CommandRoll",
    "DisengageEvent",
    "FormationEvent",
    "MergeEvent",
    "RallyEvent",
    "RallyKind",
    "SplitEvent",
    "aim_bonus",
    "change_formation",
    "command_difficulty",
    "command_roll",
    "dash_allowed",
    "disengage",
    "duel_needs_called_shot",
    "merge_units",
    "move_allowed",
    "rally",
    "rally_pool_for",
    "signal_units",
    "split_unit",
    "spread_under_fire",
    "turn",
]

MAX_AIM = 3
"""X19, E11: Aim adds at most 3 dice."""


def _refuse(where: str, message: str) -> InputError:
    return InputError([Problem(where, message)])


def command_difficulty(magnitude: int, drill: int, modifiers: Sequence[Entry] = ()) -> Trait:
    """X18-X26: max(1, Magnitude − Drill) plus the action's listed modifiers."""
    base = max(1, magnitude - drill)
    rows = [Entry(f"max(1, Magnitude {magnitude} − Drill {drill})", base, "X18")]
    rows += list(modifiers)
    return Trait("Command difficulty", sum(int(e.amount) for e in rows), tuple(rows))


@dataclass(frozen=True, slots=True)
class CommandRoll:
    """A command roll: its pool and difficulty with their breakdowns, the dice and the outcome."""

    pool: Trait
    difficulty: Trait
    roll: PoolRoll
    outcome: Outcome

    @property
    def success(self) -> bool:
        return self.outcome.success


def command_roll(pool: Trait, difficulty: Trait, roller: Roller, *, endurance: int | None = None,
                 typed: TypedDice = None, where: str = "", double_tens: bool = True) -> CommandRoll:
    """X18-X26, X4: roll a command pool (−2 dice at Endurance 0) against its difficulty.
    ``double_tens`` is false for an extra's roll with ``extras_double_tens`` off (E1)."""
    dice = pool.value - (2 if endurance is not None and endurance <= 0 else 0)
    roll = roll_pool(dice, roller, typed, where=where, double_tens=double_tens)
    return CommandRoll(pool, difficulty, roll, judge(roll, difficulty.value))


# --- X17-X19 ---------------------------------------------------------------------------

def move_allowed(*, engaged: bool, hesitating: bool) -> str | None:
    """X17, X36: why a unit may not Move (None when it may): not while engaged (it must
    Disengage first, X21) or hesitating."""
    if hesitating:
        return "a hesitating unit cannot move until its next action (X36)"
    if engaged:
        return "an engaged unit must Disengage before it moves (X17, X21)"
    return None


def dash_allowed(formation: Formation, *, solo: bool, engaged: bool, hesitating: bool) -> str | None:
    """X18: why a unit may not Dash: as for Move, and a complementary unit not Unordered."""
    why = move_allowed(engaged=engaged, hesitating=hesitating)
    if why is None and not solo and formation is Formation.UNORDERED:
        return "an Unordered unit cannot Dash (X18)"
    return why


def aim_bonus(long_ticks: int) -> int:
    """X19, E11: Aim adds 1 die per long tick spent aiming, at most 3, on an attack on that
    target."""
    return max(0, min(MAX_AIM, long_ticks))


# --- X20 Change Formation ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FormationEvent:
    """X20: a formation change tried: the roll and the formation after it, and whether a
    rout check follows (spreading out under fire)."""

    unit: str
    roll: CommandRoll
    formation: Formation
    rout_trigger: RoutTrigger | None
    rule_ref: str = "X20"


def change_formation(unit: str, current: Formation, wanted: Formation, *, commander: Character,
                     relays: Sequence[Character] = (), magnitude: int, drill: int, communication_failure: bool = False,
                     attacked_since: bool = False, engaged: bool = False, endurance: int | None = None,
                     roller: Roller, typed: TypedDice = None, where: str = "",
                     rules: HouseRules = DEFAULT_RULES) -> FormationEvent:
    """X20, X13: the command roll† at max(1, Magnitude − Drill), +1 if attacked since the
    unit's last action or +2 instead if engaged; success: the new formation at once.  A
    formation the effective Drill can't hold is refused with the reason, before any roll."""
    why = formation_refusal(wanted, drill, communication_failure=communication_failure, relays=len(relays),
                            magnitude=magnitude)
    if why is not None:
        raise _refuse(where, f"{unit}: {why}")
    mods = [Entry("engaged", 2, "X20")] if engaged else [Entry("attacked since its last action", 1, "X20")] \
        if attacked_since else []
    roll = command_roll(command_pool(commander, relays), command_difficulty(magnitude, drill, mods), roller,
                        endurance=endurance, typed=typed, where=where,
                        double_tens=rules.double_tens(command_roller(commander, relays)))
    return FormationEvent(unit, roll, wanted if roll.success else current, None)


def spread_under_fire(unit: str, current: Formation, *, commander: Character, relays: Sequence[Character] = (),
                      magnitude: int, drill: int, communication_failure: bool = False, engaged: bool = False,
                      endurance: int | None = None, roller: Roller, typed: TypedDice = None,
                      where: str = "", rules: HouseRules = DEFAULT_RULES) -> FormationEvent:
    """X20: after a ranged attack on it resolves, the same roll, reflexive: success puts the
    unit in Skirmish before the next tick and calls a rout check (+0, Skirmish's +2)."""
    ev = change_formation(unit, current, Formation.SKIRMISH, commander=commander, relays=relays,
                          magnitude=magnitude, drill=drill, communication_failure=communication_failure,
                          attacked_since=True, engaged=engaged, endurance=endurance, roller=roller, typed=typed,
                          where=where, rules=rules)
    trigger = RoutTrigger.SPREAD_UNDER_FIRE if ev.roll.success else None
    return FormationEvent(unit, ev.roll, ev.formation, trigger)


# --- X21 Disengage, X22 Turn, X25 Signal ----------------------------------------------------

@dataclass(frozen=True, slots=True)
class DisengageEvent:
    """X21: a Disengage roll and whether it freed the unit (a rout check +1 follows)."""

    unit: str
    pool: Trait
    difficulty: Trait
    roll: PoolRoll
    outcome: Outcome
    disengaged: bool
    rout_trigger: RoutTrigger | None
    rule_ref: str = "X21"


def disengage(unit: str, commander: Character, *, drill: int, magnitude: int, enemy_drill: int,
              enveloped: bool = False, enveloping: bool = False, endurance: int | None = None, roller: Roller,
              typed: TypedDice = None, where: str = "", rules: HouseRules = DEFAULT_RULES) -> DisengageEvent:
    """X21, X32: (Wits + War + Drill) − Magnitude against the enemy's Drill + 3, +3 if the
    unit is enveloped, +1 if it envelops.  Success: disengaged, then a rout check (+1)."""
    rows = [Entry("Wits", commander.wits, "X21"), Entry("War", commander.ability("War"), "X21"),
            Entry("Drill", drill, "X21"), Entry("Magnitude", -magnitude, "X21")]
    if endurance is not None and endurance <= 0:
        rows.append(Entry("Endurance 0", -2, "X4"))
    pool = Trait("Disengage pool", sum(int(e.amount) for e in rows), tuple(rows))
    drows = [Entry("enemy Drill", enemy_drill, "X21"), Entry("Disengage", 3, "X21")]
    if enveloped:
        drows.append(Entry("enveloped", 3, "X32"))
    if enveloping:
        drows.append(Entry("enveloping", 1, "X32"))
    difficulty = Trait("Disengage difficulty", sum(int(e.amount) for e in drows), tuple(drows))
    roll = roll_pool(pool.value, roller, typed, where=where, double_tens=rules.double_tens(commander))
    out = judge(roll, difficulty.value)
    return DisengageEvent(unit, pool, difficulty, roll, out, out.success,
                          RoutTrigger.DISENGAGED if out.success else None)


def turn(commander: Character, relays: Sequence[Character] = (), *, magnitude: int, drill: int,
         endurance: int | None = None, roller: Roller, typed: TypedDice = None, where: str = "",
         rules: HouseRules = DEFAULT_RULES) -> CommandRoll:
    """X22: turning 90° or more: the command roll† at max(1, Magnitude − Drill).  (An attack
    from directly behind is unexpected: the unit's DV against it is 0.)"""
    return command_roll(command_pool(commander, relays), command_difficulty(magnitude, drill), roller,
                        endurance=endurance, typed=typed, where=where,
                        double_tens=rules.double_tens(command_roller(commander, relays)))


def signal_units(unit: str, targets: Sequence[str], relays: int, *, where: str = "") -> tuple[str, ...]:
    """X25: a signal reaches as many units as the sender has relays; more is refused."""
    if len(targets) > relays:
        raise _refuse(where, f"{unit} can signal {relays} unit(s), one per relay, not {len(targets)} (X25)")
    return tuple(targets)


def duel_needs_called_shot(willing: bool) -> bool:
    """X27: an unwilling target must first be hit by a called shot without unit bonuses (no
    damage); a willing one needs no roll."""
    return not willing


# --- X23 Split, X24 Merge --------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SplitEvent:
    """X23: a unit split in two: the new Magnitudes, who followed, and each unit's roll (a
    failure: that unit hesitates and becomes Unordered)."""

    parent: str
    new_unit: str
    parent_magnitude: int
    new_magnitude: int
    followers: tuple[str, ...]
    parent_roll: CommandRoll
    new_roll: CommandRoll
    parent_formation: Formation
    new_formation: Formation
    hesitating: tuple[str, ...]
    rule_ref: str = "X23"


def split_unit(parent: str, new_unit: str, *, parent_commander: Character, hero: Character | None,
               parent_headcount: int, split_headcount: int, parent_magnitude: int, parent_drill: int,
               new_drill: int, parent_formation: Formation, followers: Sequence[str] = (), new_relays: int = 0,
               parent_relays: Sequence[Character] = (), engaged: bool = False, roller: Roller,
               typed: Sequence[TypedDice] = (None, None), where: str = "",
               new_relay_characters: Sequence[Character] = (), wheres: Sequence[str] = (),
               parent_endurance: int | None = None, new_endurance: int | None = None,
               rules: HouseRules = DEFAULT_RULES) -> SplitEvent:
    """X23: a hero leads ``split_headcount`` members away.  Magnitudes come from the
    headcounts, and the parent drops at least one dot; special characters up to the new
    unit's limit (2 × Magnitude) may follow.  Each unit then makes a command roll† (+2 if the
    parent was engaged); a failure: it hesitates and becomes Unordered.  The new unit keeps
    the parent's formation only if its roll succeeds and its Drill and relays (X11) hold it.
    ``wheres`` names the two die cells (the parent's, the new unit's); the new unit's relays
    (``new_relay_characters``) may give its roll (†)."""
    if hero is None:
        raise _refuse(where, f"{parent} has no hero to command the new unit (X23)")
    if not 1 <= split_headcount < parent_headcount:
        raise _refuse(where, f"{parent}: {split_headcount} cannot split from a headcount of {parent_headcount} "
                             "(X23)")
    new_mag = magnitude_for_headcount(split_headcount)
    par_mag = max(0, min(magnitude_for_headcount(parent_headcount - split_headcount), parent_magnitude - 1))
    if len(followers) > 2 * new_mag:
        raise _refuse(where, f"{new_unit} (Magnitude {new_mag}) can take {2 * new_mag} special character(s), "
                             f"not {len(followers)} (X11, X23)")
    mods = [Entry("the parent was engaged", 2, "X23")] if engaged else []
    cells = list(typed) + [None] * (2 - len(typed))
    places = list(wheres) + [where] * (2 - len(wheres))
    p_roll = command_roll(command_pool(parent_commander, parent_relays),
                          command_difficulty(par_mag, parent_drill, mods), roller, endurance=parent_endurance,
                          typed=cells[0], where=places[0],
                          double_tens=rules.double_tens(command_roller(parent_commander, parent_relays)))
    n_roll = command_roll(command_pool(hero, new_relay_characters), command_difficulty(new_mag, new_drill, mods),
                          roller, endurance=new_endurance, typed=cells[1], where=places[1],
                          double_tens=rules.double_tens(command_roller(hero, new_relay_characters)))
    new_form = parent_formation if n_roll.success and formation_refusal(
        parent_formation, new_drill, communication_failure=new_mag >= 3 and new_relays < new_mag) is None \
        else Formation.UNORDERED
    hesitating = tuple(n for n, r in ((parent, p_roll), (new_unit, n_roll)) if not r.success)
    return SplitEvent(parent, new_unit, par_mag, new_mag, tuple(followers), p_roll, n_roll,
                      parent_formation if p_roll.success else Formation.UNORDERED, new_form, hesitating)


@dataclass(frozen=True, slots=True)
class MergeEvent:
    """X24: a merge tried: both rolls, and on success the merged headcount, Magnitude, its
    commander and the special characters that leave."""

    absorbing: str
    absorbed: str
    rolls: tuple[CommandRoll | None, CommandRoll | None]
    merged: bool
    hesitating: tuple[str, ...]
    headcount: int
    magnitude: int
    commander: str
    leaving: tuple[str, ...]
    rule_ref: str = "X24"


def merge_units(absorbing: str, absorbed: str, *, commanders: tuple[Character, Character],
                headcounts: tuple[int, int], magnitudes: tuple[int, int], drills: tuple[int, int],
                special_characters: Sequence[str] = (), leader: str | None = None, solo_joining: bool = False,
                roller: Roller, typed: Sequence[TypedDice] = (None, None), where: str = "",
                wheres: Sequence[str] = (), endurances: Sequence[int | None] = (None, None),
                rules: HouseRules = DEFAULT_RULES) -> MergeEvent:
    """X24: both commanders roll Charisma + War at their own max(1, Magnitude − Drill); a
    failure: no merge, and each unit that failed hesitates.  Success: the headcounts add, the
    larger unit's commander leads unless ``leader`` is agreed, and special characters beyond
    the merged limit leave.  A solo unit joining as a special character rolls nothing."""
    if solo_joining:
        return MergeEvent(absorbing, absorbed, (None, None), True, (), headcounts[0], magnitudes[0],
                          commanders[0].name, ())
    cells = list(typed) + [None] * (2 - len(typed))
    places = list(wheres) + [where] * (2 - len(wheres))
    ends = list(endurances) + [None] * (2 - len(endurances))
    rolls = tuple(command_roll(command_pool(c), command_difficulty(m, d), roller, endurance=e, typed=t, where=w,
                               double_tens=rules.double_tens(c))
                  for c, m, d, t, w, e in zip(commanders, magnitudes, drills, cells[:2], places[:2], ends[:2],
                                              strict=True))
    failed = tuple(n for n, r in zip((absorbing, absorbed), rolls, strict=True) if not r.success)
    pair = (rolls[0], rolls[1])
    if failed:
        return MergeEvent(absorbing, absorbed, pair, False, failed, headcounts[0], magnitudes[0], commanders[0].name,
                          ())
    total = headcounts[0] + headcounts[1]
    mag = magnitude_for_headcount(total)
    larger = commanders[1] if magnitudes[1] > magnitudes[0] else commanders[0]
    chief = leader if leader in (commanders[0].name, commanders[1].name) else larger.name
    keep = 2 * mag
    return MergeEvent(absorbing, absorbed, pair, True, (), total, mag, chief, tuple(special_characters[keep:]))


# --- X26 Rally -----------------------------------------------------------------------------

class RallyKind(StrEnum):
    """X26: what a rally is for (the Orders sheet's option)."""

    ORGANIZATION = "Organization"
    NUMBERS = "Numbers"
    SECOND_WIND = "Second Wind"


@dataclass(frozen=True, slots=True)
class RallyEvent:
    """X26: a rally: its roll and what it changed."""

    unit: str
    kind: RallyKind
    roll: CommandRoll
    magnitude: int
    headcount: int | None
    relays: int
    endurance: int
    formation: Formation
    rally_pool: int
    rule_ref: str = "X26"


def rally_pool_for(own_dots_lost: int, greater_allies_dots_lost: int) -> int:
    """X26 (``rally_pool``): the dots that can feed a rally for Numbers: those this unit
    lost and those lost by allied units of greater Magnitude."""
    return own_dots_lost + greater_allies_dots_lost


def rally(unit: str, kind: RallyKind, speaker: Character, *, magnitude: int, drill: int, relays: int,
          special_characters: int, endurance: int, starting_endurance: int, formation: Formation,
          pool_left: int = 0, vetoed: bool = False, roller: Roller, typed: TypedDice = None, where: str = "",
          rules: HouseRules = DEFAULT_RULES) -> RallyEvent:
    """X26: the speaker (the commander or a relay) rolls Charisma + max(War, Performance), no
    War cap (fine print), at max(1, Magnitude − Drill).

    - Organization: +1 relay, within the limit of 2 × Magnitude special characters.
    - Numbers: +1 Magnitude (the new row's minimum headcount), taking one dot from the rally
      pool; the Storyteller may veto; too few relays for Magnitude 3+ leaves it Unordered.
    - Second Wind: Endurance + max(1, Drill), never above Magnitude (nor the start)."""
    if kind is RallyKind.ORGANIZATION and special_characters >= 2 * magnitude:
        raise _refuse(where, f"{unit} already has {special_characters} special characters, its limit "
                             f"(2 × Magnitude {magnitude}) (X11, X26)")
    if kind is RallyKind.NUMBERS:
        if vetoed:
            raise _refuse(where, f"{unit}: the Storyteller vetoed the rally for Numbers (X26)")
        if rules.rally_pool and pool_left <= 0:
            raise _refuse(where, f"{unit}: no lost dot is left to rally for Numbers: neither it nor a larger "
                                 "ally lost one (X26)")
    war, perf = speaker.ability("War"), speaker.ability("Performance")
    pool = Trait("Rally pool", speaker.charisma + max(war, perf),
                 (Entry(f"{speaker.name}'s Charisma", speaker.charisma, "X26"),
                  Entry("War" if war >= perf else "Performance", max(war, perf), "X26")))
    roll = command_roll(pool, command_difficulty(magnitude, drill), roller, endurance=endurance, typed=typed,
                        where=where, double_tens=rules.double_tens(speaker))
    mag, count, new_relays, end, form, left = magnitude, None, relays, endurance, formation, pool_left
    if roll.success:
        if kind is RallyKind.ORGANIZATION:
            new_relays = relays + 1
        elif kind is RallyKind.NUMBERS:
            mag, count = magnitude + 1, row_minimum(magnitude + 1)
            left = pool_left - 1 if rules.rally_pool else pool_left
            if mag >= 3 and relays < mag:
                form = Formation.UNORDERED
        else:
            end = second_wind(endurance, drill, magnitude, starting_endurance).value
    return RallyEvent(unit, kind, roll, mag, count, new_relays, end, form, left)
