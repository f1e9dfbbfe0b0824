"""The forecast's per-system adapters: the battalion rules and the hex wargame.

An adapter is the small part of the forecast (:mod:`sheetsync.app.forecast`) that knows a
rule system.  It says what an order, a side and a member are, resolves one step from a
battle with a given roller, repeats the declared orders for the next step ("standing
orders"), measures the battle, and gives the exact chances where they are cheap.  The
simulation, the statistics and every surface are the forecast's, written once.

Both adapters run the system's own engine, so a simulated step is exactly what
``sheetsync resolve`` would do with those dice.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from sheetsync.app.forecast_exalted import ExaltedForecast
from sheetsync.dice import Roller

__all__ = ["ADAPTERS", "BbnForecast", "Exact", "ForecastAdapter", "HexForecast", "OrderInfo", "adapter_for"]


@dataclass(frozen=True)
class OrderInfo:
    """One declared order as the forecast shows it: its place (``orders[2]`` or the cell),
    who acts, what it does and against whom."""

    index: int
    actor: str
    task: str
    target: str


@dataclass(frozen=True)
class Exact:
    """An exact chance, computed from the rules rather than simulated, and what it
    assumes (``basis``).  ``expected`` is an exact expectation where the rules give one
    (H11's expected casualties)."""

    p: float
    basis: str
    expected: float | None = None
    fraction: str | None = None
    """``p`` as an exact fraction (``"3/5"``), where the rules give one."""


class ForecastAdapter(Protocol):
    """What the forecast needs of a rule system (one object per system).

    * :meth:`prepare` checks the battle can be forecast (there are declared orders, the
      battle is not over) and returns it without its undo history;
    * :meth:`step` resolves one step (a phase, a turn, a tick) with ``roller`` and returns
      the next battle and, per declared order, ``True`` (it succeeded), ``False`` (it was
      taken and failed) or ``None`` (it was refused);
    * :meth:`standing` gives the next step's orders: the declared ones again, typed dice
      cleared, those that have become impossible dropped;
    * :meth:`levels` measures each entity (cohort, unit) for :attr:`level_name`;
    * :meth:`flags` says, for each member and each of :attr:`step_flags` (after one step)
      or :attr:`end_flags` (at the end), whether it holds;
    * :meth:`sides_in` lists the sides still in the fight.
    """

    system: str
    entity_word: str
    level_name: str
    level_loss: int
    """+1 when a lower level is a loss (Health), -1 when a higher one is (casualties)."""
    step_flags: tuple[str, ...]
    end_flags: tuple[str, ...]

    def prepare(self, battle: Any) -> Any: ...

    def sides(self, battle: Any) -> list[str]: ...

    def entities(self, battle: Any) -> list[tuple[str, str]]: ...

    def members(self, battle: Any) -> list[tuple[str, str]]: ...

    def orders(self, battle: Any) -> list[OrderInfo]: ...

    def exact(self, battle: Any) -> list[Exact | None]: ...

    def exact_levels(self, battle: Any) -> dict[str, Exact]: ...

    def step(self, battle: Any, roller: Roller) -> tuple[Any, list[bool | None]]: ...

    def standing(self, declared: Any, now: Any) -> Any | None: ...

    def levels(self, battle: Any) -> tuple[int, ...]: ...

    def flags(self, battle: Any, which: str) -> tuple[bool, ...]: ...

    def sides_in(self, battle: Any) -> list[str]: ...

    def dump(self, battle: Any) -> dict[str, Any]: ...

    def load(self, data: dict[str, Any]) -> Any: ...


def _no_orders(word: str, step: int, hint: str) -> Exception:
    from sheetsync.errors import BattleStateError

    return BattleStateError(f"there is nothing to forecast: {word} {step} has no declared orders. {hint}")


class _Middle:
    """A roller whose dice do not matter (the aftermath's lasting-effect rolls, which
    Torpor does not depend on)."""

    def roll(self, sides: int) -> int:
        return (sides + 1) // 2


class BbnForecast:
    """The battalion rules (R13-R37): a step is a phase; orders succeed on a hit (a rolled
    task) or when done (the others); members are Knocked Out or Dead after a step, Dead
    or in Torpor (R27, R35) at the end."""

    system = "bbn"
    entity_word = "cohort"
    level_name = "Health"
    level_loss = 1
    step_flags: tuple[str, ...] = ("Knocked Out", "Dead")
    end_flags: tuple[str, ...] = ("Dead", "Torpor")
    _cleared: tuple[Any, tuple[Any, ...]] | None = None
    """The declared orders last seen by :meth:`standing`, and them with typed dice cleared."""

    def prepare(self, battle: Any) -> Any:
        """R13, R37: the battle must have declared orders and both sides in the fight."""
        from sheetsync.errors import BattleStateError
        from sheetsync.rules.bbn.phase import side_out_of_fight

        if not battle.orders:
            raise _no_orders("phase", battle.phase, "Declare the phase's orders (the Orders sheet, or orders: in "
                                                    "the battle file), then forecast again")
        sides = self.sides(battle)
        out = [s for s in sides if side_out_of_fight(battle, s)]
        if len(sides) < 2 or out:
            raise BattleStateError("there is nothing to forecast: the battle is over ("
                                   + (f"{', '.join(out)} has no member Active or Scared, R37)" if out
                                      else "only one side is in the battle)"))
        seed = battle.seed if battle.seed is not None else 0
        return battle.model_copy(update={"history": (), "log": (), "seed": seed})

    def sides(self, battle: Any) -> list[str]:
        return list(dict.fromkeys(c.side for c in battle.cohorts))

    def entities(self, battle: Any) -> list[tuple[str, str]]:
        return [(c.name, c.side) for c in battle.cohorts]

    def members(self, battle: Any) -> list[tuple[str, str]]:
        return [(c.name, m.name) for c in battle.cohorts for m in c.members]

    def orders(self, battle: Any) -> list[OrderInfo]:
        out = []
        for i, o in enumerate(battle.orders):
            target = o.target or ""
            if o.task.value == "Hero Moment" and o.moment is not None:
                target = f"{o.moment.value}" + (f" ({o.member})" if o.member else "")
            out.append(OrderInfo(i, o.cohort, o.task.value, target))
        return out

    def exact(self, battle: Any) -> list[Exact | None]:
        """R14, Tasks 5.11: a rolled task succeeds when d10 + pool ≥ the target's Defense,
        so its chance is :func:`~sheetsync.rules.bbn.phase.hit_chance` of the pools the
        phase begins with (a typed die makes it certain).  Exact unless an earlier order
        of the phase changes the pools (Inspire, Boost a Pool), refuses it, or an Inspire
        reroll is used; the simulation counts those."""
        from sheetsync.rules.bbn.models import Task
        from sheetsync.rules.bbn.phase import ATTACK_POOL, hit_chance

        rolled = {**{t: p for t, p in ATTACK_POOL.items()}, Task.ANALYZE: "resolve", Task.INSPIRE: "resolve",
                  Task.INTIMIDATE: "resolve"}
        out: list[Exact | None] = []
        for o in battle.orders:
            pool_name = rolled.get(o.task)
            if pool_name is None or not o.target or o.target not in battle.pools or o.use_reroll or o.reroll:
                out.append(None)
                continue
            pool = battle.pools[o.cohort].pools[pool_name]
            defense = battle.pools[o.target].pools["defense"]
            if o.roll is not None:
                out.append(Exact(1.0 if o.roll + pool >= defense else 0.0,
                                 f"typed d10 {o.roll} + {pool_name} {pool} vs Defense {defense} (R14, R25)"))
            else:
                chance = hit_chance(pool, defense)
                out.append(Exact(chance, f"d10 + {pool_name} {pool} vs Defense {defense} (R14)",
                                 fraction=str(Fraction(round(chance * 10), 10))))
        return out

    def exact_levels(self, battle: Any) -> dict[str, Exact]:
        return {}

    def step(self, battle: Any, roller: Roller) -> tuple[Any, list[bool | None]]:
        """R13: one phase through the engine, as ``resolve_phase(record=False)`` would
        resolve it with these dice, but with no undo snapshot and no event records (a
        forecast never undoes and reads only each order's outcome)."""
        from sheetsync.rules.bbn.phase import simulate_phase

        new, outcomes = simulate_phase(battle, roller)
        return new, [None if o == "refused" else o != "miss" for o in outcomes]

    def standing(self, declared: Any, now: Any) -> Any | None:
        """R13, R37: the declared orders again, typed dice and picks cleared; an order whose
        cohort or target is gone (every member Dead) is dropped.  ``None`` when no order is
        left.  The cleared orders are made once per declared battle, not once a phase."""
        from sheetsync.rules.bbn.models import State

        cached = self._cleared
        if cached is None or cached[0] is not declared.orders:
            cached = self._cleared = (declared.orders, tuple(
                o if o.roll is None and o.reroll is None and not o.picks
                else o.model_copy(update={"roll": None, "reroll": None, "picks": ()}) for o in declared.orders))
        dead = {State.DEAD}
        gone = {name for name, st in now.state.items() if not set(st.states.values()) - dead}
        keep = cached[1] if not gone else tuple(
            o for o in cached[1] if o.cohort not in gone and (o.target is None or o.target not in gone))
        if not keep:
            return None
        return now.model_copy(update={"orders": keep})

    def levels(self, battle: Any) -> tuple[int, ...]:
        return tuple(battle.state[c.name].health for c in battle.cohorts)

    def level_bounds(self, battle: Any) -> list[tuple[int | None, int | None]]:
        """Tasks 5.9, R16, R17: Health never rises above the cohort's maximum and has no
        floor (it goes below zero)."""
        return [(None, battle.pools[c.name].pools["health"]) for c in battle.cohorts]

    def flags(self, battle: Any, which: str) -> tuple[bool, ...]:
        """After a step: Knocked Out, Dead (States 5.12).  At the end: Dead, and Torpor as
        the aftermath would judge it (R26, R27, R35, with the Aegis burns each cohort
        declares)."""
        from sheetsync.rules.bbn.models import State

        if which == "step":
            return tuple(f for c in battle.cohorts for m in c.members
                         for f in (battle.state[c.name].states[m.name] is State.KNOCKED_OUT,
                                   battle.state[c.name].states[m.name] is State.DEAD))
        from sheetsync.rules.bbn.aftermath import aftermath

        return tuple(f for e in aftermath(battle, _Middle()) for f in (e.dead, e.torpor))

    def sides_in(self, battle: Any) -> list[str]:
        """R37: the sides not out of the fight, in the order of :meth:`sides`."""
        from sheetsync.rules.bbn.phase import sides_in_fight

        fighting = sides_in_fight(battle)
        return [s for s in self.sides(battle) if s in fighting]

    def dump(self, battle: Any) -> dict[str, Any]:
        return dict(battle.to_data())

    def load(self, data: dict[str, Any]) -> Any:
        from sheetsync.rules.bbn.battle import Battle

        return Battle.from_data(data)


class HexForecast:
    """The hex wargame (H3-H12): a step is a turn; a move succeeds when it is made, an
    engagement when it inflicts casualties (a d100 below the chance, H8); a unit is
    destroyed at 100% (H9)."""

    system = "hexwar"
    entity_word = "unit"
    level_name = "Casualties %"
    level_loss = -1
    step_flags: tuple[str, ...] = ("Destroyed",)
    end_flags: tuple[str, ...] = ("Destroyed",)

    def prepare(self, battle: Any) -> Any:
        """H12: a battle with no typed move or attack, or with one side left, has nothing
        to forecast."""
        from sheetsync.errors import BattleStateError

        if not battle.orders.moves and not battle.orders.attacks:
            raise _no_orders("turn", battle.turn, "Type the turn's moves and attacks (the Moves and Attacks "
                                                  "sheets, or turn: in the battle file), then forecast again")
        live = battle.live_sides()
        if len(live) < 2:
            raise BattleStateError("there is nothing to forecast: the battle is over ("
                                   + (f"only {live[0]} has units left, H12)" if live else "no side has units left, H12)"))
        seed = battle.seed if battle.seed is not None else 0
        return battle.model_copy(update={"history": (), "seed": seed})

    def sides(self, battle: Any) -> list[str]:
        return list(battle.sides)

    def entities(self, battle: Any) -> list[tuple[str, str]]:
        return [(u.name, u.side) for u in battle.units]

    def members(self, battle: Any) -> list[tuple[str, str]]:
        return [(u.name, u.name) for u in battle.units]

    def orders(self, battle: Any) -> list[OrderInfo]:
        moves = [OrderInfo(i, m.unit, "Move", "path " + " ".join(m.path) if m.path is not None else f"to {m.to}")
                 for i, m in enumerate(battle.orders.moves)]
        n = len(moves)
        attacks = [OrderInfo(n + i, ", ".join(a.attackers), "Attack", a.defender)
                   for i, a in enumerate(battle.orders.attacks)]
        return moves + attacks

    def _plans(self, battle: Any) -> list[Any] | None:
        """The engagements as H11 previews them, when the moves cannot depend on dice
        (``initiative = "set"``, H3); else ``None``."""
        from sheetsync.rules.hexwar.turn import preview_attacks

        if battle.house_rules.initiative != "set":
            return None
        return list(preview_attacks(battle))

    def exact(self, battle: Any) -> list[Exact | None]:
        """6.2, 6.2.1, H7, H8, H11: an engagement of chance c% inflicts casualties when the
        d100 is below c, so with probability (c − 1)/100, and c·(c − 1)/200 percentage
        points are expected; a refused one never does.  Moves take no dice: made or
        refused for certain.  Exact when initiative is set (H3); with a contest the order
        of the moves rides on the dice, and the simulation alone answers."""
        from sheetsync.rules.hexwar.turn import NoDice, expected_casualties, resolve_turn

        plans = self._plans(battle)
        if plans is None:
            return [None] * (len(battle.orders.moves) + len(battle.orders.attacks))
        dry = resolve_turn(battle, NoDice())
        out: list[Exact | None] = [Exact(0.0 if e.outcome == "refused" else 1.0, "a move takes no dice (H4)")
                                   for e in dry.events if e.kind == "move"]
        for plan, order in zip(plans, battle.orders.attacks, strict=True):
            if plan.reason != "not rolled yet":
                out.append(Exact(0.0, f"refused: {plan.reason}", 0.0))
            elif order.roll is not None:
                hurt = max(0, (plan.chance or 0) - order.roll)
                out.append(Exact(1.0 if hurt else 0.0, f"typed d100 {order.roll} vs chance {plan.chance}% (H8)",
                                 float(hurt)))
            else:
                c = plan.chance or 0
                out.append(Exact(max(0, c - 1) / 100, f"S {plan.strength} vs D {plan.defense}: chance {c}%, "
                                                      "a hit on a d100 below it (6.2, H7, H8)",
                                 expected_casualties(c)))
        return out

    def exact_levels(self, battle: Any) -> dict[str, Exact]:
        """H8, H9, H11: a unit faces at most one engagement a turn (H7), so its casualties
        after the turn are its casualties now plus c − roll for the rolls below c: the
        expected value is exact, and so is the chance of reaching 100% (destroyed)."""
        plans = self._plans(battle)
        if plans is None:
            return {}
        out: dict[str, Exact] = {}
        by_defender = {p.defender: (p, o) for p, o in zip(plans, battle.orders.attacks, strict=True)
                       if p.reason == "not rolled yet"}
        for u in battle.units:
            found = by_defender.get(u.name)
            if found is None:
                out[u.name] = Exact(1.0 if u.destroyed else 0.0, "not attacked this turn", float(u.casualties))
                continue
            plan, order = found
            c = plan.chance or 0
            need = 100 - u.casualties
            if order.roll is not None:
                hurt = max(0, c - order.roll)
                out[u.name] = Exact(1.0 if u.casualties + hurt >= 100 else 0.0, "typed d100 (H8, H9)",
                                    float(u.casualties + hurt))
                continue
            destroyed = 1.0 if need <= 0 else max(0, c - need) / 100
            out[u.name] = Exact(destroyed, f"chance {c}%: destroyed on a d100 of {max(0, c - need)} or less (H8, H9)",
                                u.casualties + c * (c - 1) / 200)
        return out

    def step(self, battle: Any, roller: Roller) -> tuple[Any, list[bool | None]]:
        """1.0, H3-H9: one turn through the engine, its undo record dropped."""
        from sheetsync.rules.hexwar.turn import resolve_turn

        result = resolve_turn(battle, roller)
        ok = [None if e.outcome == "refused" else e.outcome != "miss" for e in result.events]
        moves = [x for x, e in zip(ok, result.events, strict=True) if e.kind == "move"]
        attacks = [x for x, e in zip(ok, result.events, strict=True) if e.kind == "attack"]
        # events come moves first in resolution order (H3); put them back in typed order
        order = [e.order for e in result.events if e.kind == "move"]
        typed_moves: list[bool | None] = [None] * len(moves)
        for i, x in zip(order, moves, strict=True):
            typed_moves[i] = x
        return result.battle.model_copy(update={"history": ()}), typed_moves + attacks

    def standing(self, declared: Any, now: Any) -> Any | None:
        """H4, H7, H9: the typed moves and engagements again, typed dice cleared; those of
        a destroyed unit, or on one, are dropped (a destroyed attacker leaves its
        engagement to the others).  ``None`` when no order is left or one side is out."""
        if len(now.live_sides()) < 2:
            return None
        alive = {u.name for u in now.units if not u.destroyed}
        moves = tuple(m for m in declared.orders.moves if m.unit in alive)
        attacks = []
        for a in declared.orders.attacks:
            attackers = tuple(x for x in a.attackers if x in alive)
            if a.defender in alive and attackers:
                attacks.append(a.model_copy(update={"attackers": attackers, "roll": None}))
        if not moves and not attacks:
            return None
        orders = declared.orders.model_copy(update={"moves": moves, "attacks": tuple(attacks),
                                                    "initiative_rolls": {}})
        return now.model_copy(update={"orders": orders})

    def levels(self, battle: Any) -> tuple[int, ...]:
        return tuple(u.casualties for u in battle.units)

    def level_bounds(self, battle: Any) -> list[tuple[int | None, int | None]]:
        """H8, H9: casualties only add up during a battle (nothing takes them back), with
        no ceiling (they may pass 100%)."""
        return [(u.casualties, None) for u in battle.units]

    def flags(self, battle: Any, which: str) -> tuple[bool, ...]:
        return tuple(u.destroyed for u in battle.units)

    def sides_in(self, battle: Any) -> list[str]:
        return list(battle.live_sides())

    def dump(self, battle: Any) -> dict[str, Any]:
        from sheetsync.rules.hexwar.loader import battle_to_file

        return dict(battle_to_file(battle))

    def load(self, data: dict[str, Any]) -> Any:
        from sheetsync.rules.hexwar.loader import load_battle

        return load_battle(data, "forecast")


ADAPTERS: dict[str, type[Any]] = {"bbn": BbnForecast, "hexwar": HexForecast, "exalted": ExaltedForecast}
"""The rule systems the forecast runs, by system id.  A system plugs in by adding its
adapter here."""


def adapter_for(system_id: str) -> ForecastAdapter:
    """The forecast adapter of a rule system, or a clear error for one that has none yet."""
    from sheetsync.errors import BattleStateError

    try:
        cls = ADAPTERS[system_id]
    except KeyError:
        raise BattleStateError(f"the forecast does not run {system_id} battles yet (it runs: "
                               f"{', '.join(ADAPTERS)})") from None
    adapter: ForecastAdapter = cls()
    return adapter
