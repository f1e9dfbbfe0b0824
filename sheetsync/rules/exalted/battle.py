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

- E4: the first resolve of a battle rolls Join War and then runs long tick 0.
- E5: a unit whose tick comes with no order Guards (X19), and the log says so; an order
  typed for a tick already past, or for a tick on which its unit does not act, is refused.
- E6 ``simultaneous``: a tick's orders are verified and rolled against the state at the
  start of the tick; their levels then go on the tracks in sheet order, and the rout and
  exhaustion rolls they call are made as each applies.
- X35: becoming engaged calls the rout check of the unit attacked, not the attacker's;
  a unit's rout triggers from one attack make one check at the highest modifier.
- X37: both units roll exhaustion after every attack, a miss included; ``charge`` in the
  attack's option marks the attacker as having charged.
- X39: a unit under Mob Rule may attack only a unit it is engaged with; its idle check is
  made on each resolved tick on which it does not act.
- X26: a rally for Organization adds the order's target as a relay (a character of the
  file) or, without one, an unnamed relay.
- Split Unit, Merge Units, Expel Special Character and Initiate Duel are refused for now
  (play them at the table and type the result).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sheetsync.dice import RandomRoller, Roller
from sheetsync.errors import BattleStateError, InputError, Problem
from sheetsync.rules.exalted.actions import (
    RallyKind,
    aim_bonus,
    change_formation,
    command_difficulty,
    command_roll,
    dash_allowed,
    disengage,
    move_allowed,
    rally,
    signal_units,
    turn,
)
from sheetsync.rules.exalted.attack import (
    AttackEvent,
    AttackKind,
    AttackPlan,
    apply_levels,
    attack_odds,
    called_shot_penalty,
    plan_attack,
    resolve_attack,
)
from sheetsync.rules.exalted.dice import PoolRoll, TypedDice
from sheetsync.rules.exalted.formations import (
    Terrain,
    dash_yards,
    formation_after_drill_change,
    move_yards,
)
from sheetsync.rules.exalted.health import alone, health, spend_volley
from sheetsync.rules.exalted.models import Character, Formation, UnitSpec
from sheetsync.rules.exalted.morale import (
    RoutEvent,
    RoutTrigger,
    Weather,
    command_pool,
    engagement_trigger,
    exhaustion_check,
    exhaustion_difficulty,
    mob_rule_check,
    relays_kept,
    rout_check,
)
from sheetsync.rules.exalted.state import Battle, BattleUnit, Order, UndoRecord, UnitState
from sheetsync.rules.exalted.timeline import Action, Clock, Timeline, act, defence_penalty, join_war
from sheetsync.rules.exalted.traits import Entry, Trait, UnitTraits, derive_traits

__all__ = ["TickResult", "battle_roller", "current_unit", "odds_json", "resolve", "roll_json", "trait_json", "undo",
           "units_json"]

NOT_YET = {Action.SPLIT: "X23", Action.MERGE: "X24", Action.EXPEL: "X23", Action.DUEL: "X27"}
"""Actions a battle file cannot play yet."""


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
                "next_tick": _timeline(self.battle, list(self.battle.state)).next_tick()}


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


def units_json(battle: Battle) -> list[dict[str, Any]]:
    """Each unit's ``name``, ``magnitude``, ``levels_marked``, ``endurance``, ``formation``,
    ``next_tick``, ``hesitating``, ``engaged`` and ``special_characters`` (and its side,
    commander, track size, ammunition and whether it is solo, under Mob Rule or gone)."""
    out = []
    for s in battle.state:
        out.append({"name": s.name, "side": battle.side_of(s.name), "commander": s.commander,
                    "magnitude": s.magnitude, "starting_magnitude": s.starting_magnitude,
                    "levels_marked": s.marked, "health_levels": s.health_levels, "endurance": s.endurance,
                    "starting_endurance": s.starting_endurance, "formation": s.formation.value,
                    "next_tick": s.next_tick, "hesitating": s.hesitating, "engaged": list(s.engaged),
                    "special_characters": {"heroes": list(s.heroes), "sorcerers": list(s.sorcerers),
                                           "relays": list(s.relays)},
                    "solo": s.solo, "mob_rule": s.mob_rule, "disbanded": s.disbanded, "ammunition": s.ammunition})
    return out


def _odds(plan: AttackPlan) -> dict[str, Any]:
    o = attack_odds(plan)
    return {"pool": o.dice, "successes_added": o.automatic, "external_penalty": o.external, "dv": o.dv,
            "successes_needed": o.needed, "p_hit": str(o.p_hit), "p_hit_float": float(o.p_hit),
            "expected_levels": str(o.expected_levels), "expected_levels_float": float(o.expected_levels),
            "rule_ref": "E1, E7, X28-X33"}


# --- the state a tick works on -----------------------------------------------------------

class _Work:
    """The unit states during a tick (a mutable map of frozen values)."""

    def __init__(self, battle: Battle, states: list[UnitState] | None = None) -> None:
        self.battle = battle
        self.states: dict[str, UnitState] = {s.name: s for s in (states if states is not None else battle.state)}

    def copy(self) -> _Work:
        return _Work(self.battle, list(self.states.values()))

    def get(self, name: str) -> UnitState:
        return self.states[name]

    def put(self, st: UnitState, **changes: Any) -> UnitState:
        new = st.model_copy(update=changes)
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
        st, u = self.get(name), self.unit(name)
        return u.spec.model_copy(update={
            "commander": self.character(st.commander), "formation": st.formation, "solo": st.solo or u.spec.solo,
            "relays": len(st.relays), "heroes": len(st.heroes), "sorcerers": len(st.sorcerers)})

    def traits(self, name: str) -> UnitTraits:
        return derive_traits(self.spec(name), self.battle.house_rules)

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
                                             s.last_action, s.moved_on) for s in states if not s.disbanded))


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


def _take_turn(work: _Work, order: Order, tick: int, weapon_speed: int = 5) -> tuple[dict[str, Any], dict[str, Any]]:
    """E5: place the action on the timeline (a refusal raises :class:`_Refused`); returns
    the clock changes and the timing for the event."""
    st = work.get(order.unit)
    tl = _timeline(work.battle, list(work.states.values()))
    tl = Timeline(tick, tl.clocks)
    try:
        tl, ev = act(tl, order.unit, tick, order.action, weapon_speed=weapon_speed, rules=work.battle.house_rules,
                     where=_place(order, "tick"))
    except InputError as exc:
        raise _Refused(exc.problems[0].message, "E5") from None
    c = tl.clock(order.unit)
    changes: dict[str, Any] = {"next_tick": c.next_tick, "dv_penalty": c.dv_penalty, "fixed_dv": c.fixed_dv,
                               "attacks_suffered": c.attacks_suffered, "last_action": c.last_action,
                               "moved_on": c.moved_on}
    if not ev.timing.reflexive:
        changes.update(hesitating=False, ranged_since=False)
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


def _attack_kind(work: _Work, order: Order) -> AttackKind:
    words = _option_words(order).casefold()
    if "ranged" in words:
        return AttackKind.RANGED
    if "close" in words:
        return AttackKind.CLOSE
    spec = work.unit(order.unit).spec
    return AttackKind.RANGED if not spec.close_weapons and spec.ranged_weapons else AttackKind.CLOSE


def _called_victim(order: Order) -> str | None:
    words = _option_words(order)
    low = words.casefold()
    if "called shot" not in low:
        return None
    _, _, rest = words.partition(":")
    return rest.strip() or "commander"


def _stands(st: UnitState) -> bool:
    return not st.disbanded


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
    odds: dict[str, Any]


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
    ammo = st.ammunition
    if kind is AttackKind.RANGED:
        if work.character(st.commander).ranged_weapon is None:
            raise _Refused(f"{st.commander} has no ranged weapon, so {order.unit} cannot make a ranged attack",
                           "X31")
        if ammo is not None:
            try:
                ammo = spend_volley(order.unit, ammo, where=_place(order))
            except InputError as exc:
                raise _Refused(exc.problems[0].message, "X31") from None
    words = _option_words(order).casefold()
    envelop = "envelop" in words
    if envelop and kind is AttackKind.RANGED:
        raise _Refused("only a close attack can envelop", "X32")
    if envelop and st.magnitude < tst.magnitude + 1:
        raise _Refused(f"enveloping needs a Magnitude of at least {tst.magnitude + 1} (the target's + 1); "
                       f"{order.unit} has {st.magnitude}", "X32")
    victim = _called_victim(order)
    extra = 2 if envelop else 0
    if victim is not None:
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
        t_traits = work.traits(order.target)
        extra += called_shot_penalty(t_traits.drill.value, tst.magnitude,
                                     unordered=tst.formation is Formation.UNORDERED,
                                     sorcerer=victim in tst.sorcerers).value
    changes, timing = _take_turn(work, order, tick, _weapon_speed(work, order, kind))
    tl = _timeline(work.battle, list(work.states.values()))
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


def _prepare_attack(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """X28-X34 verified and rolled against ``work`` (the start-of-tick state with
    ``simultaneous``); returns what applies it."""
    planned = _plan_order(work, order, tick)
    odds = _odds(planned.plan)
    ev = resolve_attack(planned.plan, roller, marked=planned.marked, attack_dice=order.dice,
                        damage_dice_typed=order.damage_dice, attack_where=_place(order, "dice"),
                        damage_where=_place(order, "damage_dice"))
    prep = _AttackPrep(planned, ev, odds)

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        return _apply_attack(w, r, order, tick, prep)

    return apply


def _lose_dots(w: _Work, st: UnitState, magnitude: int, marked: int, dots: int) -> UnitState:
    """X34, X11: the unit after losing ``dots`` (already taken off ``magnitude``): the largest
    loss and the total (X40), excess relays fade, Magnitude 0 makes it solo with its
    commander's own track, its members and special characters dead."""
    rules = w.battle.house_rules
    changes: dict[str, Any] = {"magnitude": magnitude, "marked": marked, "dots_lost": st.dots_lost + dots,
                               "largest_loss": max(st.largest_loss, dots)}
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
        changes.update(solo=True, heroes=(), sorcerers=(), relays=(), fallen=(*st.fallen, *st.special_characters),
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
                    endurance=st.endurance, typed=typed, where=where, rules=w.battle.house_rules)
    _apply_rout(w, ev)
    return _rout_json(ev, kind)


def _apply_rout(w: _Work, ev: RoutEvent) -> None:
    st = w.get(ev.unit)
    if not ev.checked or ev.passed:
        return
    st = w.put(st, hesitating=True, relays=st.relays[:ev.relays], fallen=(*st.fallen, *st.relays[ev.relays:]))
    _lose_dots(w, st, ev.magnitude, 0, ev.dots_lost)


def _rout_json(ev: RoutEvent, kind: str = "rout") -> dict[str, Any]:
    return {"kind": kind, "unit": ev.unit, "triggers": [t.value for t in ev.triggers], "checked": ev.checked,
            "pool": trait_json(ev.pool), "difficulty": trait_json(ev.difficulty), "roll": roll_json(ev.roll),
            "successes": ev.outcome.net if ev.outcome else None, "passed": ev.passed, "hesitating": ev.hesitating,
            "magnitude_lost": ev.dots_lost, "magnitude": ev.magnitude, "rule_ref": ev.rule_ref}


def _exhaustion(w: _Work, r: Roller, name: str, typed: TypedDice, where: str, *, charged: bool,
                weather: list[Weather]) -> dict[str, Any] | None:
    """X37: after an attack, the unit's reflexive command roll† (always rolled); failure
    costs 1 Endurance."""
    st = w.get(name)
    if not _stands(st):
        return None
    t = w.traits(name)
    diff = exhaustion_difficulty(w.unit(name).spec.avg_fatigue, morale=t.morale.value,
                                 perfect_morale=t.perfect_morale, engaged=bool(st.engaged), charged_last=charged,
                                 weather=weather)
    pool = command_pool(w.character(st.commander), w.relays(name))
    ev = exhaustion_check(name, pool, diff, st.endurance, r, typed=typed, where=where)
    w.put(st, endurance=ev.endurance)
    return {"unit": name, "pool": trait_json(pool), "difficulty": trait_json(diff), "roll": roll_json(ev.roll),
            "successes": ev.outcome.net, "endurance_before": ev.endurance_before, "endurance": ev.endurance,
            "rule_ref": ev.rule_ref}


def _weather(order: Order) -> list[Weather]:
    return [Weather(order.weather.strip().title())] if order.weather else []  # checked by the loader


def _apply_attack(w: _Work, r: Roller, order: Order, tick: int, prep: _AttackPrep) -> list[dict[str, Any]]:
    """X34-X37: the levels on the track (cycling into Magnitude loss), a called shot's
    victim, engagement and envelopment, the target's one rout check, then both units'
    exhaustion."""
    planned = prep.planned
    ev, plan, timing, odds = prep.event, planned.plan, planned.timing, prep.odds
    att = w.get(order.unit)
    w.put(att, **planned.changes, ammunition=planned.ammunition)
    assert order.target is not None
    tst = w.get(order.target)
    notes: list[str] = []
    if not _stands(tst):
        return [_base(order, tick, timing, outcome="no effect", reason=f"{order.target} left the battle earlier "
                                                                           "this tick", rule_ref="E6")]
    first_ranged = planned.kind is AttackKind.RANGED and not tst.ranged_since
    tst = w.put(tst, attacks_suffered=tst.attacks_suffered + 1,
                ranged_since=tst.ranged_since or planned.kind is AttackKind.RANGED)
    dots = 0
    if planned.victim is not None:
        marked = min(tst.wounds.get(planned.victim, 0) + ev.levels, w.character(planned.victim).health_levels)
        tst = w.put(tst, wounds={**tst.wounds, planned.victim: marked})
        if marked >= w.character(planned.victim).health_levels:
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
        tst = _lose_dots(w, tst, loss.magnitude, loss.marked, dots)
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
    if planned.kind is AttackKind.CLOSE and _stands(tst) and order.target not in att.engaged:
        a_mag, a_might = att.magnitude, w.traits(order.unit).might.value
        triggers.append(engagement_trigger(tst.magnitude, a_mag, a_might))
        w.put(att, engaged=(*att.engaged, order.target), engaged_since={**att.engaged_since, order.target: tick})
        tst = w.put(tst, engaged=(*tst.engaged, order.unit), engaged_since={**tst.engaged_since, order.unit: tick})
        notes.append(f"{order.unit} and {order.target} are engaged (X35)")
    if planned.envelop and ev.hit:
        att = w.get(order.unit)
        w.put(att, enveloping=(*att.enveloping, order.target))
        w.put(tst, enveloped_by=(*tst.enveloped_by, order.unit))
        notes.append(f"{order.unit} envelops {order.target} until one disengages (X32)")
    rout = _rout(w, r, order.target, triggers, order.rout_dice, _place(order, "rout_dice"), "rout")
    weather = _weather(order)
    exhaustion = [e for e in (
        _exhaustion(w, r, order.unit, order.exhaustion_dice, _place(order, "exhaustion_dice"),
                    charged="charge" in _option_words(order).casefold(), weather=weather),
        _exhaustion(w, r, order.target, order.target_exhaustion_dice, _place(order, "target_exhaustion_dice"),
                    charged=False, weather=weather)) if e is not None]
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
                  magnitude_lost=loss_json, rout=rout, exhaustion=exhaustion, notes=notes,
                  called_shot=planned.victim, envelop=planned.envelop, rule_ref=ev.rule_ref)
    return [event]


def _simple(work: _Work, order: Order, tick: int, **more: Any) -> Apply:
    changes, timing = _take_turn(work, order, tick)

    def apply(w: _Work, r: Roller) -> list[dict[str, Any]]:
        w.put(w.get(order.unit), **changes)
        return [_base(order, tick, timing, **more)]

    return apply


def _prepare(work: _Work, order: Order, tick: int, roller: Roller) -> Apply:
    """Verify one order against ``work`` and roll its own dice; returns what applies it."""
    rules = work.battle.house_rules
    st = work.get(order.unit)
    if not _stands(st):
        raise _Refused(f"{order.unit} has left the battle", "X34, X39")
    a = order.action
    if a in NOT_YET:
        raise _Refused(f"{a.value} is not played from a battle file yet: play it at the table and type the result "
                       "into the file", NOT_YET[a])
    if st.mob_rule and a not in (Action.ATTACK, Action.GUARD, Action.MOVE):
        raise _Refused(f"{order.unit} is under Mob Rule: it only continues its task, Guards or answers attacks",
                       "X39")
    spec = work.spec(order.unit)
    if a is Action.ATTACK:
        return _prepare_attack(work, order, tick, roller)
    if a is Action.MOVE:
        why = move_allowed(engaged=bool(st.engaged), hesitating=st.hesitating)
        if why:
            raise _Refused(f"{order.unit}: {why}", "X17")
        yards = move_yards(spec, formation=st.formation, terrain=_terrain(order), rules=rules)
        return _simple(work, order, tick, yards=trait_json(yards), rule_ref="X17, X15")
    if a is Action.DASH:
        why = dash_allowed(st.formation, solo=spec.solo, engaged=bool(st.engaged), hesitating=st.hesitating)
        if why:
            raise _Refused(f"{order.unit}: {why}", "X18")
        changes, timing = _take_turn(work, order, tick)
        if spec.solo:
            yards = dash_yards(spec, formation=st.formation, terrain=_terrain(order), rules=rules)
            return _with_changes(order, tick, timing, changes, yards=trait_json(yards), rule_ref="X18")
        roll = command_roll(command_pool(work.character(st.commander), work.relays(order.unit)),
                            command_difficulty(st.magnitude, _effective_drill(work, order.unit)), roller,
                            endurance=st.endurance, typed=order.dice, where=_place(order, "dice"))
        if roll.success:
            yards = dash_yards(spec, formation=st.formation, terrain=_terrain(order), rules=rules)
            changes["endurance"] = max(0, st.endurance - int(spec.avg_fatigue))
        else:
            yards = move_yards(spec, formation=st.formation, terrain=_terrain(order), rules=rules)
        return _with_changes(order, tick, timing, changes, command=_command(roll), yards=trait_json(yards),
                             dashed=roll.success, rule_ref="X18")
    if a is Action.AIM:
        if order.target is None:
            raise _Refused("Aim needs the target unit it aims at", "X19")
        changes, timing = _take_turn(work, order, tick)
        ticks = st.aim_ticks + 1 if st.aim_target == order.target else 1
        changes.update(aim_target=order.target, aim_ticks=ticks)
        return _with_changes(order, tick, timing, changes, aim_dice=aim_bonus(ticks), rule_ref="X19, E11")
    if a is Action.CHANGE_FORMATION:
        try:
            wanted = Formation(_option_words(order).title())
        except ValueError:
            raise _Refused(f"option {order.option!r} is not a formation (Unordered, Skirmish, Relaxed, Close)",
                           "X13") from None
        t = work.traits(order.unit)
        try:
            ev = change_formation(order.unit, st.formation, wanted, commander=work.character(st.commander),
                                  relays=work.relays(order.unit), magnitude=st.magnitude, drill=t.drill.value,
                                  communication_failure=t.communication_failure,
                                  attacked_since=st.attacks_suffered > 0, engaged=bool(st.engaged),
                                  endurance=st.endurance, roller=_NoRoll(), typed=0, where=_place(order))
        except InputError as exc:
            raise _Refused(exc.problems[0].message, "X13, X20") from None
        changes, timing = _take_turn(work, order, tick)
        ev = change_formation(order.unit, st.formation, wanted, commander=work.character(st.commander),
                              relays=work.relays(order.unit), magnitude=st.magnitude, drill=t.drill.value,
                              communication_failure=t.communication_failure, attacked_since=st.attacks_suffered > 0,
                              engaged=bool(st.engaged), endurance=st.endurance, roller=roller, typed=order.dice,
                              where=_place(order, "dice"))
        changes["formation"] = ev.formation
        return _with_changes(order, tick, timing, changes, command=_command(ev.roll), formation=ev.formation.value,
                             rule_ref="X20")
    if a is Action.DISENGAGE:
        if not st.engaged:
            raise _Refused(f"{order.unit} is not engaged", "X21")
        enemy = order.target or st.engaged[0]
        if enemy not in st.engaged:
            raise _Refused(f"{order.unit} is not engaged with {enemy}", "X21")
        changes, timing = _take_turn(work, order, tick)
        dis = disengage(order.unit, work.character(st.commander), drill=_effective_drill(work, order.unit),
                       magnitude=st.magnitude, enemy_drill=_effective_drill(work, enemy),
                       enveloped=enemy in st.enveloped_by, enveloping=enemy in st.enveloping,
                       endurance=st.endurance, roller=roller, typed=order.dice, where=_place(order, "dice"))

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
    if a is Action.TURN:
        changes, timing = _take_turn(work, order, tick)
        roll = turn(work.character(st.commander), work.relays(order.unit), magnitude=st.magnitude,
                    drill=_effective_drill(work, order.unit), endurance=st.endurance, roller=roller,
                    typed=order.dice, where=_place(order, "dice"))
        return _with_changes(order, tick, timing, changes, command=_command(roll), rule_ref="X22")
    if a is Action.SIGNAL:
        targets = [t.strip() for t in (order.option or order.target or "").split(",") if t.strip()]
        try:
            reached = signal_units(order.unit, targets, len(st.relays), where=_place(order))
        except InputError as exc:
            raise _Refused(exc.problems[0].message, "X25") from None
        return _simple(work, order, tick, reached=list(reached), rule_ref="X25")
    if a is Action.RALLY:
        return _prepare_rally(work, order, tick, roller)
    if a is Action.CAST:
        return _simple(work, order, tick, effect=order.option or "", rule_ref="X27")
    if a is Action.INACTIVE:
        return _simple(work, order, tick, note="Inactive only when imposed on the unit (X19)", rule_ref="X19, E11")
    return _simple(work, order, tick, rule_ref={Action.GUARD: "X19, E11", Action.MISCELLANEOUS: "E11"}.get(a, "E11"))


def _terrain(order: Order) -> Terrain:
    for t in Terrain:
        if t.value.casefold() in _option_words(order).casefold():
            return t
    return Terrain.OPEN


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
    try:
        kind = RallyKind(_option_words(order).title())
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
    changes, timing = _take_turn(work, order, tick)
    ev = rally(order.unit, kind, speaker, **args, roller=roller, typed=order.dice, where=_place(order, "dice"))
    if ev.roll.success:
        if kind is RallyKind.ORGANIZATION:
            name = order.target if order.target and work.battle.character(order.target) else \
                f"{order.unit} relay {len(st.relays) + 1}"
            changes["relays"] = (*st.relays, name)
        elif kind is RallyKind.NUMBERS:
            changes.update(magnitude=ev.magnitude, rallied=st.rallied + 1, formation=ev.formation)
        else:
            changes["endurance"] = ev.endurance
    return _with_changes(order, tick, timing, changes, rally=kind.value, command=_command(ev.roll),
                         magnitude=ev.magnitude, endurance=ev.endurance, rule_ref="X26")


# --- the loop ---------------------------------------------------------------------------------

def _join_war(battle: Battle, work: _Work, roller: Roller) -> dict[str, Any]:
    """E4: every unit rolls Join War; the best acts on long tick 0, the others later."""
    entries = [(work.spec(u.name), work.get(u.name).magnitude) for u in battle.units]
    joined = join_war(entries, roller, [u.join_war for u in battle.units],
                      where=[f"units[{i}].join_war" for i in range(len(battle.units))])
    for r in joined.rolls:
        work.put(work.get(r.unit), next_tick=r.tick)
    return {"kind": "Join War", "tick": 0, "rule_ref": "E4",
            "rolls": [{"unit": r.unit, "pool": trait_json(r.pool), "roll": roll_json(r.roll), "successes": r.roll.successes,
                       "tick": r.tick} for r in joined.rolls]}


def _mob_checks(work: _Work, tick: int, acting: set[str], roller: Roller) -> list[dict[str, Any]]:
    """X39: each leaderless unit idle on this tick checks for rout, harder each time."""
    out = []
    for st in list(work.states.values()):
        if not st.mob_rule or st.disbanded or st.name in acting or st.solo:
            continue
        t = work.traits(st.name)
        ev = mob_rule_check(st.name, morale=t.morale.value, magnitude=st.magnitude, drill=t.drill.value,
                            earlier_checks=st.mob_checks, roller=roller, perfect_morale=t.perfect_morale,
                            marked=st.marked, endurance=st.endurance, rules=work.battle.house_rules)
        work.put(st, mob_checks=st.mob_checks + 1)
        _apply_rout(work, ev)
        out.append(_rout_json(ev, "Mob Rule check") | {"tick": tick})
    return out


def _dice_problem(exc: InputError) -> bool:
    return any("dice" in p.where or "join_war" in p.where for p in exc.problems)


def resolve(battle: Battle, tick: int | None = None, roller: Roller | None = None) -> TickResult:
    """E4-E6, X17-X39: resolve the next long tick on which a unit acts (or ``tick``).

    A die typed wrong for its pool (a face outside 1-10, more successes than the pool can
    roll) is an :class:`~sheetsync.errors.InputError` naming its path, raised after every
    order was looked at, and nothing changes."""
    if battle.ended:
        raise BattleStateError("the battle has ended (End Battle): nothing is left to resolve")
    roller = roller if roller is not None else battle_roller(battle)
    work = _Work(battle)
    events: list[dict[str, Any]] = []
    started = battle.started
    if not started:
        events.append(_join_war(battle, work, roller))
    tl = _timeline(battle, list(work.states.values()))
    if not tl.clocks:
        raise BattleStateError("no unit is left in the battle: end it (End Battle) for the aftermath")
    due = tl.next_tick()
    if tick is None:
        tick = due
    elif tick < battle.tick and started:
        raise InputError([Problem("tick", f"long tick {tick} has passed: the battle is at long tick {battle.tick} "
                                          "(E5)")])
    elif tick > due:
        first = ", ".join(c.unit for c in tl.clocks if c.next_tick == due)
        raise InputError([Problem("tick", f"long tick {tick} comes after long tick {due}, when {first} acts: "
                                          f"resolve long tick {due} first (E5)")])
    work.battle = battle.model_copy(update={"tick": tick})
    acting = {c.unit for c in tl.clocks if c.next_tick == tick}
    events += _mob_checks(work, tick, acting, roller)
    now = [o for o in battle.orders if o.tick <= tick]
    later = tuple(o.model_copy(update={"row": i})  # their places in the file written after this tick
                  for i, o in enumerate(o for o in battle.orders if o.tick > tick))
    problems: list[Problem] = []
    ordered: list[Order] = []
    for o in now:
        if o.tick < tick:
            events.append({"kind": "refused", "order": o.row, "tick": o.tick, "unit": o.unit,
                           "action": o.action.value, "reason": f"long tick {o.tick} has passed, and {o.unit} did not "
                                                               f"act on it", "rule_ref": "E5"})
        else:
            ordered.append(o)
    with_order = {o.unit for o in ordered if o.action is not Action.MOVE and o.action is not Action.DISENGAGE}
    for name in sorted(acting - with_order, key=lambda n: [u.name for u in battle.units].index(n)):
        ordered.append(Order(tick=tick, unit=name, action=Action.GUARD, row=-1))
    batches: list[list[Order]] = [ordered] if battle.house_rules.same_tick == "simultaneous" else \
        [[o] for o in ordered]
    for batch in batches:
        snap = work.copy()
        applies: list[tuple[Order, Apply]] = []
        for o in batch:
            try:
                applies.append((o, _prepare(snap, o, tick, roller)))
            except _Refused as why:
                events.append({"kind": "refused", "order": o.row, "tick": tick, "unit": o.unit,
                               "action": o.action.value, "reason": why.reason, "rule_ref": why.rule_ref})
            except InputError as exc:
                if _dice_problem(exc):
                    problems.extend(exc.problems)
                else:
                    events.append({"kind": "refused", "order": o.row, "tick": tick, "unit": o.unit,
                                   "action": o.action.value, "reason": exc.problems[0].message, "rule_ref": "E5"})
        for o, apply in applies:
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
    if problems:
        raise InputError(problems)
    record = UndoRecord(tick=battle.tick, started=battle.started, orders=battle.orders, states=battle.state)
    states = tuple(work.states[s.name] for s in battle.state)
    new = battle.model_copy(update={"started": True, "tick": tick, "state": states, "orders": later,
                                    "history": (*battle.history, record)})
    return TickResult(tick, tuple(events), new)


def undo(battle: Battle) -> Battle:
    """Undo the last resolved long tick: the units, the tick and the orders exactly as they
    were.  Raises :class:`BattleStateError` when nothing was resolved."""
    if not battle.history:
        raise BattleStateError("nothing to undo: no long tick of this battle has been resolved yet")
    rec = battle.history[-1]
    return battle.model_copy(update={"tick": rec.tick, "started": rec.started, "orders": rec.orders,
                                     "state": rec.states, "history": battle.history[:-1], "ended": False})


def odds_json(battle: Battle) -> list[dict[str, Any]]:
    """E1, E7, X28-X33: each typed attack's odds before anyone rolls (the pool, the
    successes added, the external penalty, the DV, the exact chance of a hit and the
    expected levels), against the battle as it stands; one that would be refused says why."""
    out = []
    work = _Work(battle)
    for o in battle.orders:
        if o.action is not Action.ATTACK:
            continue
        row: dict[str, Any] = {"order": o.row, "tick": o.tick, "unit": o.unit, "target": o.target}
        try:
            row["odds"] = _odds(_plan_order(work, o, o.tick).plan)
        except _Refused as why:
            row.update(refused=why.reason, rule_ref=why.rule_ref)
        except InputError as exc:
            row.update(refused=exc.problems[0].message, rule_ref="E5")
        out.append(row)
    return out
