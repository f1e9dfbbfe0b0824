"""Resolving a phase: the declared orders, in order (The Battle 4-5, R13-R25).

:func:`resolve_phase` takes a :class:`Battle` with its ``orders`` and a :class:`Roller`, and
returns a :class:`PhaseResult`: exactly one :class:`Event` per order, the end-of-phase
effects, and the new battle (orders cleared, phase advanced, the old battle kept in
``history`` for :func:`undo`).

An order that breaks a rule is *refused* with its reason and costs nothing, as a
Storyteller would rule at the table; it is not an input error.  Each task checks all it
needs before it changes anything (verify-then-apply, R13), so a refusal leaves nothing to
undo and no order takes a copy of the standing.

:func:`simulate_phase` is the same phase for the forecast: the same dice and the same new
battle, with each order's outcome and none of the records a person reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from sheetsync.core.dice import Roller
from sheetsync.core.model import model
from sheetsync.systems.bbn.rules.battle import Battle
from sheetsync.systems.bbn.rules.models import (
    Band,
    Benefit,
    CohortState,
    Frozen,
    Memo,
    Moment,
    Order,
    PoolName,
    State,
    Task,
    remember,
    remembered,
)
from sheetsync.systems.bbn.rules.pools import actions_available

__all__ = [
    "COSTS",
    "RANGE_NEEDED",
    "Effect",
    "Event",
    "PhaseResult",
    "Roll",
    "hit_chance",
    "phase_roller",
    "resolve_phase",
    "side_out_of_fight",
    "sides_in_fight",
    "simulate_phase",
    "undo",
]

Outcome = Literal["hit", "miss", "refused", "done"]


@model
class Roll(Frozen):
    """R25: one die, and whether it was typed in (``entered``) or rolled by sheetsync."""

    value: int
    sides: int = 10
    source: Literal["entered", "rolled"]
    purpose: str


@model
class Effect(Frozen):
    """Something that happened inside an order (or at the end of the phase)."""

    kind: str
    cohort: str
    member: str | None = None
    from_state: State | None = None
    to_state: State | None = None
    amount: int | None = None
    text: str = ""
    rule_ref: str
    roll: Roll | None = None


@model
class Event(Frozen):
    """The record of one order: inputs, dice, outcome, rule (DESIGN convention 3)."""

    phase: int
    order: int
    cohort: str
    task: Task
    target: str | None
    outcome: Outcome
    rolls: tuple[Roll, ...] = ()
    damage: int = 0
    rule_ref: str
    reason: str | None = None
    effects: tuple[Effect, ...] = ()
    total: int | None = None
    defense: int | None = None
    temper_spent: int = 0
    actions_left: int | None = None
    member: str | None = None
    moment: Moment | None = None


@model
class PhaseResult(Memo):
    """What :func:`resolve_phase` returns."""

    phase: int
    events: tuple[Event, ...]
    end_of_phase: tuple[Effect, ...]
    battle: Battle

    @remembered
    def events_json(self) -> tuple[dict[str, Any], ...]:
        """Each event's JSON dump, made once: :func:`resolve_phase` makes them for the
        battle's log (R13) and they are these very dicts (issue 12: a Resolve dumped every
        event three times).  Read them; never change one in place."""
        return tuple(e.model_dump(mode="json") for e in self.events)

    def to_json(self) -> dict[str, Any]:
        """``{"phase", "events", "end_of_phase", "cohorts"}`` as ``sheetsync resolve --json``
        prints it.  Each call gives new top-level dicts; the values inside an event are
        shared with :attr:`events_json`."""
        return {
            "phase": self.phase,
            "events": [dict(e) for e in self.events_json],
            "end_of_phase": [e.model_dump(mode="json") for e in self.end_of_phase],
            "cohorts": cohorts_json(self.battle, self.events),
        }


def cohorts_json(battle: Battle, events: tuple[Event, ...] = ()) -> list[dict[str, Any]]:
    """The cohorts' standing: name, health, temper, control, actions_left, members."""
    last_left: dict[str, int] = {}
    for e in events:
        if e.actions_left is not None:
            last_left[e.cohort] = e.actions_left
    out = []
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        out.append({
            "name": spec.name,
            "side": spec.side,
            "support": spec.support,
            "health": st.health,
            "max_health": battle.pools[spec.name].pools["health"],
            "temper": st.temper,
            "control": st.control,
            "actions_left": last_left.get(spec.name, actions_available(st.states.values(), battle.house_rules)),
            "members": [
                {"name": m.name, "state": st.states[m.name].value, "hero_moment_used": m.name in st.hero_used,
                 "sergeant": m.name == spec.sergeant_name}
                for m in spec.members
            ],
        })
    return out


# Tasks 5.1-5.10: temper cost of each task (Heal's is the amount spent).
COSTS: dict[Task, int] = {
    Task.MOVE: 0,
    Task.MELEE: 1,
    Task.RANGED: 1,
    Task.MYSTICAL: 3,
    Task.INSPIRE: 2,
    Task.INTIMIDATE: 1,
    Task.RESCUE: 2,
    Task.ANALYZE: 1,
    Task.HEAL: 0,
    Task.HERO_MOMENT: 0,
    Task.TACTICAL: 0,
}

# R24: the bands each task's listed Range allows against its target (Tasks 5.2-5.9).
RANGE_NEEDED: dict[Task, frozenset[Band]] = {
    Task.MELEE: frozenset({Band.PERSONAL}),
    Task.RANGED: frozenset({Band.DISTANCED}),
    Task.MYSTICAL: frozenset({Band.PERSONAL, Band.DISTANCED, Band.IN_SIGHT}),
    Task.INTIMIDATE: frozenset({Band.PERSONAL}),
    Task.ANALYZE: frozenset({Band.IN_SIGHT}),
    Task.INSPIRE: frozenset({Band.PERSONAL, Band.DISTANCED, Band.IN_SIGHT}),
    Task.RESCUE: frozenset({Band.PERSONAL}),
    Task.HEAL: frozenset({Band.PERSONAL}),
}
INSPIRE_ALLY_BANDS = frozenset({Band.DISTANCED})
"""Inspire 5.5: the friendly cohort is Distanced from the inspiring one."""
INSPIRE_ALLY_HINT = ": the Target column names the enemy; the friendly cohort to inspire goes in the Ally column"
"""Tasks 5.5, R20: where an Inspire order's two cohorts go (``target`` and ``ally`` in a battle file)."""

RULE_REF: dict[Task, str] = {
    Task.MOVE: "Tasks 5.1",
    Task.MELEE: "Tasks 5.2, 5.11",
    Task.RANGED: "Tasks 5.3, 5.11",
    Task.MYSTICAL: "Tasks 5.4, 5.11",
    Task.INSPIRE: "Tasks 5.5, R20",
    Task.INTIMIDATE: "Tasks 5.6, R19",
    Task.RESCUE: "Tasks 5.7, R18",
    Task.ANALYZE: "Tasks 5.8, R14",
    Task.HEAL: "Tasks 5.9, R17",
    Task.HERO_MOMENT: "Tasks 5.10, R21",
    Task.TACTICAL: "Tasks 5.13, R23",
}
ATTACK_POOL: dict[Task, str] = {Task.MELEE: "melee", Task.RANGED: "ranged", Task.MYSTICAL: "mystical"}
DAMAGE_BONUS: dict[Task, int] = {Task.MELEE: 5, Task.RANGED: 0, Task.MYSTICAL: 2}
SUPPORT_MOMENTS = frozenset({Moment.SAVE_AN_ALLY, Moment.SPLIT_THE_PARTY, Moment.CUSTOM})
RESOURCE_POOLS = frozenset({"temper", "control"})
SUPPORT_CAN = ("it can Heal, Rescue or Analyze for itself or one other cohort a phase, Inspire, Move, take its "
               "Tactical Task, or a Hero Moment that aids others")
"""Support Cohort 2, R21, R22: what a Support cohort refused an attack can do instead."""
UNABLE = frozenset({State.KNOCKED_OUT, State.STABILIZED, State.DEAD})
UNABLE_OR_SCARED = UNABLE | {State.SCARED}
"""R11: the states that give no action, with Scared under ``scared_loses_action``."""


def phase_roller(battle: Battle) -> Roller:
    """R25: the seeded roller of the battle's next phase.  The same battle file gives the
    same dice, so resolving the same phase twice writes the same result."""
    from sheetsync.core.dice import RandomRoller

    return RandomRoller(f"{battle.seed}:{battle.phase}")


def hit_chance(pool: int, defense: int) -> float:
    """R14: the chance that d10 + ``pool`` ≥ ``defense`` (ties go to the actor)."""
    need = defense - pool
    return max(0, min(10, 11 - need)) / 10


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Cohort:
    """A cohort's standing while a phase is being resolved (mutable, private)."""

    name: str
    health: int
    temper: int
    control: int
    states: dict[str, State]
    hero_used: list[str]
    died_in_phase: dict[str, int]
    reroll_tokens: int
    units_moved: int
    below_zero_damage: int = 0
    actions_used: int = 0
    rescues: int = 0
    intimidated: bool = False
    tactical: bool = False
    moments: int = 0
    bonus: dict[str, int] = field(default_factory=dict)
    ward: int = 0
    temper_boost: int = 0
    control_boost: int = 0
    kill_pending: bool = False
    scared_now: set[str] = field(default_factory=set)
    next_tokens: int = 0
    aided: list[str] = field(default_factory=list)
    splits: int = 0
    used_by: list[str] = field(default_factory=list)
    """Actions 4, R13: the orders that used this cohort's actions this phase, as
    ``orders[i] (task)`` (kept only with ``detail``, for the "no action left" reason)."""

    @classmethod
    def of(cls, st: CohortState) -> _Cohort:
        return cls(
            name=st.name, health=st.health, temper=st.temper, control=st.control,
            states=dict(st.states), hero_used=list(st.hero_used), died_in_phase=dict(st.died_in_phase),
            reroll_tokens=st.reroll_tokens, units_moved=st.units_moved, below_zero_damage=st.below_zero_damage,
        )

    def freeze(self) -> CohortState:
        """The standing the next phase starts from (R20, R25: the reroll tokens earned this
        phase are the next phase's).  Built with :func:`_trusted_state`: every value came
        from a validated :class:`CohortState` or the engine's own whole-number sums."""
        return _trusted_state({
            "name": self.name, "health": self.health, "temper": self.temper, "control": self.control,
            "states": dict(self.states), "hero_used": tuple(self.hero_used), "died_in_phase": dict(self.died_in_phase),
            "reroll_tokens": self.next_tokens, "units_moved": self.units_moved,
            "below_zero_damage": self.below_zero_damage,
        })


def _trusted_state(fields: dict[str, Any]) -> CohortState:
    """A :class:`CohortState` of values known to be valid, made without checking them
    again: a phase freezes every cohort.  ``fields`` must hold every field; the tests pin
    the result equal to ``CohortState(**fields)``, dumps included."""
    return CohortState(**fields)


class _Phase:
    """One phase being resolved.  ``detail=False`` (the forecast's :func:`simulate_phase`)
    skips building the human-readable records (rolls, effects, events): every die is
    rolled and every state changes exactly as with them."""

    def __init__(self, battle: Battle, roller: Roller, *, detail: bool = True) -> None:
        self.battle = battle
        self.detail = detail
        self.rules = battle.house_rules
        self.roller = roller
        self.n = battle.phase
        self.c = {name: _Cohort.of(st) for name, st in battle.state.items()}
        self.no_action = UNABLE_OR_SCARED if self.rules.scared_loses_action else UNABLE
        # order-local
        self.rolls: list[Roll] = []
        self.effects: list[Effect] = []
        self.picks: list[int] = []
        self.aiding: str | None = None
        self.index = 0
        self.order: Order | None = None

    # ---- helpers ---------------------------------------------------------------------
    def pool(self, cohort: str, name: str) -> int:
        """A pool's value now: as built, plus this phase's bonuses (Boost a Pool, Inspire)."""
        return self.battle.pools[cohort].pools[name] + self.c[cohort].bonus.get(name, 0)

    def max_health(self, cohort: str) -> int:
        return self.battle.pools[cohort].pools["health"]

    def actions_left(self, cohort: str) -> int:
        """Actions 4, R11, R13: actions of members able now, less those already used (the
        count of :func:`~sheetsync.systems.bbn.rules.pools.actions_available`, with the set of
        states that give no action taken once a phase)."""
        co = self.c[cohort]
        lost = self.no_action
        return max(0, len([s for s in co.states.values() if s not in lost]) - co.actions_used)

    def d10(self, typed: int | None, purpose: str) -> int:
        """R25: a typed die wins; otherwise the roller rolls and the log says so."""
        if typed is not None:
            if self.detail:
                self.rolls.append(Roll(value=typed, source="entered", purpose=purpose))
            return typed
        value = self.roller.roll(10)
        if self.detail:
            self.rolls.append(Roll(value=value, source="rolled", purpose=purpose))
        return value

    def pick(self, candidates: list[str], purpose: str) -> tuple[str, Roll | None]:
        """R16/R19: pick one member at random with a d(len) roll, typed (``picks``) or rolled.
        The roll's record is ``None`` without ``detail``."""
        n = len(candidates)
        if n == 1:
            if not self.detail:
                return candidates[0], None
            roll = Roll(value=1, sides=1, source="rolled", purpose=f"{purpose} (only {candidates[0]})")
            return candidates[0], roll
        typed = self.picks.pop(0) if self.picks else None
        if typed is not None and 1 <= typed <= n:
            if not self.detail:
                return candidates[typed - 1], None
            roll = Roll(value=typed, sides=n, source="entered", purpose=f"{purpose} among {', '.join(candidates)}")
        else:
            value = self.roller.roll(n)
            if not self.detail:
                return candidates[value - 1], None
            note = f" (typed {typed} is not 1-{n})" if typed is not None else ""
            roll = Roll(value=value, sides=n, source="rolled", purpose=f"{purpose} among {', '.join(candidates)}{note}")
        self.rolls.append(roll)
        return candidates[roll.value - 1], roll

    def set_state(self, cohort: str, member: str, to: State, kind: str, rule: str, text: str = "", roll: Roll | None = None) -> None:
        co = self.c[cohort]
        before = co.states[member]
        co.states[member] = to
        if to is State.DEAD:
            co.died_in_phase[member] = self.n
        if to is not State.SCARED:
            co.scared_now.discard(member)
        if self.detail:
            self.effects.append(Effect(kind=kind, cohort=cohort, member=member, from_state=before, to_state=to,
                                       text=text, rule_ref=rule, roll=roll))

    def spend_temper(self, cohort: str, amount: int) -> None:
        """Spend temper, from a Boost a Pool bonus first (R21)."""
        co = self.c[cohort]
        co.temper -= amount
        co.temper_boost = max(0, co.temper_boost - amount)

    def need_action(self, cohort: str) -> None:
        """Actions 4, R11, R13: refuse an order of a cohort with no action left, naming the
        orders that used its actions up (``orders[i]``, which the tracker shows as the
        order's cell) and the members who give none."""
        if self.actions_left(cohort) < 1:
            co = self.c[cohort]
            none = "Knocked Out, Stabilized, Dead" + (" and Scared" if self.rules.scared_loses_action else "")
            if co.used_by:
                used = f"{_n(co.actions_used, 'action')} used by {_and(co.used_by)}"
            else:
                used = f"{co.actions_used} used"
            raise _Refused(f"{cohort} has no action left ({used}; {none} members give none) (Actions 4, R11, R13)")

    def use_action(self, cohort: str) -> None:
        """Actions 4, R13: the order being taken uses one of the cohort's actions (noted
        with ``detail``, for :meth:`need_action`'s reason)."""
        co = self.c[cohort]
        co.actions_used += 1
        if self.detail and self.order is not None:
            label = _order_label(self.order)
            if co.kill_pending and self.order.task in ATTACK_POOL:
                label += ", with Kill 'Em All"
            co.used_by.append(f"orders[{self.index}] ({label})")

    def need_temper(self, cohort: str, cost: int, task: str) -> None:
        if cost > self.c[cohort].temper:
            raise _Refused(f"{task} costs {cost} temper and {cohort} has {self.c[cohort].temper} (Tasks 5, R13)")

    def need_band(self, actor: str, other: str, allowed: frozenset[Band], task: str, hint: str = "") -> Band:
        """R24: the band between ``actor`` and ``other`` must be one ``task`` allows; every
        refusal names the range the task needs (and ``hint``, what to change)."""
        band = self.battle.bands.get((actor, other))  # R24: the Storyteller's bands, set between phases
        wants = " or ".join(b.value for b in Band if b in allowed)
        if band is None:
            raise _Refused(f"no range is set between {actor} and {other}; the Storyteller sets it: {task} needs "
                           f"{wants} range{hint} (R24)")
        if band is Band.BLINDED:
            raise _Refused(f"{other} is Blinded to {actor}: no task can be taken against it; {task} needs {wants} "
                           f"range{hint} (Ranges, R24)")
        if band not in allowed:
            raise _Refused(f"{task} needs {wants} range and {other} is {band.value}{hint} (R24)")
        return band

    def need_enemy(self, actor: str, target: str | None, task: str, hint: str = "") -> str:
        if not target:
            raise _Refused(f"{task} needs a target cohort{hint}")
        if not self.battle.enemies(actor, target):
            raise _Refused(f"{target} is on {actor}'s side; {task} targets an enemy cohort{hint}")
        return target

    def need_friend(self, actor: str, other: str, hint: str = "") -> None:
        if self.battle.enemies(actor, other):
            raise _Refused(f"{other} is an enemy of {actor}{hint}")

    def aid(self, actor: str, other: str) -> None:
        """Support Cohort 2, R22: a Support cohort helps one other cohort a phase, plus one
        with Split the Party; other cohorts help only themselves.

        R13, verify-then-apply: this only checks; the aided cohort is noted in
        ``self.aiding`` and counted when the whole order has been taken
        (:meth:`attempt`), so an order refused later costs nothing."""
        if other == actor:
            return
        co = self.c[actor]
        if not self.battle.spec[actor].support:
            raise _Refused(f"only a Support cohort may aid another cohort ({other}) (Support Cohort 2, R22)")
        if other in co.aided:
            return
        limit = 1 + co.splits
        if len(co.aided) >= limit:
            raise _Refused(f"{actor} already aided {', '.join(co.aided)} this phase; a Support cohort aids one "
                           "other cohort a phase (Support Cohort 2, R22)")
        self.aiding = other

    def need_in_the_fight(self, order: Order) -> None:
        """R37: a cohort with no member Active or Scared can take no task (it can still be
        attacked), and an order aimed at a cohort whose members are all Dead is refused."""
        actor = order.cohort
        if not _fighting(self.c[actor].states.values()):
            if _gone(self.c[actor].states.values()):
                raise _Refused(f"{actor} is gone: all its members are Dead (R37)")
            raise _Refused(f"{actor} has no member Active or Scared, so it can take no task (R37)")
        target = order.target
        if target is not None and target in self.c and _gone(self.c[target].states.values()):
            raise _Refused(f"{target} is gone: all its members are Dead, so no order can target it (R37)")

    # ---- damage ----------------------------------------------------------------------
    def apply_damage(self, target: str, damage: int) -> None:
        """Tasks 5.11.2, R16, R31: damage comes off the shared Health pool, which may go
        below zero, and casualty steps follow.

        R31, ``casualty_count = "health"`` (the default): a step each time Health, falling,
        crosses another multiple of 10 below zero; a cohort healed back above one crosses
        it again.  ``"damage"``: a step for each full 10 of the damage taken at or below
        zero over the whole battle; healing gives none back."""
        co = self.c[target]
        if co.ward and damage:
            absorbed = min(co.ward, damage)
            co.ward -= absorbed
            damage -= absorbed
            if self.detail:
                self.effects.append(Effect(kind="boost absorbs", cohort=target, amount=absorbed,
                                           text=f"Boost a Pool (Health) absorbs {absorbed}", rule_ref="Hero Moments 1.4, R21"))
        before = co.health
        co.health -= damage
        if self.rules.casualty_count == "damage":
            below = min(damage, max(0, -co.health))
            counted = co.below_zero_damage
            co.below_zero_damage += below
            steps = co.below_zero_damage // 10 - counted // 10
            if below and self.detail:
                self.effects.append(Effect(kind="below zero", cohort=target, amount=below,
                                           text=f"{below} damage at or below zero, {co.below_zero_damage} this battle: "
                                                "a casualty step for each full 10", rule_ref="Tasks 5.11.2, R31"))
        else:
            steps = max(0, -co.health) // 10 - max(0, -before) // 10
        knocked_now: set[str] = set()
        for _ in range(steps):
            self.casualty_step(target, knocked_now)

    def casualty_step(self, cohort: str, knocked_now: set[str]) -> None:
        """R16, R32, R33 casualty step: a Knocked Out member dies first; else a random Active
        or Scared member other than the Sergeant is Knocked Out; the Sergeant only when no
        one else is eligible, and a Knocked Out Sergeant dies before a Stabilized member is
        touched (R33); a Stabilized member only when everyone else is down, and then goes to
        Knocked Out (R32); one Knocked Out by this same attack only when no one else is
        eligible (R16, R32)."""
        co = self.c[cohort]
        sergeant = self.battle.spec[cohort].sergeant_name
        names = [m.name for m in self.battle.spec[cohort].members]
        states = co.states
        base = "Tasks 5.11.2, 5.12, R16"

        def tiers() -> Iterator[tuple[list[str], State, str, str]]:
            # each tier is built only when every one before it was empty (nothing changes
            # in between, so this is the same as building them all first)
            ko_old = [m for m in names if states[m] is State.KNOCKED_OUT and m not in knocked_now]
            yield [m for m in ko_old if m != sergeant], State.DEAD, "a Knocked Out member is taken first and dies", base
            able = [m for m in names if states[m] is State.ACTIVE or states[m] is State.SCARED]
            yield [m for m in able if m != sergeant], State.KNOCKED_OUT, "Knocked Out", base
            # the Sergeant is taken only when no one else is eligible (Tasks 5.11.2, R16); a
            # Knocked Out one is then the step's Knocked Out member, before any Stabilized (R33)
            yield [m for m in ko_old if m == sergeant], State.DEAD, "the Sergeant dies: no one else is left", base + ", R33"
            yield [m for m in able if m == sergeant], State.KNOCKED_OUT, "the Sergeant is Knocked Out: no one else is left", base
            yield ([m for m in names if states[m] is State.STABILIZED], State.KNOCKED_OUT,
                   "a Stabilized member is hit: everyone else is down", base + ", R32")
            yield ([m for m in names if states[m] is State.KNOCKED_OUT and m in knocked_now], State.DEAD,
                   "dies: no one else is left to take the blow", base)

        for candidates, to, text, rule in tiers():
            if len(candidates) > 1 and sergeant in candidates:
                candidates = [m for m in candidates if m != sergeant]
            if candidates:
                who, roll = self.pick(candidates, "casualty")
                if to is State.KNOCKED_OUT:
                    knocked_now.add(who)
                elif self.detail and who in knocked_now and any(
                        e.kind == "casualty" and e.member == who and e.from_state is State.STABILIZED
                        for e in self.effects):
                    rule += ", R32"  # Stabilized, then Knocked Out and now Dead in one attack
                self.set_state(cohort, who, to, "casualty", rule, text, roll)
                return
        if self.detail:
            self.effects.append(Effect(kind="casualty", cohort=cohort, text="no member left to take the step",
                                       rule_ref="Tasks 5.11.2, R16"))

    # ---- tasks -----------------------------------------------------------------------
    def contest(self, order: Order, actor: str, pool_name: str, target: str) -> tuple[bool, int, int]:
        """Tasks 5.11, R14, R25: d10 + pool against the target's Defense; a tie goes to the
        actor.  A reroll token (Inspire) replaces the first die."""
        co = self.c[actor]
        roll = self.d10(order.roll, f"d10 + {pool_name}")
        if order.use_reroll or order.reroll is not None:
            if co.reroll_tokens > 0:
                co.reroll_tokens -= 1
                roll = self.d10(order.reroll, "reroll (Inspire token)")
            elif self.detail:
                self.effects.append(Effect(kind="note", cohort=actor, text="no reroll token: the first roll stands",
                                           rule_ref="Tasks 5.5, R25"))
        total = roll + self.pool(actor, pool_name)
        defense = self.pool(target, "defense")
        return total >= defense, total, defense

    def rolled(self, order: Order, ev: dict[str, Any], pool_name: str, target: str,
               *, auto: bool = False) -> tuple[bool, int | None, int]:
        """Tasks 5.2-5.8, R13, R14: the task's temper and an action must be there; then d10 +
        pool against the target's Defense (or an automatic hit), and the action and temper
        are spent."""
        actor = order.cohort
        cost = COSTS[order.task]
        self.need_temper(actor, cost, order.task)
        self.need_action(actor)
        total: int | None
        if auto:
            hit, total, defense = True, None, self.pool(target, "defense")
        else:
            hit, total, defense = self.contest(order, actor, pool_name, target)
        self.use_action(actor)
        self.spend_temper(actor, cost)
        ev.update(total=total, defense=defense, temper_spent=cost, outcome="hit" if hit else "miss")
        return hit, total, defense

    def task_attack(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.2-5.4, 5.11, R14, R15, R22, R24: an attack hits when d10 + Attack Power
        ≥ Defense; damage is 2 per able member plus 5 (Melee) or 2 (Mystical)."""
        actor = order.cohort
        if self.battle.spec[actor].support:
            raise _Refused(f"{actor} is a Support cohort and can't attack; {SUPPORT_CAN} (Support Cohort 2, R22)")
        target = self.need_enemy(actor, order.target, order.task)
        self.need_band(actor, target, RANGE_NEEDED[order.task], order.task)
        co = self.c[actor]
        auto = co.kill_pending
        hit, _total, _defense = self.rolled(order, ev, ATTACK_POOL[order.task], target, auto=auto)
        if auto:
            co.kill_pending = False
            if self.detail:
                self.effects.append(Effect(kind="kill 'em all", cohort=actor, text="hits automatically, +5 damage",
                                           rule_ref="Hero Moments 1.3, R21"))
        if not hit:
            return
        damage = self.damage(actor, order.task) + (5 if auto else 0)
        ev["damage"] = damage
        if auto:
            for m in self.battle.spec[target].members:
                if self.c[target].states[m.name] is State.ACTIVE:
                    self.set_state(target, m.name, State.SCARED, "scared", "Hero Moments 1.3, R21", "Kill 'Em All")
                    self.c[target].scared_now.add(m.name)
        self.apply_damage(target, damage)

    def damage(self, actor: str, task: Task) -> int:
        """Tasks 5.11.1, R15: 2 per attacking member able to fight, plus the task's bonus."""
        bonus = DAMAGE_BONUS[task]
        states = self.c[actor].states.values()
        basis = self.rules.damage_basis
        if basis == "attack_power":
            return self.pool(actor, ATTACK_POOL[task]) + bonus
        if basis == "members":
            return 2 * sum(1 for s in states if s is not State.DEAD) + bonus
        return 2 * sum(1 for s in states if s not in UNABLE) + bonus

    def task_move(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.1, R24: move up to the Movement Rate in Units; no temper.  Changing bands
        is the Storyteller's call."""
        self.need_action(order.cohort)
        co = self.c[order.cohort]
        units = self.pool(order.cohort, "movement")
        self.use_action(order.cohort)
        co.units_moved += units
        if self.detail:
            self.effects.append(Effect(kind="move", cohort=order.cohort, amount=units,
                                       text=f"moves {units} Units" + (f" toward {order.target}" if order.target else "")
                                       + "; the Storyteller sets the new bands", rule_ref="Tasks 5.1, R24"))

    def task_inspire(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.5, R20: d10 + Resolve against the Defense of an enemy threatening a
        friendly cohort; on success the friendly cohort gets the chosen benefit."""
        actor = order.cohort
        target = self.need_enemy(actor, order.target, "Inspire", INSPIRE_ALLY_HINT)
        self.need_band(actor, target, RANGE_NEEDED[Task.INSPIRE], "Inspire")
        ally = order.ally or actor
        if ally != actor:
            self.need_friend(actor, ally, " (the Ally column names the friendly cohort to inspire)")
            self.need_band(actor, ally, INSPIRE_ALLY_BANDS, "Inspire (to the friendly cohort)",
                           " (the Ally column names the friendly cohort; left empty, the cohort inspires itself)")
            if self.battle.spec[actor].support:
                self.aid(actor, ally)
        hit, _total, _defense = self.rolled(order, ev, "resolve", target)
        if not hit:
            return
        benefit = order.benefit or Benefit.RESOLVE_BONUS
        rule = "Tasks 5.5, R20"
        if benefit is Benefit.REROLL:
            self.c[ally].next_tokens += 1
            if self.detail:
                self.effects.append(Effect(kind="reroll token", cohort=ally, amount=1,
                                           text="a reroll of one die in the next phase", rule_ref=rule))
        elif benefit is Benefit.REMOVE_SCARED:
            for m, s in list(self.c[ally].states.items()):
                if s is State.SCARED:
                    self.set_state(ally, m, State.ACTIVE, "inspired", rule, "no longer Scared")
        else:
            self.c[ally].bonus["resolve"] = self.c[ally].bonus.get("resolve", 0) + 5
            if self.detail:
                self.effects.append(Effect(kind="bonus", cohort=ally, amount=5, text="+5 Resolve for the rest of the phase",
                                           rule_ref=rule))

    def task_intimidate(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.6, R19: once a phase; d10 + Resolve against Defense; each full 5 of the
        margin makes one random Active enemy member Scared until the end of the phase."""
        actor = order.cohort
        if self.battle.spec[actor].support:
            raise _Refused(f"{actor} is a Support cohort and can't Intimidate; {SUPPORT_CAN} (Support Cohort 2, R22)")
        if self.c[actor].intimidated:
            raise _Refused(f"{actor} already took Intimidate this phase; it is once a phase (Tasks 5.6, R19)")
        target = self.need_enemy(actor, order.target, "Intimidate")
        self.need_band(actor, target, RANGE_NEEDED[Task.INTIMIDATE], "Intimidate")
        hit, total, defense = self.rolled(order, ev, "resolve", target)
        self.c[actor].intimidated = True
        if not hit or total is None:
            return
        count = (total - defense) // 5
        for _ in range(count):
            active = [m for m, s in self.c[target].states.items() if s is State.ACTIVE]
            if not active:
                break
            who, roll = self.pick(active, "scared")
            self.set_state(target, who, State.SCARED, "scared", "Tasks 5.6, R19", "until the end of the phase", roll)
            self.c[target].scared_now.add(who)
        if count == 0 and self.detail:
            self.effects.append(Effect(kind="note", cohort=target, text="won by less than 5: no one is Scared",
                                       rule_ref="Tasks 5.6, R19"))

    def lift(self, actor: str, target: str, member: str | None, *, free: bool) -> None:
        """Tasks 5.7, R18: one member up one state, Knocked Out → Stabilized → Active."""
        if not member:
            raise _Refused("Rescue needs the member to rescue")
        state = self.c[target].states[member]
        if state is State.KNOCKED_OUT:
            to = State.STABILIZED
        elif state is State.STABILIZED:
            to = State.ACTIVE
        else:
            raise _Refused(f"{member} is {state.value}; Rescue lifts a Knocked Out or Stabilized member (Tasks 5.7)")
        cost = COSTS[Task.RESCUE]
        self.need_temper(actor, cost, "Rescue")
        if not free:
            self.need_action(actor)
            self.use_action(actor)
            self.c[actor].rescues += 1
        self.spend_temper(actor, cost)
        self.set_state(target, member, to, "rescue", "Tasks 5.7, R18", f"rescued by {actor}")

    def task_rescue(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.7, R18, R22: at most two Rescues a phase; a Support cohort may rescue in
        another cohort within Personal range."""
        actor = order.cohort
        target = order.target or actor
        if self.c[actor].rescues >= 2:
            raise _Refused(f"{actor} already took 2 Rescues this phase, the most allowed (Tasks 5.7, R18)")
        if target != actor:
            self.need_friend(actor, target)
            self.aid(actor, target)
            self.need_band(actor, target, RANGE_NEEDED[Task.RESCUE], "Rescue")
        self.lift(actor, target, order.member, free=False)
        ev.update(temper_spent=COSTS[Task.RESCUE], outcome="done")

    def heal(self, actor: str, target: str, amount: int | None, *, free: bool) -> int:
        """Tasks 5.9, R17, R36: 3 Health per temper spent (1 to 10), never above the
        maximum; healing from below zero wakes no one.

        R36 (``heal_spends_declared = false``, the default): when the declared temper would
        heal past the maximum, the Heal spends only ⌈missing Health / 3⌉ (at least 1), and
        the log shows both amounts; with ``true`` it spends all that was declared."""
        co = self.c[target]
        missing = self.max_health(target) - co.health
        if missing <= 0:
            raise _Refused(f"{target} is at full Health ({co.health})")
        needed = max(1, math.ceil(missing / 3))
        if amount is None:
            spend = min(10, needed, self.c[actor].temper)
        elif 3 * amount > missing and not self.rules.heal_spends_declared:
            spend = needed
        else:
            spend = amount
        if spend < 1:
            raise _Refused(f"{actor} has no temper to spend on Heal")
        self.need_temper(actor, spend, "Heal")
        if not free:
            self.need_action(actor)
            self.use_action(actor)
        self.spend_temper(actor, spend)
        gained = min(3 * spend, missing)
        co.health += gained
        if not self.detail:
            return spend
        rule = "Tasks 5.9, R17"
        if amount is not None and spend < amount:
            text = f"+{gained} Health ({spend} temper spent of {amount} declared: the rest was not needed)"
            rule = "Tasks 5.9, R17, R36"
        else:
            text = f"+{gained} Health ({spend} temper)"
        if gained < 3 * spend:
            text += f"; capped at the maximum {self.max_health(target)}"
        if co.health <= 0 or any(s is State.KNOCKED_OUT for s in co.states.values()):
            text += "; healing wakes no one (R17)"
        self.effects.append(Effect(kind="heal", cohort=target, amount=gained, text=text, rule_ref=rule))
        return spend

    def task_heal(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.9, R17, R22: a cohort heals itself; a Support cohort may heal another
        cohort within Personal range."""
        actor = order.cohort
        target = order.target or actor
        if target != actor:
            self.need_friend(actor, target)
            self.aid(actor, target)
            self.need_band(actor, target, RANGE_NEEDED[Task.HEAL], "Heal")
        spent = self.heal(actor, target, order.temper, free=False)
        ev.update(temper_spent=spent, outcome="done")

    def task_analyze(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.8, R14: d10 + Resolve against Defense, a tie wins; on a win the
        Storyteller tells narrative details of the enemy."""
        actor = order.cohort
        target = self.need_enemy(actor, order.target, "Analyze")
        self.need_band(actor, target, RANGE_NEEDED[Task.ANALYZE], "Analyze")
        if order.ally and order.ally != actor:
            self.need_friend(actor, order.ally)
            self.aid(actor, order.ally)
        hit, _total, _defense = self.rolled(order, ev, "resolve", target)
        if hit and self.detail:
            who = order.ally or actor
            self.effects.append(Effect(kind="storyteller", cohort=actor,
                                       text=f"Storyteller: tell {who} how {target} is doing and what it is preparing",
                                       rule_ref="Tasks 5.8"))

    def task_tactical(self, order: Order, ev: dict[str, Any]) -> None:
        """Tasks 5.13, R23: once a phase, 1 Control, no action; the Storyteller rules the
        advantage (logged as text)."""
        actor = order.cohort
        co = self.c[actor]
        if co.tactical:
            raise _Refused(f"{actor} already took its Tactical Task this phase (Tasks 5.13, R23)")
        if co.control < 1:
            raise _Refused(f"{actor} has no Control left (Tasks 5.13, R23)")
        co.control -= 1
        co.control_boost = max(0, co.control_boost - 1)
        co.tactical = True
        ev.update(outcome="done")
        if self.detail:
            self.effects.append(Effect(kind="storyteller", cohort=actor, amount=1,
                                       text="Tactical Task: " + (order.text or "the Storyteller rules the advantage"),
                                       rule_ref="Tasks 5.13, R23"))

    def task_hero(self, order: Order, ev: dict[str, Any]) -> None:
        """Hero Moments, Tasks 5.10, R21: once per character per battle, at most 3 a cohort
        a phase, no action; a Scared character may, one who is down may not."""
        actor = order.cohort
        co = self.c[actor]
        hero, moment = order.member, order.moment
        if not hero or moment is None:
            raise _Refused("Hero Moment needs the hero (member) and the moment")
        support = self.battle.spec[actor].support
        if hero in co.hero_used:
            raise _Refused(f"{hero} already used their Hero Moment this battle (R21)")
        if co.states[hero] not in (State.ACTIVE, State.SCARED):
            raise _Refused(f"{hero} is {co.states[hero].value} and can't take a Hero Moment (R21)")
        if co.moments >= 3:
            raise _Refused(f"{actor} already had 3 Hero Moments this phase, the most allowed (R21)")
        if support and moment not in SUPPORT_MOMENTS:
            raise _Refused(f"{actor} is a Support cohort: its Hero Moments only aid others, not {moment.value} (R21, R22)")
        rule = {
            Moment.SAVE_AN_ALLY: "Hero Moments 1.1, R21",
            Moment.PUSH_FORWARD: "Hero Moments 1.2, R21",
            Moment.KILL_EM_ALL: "Hero Moments 1.3, R21",
            Moment.BOOST_A_POOL: "Hero Moments 1.4, R21",
            Moment.SPLIT_THE_PARTY: "Hero Moments 1.5, R21, R22",
            Moment.CUSTOM: "R21",
        }[moment]
        ev["rule_ref"] = rule
        if moment is Moment.SAVE_AN_ALLY:
            ally = order.ally
            if not ally:
                raise _Refused("Save an Ally needs the ally to save")
            if co.states[ally] is not State.DEAD:
                raise _Refused(f"{ally} is {co.states[ally].value}; Save an Ally brings back a Dead member (R21)")
            died = co.died_in_phase.get(ally)
            if died is None or died < self.n - 1:
                raise _Refused(f"{ally} died before the last phase; Save an Ally only reaches someone who died this "
                               "phase or the last (Hero Moments 1.1, R21)")
            self.set_state(actor, ally, State.STABILIZED, "saved", rule, f"saved by {hero}")
            co.died_in_phase.pop(ally, None)
        elif moment is Moment.PUSH_FORWARD:
            co.units_moved += 5
            if self.detail:
                self.effects.append(Effect(kind="move", cohort=actor, amount=5, text="surges forward 5 more Units", rule_ref=rule))
        elif moment is Moment.KILL_EM_ALL:
            co.kill_pending = True
            if self.detail:
                self.effects.append(Effect(kind="kill 'em all", cohort=actor,
                                           text="the next attack this phase hits, +5 damage, its target's members Scared",
                                           rule_ref=rule))
        elif moment is Moment.BOOST_A_POOL:
            pool = order.pool
            if pool is None:
                raise _Refused("Boost a Pool needs the pool to boost")
            self.boost(actor, pool, rule)
        elif moment is Moment.SPLIT_THE_PARTY:
            self.split(order, ev, rule)
        elif self.detail:
            self.effects.append(Effect(kind="storyteller", cohort=actor, member=hero,
                                       text="Custom Hero Moment: " + (order.text or "the Storyteller rules the outcome"),
                                       rule_ref=rule))
        co.hero_used.append(hero)
        co.moments += 1
        ev.update(outcome="done")

    def boost(self, actor: str, pool: PoolName, rule: str) -> None:
        """Hero Moments 1.4, R21: +10 to one pool for this phase.  Temper and Control get 10
        to spend now (what is left at the end of the phase goes); Health gets a 10-point
        shield that takes damage first, so Health never passes its maximum."""
        co = self.c[actor]
        name = pool.value
        if name == "temper":
            co.temper += 10
            co.temper_boost += 10
        elif name == "control":
            co.control += 10
            co.control_boost += 10
        elif name == "health":
            co.ward += 10
        else:
            co.bonus[name] = co.bonus.get(name, 0) + 10
        if self.detail:
            self.effects.append(Effect(kind="bonus", cohort=actor, amount=10, text=f"+10 {name} for this phase", rule_ref=rule))

    def split(self, order: Order, ev: dict[str, Any], rule: str) -> None:
        """Hero Moments 1.5, R21, R22: a Support member splits off and gives one free Heal or
        Rescue to a second friendly cohort, not the one the Support cohort already aids."""
        actor = order.cohort
        if not self.battle.spec[actor].support:
            raise _Refused(f"{actor} is not a Support cohort; only Support members may Split the Party (Hero Moments 1.5)")
        target = order.target
        if not target or target == actor:
            raise _Refused("Split the Party needs the second cohort to aid (target)")
        self.need_friend(actor, target)
        co = self.c[actor]
        if target in co.aided:
            raise _Refused(f"{target} is already aided by {actor}; Split the Party aids a different cohort (Hero Moments 1.5)")
        self.need_band(actor, target, RANGE_NEEDED[Task.HEAL], "Split the Party")
        kind = order.free_task or ("Rescue" if order.ally else "Heal")
        if kind == "Rescue":
            self.lift(actor, target, order.ally, free=True)
            ev["temper_spent"] = COSTS[Task.RESCUE]
        else:
            ev["temper_spent"] = self.heal(actor, target, order.temper, free=True)
        co.splits += 1
        co.aided.append(target)

    # ---- the phase -------------------------------------------------------------------
    def attempt(self, order: Order) -> dict[str, Any]:
        """R13, verify-then-apply: take one order; return its event's outcome fields.

        Every task checks all it needs (an action, temper, range, targets, once-a-phase
        limits) before it changes anything, and the one thing it notes on the way (the
        cohort a Support cohort aids, :meth:`aid`) is counted only once the order is
        taken.  So a refused order has changed nothing and costs nothing, with no copy
        of the standing to roll back to.  (:data:`_ROLLBACK`, when set, takes the old
        copies anyway and restores them: the benchmark's and the tests' reference.)"""
        self.rolls, self.effects, self.picks = [], [], list(order.picks)
        self.aiding = None
        self.order = order
        ev: dict[str, Any] = {"rule_ref": RULE_REF[order.task], "outcome": "done", "damage": 0}
        saved = None
        if _ROLLBACK is not None:
            touched = {k for k in (order.cohort, order.target, order.ally) if k is not None and k in self.c}
            saved = {k: _ROLLBACK(self.c[k]) for k in touched}
        try:
            self.need_in_the_fight(order)
            _HANDLERS[order.task](self, order, ev)
        except _Refused as refusal:
            if saved is not None:
                self.c.update(saved)
            self.rolls, self.effects = [], []
            return {"rule_ref": ev["rule_ref"], "outcome": "refused", "damage": 0, "reason": refusal.reason}
        if self.aiding is not None:
            self.c[order.cohort].aided.append(self.aiding)
        return ev

    def resolve(self, index: int, order: Order) -> Event:
        """R13: one order and its record (:class:`Event`)."""
        self.index = index
        ev = self.attempt(order)
        return Event(
            phase=self.n, order=index, cohort=order.cohort, task=order.task, target=order.target,
            rolls=tuple(self.rolls), effects=tuple(self.effects), actions_left=self.actions_left(order.cohort),
            member=order.member, moment=order.moment, **ev,
        )

    def end(self) -> list[Effect]:
        """End of phase: the Rescue flag (Tasks 5.7, R18, R34); Scared from this phase wears
        off (R19); phase bonuses lapse (R21); reroll tokens pass to the next phase (R20, R25).

        R34: the flag goes up only for a Sergeant who could have rescued: a member is
        Knocked Out, the cohort took no Rescue, the Sergeant is neither Knocked Out nor
        Dead, and the cohort began the phase with at least the 2 temper a Rescue costs.
        The flag is a record for the Storyteller and changes no standing, so it is only
        worked out with ``detail``."""
        out: list[Effect] = []
        for spec in self.battle.cohorts:
            co = self.c[spec.name]
            knocked = [m for m, s in co.states.items() if s is State.KNOCKED_OUT] if self.detail else []
            if (knocked and co.rescues == 0 and co.states[spec.sergeant_name] not in (State.KNOCKED_OUT, State.DEAD)
                    and self.battle.state[spec.name].temper >= COSTS[Task.RESCUE]):
                out.append(Effect(kind="flag", cohort=spec.name, member=spec.sergeant_name,
                                  text=f"Sergeant {spec.sergeant_name} loses Path/Humanity: {', '.join(knocked)} left "
                                       "Knocked Out with no Rescue taken", rule_ref="Tasks 5.7, R18, R34"))
            for m in sorted(co.scared_now):
                if co.states[m] is State.SCARED:
                    co.states[m] = State.ACTIVE
                    if self.detail:
                        out.append(Effect(kind="scared ends", cohort=spec.name, member=m, from_state=State.SCARED,
                                          to_state=State.ACTIVE, text="Scared wears off at the end of the phase",
                                          rule_ref="Tasks 5.6, R19"))
            if co.temper_boost:
                co.temper -= co.temper_boost
                if self.detail:
                    out.append(Effect(kind="bonus ends", cohort=spec.name, amount=co.temper_boost,
                                      text="unspent Boost a Pool temper lapses", rule_ref="Hero Moments 1.4, R21"))
            if co.control_boost:
                co.control -= co.control_boost
                if self.detail:
                    out.append(Effect(kind="bonus ends", cohort=spec.name, amount=co.control_boost,
                                      text="unspent Boost a Pool control lapses", rule_ref="Hero Moments 1.4, R21"))
            if co.kill_pending and self.detail:
                out.append(Effect(kind="bonus ends", cohort=spec.name, text="Kill 'Em All lapses without an attack",
                                  rule_ref="Hero Moments 1.3, R21"))
        return out


_HANDLERS: dict[Task, Callable[[_Phase, Order, dict[str, Any]], None]] = {
    Task.MOVE: _Phase.task_move,
    Task.MELEE: _Phase.task_attack,
    Task.RANGED: _Phase.task_attack,
    Task.MYSTICAL: _Phase.task_attack,
    Task.INSPIRE: _Phase.task_inspire,
    Task.INTIMIDATE: _Phase.task_intimidate,
    Task.RESCUE: _Phase.task_rescue,
    Task.ANALYZE: _Phase.task_analyze,
    Task.HEAL: _Phase.task_heal,
    Task.HERO_MOMENT: _Phase.task_hero,
    Task.TACTICAL: _Phase.task_tactical,
}
"""Tasks 5.1-5.13: the rule of each task (built once, not once a phase)."""


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _order_label(order: Order) -> str:
    """An order as a reason names it: the task (the moment of a Hero Moment) and its target."""
    what = order.moment.value if order.task is Task.HERO_MOMENT and order.moment is not None else order.task.value
    return what + (f" on {order.target}" if order.target and order.target != order.cohort else "")


def _fighting(states: Iterable[State]) -> bool:
    """R37: a member Active or Scared keeps a cohort in the fight."""
    for s in states:
        if s is State.ACTIVE or s is State.SCARED:
            return True
    return False


def _gone(states: Iterable[State]) -> bool:
    """R37: a cohort whose members are all Dead is gone."""
    for s in states:
        if s is not State.DEAD:
            return False
    return True


def side_out_of_fight(battle: Battle, side: str) -> bool:
    """R37: ``side`` is out of the fight when none of its cohorts has a member Active or
    Scared (a side with no cohort in the battle has nothing left to fight with either).
    The forecast's "battle to its end" stops there."""
    return not any(_fighting(battle.state[spec.name].states.values())
                   for spec in battle.cohorts if spec.side == side)


def sides_in_fight(battle: Battle) -> list[str]:
    """R37: the sides with a cohort still in the fight (a member Active or Scared), in the
    order the cohorts list them; one pass over the cohorts, for the forecast's every step."""
    out: list[str] = []
    for spec in battle.cohorts:
        if spec.side not in out and _fighting(battle.state[spec.name].states.values()):
            out.append(spec.side)
    return out


def _copy(co: _Cohort) -> _Cohort:
    """R13: a copy of a cohort's standing that shares no container with it.  A task
    changes a cohort's numbers and the contents of its dicts, lists and sets, whose items
    are immutable (names, states, numbers), so copying each container one level deep is
    enough.  The engine no longer needs it (verify-then-apply, :meth:`_Phase.attempt`);
    it is the one-level rollback copy the benchmark and the tests compare against."""
    new = object.__new__(_Cohort)
    new.__dict__.update(co.__dict__)
    new.states, new.hero_used, new.died_in_phase = dict(co.states), list(co.hero_used), dict(co.died_in_phase)
    new.bonus, new.scared_now, new.aided = dict(co.bonus), set(co.scared_now), list(co.aided)
    new.used_by = list(co.used_by)
    return new


_ROLLBACK: Callable[[_Cohort], _Cohort] | None = None
"""R13: when set, each order first copies the cohorts it names with this function and a
refused order restores them, as the engine did before verify-then-apply
(:meth:`_Phase.attempt`).  ``None`` (the engine's way) takes no copy.  For the benchmark
(``copy.deepcopy``, the old path) and the tests that pin the two ways to the same result."""


def resolve_phase(battle: Battle, roller: Roller | None = None, *, record: bool = True) -> PhaseResult:
    """R13: resolve ``battle.orders`` in the order given, one :class:`Event` each.

    ``roller`` rolls every die not typed in; by default the battle's seeded
    :func:`phase_roller`.  ``record=False`` leaves the new battle's ``history`` and
    ``log`` as they were (no undo snapshot, no logged events), for a caller that wants
    the events but will never undo; a simulation that wants only the outcomes uses
    :func:`simulate_phase`.
    """
    ph = _Phase(battle, roller or phase_roller(battle))
    events = tuple(ph.resolve(i, order) for i, order in enumerate(battle.orders))
    end = ph.end()
    update: dict[str, Any] = {
        "phase": battle.phase + 1,
        "state": {name: co.freeze() for name, co in ph.c.items()},
        "orders": (),
    }
    dumped = None
    if record:
        dumped = tuple(e.model_dump(mode="json") for e in events)
        update["history"] = (*battle.history, battle.snapshot())
        update["log"] = (*battle.log, *dumped)
    new = battle.model_copy(update=update)
    result = PhaseResult(phase=battle.phase, events=events, end_of_phase=tuple(end), battle=new)
    if dumped is not None:
        remember(result, "events_json", dumped)  # made once, for the log
    return result


def simulate_phase(battle: Battle, roller: Roller) -> tuple[Battle, tuple[Outcome, ...]]:
    """R13: the phase exactly as ``resolve_phase(battle, roller, record=False)`` resolves
    it (the same dice in the same order, the same new battle) but returning only each
    order's outcome (``"hit"``, ``"miss"``, ``"done"``, ``"refused"``) instead of its
    :class:`Event`, and building none of the rolls, effects and texts a person reads.
    For the forecast, which resolves thousands of phases and reads none of them."""
    ph = _Phase(battle, roller, detail=False)
    outcomes: tuple[Outcome, ...] = tuple(ph.attempt(order)["outcome"] for order in battle.orders)
    ph.end()
    new = battle.model_copy(update={"phase": battle.phase + 1,
                                    "state": {name: co.freeze() for name, co in ph.c.items()},
                                    "orders": ()})
    return new, outcomes


def undo(battle: Battle) -> Battle:
    """Undo the last resolved phase: the battle exactly as it was before it."""
    if not battle.history:
        from sheetsync.core.errors import BattleStateError

        raise BattleStateError("there is no resolved phase to undo")
    snap = dict(battle.history[-1])
    length = snap.pop("log_length")
    snap["history"] = battle.history[:-1]
    snap["log"] = battle.log[:length]
    return Battle.model_validate(snap)
