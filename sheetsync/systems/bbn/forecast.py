"""The battalion system's forecast adapter (issue 11, part 1; R13-R37): it runs the
system's own engine, so a simulated phase is exactly what ``sheetsync resolve`` would do
with those dice."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from sheetsync.core.dice import Roller
from sheetsync.core.forecast import Exact, OrderInfo, no_orders

__all__ = ["BbnForecast"]


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
        from sheetsync.core.errors import BattleStateError
        from sheetsync.systems.bbn.rules.phase import side_out_of_fight

        if not battle.orders:
            raise no_orders("phase", battle.phase, "Declare the phase's orders (the Orders sheet, or orders: in "
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
        so its chance is :func:`~sheetsync.systems.bbn.rules.phase.hit_chance` of the pools the
        phase begins with (a typed die makes it certain).  Exact unless an earlier order
        of the phase changes the pools (Inspire, Boost a Pool), refuses it, or an Inspire
        reroll is used; the simulation counts those."""
        from sheetsync.systems.bbn.rules.models import Task
        from sheetsync.systems.bbn.rules.phase import ATTACK_POOL, hit_chance

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
        from sheetsync.systems.bbn.rules.phase import simulate_phase

        new, outcomes = simulate_phase(battle, roller)
        return new, [None if o == "refused" else o != "miss" for o in outcomes]

    def standing(self, declared: Any, now: Any) -> Any | None:
        """R13, R37: the declared orders again, typed dice and picks cleared; an order whose
        cohort or target is gone (every member Dead) is dropped.  ``None`` when no order is
        left.  The cleared orders are made once per declared battle, not once a phase."""
        from sheetsync.systems.bbn.rules.models import State

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
        from sheetsync.systems.bbn.rules.models import State

        if which == "step":
            return tuple(f for c in battle.cohorts for m in c.members
                         for f in (battle.state[c.name].states[m.name] is State.KNOCKED_OUT,
                                   battle.state[c.name].states[m.name] is State.DEAD))
        from sheetsync.systems.bbn.rules.aftermath import aftermath

        return tuple(f for e in aftermath(battle, _Middle()) for f in (e.dead, e.torpor))

    def sides_in(self, battle: Any) -> list[str]:
        """R37: the sides not out of the fight, in the order of :meth:`sides`."""
        from sheetsync.systems.bbn.rules.phase import sides_in_fight

        fighting = sides_in_fight(battle)
        return [s for s in self.sides(battle) if s in fighting]

    def dump(self, battle: Any) -> dict[str, Any]:
        return dict(battle.to_data())

    def load(self, data: dict[str, Any]) -> Any:
        from sheetsync.systems.bbn.rules.battle import Battle

        return Battle.from_data(data)
