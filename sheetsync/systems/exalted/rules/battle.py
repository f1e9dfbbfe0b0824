"""E4-E6, X17-X39: the battle loop of an Exalted battle file, pure.

:func:`resolve` runs the next long tick on which some unit acts (or a given one): Join War
first when the battle has not started (E4), then Mob Rule's idle checks (X39), then the
tick's orders in timeline order (E5, E6), each action per X17-X27 and each attack per
X28-X34 with the rout checks it calls (X35, X36) and the exhaustion rolls after it (X37).
Every order is verified before anything is rolled or applied, so a refused order costs
nothing; its event says why.  :func:`undo` restores the battle exactly as it was.  The
dice not typed come from a roller seeded by the battle's seed and the number of ticks
resolved, so the same file gives the same tick.

Readings where the rulings leave room (listed in the issue note):

- E4: the first resolve of a battle rolls Join War and then runs long tick 0.  Before it,
  :func:`acting_ticks` rolls Join War as that resolve will (the same seeded roller, drawn
  first), so every view shows the long tick each unit will act on.
- E5: a unit whose tick comes with no order Guards (X19), and the log says so; an order
  typed for a tick already past, or for a tick on which its unit does not act, is refused,
  naming the tick to type.  One typed for a later tick that comes before its unit's next
  is refused by the resolve before it (that tick could never come for it).
- E6 ``simultaneous``: a tick's orders are verified and rolled against the state at the
  start of the tick; their levels then go on the tracks in sheet order, and the rout and
  exhaustion rolls they call are made as each applies.
- X35, X43: becoming engaged calls a rout check of both units, each at its own
  modifiers: the unit attacked (``rout_dice``) first, then the one that closed
  (``own_rout_dice``, the event's ``attacker_rout``); each tier compares the unit's
  Magnitude with the other's as they stand after the attack's damage, and the other's
  Might.  Perfect Morale and solo units (X52) skip it.  A unit's rout triggers from one
  attack make one check at the highest modifier, listing every trigger (X44).
- X49: being engaged clears a unit's Aim, as any other action does.
- X37: both units roll exhaustion after every attack, a miss included.  A unit charged as
  its last action (+1) if that action was a Dash that succeeded (X18: in mass combat a
  dash is a charge; a failed one is a Move), or, for the attacker, if its action before
  the attack was such a Dash or ``charge`` is in the attack's option.
- X39: a unit under Mob Rule may attack only a unit it is engaged with; its idle check is
  made on each resolved tick on which it does not act.
- X26: a rally for Organization adds the order's target as a relay (a character of the
  file) or, without one, an unnamed relay.
- X23 Split Unit: the option is ``NEW NAME; hero: NAME; headcount: N; follow: A, B``; the
  hero defaults to the unit's first, no one else follows unless named, ``dice`` is the
  parent's command roll and ``target_dice`` the new unit's.  The new unit acts when the
  parent next acts, is not engaged, keeps the parent's Endurance and arrows, and is written
  under ``units:`` with ``split_from``.  The parent's headcount is what is left (X50: the
  old headcount less the new unit's; no one died, so X2's row minimum is for losses), its
  Magnitude the X2 row of that, dropping at least one dot; its starting Magnitude drops by
  as many dots (healing, X41); its excess relays fade (X11).
  A split leaving the parent at Magnitude 0, or taking a lone hero (X38: expel her
  instead), is refused.
- X23 Expel Special Character: the option names her; she leaves the unit alive and becomes
  a solo unit named after her (a Units row, like a split), acting next when her old unit
  does.
- X24 Merge Units: the larger unit (greater Magnitude, then headcount, then the order's
  unit) absorbs the smaller, whichever gave the order (``dice``: the order's unit's
  commander's roll; ``target_dice``: the other's); only the order's unit spends the action.  The option may
  name ``leader: NAME`` (both commanders agreeing) and ``leaving: A, B``.  The commander
  who does not lead joins as a hero, added last; special characters beyond 2 × Magnitude
  leave, the last added first.  The merged unit keeps its own typed averages, the lower
  Endurance, its own track and marked levels and both engagements; the absorbed unit
  leaves the battle (``merged_into``).  A solo target joins as a special character
  (option ``as: hero`` by default, or sorcerer or relay), with no roll.
- X11: when a rally for Numbers or a merge raises Magnitude, special characters beyond the
  limit leave (option ``leaving:``, default the last added); at battle end the aftermath
  lists those beyond the limit (the last added).
- X20 spreading out under fire: a ``Change Formation`` order whose option says ``spread``,
  typed on the long tick a ranged attack on the unit resolves; it is rolled after the
  tick's other orders (``dice``; ``rout_dice`` for the rout check it calls), moves nothing
  on the timeline, and is refused when no ranged attack on the unit resolved that tick.
- X27 Initiate Duel: the option may name ``challenger:`` (default the commander, else a
  special character of the unit), ``foe:`` (default the target's commander) and say
  ``willing``; an unwilling foe must first be hit by a called shot (``dice``) with the
  challenger's own pool, no unit bonus and no damage, at the X32 penalty and the foe's own
  DV.  It counts as an attack for the timeline and the target's onslaught (no engagement,
  rout or exhaustion).  A duel begun stops the long ticks: the next resolve needs its
  outcome, an ``Initiate Duel`` order on the duel's long tick whose option is ``result:
  WINNER (or draw); slain: NAMES; wounds: NAME N, NAME N``, and resolves only that (one
  undo step; the duel's long tick has ended, so other orders typed for it are refused).
  The long tick the duel began on finishes first.
- With ``new_units=False`` a Split Unit is refused; with a number (the tracker: its free
  Units rows) at most that many units may split off in the tick, and a split beyond them
  is refused by name.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from sheetsync.core.dice import RandomRoller, Roller
from sheetsync.core.errors import BattleStateError, InputError, Problem
from sheetsync.systems.exalted.rules.actions import (
    RallyKind,
    aim_bonus,
    change_formation,
    command_difficulty,
    command_roll,
    dash_allowed,
    disengage,
    merge_units,
    move_allowed,
    rally,
    signal_units,
    split_unit,
    spread_under_fire,
    turn,
)
from sheetsync.systems.exalted.rules.attack import (
    AttackEvent,
    AttackKind,
    AttackPlan,
    apply_levels,
    attack_odds,
    called_shot_penalty,
    plan_attack,
    resolve_attack,
)
from sheetsync.systems.exalted.rules.dice import PoolRoll, TypedDice, roll_pool
from sheetsync.systems.exalted.rules.formations import (
    Terrain,
    dash_yards,
    formation_after_drill_change,
    move_yards,
)
from sheetsync.systems.exalted.rules.health import alone, health, spend_volley
from sheetsync.systems.exalted.rules.models import (
    Character,
    Formation,
    HouseRules,
    MemberGroup,
    UnitSpec,
)
from sheetsync.systems.exalted.rules.morale import (
    RoutEvent,
    RoutTrigger,
    Weather,
    command_pool,
    command_roller,
    engagement_trigger,
    exhaustion_check,
    exhaustion_difficulty,
    mob_rule_check,
    relays_kept,
    rout_check,
)
from sheetsync.systems.exalted.rules.options import AttackOption, move_option, parse_attack_option
from sheetsync.systems.exalted.rules.state import (
    Battle,
    BattleUnit,
    Duel,
    Order,
    UndoRecord,
    UnitState,
    copy_state,
    in_fight,
)
from sheetsync.systems.exalted.rules.timeline import (
    Action,
    Clock,
    Timeline,
    act_clock,
    defence_penalty,
    join_war,
    timing,
)
from sheetsync.systems.exalted.rules.traits import (
    Entry,
    Trait,
    UnitTraits,
    derive_traits,
    headcount,
    magnitude_for_headcount,
    row_minimum,
    traits_as_it_stands,
    unit_as_it_stands,
)

__all__ = ["TickResult", "acting_ticks", "attack_plans", "battle_roller", "current_unit", "departures_at_end", "odds_json", "resolve",
           "rout_checks", "roll_json",
           "trait_json", "undo", "units_json"]

OPTION_KEYS = {"name", "hero", "headcount", "follow", "leader", "leaving", "as", "challenger", "foe", "result", "slain",
               "wounds"}
"""X23, X24, X27, X11: the ``key: value`` parts an order's option may hold (``;`` between)."""


class _Refused(Exception):
    """An order that breaks a rule: nothing is rolled or applied."""

    def __init__(self, reason: str, rule_ref: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.rule_ref = rule_ref


@dataclass(frozen=True)
class TickResult:
    """One resolved long tick: its events (JSON-ready, with their rolls and rules) and the
    battle after it."""

    tick: int
    events: tuple[dict[str, Any], ...]
    battle: Battle

    def to_json(self) -> dict[str, Any]:
        """``system``, ``tick``, ``events`` and ``units`` (the issue's contract), and the
        next tick on which some unit acts."""
        return {"system": "exalted", "tick": self.tick, "events": list(self.events), "units": units_json(self.battle),
                "next_tick": _timeline(self.battle, list(self.battle.state)).next_tick(),
                "duel": self.battle.duel.model_dump(mode="json") if self.battle.duel is not None else None}


def battle_roller(battle: Battle) -> Roller:
    """E1: the seeded roller of the battle's next tick (``f"{seed}:{ticks resolved}"``), so
    the same file, or the same tick after an undo, rolls the same dice."""
    return RandomRoller(f"{battle.seed}:{len(battle.history)}")


# --- views ---------------------------------------------------------------------------------

def roll_json(r: PoolRoll | None) -> dict[str, Any] | None:
    """E1: a roll for the log: its dice, the faces if known, the successes, and whether the
    dice were rolled or typed (faces or a number of successes)."""
    if r is None:
        return None
    return {"dice": r.dice, "faces": list(r.faces), "successes": r.successes, "source": r.source.value}


def trait_json(t: Trait) -> dict[str, Any]:
    """A derived figure and its breakdown (who gave what, under which rule)."""
    return {"value": t.value, "breakdown": [{"source": e.source, "amount": e.amount, "rule": e.rule}
                                            for e in t.breakdown]}


def _ticks_or_none(battle: Battle) -> dict[str, int]:
    """E4: :func:`acting_ticks`, or nothing when a Join War die is typed wrong (the resolve
    and ``check`` say which)."""
    if battle.started:
        return {}
    try:
        return acting_ticks(battle)[0]
    except InputError:
        return {}


def units_json(battle: Battle) -> list[dict[str, Any]]:
    """Each unit's ``name``, ``magnitude``, ``levels_marked``, ``endurance``, ``formation``,
    ``next_tick`` (before the first resolve: the tick Join War will give, E4, or None),
    ``hesitating``, ``engaged`` and ``special_characters`` (and its side, commander,
    track size, ammunition and whether it is solo, under Mob Rule, or out of the fight,
    ``in_fight``, X34)."""
    out = []
    ticks = _ticks_or_none(battle)
    for s in battle.state:
        out.append({"name": s.name, "side": battle.side_of(s.name), "commander": s.commander,
                    "magnitude": s.magnitude, "starting_magnitude": s.starting_magnitude,
                    "levels_marked": s.marked, "health_levels": s.health_levels, "endurance": s.endurance,
                    "starting_endurance": s.starting_endurance, "formation": s.formation.value,
                    "next_tick": s.next_tick if battle.started else ticks.get(s.name),
                    "hesitating": s.hesitating, "engaged": list(s.engaged),
                    "special_characters": {"heroes": list(s.heroes), "sorcerers": list(s.sorcerers),
                                           "relays": list(s.relays)},
                    "solo": s.solo, "mob_rule": s.mob_rule, "disbanded": s.disbanded, "in_fight": in_fight(s),
                    "ammunition": s.ammunition,
                    "headcount": _headcount(battle, s), "merged_into": s.merged_into,
                    "departed": list(s.departed)})
    return out


def _odds(plan: AttackPlan) -> dict[str, Any]:
    o = attack_odds(plan)
    return {"pool": o.dice, "successes_added": o.automatic, "external_penalty": o.external, "dv": o.dv,
            "successes_needed": o.needed, "p_hit": str(o.p_hit), "p_hit_float": float(o.p_hit),
            "expected_levels": str(o.expected_levels), "expected_levels_float": float(o.expected_levels),
            "rule_ref": "E1, E7, X28-X33"}


# --- the state a tick works on -----------------------------------------------------------

class _Derived:
    """X1-X11, issue 23: a unit's spec and traits as it stands, derived from its state's
    commander, formation, special characters, headcount and Magnitude and from the battle's
    units, characters and house rules (frozen: kept while they are the same objects)."""

    __slots__ = ("units", "characters", "rules", "spec", "traits")

    def __init__(self, units: tuple[BattleUnit, ...], characters: tuple[Character, ...], rules: HouseRules,
                 spec: UnitSpec) -> None:
        self.units, self.characters, self.rules, self.spec = units, characters, rules, spec
        self.traits: UnitTraits | None = None


_DERIVED: dict[tuple[Any, ...], _Derived] = {}
"""Issue 23: the units' specs and traits by name and the state fields they come from, kept
from one long tick to the next (a forecast's ticks find the same units again and again)."""
_DERIVED_MAX = 4096
_COMMANDS: dict[tuple[str, tuple[str, ...]],
                tuple[tuple[BattleUnit, ...], tuple[Character, ...], HouseRules, Trait, bool]] = {}
"""Issue 23: the command pools by commander and relays (:meth:`_Work.command`), kept as
:data:`_DERIVED` is."""


class _Work:
    """The unit states during a tick (a mutable map of frozen values)."""

    def __init__(self, battle: Battle, states: list[UnitState] | None = None, *, new_units: bool | int = True,
                 start_units: int | None = None) -> None:
        self.battle = battle
        self.states: dict[str, UnitState] = {s.name: s for s in (states if states is not None else battle.state)}
        self.new_units = new_units
        self.start_units = len(battle.units) if start_units is None else start_units
        """X23: how many units the battle had when the tick began (units born since take rows)."""
        self.rows_claimed = 0
        """X23: rows taken by Split Unit orders of this batch already verified."""
        self.ranged_on: set[str] = set()
        """X20: units a ranged attack resolved on this tick."""
        self.duel: Duel | None = battle.duel
        self.duel_claimed = False
        """X27: an Initiate Duel order of this batch already passed its checks."""
        self._typed: dict[str, int] = {}
        self.odds = True
        """Issue 23: each attack's event carries its odds (off in a simulation, which prints none)."""
        self.record = True
        """Issue 23: the tick leaves an undo record (off in a simulation, which drops it)."""
        self.detail = True
        """Issue 23: events carry the breakdowns and rolls the tracker shows (off in a
        simulation, which reads only outcomes: the same dice and numbers, fewer texts)."""
        self.follow_parent: dict[str, str] = {}
        """X23: solo units expelled this tick, each acting next when the unit it left does."""
        self._seen: dict[str, tuple[UnitState, Battle, _Derived]] = {}
        """Issue 23: each unit's spec and traits (:data:`_DERIVED`) as last found, with the
        state and battle they were found for (the same objects: nothing to compare)."""
        self._tl: tuple[tuple[UnitState, ...], Timeline] | None = None
        """Issue 23: the timeline of the states as they last stood (:meth:`timeline`)."""

    def copy(self) -> _Work:
        w = _Work(self.battle, list(self.states.values()), new_units=self.new_units, start_units=self.start_units)
        w.duel, w.odds, w.detail = self.duel, self.odds, self.detail
        w._seen, w._tl = self._seen, self._tl  # keyed on frozen objects: safe to share
        return w

    def get(self, name: str) -> UnitState:
        return self.states[name]

    def put(self, st: UnitState, **changes: Any) -> UnitState:
        for k, v in changes.items():
            old = getattr(st, k)
            if old != v or type(old) is not type(v):  # 1 == True, yet a cell would differ
                break
        else:  # nothing changes: no copy (issue 23)
            self.states[st.name] = st
            return st
        new = copy_state(st, changes)
        self.states[st.name] = new
        return new

    def unit(self, name: str) -> BattleUnit:
        u = self.battle.unit(name)
        assert u is not None
        return u

    def character(self, name: str) -> Character:
        c = self.battle.character(name)
        if c is not None:
            return c
        return _mob_leader(self.unit_of_character(name))

    def unit_of_character(self, name: str) -> BattleUnit:
        for u in self.battle.units:
            if _mob_name(u) == name:
                return u
        raise KeyError(name)

    def spec(self, name: str) -> UnitSpec:
        """The unit as it stands: its current commander, formation, special characters and
        whether it has become solo (X34)."""
        return self._derived(name).spec

    def _derived(self, name: str) -> _Derived:
        """Issue 23: the unit's spec and traits as it stands, from :data:`_DERIVED`."""
        st = self.states[name]
        b = self.battle
        seen = self._seen.get(name)
        if seen is not None and seen[0] is st and seen[1] is b:
            return seen[2]
        key = (name, st.commander, st.formation, st.solo, len(st.relays), len(st.heroes), len(st.sorcerers),
               st.headcount, st.magnitude)  # all of the state the spec and the traits are derived from
        got = _DERIVED.get(key)
        if got is None or got.units is not b.units or got.characters is not b.characters or \
                got.rules is not b.house_rules:
            if len(_DERIVED) >= _DERIVED_MAX:
                _DERIVED.clear()
            got = _DERIVED[key] = _Derived(b.units, b.characters, b.house_rules, self._spec(st, name))
        self._seen[name] = (st, b, got)
        return got

    def _spec(self, st: UnitState, name: str) -> UnitSpec:
        u = self.unit(name)
        count = st.headcount
        if count is None and st.magnitude != self.typed_magnitude(u):
            count = row_minimum(st.magnitude)  # X2: after a loss or rally, the row's minimum
        return unit_as_it_stands(u.spec, self.character(st.commander), st.formation, solo=st.solo or u.spec.solo,
                                 relays=len(st.relays), heroes=len(st.heroes), sorcerers=len(st.sorcerers),
                                 headcount=count)

    def typed_magnitude(self, u: BattleUnit) -> int:
        """X2: the Magnitude of the unit's typed headcount (kept per unit for the tick)."""
        mag = self._typed.get(u.name)
        if mag is None:
            mag = self._typed[u.name] = magnitude_for_headcount(headcount(u.spec, self.battle.house_rules).value)
        return mag

    def traits(self, name: str) -> UnitTraits:
        """X1-X11 of the unit as it stands: its current Magnitude decides communication
        failure and so the effective Drill (X3, X11), also where a split left a headcount
        whose row is above it (X50)."""
        got = self._derived(name)
        if got.traits is None:
            got.traits = traits_as_it_stands(got.spec, self.battle.house_rules, self.states[name].magnitude)
        return got.traits

    def timeline(self, battle: Battle | None = None) -> Timeline:
        """E5: the timeline of the states as they stand at ``battle``'s long tick (this
        work's battle by default, :func:`_timeline`); its clocks are kept while every
        state is the same object (issue 23: the orders of a batch are each verified against
        the same states, and the tick's resolve read them just before)."""
        b = self.battle if battle is None else battle
        states = tuple(self.states.values())
        got = self._tl
        if got is not None and len(got[0]) == len(states) and all(map(operator.is_, got[0], states)):
            tl = got[1]
            return tl if tl.tick == b.tick else Timeline(b.tick, tl.clocks)
        tl = _timeline(b, list(states))
        self._tl = (states, tl)
        return tl

    def command(self, name: str) -> tuple[Trait, bool]:
        """X37 (†): the unit's command pool (:func:`command_pool`, its commander's or best
        relay's Charisma + War) and whether the one who rolls it counts a 10 twice (E1);
        kept as :meth:`spec` is (issue 23: every attack rolls two)."""
        st, b = self.states[name], self.battle
        key = (st.commander, st.relays)
        got = _COMMANDS.get(key)
        if got is None or got[0] is not b.units or got[1] is not b.characters or got[2] is not b.house_rules:
            cmdr, relays = self.character(st.commander), self.relays(name)
            if len(_COMMANDS) >= _DERIVED_MAX:
                _COMMANDS.clear()
            got = _COMMANDS[key] = (b.units, b.characters, b.house_rules, command_pool(cmdr, relays),
                                    b.house_rules.double_tens(command_roller(cmdr, relays)))
        return got[3], got[4]

    def relays(self, name: str) -> list[Character]:
        return [c for r in self.get(name).relays if (c := self.battle.character(r)) is not None]


def current_unit(battle: Battle, name: str) -> tuple[UnitSpec, UnitTraits, UnitState]:
    """X1-X11: a unit as it stands (its current commander, formation and special
    characters), its derived traits, and its state."""
    work = _Work(battle)
    return work.spec(name), work.traits(name), work.get(name)


def _mob_name(u: BattleUnit) -> str:
    return f"{u.name}'s average member"


def _mob_leader(u: BattleUnit) -> Character:
    """X39: the average member who commands a leaderless unit (an extra by default)."""
    s = u.spec
    return Character(name=_mob_name(u), dexterity=int(s.avg_dexterity), strength=int(s.avg_strength),
                     stamina=int(s.avg_stamina), valor=int(s.avg_valor), extra=True,
                     abilities={"Melee": int(s.close_ability), "Archery": int(s.ranged_ability)})


def _timeline(battle: Battle, states: list[UnitState]) -> Timeline:
    return Timeline(battle.tick, tuple(Clock(s.name, s.next_tick, s.dv_penalty, s.fixed_dv, s.attacks_suffered,
                                             s.last_action, s.moved_on) for s in states if in_fight(s)))


def _effective_drill(work: _Work, name: str) -> int:
    return work.traits(name).drill.value


# --- the actions ----------------------------------------------------------------------------

Apply = Callable[[_Work, Roller], list[dict[str, Any]]]


def _place(order: Order, key: str = "") -> str:
    return f"orders[{order.row}]" + (f".{key}" if key else "")


def _weapon_speed(work: _Work, order: Order, kind: AttackKind) -> int:
    c = work.character(work.get(order.unit).commander)
    w = c.ranged_weapon if kind is AttackKind.RANGED and c.ranged_weapon is not None else c.close_weapon
    return w.speed


def _take_turn(work: _Work, order: Order, tick: int, weapon_speed: int = 5,
               clocks: tuple[Clock, ...] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """E5: place the action on the timeline (a refusal raises :class:`_Refused`); returns
    the clock changes and the timing for the event.  ``clocks``: those of ``work`` as it
    stands, when the caller has them already."""
    st = work.get(order.unit)
    if clocks is None:
        clocks = work.timeline().clocks
    try:  # act (E5), on the one clock it changes (issue 23: act_clock)
        c, ev = act_clock(Timeline(tick, clocks).clock(order.unit), tick, tick, order.action,
                          weapon_speed=weapon_speed, rules=work.battle.house_rules, where=_place(order, "tick"))
    except InputError as exc:  # its rule is the refusal's own, not repeated in its words
        raise _Refused(exc.problems[0].message.removesuffix(" (E5)"), "E5") from None
    changes: dict[str, Any] = {"next_tick": c.next_tick, "dv_penalty": c.dv_penalty, "fixed_dv": c.fixed_dv,
                               "attacks_suffered": c.attacks_suffered, "last_action": c.last_action,
                               "moved_on": c.moved_on}
    if not ev.timing.reflexive:
        changes.update(hesitating=False, ranged_since=False, charged=False)
        if order.action is not Action.AIM:
            changes.update(aim_target=None, aim_ticks=0)
    del st
    return changes, {"speed": ev.timing.speed, "dv_penalty": ev.timing.dv_penalty, "next_tick": ev.next_tick,
                     "rule_ref": ev.rule_ref}


def _base(order: Order, tick: int, timing: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    ev: dict[str, Any] = {"kind": order.action.value, "order": order.row, "tick": tick, "unit": order.unit}
    if order.target:
        ev["target"] = order.target
    if order.option:
        ev["option"] = order.option
    if timing is not None:
        ev["timing"] = timing
    ev.update(more)
    return ev


def _command(roll: Any) -> dict[str, Any]:
    return {"pool": trait_json(roll.pool), "difficulty": trait_json(roll.difficulty), "roll": roll_json(roll.roll),
            "successes": roll.outcome.net, "success": roll.success}


def _option_words(order: Order) -> str:
    return (order.option or "").strip()


def _attack_option(order: Order) -> AttackOption:
    """X28, X32, X37: the Attack option read (:mod:`.options`); one the syntax does not
    define is refused (the loader names its cell first)."""
    try:
        return parse_attack_option(order.option)
    except ValueError as exc:
        raise _Refused(str(exc), "X28, X32") from None


def _attack_kind(work: _Work, order: Order) -> AttackKind:
    kind = _attack_option(order).kind
    if kind == "ranged":
        return AttackKind.RANGED
    if kind == "close":
        return AttackKind.CLOSE
    spec = work.unit(order.unit).spec
    return AttackKind.RANGED if not spec.close_weapons and spec.ranged_weapons else AttackKind.CLOSE


def _called_victim(order: Order) -> str | None:
    """X32: ``called shot`` (the commander) or ``called shot: NAME``."""
    return _attack_option(order).victim


def _stands(st: UnitState) -> bool:
    """X34: the unit is in the fight (:func:`~sheetsync.systems.exalted.rules.state.in_fight`)."""
    return in_fight(st)


@dataclass
class _AttackPlanned:
    """An attack verified and priced, before any roll."""

    plan: AttackPlan
    kind: AttackKind
    victim: str | None
    envelop: bool
    marked: int
    changes: dict[str, Any]
    timing: dict[str, Any]
    ammunition: int | None


@dataclass
class _AttackPrep:
    planned: _AttackPlanned
    event: AttackEvent
    odds: dict[str, Any] | None


def _plan_order(work: _Work, order: Order, tick: int) -> _AttackPlanned:
    """X28-X33 verified against ``work``: every figure known before the roll."""
    rules = work.battle.house_rules
    st = work.get(order.unit)
    if order.target is None:
        raise _Refused("an attack needs a target unit", "X28")
    if order.target == order.unit:
        raise _Refused("a unit cannot attack itself", "X28")
    tst = work.get(order.target)
    if not _stands(tst):
        raise _Refused(f"{order.target} has left the battle", "X34, X39")
    kind = _attack_kind(work, order)
    spec, tspec = work.spec(order.unit), work.spec(order.target)
    if st.mob_rule and order.target not in st.engaged:
        raise _Refused(f"{order.unit} is under Mob Rule: it only answers the attacks of a unit it is engaged with",
                       "X39")
    if kind is AttackKind.CLOSE and not spec.solo and not spec.close_weapons:
        raise _Refused(f"{order.unit} has no close weapons, so no close attacks", "X6")
    ammo = _volley(work, order, st) if kind is AttackKind.RANGED else st.ammunition
    envelop = _attack_option(order).envelop
    if envelop and kind is AttackKind.RANGED:
        raise _Refused("only a close attack can envelop", "X32")
    if envelop and st.magnitude < tst.magnitude + 1:
        raise _Refused(f"enveloping needs a Magnitude of at least {tst.magnitude + 1} (the target's + 1); "
                       f"{order.unit} has {st.magnitude}", "X32")
    victim, shot_penalty = _called_shot(work, order, tick, tst, kind)
    extra = (2 if envelop else 0) + shot_penalty
    tl = work.timeline()  # the turn below changes no state in work
    changes, timing = _take_turn(work, order, tick, _weapon_speed(work, order, kind), tl.clocks)
    fixed = tl.clock(order.target).fixed_dv
    penalty = defence_penalty(tl, order.target, rules).value
    defender = alone(work.character(victim)) if victim is not None else tspec
    opts: dict[str, Any] = {"rules": rules, "attacker_magnitude": st.magnitude, "defender_magnitude": tst.magnitude,
                            "attacker_endurance": st.endurance, "cover": work.unit(order.target).cover,
                            "extra_external": extra}
    plan = plan_attack(spec, defender, kind, **opts, defender_action_dv=0 if fixed is not None else penalty)
    if fixed is not None:  # E11: after Inactive the DV is set
        plan = plan_attack(spec, defender, kind, **opts, defender_action_dv=max(0, plan.dv.value - fixed))
    internal = plan.internal_penalty
    if spec.solo:  # X1, E10: a solo unit keeps its wound penalty
        internal += health(work.character(st.commander), st.wounds.get(st.commander, 0)).wound_penalty
    aim = aim_bonus(st.aim_ticks) if st.aim_target == order.target else 0
    if aim:
        plan = replace(plan, pool=Trait("Pool", plan.pool.value + aim,
                                        (*plan.pool.breakdown, Entry(f"aimed {st.aim_ticks} long ticks", aim, "X19"))))
    if internal != plan.internal_penalty:
        plan = replace(plan, internal_penalty=internal)
    marked = tst.wounds.get(victim, 0) if victim is not None else tst.marked
    return _AttackPlanned(plan, kind, victim, envelop, marked, changes, timing, ammo)


def _volley(work: _Work, order: Order, st: UnitState) -> int | None:
    """X31: a ranged attack needs the commander's ranged weapon, and spends a volley of a
    unit that counts its ammunition; returns the ammunition left (``None``: not counted)."""
    if work.character(st.commander).ranged_weapon is None:
        raise _Refused(f"{st.commander} has no ranged weapon, so {order.unit} cannot make a ranged attack", "X31")
    if st.ammunition is None:
        return None
    try:
        return spend_volley(order.unit, st.ammunition, where=_place(order))
    except InputError as exc:
        raise _Refused(exc.problems[0].message, "X31") from None


def _called_shot(work: _Work, order: Order, tick: int, tst: UnitState, kind: AttackKind) -> tuple[str | None, int]:
    """X32, X39: the character a called shot singles out of the target (its commander or
    one of its special characters; none in a unit under Mob Rule; a commander only by a
    ranged attack or after an engagement begun on an earlier long tick) and the external
    penalty it adds; ``(None, 0)`` for an attack on the whole unit."""
    victim = _called_victim(order)
    if victim is None:
        return None, 0
    victim = tst.commander if victim.casefold() == "commander" else victim
    if tst.mob_rule:
        raise _Refused(f"{order.target} is under Mob Rule: no one in it can be singled out", "X39")
    if victim != tst.commander and victim not in tst.special_characters:
        raise _Refused(f"{victim!r} is neither the commander nor a special character of {order.target}", "X32")
    if victim == tst.commander:
        since = tst.engaged_since.get(order.unit)
        if kind is not AttackKind.RANGED and (since is None or since >= tick):
            raise _Refused("a called shot at a commander must be ranged, or follow an engagement begun on an "
                           "earlier long tick", "X32")
    t_traits = work.traits(tst.name)
    penalty = called_shot_penalty(t_traits.drill.value, tst.magnitude, unordered=tst.formation is Formation.UNORDERED,
                                  sorcerer=victim in tst.sorcerers).value
    return victim, penalty


def _prepare_attack(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X28-X34 verified and rolled against ``work`` (the start-of-tick state with
    ``simultaneous``); returns what applies it."""
    planned = _plan_order(work, order, tick)
    odds = _odds(planned.plan) if work.odds else None
    ev = resolve_attack(planned.plan, roller, marked=planned.marked, attack_dice=order.dice,
                        damage_dice_typed=order.damage_dice, attack_where=_place(order, "dice"),
                        damage_where=_place(order, "damage_dice"))
    prep = _AttackPrep(planned, ev, odds)

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        return _apply_attack(w, r, order, tick, prep)

    return apply


def _lose_dots(w: _Work, st: UnitState, magnitude: int, marked: int, dots: int, *, rout: bool = False,
               also: Mapping[str, Any] | None = None) -> UnitState:
    """X34, X11: the unit after losing ``dots`` (already taken off ``magnitude``): the largest
    loss and the total (X40), excess relays fade, Magnitude 0 makes it solo with its
    commander's own track.  Destroyed by damage (X34), everyone but the commander is dead
    (``destroyed``: its named members too); brought to 0 by rout (X48), they flee alive.
    ``also``: other changes to the unit, none of them a field read here, written with
    these (issue 23: one copy)."""
    rules = w.battle.house_rules
    changes: dict[str, Any] = {**(also or {}), "magnitude": magnitude, "marked": marked,
                               "dots_lost": st.dots_lost + dots, "largest_loss": max(st.largest_loss, dots)}
    if dots:  # X2: after a loss, the new row's minimum
        changes["headcount"] = row_minimum(magnitude)
    if dots and magnitude > 0:
        keep = relays_kept(magnitude, len(st.relays), len(st.heroes), len(st.sorcerers))
        relays = st.relays[:keep]
        cf = magnitude >= 3 and len(relays) < magnitude
        drill = w.unit(st.name).spec.drill
        eff = max(0, drill - 2) if cf else drill
        changes.update(relays=relays, fallen=(*st.fallen, *st.relays[keep:]),
                       formation=formation_after_drill_change(st.formation, eff, communication_failure=cf,
                                                              rules=rules))
    if dots and magnitude == 0 and not st.solo:
        gone = {"departed": (*st.departed, *st.special_characters)} if rout else \
            {"fallen": (*st.fallen, *st.special_characters), "destroyed": True}
        changes.update(solo=True, heroes=(), sorcerers=(), relays=(), **gone,
                       health_levels=w.character(st.commander).health_levels,
                       marked=st.wounds.get(st.commander, 0))
    return w.put(st, **changes)


def _slain(w: _Work, st: UnitState, victim: str) -> tuple[UnitState, str]:
    """X32, X39: a slain commander is replaced by a named hero, else the unit falls under
    Mob Rule (or disbands); a slain special character leaves its unit's roll; a solo unit
    whose commander falls leaves the battle."""
    fallen = (*st.fallen, victim)
    if victim != st.commander:
        return w.put(st, heroes=tuple(h for h in st.heroes if h != victim),
                     sorcerers=tuple(s for s in st.sorcerers if s != victim),
                     relays=tuple(r for r in st.relays if r != victim), fallen=fallen), \
            f"{victim} is slain (X32)"
    if st.solo or st.magnitude <= 0:
        return w.put(st, disbanded=True, fallen=fallen), f"{victim} falls; {st.name} leaves the battle (X32, X34)"
    if st.heroes:
        hero = st.heroes[0]
        return w.put(st, commander=hero, heroes=st.heroes[1:], fallen=fallen), \
            f"{victim} is slain; the hero {hero} takes command (X32)"
    if not w.battle.house_rules.mob_rule:
        return w.put(st, disbanded=True, fallen=fallen), f"{victim} is slain; leaderless, {st.name} disbands (X39)"
    u = w.unit(st.name)
    leader = _mob_leader(u)
    return w.put(st, commander=leader.name, mob_rule=True, formation=Formation.UNORDERED, relays=(),
                 sorcerers=(), fallen=(*fallen, *st.relays, *st.sorcerers), health_levels=leader.health_levels,
                 marked=0), f"{victim} is slain; with no hero to lead it, {st.name} falls under Mob Rule (X39)"


def _rout(w: _Work, r: Roller, name: str, triggers: list[RoutTrigger], typed: TypedDice, where: str,
          kind: str) -> dict[str, Any] | None:
    """X35, X36: one rout check for one event, at its highest modifier; a failure's dots
    are lost at once, the track empties and excess relays fade (X36)."""
    st = w.get(name)
    if not triggers or not _stands(st) or st.solo:
        return None
    t = w.traits(name)
    ev = rout_check(name, triggers, morale=t.morale.value, magnitude=st.magnitude, drill=t.drill.value,
                    formation=st.formation, roller=r, perfect_morale=t.perfect_morale, marked=st.marked,
                    relays=len(st.relays), heroes=len(st.heroes), sorcerers=len(st.sorcerers),
                    endurance=st.endurance, typed=typed, where=where, rules=w.battle.house_rules,
                    double_tens=w.battle.house_rules.double_tens(w.character(st.commander)))
    _apply_rout(w, ev)
    return _rout_json(ev, kind, detail=w.detail)


def _apply_rout(w: _Work, ev: RoutEvent) -> None:
    st = w.get(ev.unit)
    if not ev.checked or ev.passed:
        return
    if ev.magnitude > 0:  # X36: excess relays fade; at Magnitude 0 everyone flees (X48)
        st = w.put(st, relays=st.relays[:ev.relays], fallen=(*st.fallen, *st.relays[ev.relays:]))
    st = w.put(st, hesitating=True)
    _lose_dots(w, st, ev.magnitude, 0, ev.dots_lost, rout=True)


def _rout_json(ev: RoutEvent, kind: str = "rout", *, detail: bool = True) -> dict[str, Any]:
    """X35, X36: a rout check for the log; without ``detail`` (a simulation) its pool,
    difficulty and roll are ``None``, its outcome the same."""
    return {"kind": kind, "unit": ev.unit, "triggers": [t.value for t in ev.triggers], "checked": ev.checked,
            "pool": trait_json(ev.pool) if detail else None,
            "difficulty": trait_json(ev.difficulty) if detail else None,
            "roll": roll_json(ev.roll) if detail else None,
            "successes": ev.outcome.net if ev.outcome else None, "passed": ev.passed, "hesitating": ev.hesitating,
            "magnitude_lost": ev.dots_lost, "magnitude": ev.magnitude, "rule_ref": ev.rule_ref}


def rout_checks(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """X35, X39, X43: the rout checks an engine event made, in the order they were rolled:
    a Mob Rule check is its own; an attack's are the target's and, when it closed, the
    attacker's (X43); a Disengage's or a spreading out's is the unit's."""
    if event.get("kind") == "Mob Rule check":
        return [dict(event)]
    return [c for c in (event.get("rout"), event.get("attacker_rout")) if isinstance(c, dict)]


def _exhaustion(w: _Work, r: Roller, name: str, typed: TypedDice, where: str, *, charged: bool,
                weather: list[Weather], also: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """X37: after an attack, the unit's reflexive command roll† (always rolled); failure
    costs 1 Endurance.  ``also``: changes to the unit not yet written, none of them a
    field the roll reads, written with its Endurance (issue 23: one copy)."""
    st = w.get(name)
    if not _stands(st):
        if also:
            w.put(st, **also)
        return None
    t = w.traits(name)
    diff = _exhaustion_difficulty(w.unit(name).spec.avg_fatigue, t.morale.value, t.perfect_morale, bool(st.engaged),
                                  charged, tuple(weather))
    pool, double_tens = w.command(name)
    ev = exhaustion_check(name, pool, diff, st.endurance, r, typed=typed, where=where, double_tens=double_tens)
    w.put(st, **{**also, "endurance": ev.endurance} if also else {"endurance": ev.endurance})
    if not w.detail:  # issue 23: a simulation reads the outcome only
        return {"unit": name, "successes": ev.outcome.net, "endurance_before": ev.endurance_before,
                "endurance": ev.endurance, "rule_ref": ev.rule_ref}
    return {"unit": name, "pool": trait_json(ev.pool), "difficulty": trait_json(diff), "roll": roll_json(ev.roll),
            "successes": ev.outcome.net, "endurance_before": ev.endurance_before, "endurance": ev.endurance,
            "rule_ref": ev.rule_ref}


@lru_cache(maxsize=512)
def _exhaustion_difficulty(avg_fatigue: float, morale: int, perfect_morale: bool, engaged: bool, charged: bool,
                           weather: tuple[Weather, ...]) -> Trait:
    """X37: :func:`exhaustion_difficulty`, once for each set of its inputs (a frozen value)."""
    return exhaustion_difficulty(avg_fatigue, morale=morale, perfect_morale=perfect_morale, engaged=engaged,
                                 charged_last=charged, weather=weather)


def _weather(order: Order) -> list[Weather]:
    return [Weather(order.weather.strip().title())] if order.weather else []  # checked by the loader


def _apply_attack(w: _Work, r: Roller, order: Order, tick: int, prep: _AttackPrep) -> list[dict[str, Any]]:
    """X34-X37: the levels on the track (cycling into Magnitude loss), a called shot's
    victim, engagement and envelopment, the target's one rout check, the closing unit's
    own when the attack engages (X43), then both units' exhaustion.

    Issue 23: the attacker's turn (its clock and ammunition) is written with the first
    other change to it, most often its exhaustion, and the target's attack suffered with
    its levels: one copy of each state where there were several.  Nothing read before
    then depends on what the turn changes."""
    planned = prep.planned
    ev, plan, timing, odds = prep.event, planned.plan, planned.timing, prep.odds
    att = w.get(order.unit)
    att_charged = att.charged or _attack_option(order).charge  # X37, X18
    turn = {**planned.changes, "ammunition": planned.ammunition}  # not yet written: see above
    assert order.target is not None
    tst = w.get(order.target)
    tgt_charged = tst.charged  # X37, X18: a dash is a charge
    notes: list[str] = []
    if not _stands(tst):
        w.put(att, **turn)
        return [_base(order, tick, timing, outcome="no effect", reason=f"{order.target} left the battle earlier "
                                                                           "this tick", rule_ref="E6")]
    first_ranged = planned.kind is AttackKind.RANGED and not tst.ranged_since
    if planned.kind is AttackKind.RANGED:
        w.ranged_on.add(order.target)  # X20: it may spread out now
    suffered = {"attacks_suffered": tst.attacks_suffered + 1,
                "ranged_since": tst.ranged_since or planned.kind is AttackKind.RANGED}
    if planned.victim is not None or tst.solo:
        tst = w.put(tst, **suffered)
    dots = 0
    if planned.victim is not None:
        marked = min(tst.wounds.get(planned.victim, 0) + ev.levels, w.character(planned.victim).health_levels)
        tst = w.put(tst, wounds={**tst.wounds, planned.victim: marked})
        if marked >= w.character(planned.victim).health_levels:
            if planned.victim != tst.commander and not tst.engaged:  # X51: out of the battle, not dead
                tst = w.put(tst, **_without(tst, [planned.victim]))
                notes.append(f"{planned.victim} is Incapacitated: out of the battle, not dead, as "
                             f"{order.target} is not engaged (X51)")
            else:  # X51, X32: Incapacitated in an engaged unit, the coup de grâce
                tst, note = _slain(w, tst, planned.victim)
                notes.append(note)
        loss_json: dict[str, Any] = {"value": 0, "levels_marked": marked, "victim": planned.victim, "rule_ref": "X32"}
    elif tst.solo:
        marked = min(tst.marked + ev.levels, tst.health_levels)
        tst = w.put(tst, marked=marked, wounds={**tst.wounds, tst.commander: marked})
        if marked >= tst.health_levels:
            tst, note = _slain(w, tst, tst.commander)
            notes.append(note)
        loss_json = {"value": 0, "levels_marked": marked, "rule_ref": "E10, X1"}
    else:
        loss = apply_levels(tst.marked, ev.levels, tst.health_levels, tst.magnitude)
        dots = loss.dots_lost
        tst = _lose_dots(w, tst, loss.magnitude, loss.marked, dots, also=suffered)
        if loss.magnitude == 0 and dots:
            notes.append(f"{order.target} falls to Magnitude 0: its members and special characters die, "
                         f"{tst.commander} fights on alone (X34)")
        loss_json = {"value": dots, "magnitude": loss.magnitude, "levels_marked": loss.marked, "rule_ref": "X34"}
    triggers: list[RoutTrigger] = []
    if dots and w.get(order.target).magnitude > 0:
        triggers.append(RoutTrigger.MAGNITUDE_LOSS)
    if first_ranged:
        triggers.append(RoutTrigger.FIRST_RANGED)
    att = w.get(order.unit)
    tst = w.get(order.target)
    own_triggers: list[RoutTrigger] = []
    if planned.kind is AttackKind.CLOSE and _stands(tst) and order.target not in att.engaged:
        a_mag, a_might = att.magnitude, w.traits(order.unit).might.value
        triggers.append(engagement_trigger(tst.magnitude, a_mag, a_might))
        # X43: the closing unit has become engaged too, at its own modifiers
        own_triggers.append(engagement_trigger(a_mag, tst.magnitude, w.traits(order.target).might.value))
        # X49: being engaged clears a unit's Aim
        w.put(att, **{**turn, "engaged": (*att.engaged, order.target),
                      "engaged_since": {**att.engaged_since, order.target: tick}, "aim_target": None, "aim_ticks": 0})
        turn = {}
        tst = w.put(tst, engaged=(*tst.engaged, order.unit), engaged_since={**tst.engaged_since, order.unit: tick},
                    aim_target=None, aim_ticks=0)
        notes.append(f"{order.unit} and {order.target} are engaged (X35)")
    if planned.envelop and ev.hit:
        att = w.get(order.unit)
        w.put(att, **{**turn, "enveloping": (*att.enveloping, order.target)})
        turn = {}
        w.put(tst, enveloped_by=(*tst.enveloped_by, order.unit))
        notes.append(f"{order.unit} envelops {order.target} until one disengages (X32)")
    rout = _rout(w, r, order.target, triggers, order.rout_dice, _place(order, "rout_dice"), "rout")
    own_rout = _rout(w, r, order.unit, own_triggers, order.own_rout_dice, _place(order, "own_rout_dice"), "rout")
    weather = _weather(order)
    exhaustion = [e for e in (
        _exhaustion(w, r, order.unit, order.exhaustion_dice, _place(order, "exhaustion_dice"),
                    charged=att_charged, weather=weather, also=turn),
        _exhaustion(w, r, order.target, order.target_exhaustion_dice, _place(order, "target_exhaustion_dice"),
                    charged=tgt_charged, weather=weather)) if e is not None]
    if not w.detail:  # issue 23: a simulation reads the outcome only, not the breakdowns
        return [_base(order, tick, timing, attack=planned.kind.value, hit=ev.hit, odds=odds,
                      successes={"value": ev.successes}, levels={"value": ev.levels}, magnitude_lost=loss_json,
                      rout=rout, attacker_rout=own_rout, exhaustion=exhaustion, notes=notes,
                      called_shot=planned.victim, envelop=planned.envelop, rule_ref=ev.rule_ref)]
    event = _base(order, tick, timing, attack=planned.kind.value, hit=ev.hit, odds=odds,
                  pool={"value": ev.pool, "breakdown": trait_json(plan.pool)["breakdown"],
                        "internal_penalty": plan.internal_penalty, "rule_ref": "X28, E3"},
                  successes={"value": ev.successes, "roll": roll_json(ev.attack_roll), "rule_ref": "E1"},
                  bonus_successes={"value": ev.bonus_successes, "breakdown": trait_json(plan.bonus)["breakdown"],
                                   "magnitude_difference": trait_json(plan.magnitude_difference),
                                   "rule_ref": "X28, X30"},
                  external_penalty={"value": ev.external_penalty, "breakdown": trait_json(plan.external)["breakdown"],
                                    "rule_ref": "E3, X30, X32"},
                  dv={"value": ev.dv, "breakdown": trait_json(plan.dv)["breakdown"], "rule_ref": "X29, E5, E8"},
                  threshold={"value": ev.threshold, "rule_ref": "E2, E7"},
                  raw_damage={"value": ev.raw_damage, "breakdown": trait_json(plan.base_raw)["breakdown"],
                              "rule_ref": "X33"},
                  soak={"value": ev.soak, "breakdown": trait_json(plan.soak)["breakdown"], "rule_ref": "X29, E9"},
                  damage_dice={"value": ev.damage_dice, "minimum": plan.minimum, "roll": roll_json(ev.damage_roll),
                               "damage_type": plan.damage_type.value, "rule_ref": "X33, E9"},
                  levels={"value": ev.levels, "rule_ref": "X33, E10"},
                  magnitude_lost=loss_json, rout=rout, attacker_rout=own_rout, exhaustion=exhaustion, notes=notes,
                  called_shot=planned.victim, envelop=planned.envelop, rule_ref=ev.rule_ref)
    return [event]


def _simple(work: _Work, order: Order, tick: int, **more: Any) -> Apply:
    changes, timing = _take_turn(work, order, tick)

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        w.put(w.get(order.unit), **changes)
        return [_base(order, tick, timing, **more)]

    return apply


def _prepare(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """Verify one order against ``work`` and roll its own dice; returns what applies it.
    A unit that has left the battle does nothing (X34, X39); one under Mob Rule only
    attacks, Guards or Moves (X39); each action has its preparer (:data:`_PREPARERS`)."""
    st = work.get(order.unit)
    if not _stands(st):
        raise _Refused(f"{order.unit} has left the battle", "X34, X39")
    a = order.action
    if st.mob_rule and a not in (Action.ATTACK, Action.GUARD, Action.MOVE):
        raise _Refused(f"{order.unit} is under Mob Rule: it only continues its task, Guards or answers attacks",
                       "X39")
    return _PREPARERS.get(a, _prepare_other)(work, order, tick, roller)


def _prepare_move(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X17, X15: Move (reflexive), never while engaged or hesitating; the yards its
    formation and the terrain allow."""
    st, spec = work.get(order.unit), work.spec(order.unit)
    why = move_allowed(engaged=bool(st.engaged), hesitating=st.hesitating)
    if why:
        raise _Refused(f"{order.unit}: {why}", "X17")
    yards = move_yards(spec, formation=st.formation, terrain=_terrain(order), rules=work.battle.house_rules)
    return _simple(work, order, tick, yards=trait_json(yards), rule_ref="X17, X15")


def _prepare_dash(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X18: Dash.  A solo unit dashes with no roll; any other makes its commander's command
    roll (no relay stands in): success dashes and tires the unit by its average armour
    fatigue, failure only Moves."""
    rules = work.battle.house_rules
    st, spec = work.get(order.unit), work.spec(order.unit)
    why = dash_allowed(st.formation, solo=spec.solo, engaged=bool(st.engaged), hesitating=st.hesitating)
    if why:
        raise _Refused(f"{order.unit}: {why}", "X18")
    changes, timing = _take_turn(work, order, tick)
    if spec.solo:
        yards = dash_yards(spec, formation=st.formation, terrain=_terrain(order), rules=rules)
        return _with_changes(order, tick, timing, changes, yards=trait_json(yards), rule_ref="X18")
    cmdr = work.character(st.commander)
    roll = command_roll(command_pool(cmdr),
                        command_difficulty(st.magnitude, _effective_drill(work, order.unit)), roller,
                        endurance=st.endurance, typed=order.dice, where=_place(order, "dice"),
                        double_tens=rules.double_tens(cmdr))
    if roll.success:
        yards = dash_yards(spec, formation=st.formation, terrain=_terrain(order), rules=rules)
        changes.update(endurance=max(0, st.endurance - int(spec.avg_fatigue)), charged=True)
    else:
        yards = move_yards(spec, formation=st.formation, terrain=_terrain(order), rules=rules)
    return _with_changes(order, tick, timing, changes, command=_command(roll), yards=trait_json(yards),
                         dashed=roll.success, rule_ref="X18")


def _prepare_aim(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X19, E11: Aim at a target unit; each long tick aimed in a row at the same unit adds
    to the bonus of the attack that follows."""
    if order.target is None:
        raise _Refused("Aim needs the target unit it aims at", "X19")
    st = work.get(order.unit)
    changes, timing = _take_turn(work, order, tick)
    ticks = st.aim_ticks + 1 if st.aim_target == order.target else 1
    changes.update(aim_target=order.target, aim_ticks=ticks)
    return _with_changes(order, tick, timing, changes, aim_dice=aim_bonus(ticks), rule_ref="X19, E11")


def _prepare_change_formation(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X13, X20: Change Formation to the formation named in the option: verified first
    with no dice (a refusal rolls nothing), then rolled."""
    rules = work.battle.house_rules
    st = work.get(order.unit)
    try:
        wanted = Formation(_option_words(order).title())
    except ValueError:
        raise _Refused(f"option {order.option!r} is not a formation (Unordered, Skirmish, Relaxed, Close)",
                       "X13") from None
    t = work.traits(order.unit)
    try:
        change_formation(order.unit, st.formation, wanted, commander=work.character(st.commander),
                         relays=work.relays(order.unit), magnitude=st.magnitude, drill=t.drill.value,
                         communication_failure=t.communication_failure,
                         attacked_since=st.attacks_suffered > 0, engaged=bool(st.engaged),
                         endurance=st.endurance, roller=_NoRoll(), typed=0, where=_place(order),
                         rules=rules)
    except InputError as exc:
        raise _Refused(exc.problems[0].message, "X13, X20") from None
    changes, timing = _take_turn(work, order, tick)
    ev = change_formation(order.unit, st.formation, wanted, commander=work.character(st.commander),
                          relays=work.relays(order.unit), magnitude=st.magnitude, drill=t.drill.value,
                          communication_failure=t.communication_failure, attacked_since=st.attacks_suffered > 0,
                          engaged=bool(st.engaged), endurance=st.endurance, roller=roller, typed=order.dice,
                          where=_place(order, "dice"), rules=rules)
    changes["formation"] = ev.formation
    return _with_changes(order, tick, timing, changes, command=_command(ev.roll), formation=ev.formation.value,
                         rule_ref="X20")


def _prepare_disengage(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X21: Disengage from the target (or the first unit it is engaged with); success
    parts the two units, envelopment included, and calls a rout check of the unit."""
    st = work.get(order.unit)
    if not st.engaged:
        raise _Refused(f"{order.unit} is not engaged", "X21")
    enemy = order.target or st.engaged[0]
    if enemy not in st.engaged:
        raise _Refused(f"{order.unit} is not engaged with {enemy}", "X21")
    changes, timing = _take_turn(work, order, tick)
    dis = disengage(order.unit, work.character(st.commander), drill=_effective_drill(work, order.unit),
                    magnitude=st.magnitude, enemy_drill=_effective_drill(work, enemy),
                    enveloped=enemy in st.enveloped_by, enveloping=enemy in st.enveloping,
                    endurance=st.endurance, roller=roller, typed=order.dice, where=_place(order, "dice"),
                    rules=work.battle.house_rules)

    def apply_disengage(w: _Work, r: Roller) -> list[dict[str, Any]]:
        me = w.put(w.get(order.unit), **changes)
        out = _base(order, tick, timing, pool=trait_json(dis.pool), difficulty=trait_json(dis.difficulty),
                    roll=roll_json(dis.roll), successes=dis.outcome.net, disengaged=dis.disengaged, rule_ref="X21")
        if dis.disengaged:
            other = w.get(enemy)
            w.put(me, engaged=tuple(e for e in me.engaged if e != enemy),
                  enveloping=tuple(e for e in me.enveloping if e != enemy),
                  enveloped_by=tuple(e for e in me.enveloped_by if e != enemy))
            w.put(other, engaged=tuple(e for e in other.engaged if e != order.unit),
                  enveloping=tuple(e for e in other.enveloping if e != order.unit),
                  enveloped_by=tuple(e for e in other.enveloped_by if e != order.unit))
            out["rout"] = _rout(w, r, order.unit, [RoutTrigger.DISENGAGED], order.rout_dice,
                                _place(order, "rout_dice"), "rout")
        return [out]

    return apply_disengage


def _prepare_turn(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X22: Turn, a command roll."""
    st = work.get(order.unit)
    changes, timing = _take_turn(work, order, tick)
    roll = turn(work.character(st.commander), work.relays(order.unit), magnitude=st.magnitude,
                drill=_effective_drill(work, order.unit), endurance=st.endurance, roller=roller,
                typed=order.dice, where=_place(order, "dice"), rules=work.battle.house_rules)
    return _with_changes(order, tick, timing, changes, command=_command(roll), rule_ref="X22")


def _prepare_signal(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X25: Signal Units, the units named in the option (or the target), as many as the
    unit has relays."""
    st = work.get(order.unit)
    targets = [t.strip() for t in (order.option or order.target or "").split(",") if t.strip()]
    try:
        reached = signal_units(order.unit, targets, len(st.relays), where=_place(order))
    except InputError as exc:
        raise _Refused(exc.problems[0].message, "X25") from None
    return _simple(work, order, tick, reached=list(reached), rule_ref="X25")


def _prepare_cast(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X27: Cast Spell, its effect as typed in the option."""
    return _simple(work, order, tick, effect=order.option or "", rule_ref="X27")


def _prepare_inactive(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X19, E11: Inactive, which the unit takes only when it is imposed on it."""
    return _simple(work, order, tick, note="Inactive only when imposed on the unit (X19)", rule_ref="X19, E11")


def _prepare_other(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """E11, X19: Guard and Miscellaneous take their turn and nothing more."""
    return _simple(work, order, tick, rule_ref="X19, E11" if order.action is Action.GUARD else "E11")


def _terrain(order: Order) -> Terrain:
    """X16: a Move or Dash option is blank or a terrain (:func:`.options.move_option`)."""
    try:
        name = move_option(order.option)
    except ValueError as exc:
        raise _Refused(str(exc), "X16") from None
    return Terrain(name) if name is not None else Terrain.OPEN


def _with_changes(order: Order, tick: int, timing: dict[str, Any], changes: dict[str, Any], **more: Any) -> Apply:
    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        w.put(w.get(order.unit), **changes)
        return [_base(order, tick, timing, **more)]

    return apply


class _NoRoll:
    """A roller for a verification that must not roll (the dice are typed as 0)."""

    def roll(self, sides: int) -> int:
        return 1


def _prepare_rally(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X26: Organization, Numbers or Second Wind."""
    st = work.get(order.unit)
    head, fields = _fields(order)
    try:
        kind = RallyKind(head.title())
    except ValueError:
        raise _Refused(f"option {order.option!r} is not a rally (Organization, Numbers, Second Wind)", "X26") from None
    side = work.battle.side_of(order.unit)
    larger = sum(s.dots_lost for s in work.states.values()
                 if s.name != order.unit and work.battle.side_of(s.name) == side and s.magnitude > st.magnitude)
    pool_left = st.dots_lost + larger - st.rallied
    t = work.traits(order.unit)
    args: dict[str, Any] = {"magnitude": st.magnitude, "drill": t.drill.value, "relays": len(st.relays),
                            "special_characters": len(st.special_characters), "endurance": st.endurance,
                            "starting_endurance": st.starting_endurance, "formation": st.formation,
                            "pool_left": pool_left, "rules": work.battle.house_rules}
    speaker = work.character(st.commander)
    try:
        rally(order.unit, kind, speaker, **args, roller=_NoRoll(), typed=0, where=_place(order))
    except InputError as exc:
        raise _Refused(exc.problems[0].message, "X26") from None
    if kind is RallyKind.NUMBERS:
        _check_picks(order.unit, list(st.joined_order()), 2 * (st.magnitude + 1), _names(fields.get("leaving")))
    changes, timing = _take_turn(work, order, tick)
    ev = rally(order.unit, kind, speaker, **args, roller=roller, typed=order.dice, where=_place(order, "dice"))
    if ev.roll.success:
        if kind is RallyKind.ORGANIZATION:
            name = order.target if order.target and work.battle.character(order.target) else \
                f"{order.unit} relay {len(st.relays) + 1}"
            changes["relays"] = (*st.relays, name)
        elif kind is RallyKind.NUMBERS:
            changes.update(magnitude=ev.magnitude, rallied=st.rallied + 1, formation=ev.formation)
            changes["headcount"] = ev.headcount  # X2, X26: the new row's minimum, never the typed count
            leaving = _leaving(list(st.joined_order()), 2 * ev.magnitude, _names(fields.get("leaving")))
            changes.update(_without(st, leaving))
            more = {"leaving": list(leaving)} if leaving else {}
            return _with_changes(order, tick, timing, changes, rally=kind.value, command=_command(ev.roll),
                                 magnitude=ev.magnitude, endurance=ev.endurance, rule_ref="X26, X11", **more)
        else:
            changes["endurance"] = ev.endurance
    return _with_changes(order, tick, timing, changes, rally=kind.value, command=_command(ev.roll),
                         magnitude=ev.magnitude, endurance=ev.endurance, rule_ref="X26")


# --- X11, X20, X23, X24, X27 --------------------------------------------------------------

def _fields(order: Order) -> tuple[str, dict[str, str]]:
    """An option as ``HEAD; key: value; flag``: the head (the first part that is not a
    known ``key:``) and the keys and flags, in lower case (X23, X24, X27)."""
    head = ""
    out: dict[str, str] = {}
    for i, part in enumerate(p.strip() for p in (order.option or "").split(";")):
        if not part:
            continue
        key, sep, value = part.partition(":")
        if sep and key.strip().casefold() in OPTION_KEYS:
            out[key.strip().casefold()] = value.strip()
        elif i == 0:
            head = part
        else:
            out.setdefault(part.casefold(), "")
    return head, out


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def _headcount(battle: Battle, st: UnitState) -> int:
    """X2: a unit's headcount now: set by a split or merge; else as typed while its
    Magnitude is the typed one; else its row's minimum (after a loss or a rally)."""
    if st.headcount is not None:
        return st.headcount
    u = battle.unit(st.name)
    typed = headcount(u.spec, battle.house_rules).value if u is not None else row_minimum(st.magnitude)
    return typed if magnitude_for_headcount(typed) == st.magnitude else row_minimum(st.magnitude)


def _check_picks(unit: str, joined: list[str], limit: int, picks: list[str]) -> None:
    """X11: the special characters named to leave must be the unit's, and as many as are
    beyond its limit (``leaving:``); refused before anything is rolled."""
    if not picks:
        return
    for name in picks:
        if name not in joined:
            raise _Refused(f"{name!r} (leaving) is not a special character of {unit}", "X11")
    excess = max(0, len(joined) - limit)
    if len(picks) != excess:
        raise _Refused(f"{unit} would have {excess} special character(s) beyond its limit of {limit}, and the "
                       f"option names {len(picks)} to leave", "X11")


def _leaving(joined: list[str], limit: int, picks: list[str]) -> tuple[str, ...]:
    """X11: who leaves when a unit has more special characters than ``limit``: those named
    (checked by :func:`_check_picks`), else the last added."""
    excess = max(0, len(joined) - limit)
    if not excess:
        return ()
    return tuple(picks) if picks else tuple(joined[len(joined) - excess:])


def _without(st: UnitState, names: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The changes that take ``names`` out of the unit alive (X11, X23)."""
    if not names:
        return {}
    return {"heroes": tuple(h for h in st.heroes if h not in names),
            "sorcerers": tuple(c for c in st.sorcerers if c not in names),
            "relays": tuple(r for r in st.relays if r not in names), "departed": (*st.departed, *names)}


def _new_formation(w: _Work, name: str, st: UnitState, formation: Formation, magnitude: int, relays: int) -> Formation:
    """X11, X13: the formation a unit can hold at ``magnitude`` with ``relays`` relays."""
    cf = magnitude >= 3 and relays < magnitude
    drill = w.unit(name).spec.drill
    eff = max(0, drill - 2) if cf else drill
    return formation_after_drill_change(formation, eff, communication_failure=cf, rules=w.battle.house_rules)


def _prepare_split(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X23 Split Unit (3/−1): a hero of the unit leads ``headcount`` away as a new unit;
    Magnitudes from the headcounts, the parent drops at least one dot; the special
    characters named (``follow:``) go with her, up to the new limit; then both units make
    a command roll† (+2 if the parent was engaged): a failure hesitates and is Unordered."""
    st = work.get(order.unit)
    head, f = _fields(order)
    new_name = (f.get("name") or head).strip()
    _row_refusal(work, new_name)
    if st.solo or st.magnitude < 1:
        raise _Refused(f"{order.unit} is a solo unit: there is no one to split off", "X23, X1")
    if not new_name:
        raise _Refused("Split Unit needs the new unit's name (option: NEW NAME; hero: NAME; headcount: N)", "X23")
    if work.battle.unit(new_name) is not None:
        raise _Refused(f"{new_name!r} is already a unit: the new unit needs a name of its own", "X23")
    hero = f.get("hero") or (st.heroes[0] if st.heroes else "")
    if not hero:
        raise _Refused(f"{order.unit} has no hero to command the new unit", "X23")
    if hero not in st.heroes:
        raise _Refused(f"{hero!r} is not a hero of {order.unit}: only one of its heroes can command the new unit",
                       "X23")
    have = _headcount(work.battle, st)
    try:
        count = int(f.get("headcount", ""))
    except ValueError:
        raise _Refused(f"Split Unit needs the headcount the new unit takes (headcount: N, of {have})", "X23") \
            from None
    if not 1 < count < have:
        raise _Refused(f"the new unit's headcount must be between 2 and {have - 1} ({order.unit} has {have}); a "
                       "hero alone is a special character on her own: expel her instead", "X23, X38")
    new_mag = magnitude_for_headcount(count)
    par_mag = max(0, min(magnitude_for_headcount(have - count), st.magnitude - 1))
    if par_mag < 1:
        raise _Refused(f"{order.unit} would fall to Magnitude 0: it must drop at least one dot (Magnitude "
                       f"{st.magnitude}) and keep one", "X23, X34")
    follow = _names(f.get("follow"))
    for n in follow:
        if n not in st.special_characters or n == hero:
            raise _Refused(f"{n!r} (follow) is not another special character of {order.unit}", "X23")
    if len(follow) > 2 * new_mag:
        raise _Refused(f"{new_name} (Magnitude {new_mag}) can take {2 * new_mag} special character(s), not "
                       f"{len(follow)}", "X11, X23")
    changes, timing = _take_turn(work, order, tick)
    u = work.unit(order.unit)
    hero_c = work.character(hero)
    role = {n: k for k in ("heroes", "sorcerers", "relays") for n in getattr(st, k)}
    roles = {k: tuple(n for n in follow if role[n] == k) for k in ("heroes", "sorcerers", "relays")}
    spec = work.spec(order.unit).model_copy(update={
        "name": new_name, "commander": hero_c, "members": (MemberGroup(kind="Member", count=count - 1, weight=1),),
        "relays": len(roles["relays"]), "heroes": len(roles["heroes"]), "sorcerers": len(roles["sorcerers"])})
    new_drill = derive_traits(spec, work.battle.house_rules).drill.value
    stay = [n for n in st.special_characters if n != hero and n not in follow]
    parent_relays = [c for r in st.relays if r in stay and (c := work.battle.character(r)) is not None]
    new_relays = [c for r in roles["relays"] if (c := work.battle.character(r)) is not None]
    ev = split_unit(order.unit, new_name, parent_commander=work.character(st.commander), hero=hero_c,
                    parent_headcount=have, split_headcount=count, parent_magnitude=st.magnitude,
                    parent_drill=_effective_drill(work, order.unit), new_drill=new_drill,
                    parent_formation=st.formation, followers=follow, new_relays=len(roles["relays"]),
                    parent_relays=parent_relays, new_relay_characters=new_relays, engaged=bool(st.engaged),
                    roller=roller, typed=(order.dice, order.target_dice),
                    wheres=(_place(order, "dice"), _place(order, "target_dice")), parent_endurance=st.endurance,
                    new_endurance=st.endurance, rules=work.battle.house_rules)
    par_count = have - count  # X50: the old headcount less the new unit's
    work.rows_claimed += 1  # X23: verified and rolled, it takes a row

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        me = w.get(order.unit)
        gone = {hero, *follow}
        me = w.put(me, **changes, heroes=tuple(n for n in me.heroes if n not in gone),
                   sorcerers=tuple(n for n in me.sorcerers if n not in gone),
                   relays=tuple(n for n in me.relays if n not in gone))
        keep = relays_kept(ev.parent_magnitude, len(me.relays), len(me.heroes), len(me.sorcerers))
        fading = me.relays[keep:]
        me = w.put(me, relays=me.relays[:keep],
                   fallen=(*me.fallen, *fading), magnitude=ev.parent_magnitude, headcount=par_count,
                   starting_magnitude=max(ev.parent_magnitude,
                                          me.starting_magnitude - (st.magnitude - ev.parent_magnitude)),
                   hesitating=order.unit in ev.hesitating)
        w.put(me, formation=_new_formation(w, order.unit, me, ev.parent_formation, ev.parent_magnitude,
                                           len(me.relays)))
        born = BattleUnit(spec=spec.model_copy(update={"formation": ev.new_formation}), heroes=roles["heroes"],
                          sorcerers=roles["sorcerers"], relays=roles["relays"], cover=u.cover, split_from=order.unit)
        w.battle = w.battle.model_copy(update={"units": (*w.battle.units, born)})
        w.states[new_name] = UnitState(
            name=new_name, magnitude=new_mag, headcount=count, health_levels=hero_c.health_levels,
            endurance=st.endurance, starting_endurance=st.starting_endurance, starting_magnitude=new_mag,
            formation=ev.new_formation, commander=hero, next_tick=changes["next_tick"],
            dv_penalty=changes["dv_penalty"], last_action=Action.SPLIT, hesitating=new_name in ev.hesitating,
            heroes=roles["heroes"], sorcerers=roles["sorcerers"], relays=roles["relays"], added=tuple(follow),
            wounds={n: v for n, v in st.wounds.items() if n in (hero, *follow)}, ammunition=st.ammunition)
        note = (f"{hero} leads {count} of {order.unit}'s {have} away as {new_name} (Magnitude {new_mag}); "
                f"{order.unit} is Magnitude {ev.parent_magnitude}")
        return [_base(order, tick, timing, new_unit=new_name, hero=hero, followers=list(follow),
                      headcount={"parent": par_count, "new": count},
                      magnitude={"parent": ev.parent_magnitude, "new": new_mag},
                      commands={"parent": _command(ev.parent_roll), "new": _command(ev.new_roll)},
                      formation={"parent": w.get(order.unit).formation.value, "new": ev.new_formation.value},
                      hesitating=list(ev.hesitating), fading=list(fading), note=note, rule_ref="X23")]

    return apply


def _row_refusal(work: _Work, new_name: str) -> None:
    """X23: a unit born in the battle needs a Units row of the tracker (``new_units``)."""
    if work.new_units is False:
        raise _Refused("the tracker has no Units row for a unit born during the battle: export the battle "
                       "(sheetsync export) and play this order in its battle file", "X23")
    room = None if work.new_units is True else int(work.new_units)
    if room is not None and len(work.battle.units) - work.start_units + work.rows_claimed >= room:
        raise _Refused(f"the tracker's Units sheet has no free row for {new_name or 'the new unit'} (every row "
                       "holds a unit): export the battle (sheetsync export) and make a tracker with more rows "
                       "(sheetsync new OUT --from battle.yaml)", "X23")


def _prepare_expel(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X23: expelling one special character (0/−0, reflexive, no roll): she leaves the unit
    alive and becomes a solo unit on the field (X1), named after her, on her unit's side,
    with her own track; she acts next when her former unit does (as a split-off unit does,
    X50)."""
    st = work.get(order.unit)
    head, f = _fields(order)
    name = (f.get("name") or head).strip()
    if not name:
        raise _Refused("name the special character to expel in the option", "X23")
    if name == st.commander:
        raise _Refused(f"{name} commands {order.unit}: a commander cannot be expelled", "X23")
    if name not in st.special_characters:
        raise _Refused(f"{name!r} is not a special character of {order.unit}", "X23")
    if work.battle.unit(name) is not None:
        raise _Refused(f"{name!r} is already the name of a unit: the solo unit she becomes needs it", "X23, X1")
    _row_refusal(work, name)
    changes, timing = _take_turn(work, order, tick)
    changes.update(_without(st, [name]))
    work.rows_claimed += 1
    marked = st.wounds.get(name, 0)

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        w.put(w.get(order.unit), **changes)
        _born_solo(w, name, order.unit, marked)
        return [_base(order, tick, timing, expelled=name, new_unit=name,
                      note=f"{name} leaves {order.unit} and fights on as a solo unit (X23, X1)", rule_ref="X23")]

    return apply


def _born_solo(w: _Work, name: str, parent: str, marked: int) -> None:
    """X1, X23, X50: the character ``name`` leaves ``parent`` alive as a solo unit named after
    her, on its side, with her own track (``marked`` levels), acting next when ``parent``
    does; a Units row of the tracker was claimed for her (:func:`_row_refusal`)."""
    u = w.unit(parent)
    char = w.character(name)
    spec = UnitSpec(name=name, side=u.spec.side, commander=char, solo=True, formation=Formation.RELAXED)
    end = derive_traits(spec, w.battle.house_rules).endurance.value
    w.battle = w.battle.model_copy(update={"units": (*w.battle.units, BattleUnit(spec=spec, cover=u.cover,
                                                                                  split_from=parent))})
    w.states[name] = UnitState(
        name=name, magnitude=0, solo=True, health_levels=char.health_levels, marked=marked,
        wounds={name: marked} if marked else {}, endurance=end, starting_endurance=end, starting_magnitude=0,
        formation=Formation.RELAXED, commander=name, next_tick=w.get(parent).next_tick)
    w.follow_parent[name] = parent


def _prepare_merge(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X24 Merge Units (3/−1): both commanders roll; a failure: no merge, and each unit
    that failed hesitates.  Success: the larger unit (the greater Magnitude, then the
    greater headcount, then the order's unit) absorbs the smaller, whichever gave the
    order: the smaller ceases to exist and the merged unit keeps the larger's typed traits,
    Drill among them.  The larger unit's commander leads unless ``leader:`` says otherwise,
    and special characters beyond the limit leave (``leaving:``, default the last added,
    X11).  The commander who does not lead joins as a hero if there is room; if not, he
    becomes a solo unit (X50).  A solo target joins as a special character with no roll."""
    st = work.get(order.unit)
    other = order.target
    if other is None or other == order.unit:
        raise _Refused("Merge Units needs the other unit as its target", "X24")
    ost = work.get(other)
    if not _stands(ost):
        raise _Refused(f"{other} has left the battle", "X24, X34")
    if work.battle.side_of(other) != work.battle.side_of(order.unit):
        raise _Refused(f"{other} is not on {order.unit}'s side: only allies merge", "X24")
    if ost.mob_rule:
        raise _Refused(f"{other} is under Mob Rule: it only continues its task, Guards or answers attacks", "X39")
    if st.solo:
        raise _Refused(f"{order.unit} is a solo unit: to join {other} as a special character, give {other} the "
                       f"order with {order.unit} as its target", "X24")
    head, f = _fields(order)
    if ost.solo:
        return _prepare_join(work, order, tick, ost, f.get("as") or head or "hero")
    mine, theirs = _headcount(work.battle, st), _headcount(work.battle, ost)
    swap = (ost.magnitude, theirs) > (st.magnitude, mine)  # X24: the larger absorbs the smaller
    big, small = (ost, st) if swap else (st, ost)
    counts = (theirs, mine) if swap else (mine, theirs)
    mag = magnitude_for_headcount(sum(counts))
    leader = f.get("leader") or None
    if leader is not None and leader not in (st.commander, ost.commander):
        raise _Refused(f"{leader!r} (leader) commands neither {order.unit} nor {other}", "X24")
    chief = leader or big.commander
    second = small.commander if chief == big.commander else big.commander
    joined = [*big.joined_order(), *small.joined_order(), second]
    picks = _names(f.get("leaving"))
    _check_picks(big.name, joined, 2 * mag, picks)
    order_list = [n for n in joined if n not in picks] + picks
    changes, timing = _take_turn(work, order, tick)
    cells = (order.target_dice, order.dice) if swap else (order.dice, order.target_dice)
    places = (_place(order, "target_dice"), _place(order, "dice")) if swap else \
        (_place(order, "dice"), _place(order, "target_dice"))
    ev = merge_units(big.name, small.name,
                     commanders=(work.character(big.commander), work.character(small.commander)),
                     headcounts=counts, magnitudes=(big.magnitude, small.magnitude),
                     drills=(_effective_drill(work, big.name), _effective_drill(work, small.name)),
                     special_characters=order_list, leader=chief, roller=roller, typed=cells, wheres=places,
                     endurances=(big.endurance, small.endurance), rules=work.battle.house_rules)
    role = {n: k for s in (st, ost) for k in ("heroes", "sorcerers", "relays") for n in getattr(s, k)}
    role[second] = "heroes"
    by_unit = {big.name: ev.rolls[0], small.name: ev.rolls[1]}
    alone = ev.merged and second in ev.leaving  # X50: no room for him: a solo unit
    if alone:
        if work.battle.unit(second) is not None:
            raise _Refused(f"{second!r} is already the name of a unit: the solo unit he becomes needs it", "X50")
        _row_refusal(work, second)
        work.rows_claimed += 1
    second_marked = {**ost.wounds, **st.wounds}.get(second, 0)

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        me, ot = w.get(big.name), w.get(small.name)
        rolls = {"unit": _command(by_unit[order.unit]) if by_unit[order.unit] else None,
                 "target": _command(by_unit[other]) if by_unit[other] else None}
        if not ev.merged:
            w.put(w.get(order.unit), **{**changes, "hesitating": order.unit in ev.hesitating})
            if other in ev.hesitating:
                w.put(w.get(other), hesitating=True)
            return [_base(order, tick, timing, merged=False, commands=rolls, hesitating=list(ev.hesitating),
                          note=f"no merge: {', '.join(ev.hesitating)} failed and hesitate", rule_ref="X24")]
        kept = [n for n in order_list if n not in ev.leaving]
        by = {k: tuple(n for n in kept if role[n] == k) for k in ("heroes", "sorcerers", "relays")}
        enemies = tuple(dict.fromkeys(e for e in (*me.engaged, *ot.engaged) if e not in (big.name, small.name)))
        since = {e: min(me.engaged_since.get(e, tick), ot.engaged_since.get(e, tick)) for e in enemies}
        lead = w.character(ev.commander)
        own = changes if not swap else {}  # the order's unit spent the action; the larger keeps its clock
        me = w.put(me, **own, magnitude=ev.magnitude, headcount=ev.headcount, commander=ev.commander,
                   **by, added=(*me.added, *(n for n in kept if n not in me.special_characters)),
                   departed=(*me.departed, *ev.leaving), engaged=enemies, engaged_since=since,
                   enveloping=tuple(dict.fromkeys((*me.enveloping, *ot.enveloping))),
                   enveloped_by=tuple(dict.fromkeys((*me.enveloped_by, *ot.enveloped_by))),
                   endurance=min(me.endurance, ot.endurance), health_levels=lead.health_levels,
                   marked=min(me.marked, lead.health_levels - 1), wounds={**ot.wounds, **me.wounds},
                   ammunition=me.ammunition if me.ammunition is not None else ot.ammunition)
        w.put(me, formation=_new_formation(w, big.name, me, me.formation, ev.magnitude, len(me.relays)))
        w.put(ot, **(changes if swap else {}), disbanded=True, merged_into=big.name, heroes=(), sorcerers=(),
              relays=(), engaged=(), engaged_since={}, enveloping=(), enveloped_by=())
        _retarget(w, small.name, big.name)
        if alone:
            _born_solo(w, second, big.name, second_marked)
        return [_base(order, tick, timing, merged=True, commands=rolls, headcount=ev.headcount,
                      magnitude=ev.magnitude, commander=ev.commander, leaving=list(ev.leaving),
                      absorbed_into=big.name,
                      note=f"{small.name} merges into {big.name}: headcount {ev.headcount}, Magnitude "
                           f"{ev.magnitude}, led by {ev.commander}", rule_ref="X24, X11")]

    return apply


def _retarget(w: _Work, old: str, new: str) -> None:
    """X24: the enemies engaged with a unit that merged are engaged with the merged unit."""
    def swap(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(new if n == old else n for n in names))

    for st in list(w.states.values()):
        if st.name in (old, new) or old not in (*st.engaged, *st.enveloping, *st.enveloped_by):
            continue
        since = {(new if k == old else k): v for k, v in st.engaged_since.items()}
        w.put(st, engaged=swap(st.engaged), enveloping=swap(st.enveloping), enveloped_by=swap(st.enveloped_by),
              engaged_since=since)


def _prepare_join(work: _Work, order: Order, tick: int, ost: UnitState, as_role: str) -> Apply:
    """X24: a solo unit joins the order's unit as a special character: no roll, within the
    limit of 2 × Magnitude (X11)."""
    st = work.get(order.unit)
    key = {"hero": "heroes", "heroes": "heroes", "sorcerer": "sorcerers", "sorcerers": "sorcerers",
           "relay": "relays", "relays": "relays"}.get(as_role.strip().casefold())
    if key is None:
        raise _Refused(f"as {as_role!r}: a solo unit joins as a hero, sorcerer or relay", "X24, X11")
    if len(st.special_characters) >= 2 * st.magnitude:
        raise _Refused(f"{order.unit} already has {len(st.special_characters)} special characters, its limit "
                       f"(2 × Magnitude {st.magnitude})", "X11, X24")
    if ost.engaged:
        raise _Refused(f"{ost.name} is engaged: it must Disengage before it joins", "X21, X24")
    changes, timing = _take_turn(work, order, tick)
    name = ost.commander

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        me = w.get(order.unit)
        w.put(me, **changes, **{key: (*getattr(me, key), name)}, added=(*me.added, name),
              wounds={**me.wounds, name: w.get(ost.name).wounds.get(name, w.get(ost.name).marked)})
        w.put(w.get(ost.name), disbanded=True, merged_into=order.unit)
        return [_base(order, tick, timing, merged=True, joined=name, role=key, commands=None,
                      note=f"{name} joins {order.unit} as one of its {key} (no roll)", rule_ref="X24, X11")]

    return apply


def _prepare_duel(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X27 Initiate Duel: counts as an attack; an unwilling foe must first be hit by a called
    shot without unit bonuses (no damage); a duel begun stops the long ticks."""
    st = work.get(order.unit)
    head, f = _fields(order)
    if "result" in f:
        raise _Refused("no duel is being fought: a duel's result is typed only while its duel stops the long "
                       "ticks", "X27")
    target = order.target
    if target is None or target == order.unit:
        raise _Refused("Initiate Duel needs the enemy unit as its target", "X27")
    tst = work.get(target)
    if not _stands(tst):
        raise _Refused(f"{target} has left the battle", "X27, X34")
    if work.battle.side_of(target) == work.battle.side_of(order.unit):
        raise _Refused(f"{target} is on {order.unit}'s side: a duel is fought with an enemy", "X27")
    if tst.mob_rule:
        raise _Refused(f"{target} is under Mob Rule: no one in it can be singled out", "X39")
    if work.duel is not None or work.duel_claimed:
        raise _Refused("a duel is begun already on this long tick: one duel at a time", "X27")
    challenger = f.get("challenger") or st.commander
    if challenger != st.commander and challenger not in (*st.heroes, *st.sorcerers):
        raise _Refused(f"{challenger!r} is neither the commander nor a hero or sorcerer of {order.unit}", "X27")
    foe = f.get("foe") or tst.commander
    if foe != tst.commander and foe not in tst.special_characters:
        raise _Refused(f"{foe!r} is neither the commander nor a special character of {target}", "X27, X32")
    flags = {k for k, v in f.items() if not v} | {w.strip().casefold() for w in head.split(",") if w.strip()}
    willing = "willing" in flags
    ch = work.character(challenger)
    kind = AttackKind.RANGED if "ranged" in flags else AttackKind.CLOSE
    if kind is AttackKind.RANGED and ch.ranged_weapon is None:
        raise _Refused(f"{challenger} has no ranged weapon", "X27, X31")
    penalty = 0
    if not willing:
        if foe == tst.commander:
            since = tst.engaged_since.get(order.unit)
            if kind is not AttackKind.RANGED and (since is None or since >= tick):
                raise _Refused("the called shot at a commander must be ranged, or follow an engagement begun on an "
                               "earlier long tick", "X27, X32")
        penalty = called_shot_penalty(work.traits(target).drill.value, tst.magnitude,
                                      unordered=tst.formation is Formation.UNORDERED,
                                      sorcerer=foe in tst.sorcerers).value
    w_speed = (ch.ranged_weapon.speed if kind is AttackKind.RANGED and ch.ranged_weapon is not None
               else ch.close_weapon.speed)
    changes, timing = _take_turn(work, order, tick, w_speed)
    work.duel_claimed = True
    shot: dict[str, Any] | None = None
    hit = willing
    if not willing:
        tl = _timeline(work.battle, list(work.states.values()))
        fixed = tl.clock(target).fixed_dv
        action_dv = defence_penalty(tl, target, work.battle.house_rules).value
        opts: dict[str, Any] = {"rules": work.battle.house_rules, "attacker_magnitude": 0, "defender_magnitude": 0,
                                "extra_external": penalty, "attacker_endurance": st.endurance}  # X4
        plan = plan_attack(alone(ch), alone(work.character(foe)), kind, **opts,
                           defender_action_dv=0 if fixed is not None else action_dv)
        if fixed is not None:
            plan = plan_attack(alone(ch), alone(work.character(foe)), kind, **opts,
                               defender_action_dv=max(0, plan.dv.value - fixed))
        wound = health(ch, st.wounds.get(challenger, 0)).wound_penalty
        dice = max(0, plan.pool.value - plan.internal_penalty - wound)
        roll = roll_pool(dice, roller, order.dice, where=_place(order, "dice"), double_tens=plan.double_tens)
        net = max(0, roll.successes + plan.automatic - plan.external.value)
        hit = net - plan.dv.value >= 1
        shot = {"pool": {"value": dice, "breakdown": trait_json(plan.pool)["breakdown"], "wound_penalty": wound},
                "roll": roll_json(roll), "successes": roll.successes,
                "external_penalty": {"value": plan.external.value,
                                     "breakdown": trait_json(plan.external)["breakdown"]},
                "dv": {"value": plan.dv.value, "breakdown": trait_json(plan.dv)["breakdown"]},
                "hit": hit, "damage": 0, "rule_ref": "X27, X32, E7"}

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        w.put(w.get(order.unit), **changes)
        t = w.get(target)
        if not _stands(t):
            return [_base(order, tick, timing, duel=False, note=f"{target} left the battle earlier this tick",
                          rule_ref="E6, X27")]
        w.put(t, attacks_suffered=t.attacks_suffered + 1)
        if hit and w.duel is None:
            w.duel = Duel(challenger=challenger, challenger_unit=order.unit, foe=foe, foe_unit=target, tick=tick)
        note = (f"{challenger} and {foe} fight a duel: the long ticks stop until its result is typed (X27)" if hit
                else f"{foe} is not hit by the called shot: no duel (X27)")
        return [_base(order, tick, timing, challenger=challenger, foe=foe, willing=willing, called_shot=shot,
                      duel=hit, note=note, rule_ref="X27")]

    return apply


_PREPARERS: dict[Action, Callable[[_Work, Order, int, Roller], Apply]] = {
    Action.ATTACK: _prepare_attack,  # X28-X34
    Action.MOVE: _prepare_move,  # X17
    Action.DASH: _prepare_dash,  # X18
    Action.AIM: _prepare_aim,  # X19
    Action.CHANGE_FORMATION: _prepare_change_formation,  # X20
    Action.DISENGAGE: _prepare_disengage,  # X21
    Action.TURN: _prepare_turn,  # X22
    Action.SIGNAL: _prepare_signal,  # X25
    Action.RALLY: _prepare_rally,  # X26
    Action.SPLIT: _prepare_split,  # X23
    Action.EXPEL: _prepare_expel,  # X23
    Action.MERGE: _prepare_merge,  # X24
    Action.DUEL: _prepare_duel,  # X27
    Action.CAST: _prepare_cast,  # X27
    Action.INACTIVE: _prepare_inactive,  # X19
}
"""E11, X17-X34: the preparer of each action (Guard and Miscellaneous: :func:`_prepare_other`)."""


def _is_spread(order: Order) -> bool:
    return order.action is Action.CHANGE_FORMATION and "spread" in _option_words(order).casefold()


def _spread(w: _Work, order: Order, tick: int, r: Roller, done: set[str]) -> list[dict[str, Any]]:
    """X20: after a ranged attack on it resolved, the reflexive Change Formation roll†:
    success puts the unit in Skirmish before the next tick and calls a rout check (+0, and
    Skirmish's +2)."""
    st = w.get(order.unit)
    if st.solo:
        raise _Refused(f"{order.unit} is a solo unit: it has no formation to spread", "X20, X1")
    if order.unit not in w.ranged_on:
        raise _Refused(f"no ranged attack on {order.unit} resolved on long tick {tick}: it spreads out only after "
                       "one", "X20")
    if order.unit in done:
        raise _Refused(f"{order.unit} already tried to spread out on long tick {tick}", "X20")
    if st.formation is Formation.SKIRMISH:
        raise _Refused(f"{order.unit} is in Skirmish already", "X20")
    t = w.traits(order.unit)
    args: dict[str, Any] = {"commander": w.character(st.commander), "relays": w.relays(order.unit),
                            "magnitude": st.magnitude, "drill": t.drill.value,
                            "communication_failure": t.communication_failure, "engaged": bool(st.engaged),
                            "endurance": st.endurance, "rules": w.battle.house_rules}
    try:
        spread_under_fire(order.unit, st.formation, **args, roller=_NoRoll(), typed=0, where=_place(order))
    except InputError as exc:
        raise _Refused(exc.problems[0].message, "X13, X20") from None
    done.add(order.unit)
    ev = spread_under_fire(order.unit, st.formation, **args, roller=r, typed=order.dice, where=_place(order, "dice"))
    out = _base(order, tick, None, spread=True, command=_command(ev.roll), formation=ev.formation.value,
                rule_ref="X20")
    if ev.rout_trigger is not None:
        w.put(st, formation=ev.formation)
        out["rout"] = _rout(w, r, order.unit, [ev.rout_trigger], order.rout_dice, _place(order, "rout_dice"), "rout")
    return [out]


def departures_at_end(battle: Battle) -> dict[str, list[str]]:
    """X11: at battle end, the special characters of each unit beyond its limit of 2 ×
    Magnitude leave, the last added first."""
    out: dict[str, list[str]] = {}
    for st in battle.state:
        if not in_fight(st) or st.solo:
            continue
        gone = _leaving(list(st.joined_order()), 2 * st.magnitude, [])
        if gone:
            out[st.name] = list(gone)
    return out


def _decide_duel(battle: Battle, duel: Duel) -> TickResult:
    """X27: the Storyteller's outcome of the duel that stopped the long ticks: an Initiate
    Duel order on the duel's long tick whose option is ``result: WINNER (or draw); slain:
    NAMES; wounds: NAME N, ...``.  Only it resolves; the long ticks then go on."""
    typed = [o for o in battle.orders if o.action is Action.DUEL and "result" in _fields(o)[1]]
    found = [o for o in typed if o.tick == duel.tick]
    if not found:
        raise BattleStateError(
            f"{duel.challenger} ({duel.challenger_unit}) and {duel.foe} ({duel.foe_unit}) fight a duel begun on long "
            f"tick {duel.tick}: it stops the long ticks until its outcome is typed, as an Initiate Duel order on "
            f"long tick {duel.tick} with option \"result: WINNER (or draw); slain: NAMES; wounds: NAME N\" (X27)")
    order = found[0]
    _, f = _fields(order)
    where = _place(order, "option")
    fighters = {duel.challenger: duel.challenger_unit, duel.foe: duel.foe_unit}
    problems: list[Problem] = []
    winner = f["result"]
    if winner.casefold() != "draw" and winner not in fighters:
        problems.append(Problem(where, f"result {winner!r} is neither {duel.challenger} nor {duel.foe}, nor draw "
                                       "(X27)"))
    slain = _names(f.get("slain"))
    wounds: dict[str, int] = {}
    for n in slain:
        if n not in fighters:
            problems.append(Problem(where, f"slain {n!r} did not fight the duel (X27)"))
    for part in _names(f.get("wounds")):
        name, _, num = part.rpartition(" ")
        if name.strip() not in fighters or not num.isdigit():
            problems.append(Problem(where, f"wounds {part!r} is not a duellist's name and a number of levels (X27)"))
        else:
            wounds[name.strip()] = int(num)
    if problems:
        raise InputError(problems)
    work = _Work(battle)
    notes: list[str] = []
    for name, levels in wounds.items():
        st = work.get(fighters[name])
        hl = work.character(name).health_levels
        marked = min(st.wounds.get(name, 0) + levels, hl)
        st = work.put(st, wounds={**st.wounds, name: marked})
        if st.solo and name == st.commander:
            st = work.put(st, marked=marked)
        if marked >= hl and name not in slain:
            slain.append(name)
    for name in slain:
        st = work.get(fighters[name])
        if name in st.fallen or not _stands(st):
            continue
        _, note = _slain(work, st, name)
        notes.append(note)
    event = {"kind": "Duel outcome", "order": order.row, "tick": battle.tick, "unit": order.unit,
             "option": order.option, "challenger": duel.challenger, "foe": duel.foe, "winner": winner,
             "slain": slain, "wounds": wounds, "notes": notes,
             "note": f"the duel of {duel.challenger} and {duel.foe}: {winner}" + (f"; {', '.join(notes)}" if notes
                                                                                 else ""),
             "rule_ref": "X27"}
    after = tuple(work.states[s.name] for s in battle.state)
    record = UndoRecord.of(tick=battle.tick, started=battle.started, orders=battle.orders, before=battle.state,
                           after=after, duel=duel)
    passed = [o for o in battle.orders if o is not order and o.tick <= battle.tick]
    refused = [{"kind": "refused", "order": o.row, "tick": o.tick, "unit": o.unit, "action": o.action.value,
                "reason": f"long tick {o.tick} has passed (the duel's outcome is resolved on its own)",
                "rule_ref": "E5, X27"} for o in passed]
    later = tuple(o.model_copy(update={"row": i})
                  for i, o in enumerate(o for o in battle.orders if o is not order and o.tick > battle.tick))
    new = battle.model_copy(update={"state": after, "orders": later, "history": (*battle.history, record),
                                    "duel": None})
    return TickResult(battle.tick, (event, *refused), new)


# --- the loop ---------------------------------------------------------------------------------

def _join_war(battle: Battle, work: _Work, roller: Roller) -> dict[str, Any]:
    """E4: every unit rolls Join War; the best acts on long tick 0, the others later.
    Without ``detail`` (a simulation) each roll's pool and dice are ``None``, its successes
    and tick the same (issue 23)."""
    entries = [(work.spec(u.name), work.get(u.name).magnitude) for u in battle.units]
    joined = join_war(entries, roller, [u.join_war for u in battle.units],
                      where=[f"units[{i}].join_war" for i in range(len(battle.units))], rules=battle.house_rules,
                      endurances=[work.get(u.name).endurance for u in battle.units])
    for r in joined.rolls:
        work.put(work.get(r.unit), next_tick=r.tick)
    detail = work.detail
    return {"kind": "Join War", "tick": 0, "rule_ref": "E4",
            "rolls": [{"unit": r.unit, "pool": trait_json(r.pool) if detail else None,
                       "roll": roll_json(r.roll) if detail else None, "successes": r.roll.successes,
                       "tick": r.tick} for r in joined.rolls]}


def acting_ticks(battle: Battle) -> tuple[dict[str, int], dict[str, Any] | None]:
    """E4, E5: the long tick on which each unit in the fight acts next and, before the
    first resolve, the Join War event that decides it.  Join War is rolled exactly as that
    resolve rolls it (the typed Join War dice, else the battle's seeded roller, drawn
    first), so ``status``, ``pools``, ``check`` and the tracker show the ticks ``resolve``
    will give, as long as the seed and the Join War dice stay as they are.  A Join War die
    typed wrong for its pool raises :class:`InputError` naming it."""
    if battle.started:
        return {s.name: s.next_tick for s in battle.state if in_fight(s)}, None
    work = _Work(battle)
    event = _join_war(battle, work, battle_roller(battle))
    return {r["unit"]: r["tick"] for r in event["rolls"] if in_fight(work.get(r["unit"]))}, event


def _mob_checks(work: _Work, tick: int, acting: set[str], roller: Roller) -> list[dict[str, Any]]:
    """X39: each leaderless unit idle on this tick checks for rout, harder each time."""
    out = []
    for st in list(work.states.values()):
        if not st.mob_rule or not in_fight(st) or st.name in acting or st.solo:
            continue
        t = work.traits(st.name)
        ev = mob_rule_check(st.name, morale=t.morale.value, magnitude=st.magnitude, drill=t.drill.value,
                            earlier_checks=st.mob_checks, roller=roller, perfect_morale=t.perfect_morale,
                            marked=st.marked, endurance=st.endurance, rules=work.battle.house_rules,
                            double_tens=work.battle.house_rules.double_tens(work.character(st.commander)))
        work.put(st, mob_checks=st.mob_checks + 1)
        _apply_rout(work, ev)
        out.append(_rout_json(ev, "Mob Rule check") | {"tick": tick})
    return out


def _guard_refused(work: _Work, names: set[str], tick: int, roller: Roller) -> list[dict[str, Any]]:
    """X47: a unit whose tick came and whose orders were all refused Guards (Speed 3), so it
    acts again on the tick that gives; the refusals stay in the log with their reasons."""
    out: list[dict[str, Any]] = []
    for name in [u.name for u in work.battle.units if u.name in names]:
        st = work.get(name)
        if not _stands(st) or st.merged_into is not None or st.next_tick > tick:
            continue
        try:
            got = _prepare(work, Order(tick=tick, unit=name, action=Action.GUARD, row=-1), tick, roller)(work, roller)
        except _Refused:
            continue
        for e in got:
            e.update(kind="Guard (order refused)", rule_ref="X47, X19")
        out.extend(got)
    return out


def _dice_problem(exc: InputError) -> bool:
    return any("dice" in p.where or "join_war" in p.where for p in exc.problems)


def _refusal(o: Order, tick: int, reason: str, rule_ref: str) -> dict[str, Any]:
    """The event of an order refused on long tick ``tick``: why, and the rule that says so."""
    return {"kind": "refused", "order": o.row, "tick": tick, "unit": o.unit, "action": o.action.value,
            "reason": reason, "rule_ref": rule_ref}


def _tick_to_resolve(battle: Battle, tl: Timeline, tick: int | None) -> int:
    """E5: the long tick to resolve: the next one on which a unit acts, or ``tick`` when it
    is neither past (once the battle has started) nor after that one."""
    due = tl.next_tick()
    if tick is None:
        return due
    if tick < battle.tick and battle.started:
        raise InputError([Problem("tick", f"long tick {tick} has passed: the battle is at long tick {battle.tick} "
                                          "(E5)")])
    if tick > due:
        first = ", ".join(c.unit for c in tl.clocks if c.next_tick == due)
        raise InputError([Problem("tick", f"long tick {tick} comes after long tick {due}, when {first} acts: "
                                          f"resolve long tick {due} first (E5)")])
    return tick


def _tick_orders(battle: Battle, tick: int, acting: set[str],
                 events: list[dict[str, Any]]) -> tuple[list[Order], list[Order], set[str]]:
    """E5, X19, X20: the orders of long tick ``tick`` in sheet order.  An order of a tick
    that passed without its unit acting is refused (into ``events``); spreading out under
    fire waits until the tick's other orders are done (X20); a unit that acts now with no
    order but a reflexive one Guards.  Returns the orders, the spreads and the units with
    an order that takes their action."""
    ordered: list[Order] = []
    for o in battle.orders:
        if o.tick < tick:
            events.append(_refusal(o, o.tick, f"long tick {o.tick} has passed, and {o.unit} did not act on it",
                                   "E5"))
        elif o.tick == tick:
            ordered.append(o)
    spreads = [o for o in ordered if _is_spread(o)]
    ordered = [o for o in ordered if not _is_spread(o)]
    with_order = {o.unit for o in ordered if o.action not in (Action.MOVE, Action.DISENGAGE, Action.EXPEL)}
    for name in sorted(acting - with_order, key=lambda n: [u.name for u in battle.units].index(n)):
        ordered.append(Order(tick=tick, unit=name, action=Action.GUARD, row=-1))
    return ordered, spreads, with_order


def _verify_batch(snap: _Work, batch: list[Order], tick: int, roller: Roller, events: list[dict[str, Any]],
                  problems: list[Problem]) -> list[tuple[Order, Apply]]:
    """E6: each order of a batch verified and rolled against the state the batch began
    with; a refused order is logged with its reason, a die typed wrong is kept for the
    one error raised at the end."""
    applies: list[tuple[Order, Apply]] = []
    for o in batch:
        try:
            applies.append((o, _prepare(snap, o, tick, roller)))
        except _Refused as why:
            events.append(_refusal(o, tick, why.reason, why.rule_ref))
        except InputError as exc:
            if _dice_problem(exc):
                problems.extend(exc.problems)
            else:
                events.append(_refusal(o, tick, exc.problems[0].message, "E5"))
    return applies


def _apply_batch(work: _Work, applies: list[tuple[Order, Apply]], tick: int, roller: Roller,
                 events: list[dict[str, Any]], problems: list[Problem]) -> None:
    """E6, X24: the verified orders of a batch applied in sheet order; the order of a unit
    that merged into another earlier this tick has no effect, and the Guard of a unit with
    no order says so (E5, X19)."""
    for o, apply in applies:
        gone = work.get(o.unit).merged_into
        if gone is not None:  # E6, X24: it merged earlier this tick
            events.append(_base(o, tick, None, outcome="no effect", reason=f"{o.unit} merged into {gone} earlier "
                                                                         "this tick", rule_ref="E6, X24"))
            continue
        try:
            got = apply(work, roller)
        except InputError as exc:
            if not _dice_problem(exc):
                raise
            problems.extend(exc.problems)
            continue
        if o.row < 0:
            for e in got:
                e["kind"] = "Guard (no order)"
                e["rule_ref"] = "E5, X19"
        events.extend(got)


def _spreads(work: _Work, spreads: list[Order], tick: int, roller: Roller, events: list[dict[str, Any]],
             problems: list[Problem]) -> None:
    """X20: the reflexive spreads out under fire, after the tick's other orders, each by a
    unit still in the battle (X34, X39)."""
    done: set[str] = set()
    for o in spreads:
        try:
            if not _stands(work.get(o.unit)):
                raise _Refused(f"{o.unit} has left the battle", "X34, X39")
            events.extend(_spread(work, o, tick, roller, done))
        except _Refused as why:
            events.append(_refusal(o, tick, why.reason, why.rule_ref))
        except InputError as exc:
            if not _dice_problem(exc):
                raise
            problems.extend(exc.problems)


def _never_run(battle: Battle, work: _Work, tick: int, events: list[dict[str, Any]]) -> set[int]:
    """E4, E5: an order typed for a later long tick that comes before its unit's next one
    can never run (a unit acts only on its tick, and its next tick never comes sooner): it
    is refused now, naming the tick to type, rather than when that tick has passed.
    Reflexive actions (any tick), spreading out under fire (X20) and a duel's outcome
    (X27) are not tied to the unit's tick.  Returns the refused orders (by identity)."""
    out: set[int] = set()
    for o in battle.orders:
        st = work.states.get(o.unit)
        if o.tick <= tick or st is None or not in_fight(st) or o.tick >= st.next_tick:
            continue
        if timing(o.action, rules=battle.house_rules).reflexive or _is_spread(o) or \
                (o.action is Action.DUEL and _option_words(o).casefold().startswith("result")):
            continue
        rule = "E4, E5" if not battle.started else "E5"
        events.append(_refusal(o, tick, f"{o.unit} acts on long tick {st.next_tick}, not {o.tick}: a unit acts "
                                        f"only on its tick; type {st.next_tick} in {_place(o, 'tick')}", rule))
        out.add(id(o))
    return out


def _after_tick(battle: Battle, work: _Work, tick: int, events: list[dict[str, Any]]) -> TickResult:
    """X23, E5: the tick closed: each expelled solo unit acts next when the unit she left
    does; an order of a later tick that comes before its unit's next one is refused
    (:func:`_never_run`); the orders of later ticks keep their places in the file written
    after this tick, and the undo record holds the battle as it was (its units too when
    one was born)."""
    for name, parent in work.follow_parent.items():  # X23: she acts next when her old unit does
        work.put(work.get(name), next_tick=work.get(parent).next_tick)
    dropped = _never_run(battle, work, tick, events) if work.duel is None else set()
    later = tuple(o.model_copy(update={"row": i})  # their places in the file written after this tick
                  for i, o in enumerate(o for o in battle.orders if o.tick > tick and id(o) not in dropped))
    grew = work.battle.units != battle.units
    states = tuple(work.states[u.name] for u in work.battle.units)
    history = battle.history
    if work.record:
        history = (*history, UndoRecord.of(tick=battle.tick, started=battle.started, orders=battle.orders,
                                           before=battle.state, after=states, units=battle.units if grew else None))
    new = battle.model_copy(update={"started": True, "tick": tick, "state": states, "orders": later,
                                    "history": history, "units": work.battle.units,
                                    "duel": work.duel})
    return TickResult(tick, tuple(events), new)


def resolve(battle: Battle, tick: int | None = None, roller: Roller | None = None, *,
            new_units: bool | int = True, odds: bool = True, record: bool = True,
            detail: bool = True) -> TickResult:
    """E4-E6, X17-X39: resolve the next long tick on which a unit acts (or ``tick``); while
    a duel stops the long ticks, only its typed outcome (X27).

    A die typed wrong for its pool (a face outside 1-10, more successes than the pool can
    roll) is an :class:`~sheetsync.core.errors.InputError` naming its path, raised after every
    order was looked at, and nothing changes.  ``new_units=False`` refuses a Split Unit;
    a number allows that many new units this tick (a tracker's free Units rows, X23).
    ``odds=False`` leaves each attack's exact odds out of its event (``"odds": None``), and
    ``record=False`` the tick's undo record out of the history: a simulation, which prints
    no odds and undoes nothing, need not work them out (issue 23).  ``detail=False`` (which
    implies ``odds=False``) leaves out of the events the breakdowns and dice the tracker
    shows: an attack keeps its hit, successes, levels, losses, rout and exhaustion outcomes,
    Join War each unit's successes and tick; the same dice are rolled and the battle comes
    out the same."""
    if battle.ended:
        raise BattleStateError("the battle has ended (End Battle): nothing is left to resolve")
    if battle.duel is not None:
        return _decide_duel(battle, battle.duel)
    roller = roller if roller is not None else battle_roller(battle)
    work = _Work(battle, new_units=new_units)
    work.odds, work.record, work.detail = odds and detail, record, detail
    events: list[dict[str, Any]] = []
    if not battle.started:
        events.append(_join_war(battle, work, roller))
    tl = work.timeline(battle)
    if not tl.clocks:
        raise BattleStateError("no unit is left in the battle: end it (End Battle) for the aftermath")
    tick = _tick_to_resolve(battle, tl, tick)
    work.battle = battle.model_copy(update={"tick": tick})
    acting = {c.unit for c in tl.clocks if c.next_tick == tick}
    events += _mob_checks(work, tick, acting, roller)
    ordered, spreads, with_order = _tick_orders(battle, tick, acting, events)
    batches: list[list[Order]] = [ordered] if battle.house_rules.same_tick == "simultaneous" else \
        [[o] for o in ordered]
    problems: list[Problem] = []
    for batch in batches:
        applies = _verify_batch(work.copy(), batch, tick, roller, events, problems)
        _apply_batch(work, applies, tick, roller, events, problems)
    events.extend(_guard_refused(work, acting & with_order, tick, roller))
    _spreads(work, spreads, tick, roller, events, problems)
    if problems:
        raise InputError(problems)
    return _after_tick(battle, work, tick, events)


def undo(battle: Battle) -> Battle:
    """Undo the last resolved long tick: the units, the tick and the orders exactly as they
    were.  Raises :class:`BattleStateError` when nothing was resolved."""
    if not battle.history:
        raise BattleStateError("nothing to undo: no long tick of this battle has been resolved yet")
    rec = battle.history[-1]
    update: dict[str, Any] = {"tick": rec.tick, "started": rec.started, "orders": rec.orders,
                              "state": rec.states_before(battle.state),
                              "history": battle.history[:-1], "ended": False, "duel": rec.duel}
    if rec.units is not None:  # X23: a unit split off in that tick goes again
        update["units"] = rec.units
    return battle.model_copy(update=update)


def attack_plans(battle: Battle) -> dict[int, AttackPlan]:
    """X28-X33: the engine's plan of each typed attack it would not refuse, by order index:
    the figures :func:`odds_json` derives its odds from (the tracker's Odds formulas read
    them, E1, E7)."""
    work = _odds_work(battle)
    out: dict[int, AttackPlan] = {}
    for o in battle.orders:
        if o.action is not Action.ATTACK:
            continue
        try:
            out[o.row] = _odds_plan(work, o).plan
        except (_Refused, InputError):
            continue
    return out


def _odds_work(battle: Battle) -> _Work:
    """E4: the units as the odds see them: before the first resolve, each on the long tick
    Join War will give it (:func:`acting_ticks`), so that the odds refuse what ``check``
    and ``resolve`` refuse."""
    work = _Work(battle)
    for name, tick in _ticks_or_none(battle).items():
        work.put(work.get(name), next_tick=tick)
    return work


def _odds_plan(work: _Work, o: Order) -> _AttackPlanned:
    """X28-X33 for the odds: an attack typed for its unit's next long tick, or a later one
    (an action still to come: priced as the unit stands); one typed for a tick before
    its unit's next is refused, naming the tick to type (E5)."""
    st = work.states.get(o.unit)
    tick = st.next_tick if st is not None and o.tick > st.next_tick else o.tick
    return _plan_order(work, o, tick)


def odds_json(battle: Battle) -> list[dict[str, Any]]:
    """E1, E7, X28-X33: each typed attack's odds before anyone rolls (the pool, the
    successes added, the external penalty, the DV, the exact chance of a hit and the
    expected levels), against the battle as it stands; one that would be refused says why."""
    out = []
    work = _odds_work(battle)
    for o in battle.orders:
        if o.action is not Action.ATTACK:
            continue
        row: dict[str, Any] = {"order": o.row, "tick": o.tick, "unit": o.unit, "target": o.target}
        try:
            row["odds"] = _odds(_odds_plan(work, o).plan)
        except _Refused as why:
            row.update(refused=why.reason, rule_ref=why.rule_ref)
        except InputError as exc:
            row.update(refused=exc.problems[0].message, rule_ref="E5")
        out.append(row)
    return out
