"""E4-E6, E11: the long-tick timeline: Join War, each action's Speed and DV penalty, who
acts on which long tick, and what happens when two units act on the same tick.

Readings where the rulings leave room (written down here, listed in the issue note):

- E4: the Join War pool is Wits + War − Magnitude (X28's War cap changes nothing, the
  Ability being War itself); a solo unit's is Wits + Awareness.  Ties share a tick, and the
  order among them is the sheet's (E6).
- E5: a unit acts only on its tick.  A Speed-0 (reflexive) action may be taken on any
  long tick from the current one on and moves nothing on the timeline; Move, also
  reflexive, is allowed once a long tick (X17).
- E5: the DV penalty of an action lasts until the unit's next non-reflexive action, and
  onslaught counts the attacks it suffered since then.
- E6: orders are taken tick by tick, and within a tick in sheet order.
- E11: a ``speed.X`` or ``dv.X`` house rule overrides an action's default by its sheet
  label (``speed.Attack: 4``); an attack's default Speed is its weapon's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from sheetsync.core.dice import Roller
from sheetsync.core.enums import StrEnum
from sheetsync.core.errors import InputError, Problem
from sheetsync.systems.exalted.rules.dice import PoolRoll, TypedDice, roll_pool
from sheetsync.systems.exalted.rules.models import HouseRules, UnitSpec
from sheetsync.systems.exalted.rules.traits import DEFAULT_RULES, Entry, Trait

__all__ = [
    "LAST_START_TICK",
    "Action",
    "ActEvent",
    "Clock",
    "JoinWar",
    "JoinWarRoll",
    "Timeline",
    "Timing",
    "act",
    "act_clock",
    "acting_on",
    "defence_penalty",
    "join_war",
    "join_war_pool",
    "same_tick_batches",
    "start_timeline",
    "suffer_attack",
    "timing",
]

LAST_START_TICK = 6
"""E4: the latest long tick a unit starts on."""


class Action(StrEnum):
    """E11, X17-X27: the actions of mass combat, as the Orders sheet's dropdown says them."""

    ATTACK = "Attack"
    MOVE = "Move"
    DASH = "Dash"
    GUARD = "Guard"
    AIM = "Aim"
    INACTIVE = "Inactive"
    MISCELLANEOUS = "Miscellaneous"
    CHANGE_FORMATION = "Change Formation"
    DISENGAGE = "Disengage"
    TURN = "Turn"
    SPLIT = "Split Unit"
    EXPEL = "Expel Special Character"
    MERGE = "Merge Units"
    SIGNAL = "Signal Units"
    RALLY = "Rally"
    CAST = "Cast Spell"
    DUEL = "Initiate Duel"


_DEFAULTS: dict[Action, tuple[int, int, str]] = {
    Action.ATTACK: (5, 1, "E11"),
    Action.MOVE: (0, 0, "E11, X17"),
    Action.DASH: (3, 2, "E11, X18"),
    Action.GUARD: (3, 0, "E11, X19"),
    Action.AIM: (3, 1, "E11, X19"),
    Action.INACTIVE: (5, 0, "E11, X19"),
    Action.MISCELLANEOUS: (5, 1, "E11"),
    Action.CHANGE_FORMATION: (5, 1, "X20"),
    Action.DISENGAGE: (0, 0, "X21"),
    Action.TURN: (3, 1, "X22"),
    Action.SPLIT: (3, 1, "X23"),
    Action.EXPEL: (0, 0, "X23"),
    Action.MERGE: (3, 1, "X24"),
    Action.SIGNAL: (3, 0, "X25"),
    Action.RALLY: (4, 1, "X26"),
    Action.CAST: (5, 2, "X27"),
    Action.DUEL: (5, 1, "X27"),
}
"""E11, X17-X27: each action's default Speed, DV penalty and ruling."""


@dataclass(frozen=True, slots=True)
class Timing:
    """E11: an action's Speed and DV penalty; Inactive sets the DV to ``fixed_dv`` instead."""

    action: Action
    speed: int
    dv_penalty: int
    fixed_dv: int | None
    rule_ref: str

    @property
    def reflexive(self) -> bool:
        """E5: a Speed-0 action is reflexive."""
        return self.speed == 0


def timing(action: Action, *, weapon_speed: int = 5, rules: HouseRules = DEFAULT_RULES) -> Timing:
    """E11 (``speed.X``, ``dv.X``, ``inactive_dv``), X17-X27: an action's Speed and DV
    penalty.  An attack (and Initiate Duel, which counts as one, X27) takes its weapon's
    Speed."""
    speed, dv, ref = _DEFAULTS[action]
    if action in (Action.ATTACK, Action.DUEL):
        speed = weapon_speed
    speed = rules.speed.get(action.value, speed)
    dv = rules.dv.get(action.value, dv)
    fixed = rules.inactive_dv if action is Action.INACTIVE else None
    return Timing(action, speed, dv, fixed, ref)


# --- E4: Join War -------------------------------------------------------------------------

def join_war_pool(unit: UnitSpec, magnitude: int, endurance: int | None = None) -> Trait:
    """E4: a unit's Join War pool: (Wits + War) − Magnitude; a solo unit Wits + Awareness.
    X4: a unit at Endurance 0 rolls it at −2, as every roll it makes."""
    c = unit.commander
    rows = [Entry("Wits", c.wits, "E4")]
    if unit.solo:
        rows.append(Entry("Awareness", c.ability("Awareness"), "E4"))
    else:
        rows += [Entry("War", c.ability("War"), "E4"), Entry("Magnitude", -magnitude, "E4")]
    if endurance is not None and endurance <= 0:
        rows.append(Entry("Endurance 0", -2, "X4"))
    return Trait("Join War", sum(int(e.amount) for e in rows), tuple(rows))


@dataclass(frozen=True, slots=True)
class JoinWarRoll:
    """E4: one unit's Join War roll and the long tick it starts on."""

    unit: str
    pool: Trait
    roll: PoolRoll
    tick: int


@dataclass(frozen=True, slots=True)
class JoinWar:
    """E4: every unit's Join War roll."""

    rolls: tuple[JoinWarRoll, ...]
    rule_ref: str = "E4"


def join_war(entries: Sequence[tuple[UnitSpec, int]], roller: Roller,
             typed: Sequence[TypedDice] | None = None, *, where: Sequence[str] | None = None,
             rules: HouseRules | None = None, endurances: Sequence[int | None] | None = None) -> JoinWar:
    """E4: each unit (with its current Magnitude) rolls Join War; the most successes acts on
    long tick 0, the others on min(6, best − own).  ``typed`` holds a die cell per unit
    (blank: rolled), ``where`` its address, ``endurances`` each unit's Endurance (X4: −2 at
    0).  Every bad die is reported at once.  The unit's
    commander rolls: an extra's 10 counts once with ``extras_double_tens`` off (E1)."""
    cells = list(typed) if typed is not None else [None] * len(entries)
    places = list(where) if where is not None else [f"units[{i}].join_war" for i in range(len(entries))]
    ends = list(endurances) if endurances is not None else [None] * len(entries)
    pools = [join_war_pool(u, m, e) for (u, m), e in zip(entries, ends, strict=True)]
    problems: list[Problem] = []
    rolls: list[PoolRoll] = []
    tens = [rules is None or rules.double_tens(u.commander) for u, _ in entries]
    for pool, cell, place, twice in zip(pools, cells, places, tens, strict=True):
        try:
            rolls.append(roll_pool(pool.value, roller, cell, where=place, double_tens=twice))
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    best = max((r.successes for r in rolls), default=0)
    return JoinWar(tuple(JoinWarRoll(u.name, p, r, min(LAST_START_TICK, best - r.successes))
                         for (u, _), p, r in zip(entries, pools, rolls, strict=True)))


# --- E5: who acts when -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Clock:
    """E5: where one unit is on the timeline: its next tick, the DV penalty of its last
    action (or the fixed DV of Inactive), the attacks it suffered since, and the long tick
    of its last Move (X17)."""

    unit: str
    next_tick: int
    dv_penalty: int = 0
    fixed_dv: int | None = None
    attacks_suffered: int = 0
    last_action: Action | None = None
    moved_on: int | None = None


@dataclass(frozen=True, slots=True)
class Timeline:
    """E5: the current long tick and every unit's clock, in sheet order."""

    tick: int
    clocks: tuple[Clock, ...]

    def clock(self, unit: str) -> Clock:
        for c in self.clocks:
            if c.unit == unit:
                return c
        raise InputError([Problem("", f"unit {unit!r} is not on the timeline (E5)")])

    def _with(self, new: Clock) -> Timeline:
        return replace(self, clocks=tuple(new if c.unit == new.unit else c for c in self.clocks))

    def next_tick(self) -> int:
        """E5: the next long tick on which some unit acts (never before the current one)."""
        return max(self.tick, min((c.next_tick for c in self.clocks), default=self.tick))

    def advance(self) -> Timeline:
        """E5: move to the next long tick on which some unit acts."""
        return replace(self, tick=self.next_tick())


def start_timeline(joined: JoinWar) -> Timeline:
    """E4, E5: the timeline after Join War: every unit waits for its start tick."""
    return Timeline(0, tuple(Clock(r.unit, r.tick) for r in joined.rolls))


def acting_on(timeline: Timeline, tick: int) -> tuple[str, ...]:
    """E5, E6: the units whose action falls on ``tick``, in sheet order."""
    return tuple(c.unit for c in timeline.clocks if c.next_tick == tick)


@dataclass(frozen=True, slots=True)
class ActEvent:
    """E5: a unit's action placed on the timeline."""

    unit: str
    tick: int
    timing: Timing
    next_tick: int
    rule_ref: str


def act(timeline: Timeline, unit: str, tick: int, action: Action, *, weapon_speed: int = 5,
        rules: HouseRules = DEFAULT_RULES, where: str = "") -> tuple[Timeline, ActEvent]:
    """E5, E11, X17: ``unit`` takes ``action`` on long ``tick``.

    A unit acts only on its tick; a reflexive (Speed 0) action on any tick from the current
    one, leaving its next tick as it was, and Move once a long tick.  Acting on tick t with
    Speed s, the unit acts next on t + s; the DV penalty lasts until then and the onslaught
    count starts again.  A refusal names ``where`` and changes nothing."""
    new, ev = act_clock(timeline.clock(unit), timeline.tick, tick, action, weapon_speed=weapon_speed, rules=rules,
                        where=where)
    return timeline._with(new), ev


def act_clock(clock: Clock, now: int, tick: int, action: Action, *, weapon_speed: int = 5,
              rules: HouseRules = DEFAULT_RULES, where: str = "") -> tuple[Clock, ActEvent]:
    """E5, E11, X17: :func:`act` on one unit's ``clock`` with the battle at long tick ``now``:
    its clock after the action, and the event (issue 23: a resolve needs the one clock,
    not the whole timeline again)."""
    unit = clock.unit
    t = timing(action, weapon_speed=weapon_speed, rules=rules)
    if tick < now:
        raise InputError([Problem(where or f"orders.{unit}.tick", f"{unit} cannot act on long tick {tick}: the "
                                                                    f"battle is at long tick {now} (E5)")])
    if t.reflexive:
        if action is Action.MOVE:
            if clock.moved_on == tick:
                raise InputError([Problem(where or f"orders.{unit}.tick", f"{unit} has already moved on long tick "
                                                                            f"{tick}: Move is once a long tick (X17)")])
            new = Clock(unit, clock.next_tick, clock.dv_penalty, clock.fixed_dv, clock.attacks_suffered,
                        clock.last_action, tick)
        else:
            new = clock
        return new, ActEvent(unit, tick, t, clock.next_tick, t.rule_ref + ", E5")
    if clock.next_tick != tick:
        place = where or f"orders.{unit}.tick"
        raise InputError([Problem(place, f"{unit} acts on long tick {clock.next_tick}, not {tick}: a unit acts "
                                         f"only on its tick; type {clock.next_tick} in {place} (E5)")])
    new = Clock(unit, tick + t.speed, t.dv_penalty, t.fixed_dv, 0, action, clock.moved_on)
    return new, ActEvent(unit, tick, t, tick + t.speed, t.rule_ref + ", E5")


def suffer_attack(timeline: Timeline, unit: str) -> Timeline:
    """E5 (``onslaught``): count one more attack suffered since the unit's last action."""
    clock = timeline.clock(unit)
    return timeline._with(replace(clock, attacks_suffered=clock.attacks_suffered + 1))


def defence_penalty(timeline: Timeline, unit: str, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """E5, E11: what the timeline takes off a unit's DV: its last action's DV penalty and,
    with ``onslaught``, 1 per attack suffered since.  After Inactive the DV is
    ``inactive_dv`` whatever else (the breakdown says so; the value is then that DV)."""
    clock = timeline.clock(unit)
    if clock.fixed_dv is not None:
        return Trait("DV fixed", clock.fixed_dv, (Entry("Inactive: DV set", clock.fixed_dv, "E11"),))
    rows = [Entry(f"{clock.last_action.value if clock.last_action else 'no action yet'} DV penalty",
                  clock.dv_penalty, "E5")]
    if rules.onslaught:
        rows.append(Entry("onslaught: attacks suffered since its last action", clock.attacks_suffered, "E5"))
    return Trait("DV penalty", sum(int(e.amount) for e in rows), tuple(rows))


# --- E6: the same tick ----------------------------------------------------------------

T = TypeVar("T")


def same_tick_batches(orders: Sequence[T], tick_of: Callable[[T], int],
                      rules: HouseRules = DEFAULT_RULES) -> list[list[T]]:
    """E6 (``same_tick``): the groups of orders that roll against the same state.

    ``"simultaneous"``: all of a tick's orders roll against the start-of-tick state, then
    apply in sheet order (one group per tick).  ``"sheet_order"``: each order applies fully
    before the next (one group per order).  Ticks come in order, and a tick's orders in
    sheet order."""
    ordered = sorted(orders, key=tick_of)  # sorted() is stable: sheet order within a tick
    if rules.same_tick == "sheet_order":
        return [[o] for o in ordered]
    out: list[list[T]] = []
    for o in ordered:
        if out and tick_of(out[-1][0]) == tick_of(o):
            out[-1].append(o)
        else:
            out.append([o])
    return out
