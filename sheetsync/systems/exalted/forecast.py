"""The forecast's adapter for Exalted battle files (issue 11, part 1; E1-E11, X17-X39).

A step is one long tick, resolved by the engine (:func:`sheetsync.systems.exalted.rules.battle.resolve`):
Join War first when the battle has not started (E4), then the tick's orders.  After the
declared tick, each unit repeats its last declared orders on each tick it acts on
("standing orders"), while any typed orders for later ticks are played first as typed.

A unit's level is its Magnitude (X2, X34).  A unit is *routed* once it has failed a rout
check (X35, X36) or a Mob Rule check (X39) in the run, and *destroyed* when it leaves the
battle (X24, X32, X39).  Whether a unit is in the fight is the engine's one answer
(:func:`sheetsync.systems.exalted.rules.state.in_fight`): a unit brought to Magnitude 0 fights
on as its commander alone (X34, X48), so a side is in the fight while one of its units is.

The forecast runs on a battle file, and on a tracker (workbook or Google Sheet) from its
stored battle, undo records and pending Orders rows (:mod:`sheetsync.app.forecast_io`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sheetsync.core.errors import BattleStateError

if TYPE_CHECKING:  # the engine is imported when a forecast runs, not when the adapters are listed
    from sheetsync.core.dice import Roller
    from sheetsync.core.forecast import Exact, OrderInfo
    from sheetsync.systems.exalted.rules.state import Battle, Order, UnitState

__all__ = ["ExaltedForecast", "Sim"]

_NO_ORDER_HINT = ("Type the orders of the next long tick (orders: in the battle file, each with its tick, unit and "
                  "action), then forecast again")


@dataclass(frozen=True)
class Sim:
    """A battle being simulated, and the units that have failed a rout or Mob Rule check
    on the way (X36, X39), which the battle itself does not keep."""

    battle: Battle
    routed: frozenset[str] = field(default_factory=frozenset)

    @property
    def seed(self) -> int | str | None:
        return self.battle.seed

    @property
    def tick(self) -> int:
        """The long tick the next resolve runs (the forecast's step, E4, E5)."""
        return _next_tick(self.battle)


def _stands(st: UnitState) -> bool:
    """X34: a unit is in the fight as the engine decides it (:func:`in_fight`): a unit
    brought to Magnitude 0 fights on as its commander alone, and resolve runs its orders."""
    return _in_fight()(st)


def _in_fight() -> Callable[[UnitState | None], bool]:
    """X34: the engine's :func:`in_fight`, imported on first use (the engine is imported when a
    forecast runs) and kept, as a step asks it of every unit several times (issue 23)."""
    global _IN_FIGHT
    if _IN_FIGHT is None:
        from sheetsync.systems.exalted.rules.state import in_fight

        _IN_FIGHT = in_fight
    return _IN_FIGHT


_IN_FIGHT: Callable[[UnitState | None], bool] | None = None


def _destroyed(st: UnitState) -> bool:
    """X24, X32, X34, X39: out of the fight (:func:`in_fight`): gone from the battle."""
    return not _stands(st)


def _cleared(o: Order, tick: int, row: int) -> Order:
    """An order for ``tick``, its typed dice cleared (the simulation rolls them)."""
    return o.model_copy(update={"tick": tick, "row": row, "dice": None, "damage_dice": None, "rout_dice": None,
                                "own_rout_dice": None, "exhaustion_dice": None, "target_exhaustion_dice": None})


def _next_tick(battle: Battle) -> int:
    """E4, E5: the long tick the next resolve runs (0 before Join War)."""
    if not battle.started:
        return 0
    in_fight = _in_fight()
    live = [s.next_tick for s in battle.state if in_fight(s)]
    return min(live) if live else battle.tick


def _failed_checks(events: tuple[dict[str, Any], ...]) -> set[str]:
    """X35, X36, X39, X43: the units whose rout or Mob Rule check failed in these events."""
    from sheetsync.systems.exalted.rules.battle import rout_checks

    out = set()
    for e in events:
        checks = rout_checks(e)
        out |= {c["unit"] for c in checks if c.get("checked") and not c.get("passed")}
    return out


def _succeeded(e: dict[str, Any]) -> bool:
    """X17-X34: an attack succeeds on a hit; a Dash when it dashes (X18); a Disengage when
    the unit gets free (X21); an order with a command roll when the roll succeeds; any
    other order when it is done."""
    if e["kind"] == "Attack":
        return bool(e.get("hit"))
    if "dashed" in e:
        return bool(e["dashed"])
    if "disengaged" in e:
        return bool(e["disengaged"])
    if "command" in e:
        return bool(e["command"]["success"])
    return True


class ExaltedForecast:
    """Exalted 2e mass combat (E1-E11, X1-X41): a step is a long tick; a unit's level is
    its Magnitude; it may end routed (X36, X39) or destroyed (X34)."""

    system = "exalted"
    entity_word = "unit"
    level_name = "Magnitude"
    level_loss = 1
    step_flags: tuple[str, ...] = ("Routed", "Destroyed")
    end_flags: tuple[str, ...] = ("Routed", "Destroyed")
    _last: tuple[Battle, dict[str, list[Order]]] | None = None
    """Issue 23: the declared battle :meth:`standing` last read, and each unit's last orders in it."""
    _sides: tuple[Battle, tuple[str, ...]] | None = None
    """Issue 23: the battle :meth:`_sides_in` last answered (frozen), and its answer."""

    def __init__(self) -> None:
        self._clear: dict[tuple[int, int, int], tuple[Order, Order]] = {}
        """Issue 23: the orders :meth:`_cleared` made, by the order's id, tick and row."""

    def prepare(self, battle: Any) -> Sim:
        """E5, X34: the battle must have orders typed for its next long tick and two sides
        in the fight; a die typed wrong is the engine's :class:`InputError` (nothing runs)."""
        from sheetsync.core.forecast import no_orders as _no_orders
        from sheetsync.systems.exalted.rules.battle import battle_roller, resolve

        if isinstance(battle, Sim):
            battle = battle.battle
        if battle.ended:
            raise BattleStateError("there is nothing to forecast: the battle has ended (End Battle)")
        live = self._sides_in(battle)
        if len(live) < 2:
            raise BattleStateError("there is nothing to forecast: the battle is over ("
                                   + (f"only {live[0]} has a unit left in the fight, X34)" if live
                                      else "no side has a unit left in the fight, X34)"))
        tick = _next_tick(battle)
        if not any(o.tick <= tick for o in battle.orders):
            raise _no_orders("long tick", tick, _NO_ORDER_HINT)
        orders = tuple(o.model_copy(update={"row": i}) for i, o in enumerate(battle.orders))
        seed = battle.seed if battle.seed is not None else 0
        ready = battle.model_copy(update={"history": (), "orders": orders, "seed": seed})
        resolve(ready, None, battle_roller(ready))  # E1: a die typed wrong is an error now, not in every run
        return Sim(ready)

    def sides(self, battle: Sim) -> list[str]:
        return list(dict.fromkeys(u.spec.side for u in battle.battle.units))

    def entities(self, battle: Sim) -> list[tuple[str, str]]:
        return [(u.name, u.spec.side) for u in battle.battle.units]

    def members(self, battle: Sim) -> list[tuple[str, str]]:
        return [(u.name, u.name) for u in battle.battle.units]

    def _declared(self, battle: Battle) -> list[Order]:
        tick = _next_tick(battle)
        return [o for o in battle.orders if o.tick <= tick]

    def orders(self, battle: Sim) -> list[OrderInfo]:
        """E5: the orders the next long tick resolves (those typed for it or earlier)."""
        from sheetsync.core.forecast import OrderInfo

        return [OrderInfo(o.row, o.unit, o.action.value + (f" ({o.option})" if o.option else ""), o.target or "")
                for o in self._declared(battle.battle)]

    def exact(self, battle: Sim) -> list[Exact | None]:
        """E1, E7, X28-X33: an attack hits when its successes, with those added and less the
        external penalty, beat the target's DV; the engine's success distribution gives the
        exact chance (``attack_odds``) and the expected levels, against the battle as it
        stands.  Exact unless an earlier order of the tick changes the units, Join War
        leaves the attacker no action on the tick (E4, E5), or the dice are typed; the
        simulation counts those."""
        from sheetsync.core.forecast import Exact
        from sheetsync.systems.exalted.rules.battle import odds_json

        odds = {r["order"]: r for r in odds_json(battle.battle)}
        out: list[Exact | None] = []
        for o in self._declared(battle.battle):
            row = odds.get(o.row)
            if row is None or o.dice is not None:
                out.append(None)
            elif "refused" in row:
                out.append(Exact(0.0, f"refused: {row['refused']} ({row['rule_ref']})", 0.0))
            else:
                d = row["odds"]
                out.append(Exact(d["p_hit_float"], f"{d['pool']} dice + {d['successes_added']} − "
                                                   f"{d['external_penalty']} against DV {d['dv']} "
                                                   f"(E1, E7, X28-X33)", d["expected_levels_float"],
                                 fraction=d["p_hit"]))
        return out

    def exact_levels(self, battle: Sim) -> dict[str, Exact]:
        return {}

    def step(self, battle: Sim, roller: Roller) -> tuple[Sim, list[bool | None]]:
        """E4-E6, X17-X39: one long tick through the engine, without the attacks' odds
        (the forecast takes them from :meth:`exact`) or an undo record; each declared
        order's outcome (``None`` when refused)."""
        from sheetsync.systems.exalted.rules.battle import resolve

        declared = self._declared(battle.battle)
        result = resolve(battle.battle, None, roller, odds=False, record=False, detail=False)  # issue 23: unused
        by_row: dict[int, bool | None] = {}
        for e in result.events:
            row = e.get("order")
            if row is None or row < 0 or e.get("kind") in ("Join War", "Mob Rule check", "Guard (no order)"):
                continue
            by_row[row] = None if e["kind"] == "refused" else _succeeded(e)
        b = result.battle if not result.battle.history else result.battle.model_copy(update={"history": ()})
        nxt = Sim(b, battle.routed | _failed_checks(result.events))
        return nxt, [by_row.get(o.row) for o in declared]

    def standing(self, declared: Sim, now: Sim) -> Sim | None:
        """E5, X34: the orders typed for later ticks as typed, then each unit's last declared
        orders again on each tick it acts on, typed dice cleared; those of a unit that has
        left the battle, or against one, are dropped.  ``None`` when one side is out or no
        order is left."""
        b = now.battle
        if len(self._sides_in(b)) < 2:
            return None
        in_fight = _in_fight()
        gone = {s.name for s in b.state if not in_fight(s)}
        tick = _next_tick(b)
        last = self._last_declared(declared.battle)
        typed = [o for o in b.orders if o.tick >= tick]
        has = {o.unit for o in typed if o.tick == tick}
        acting = [s.name for s in b.state if in_fight(s) and s.next_tick == tick and s.name not in has]
        repeated = [o for name in acting for o in last.get(name, [])]
        keep = [(o, o.tick) for o in typed] + [(o, tick) for o in repeated]
        keep = [(o, t) for o, t in keep if o.unit not in gone and (o.target is None or o.target not in gone)]
        if not keep:
            return None
        keep.sort(key=lambda ot: ot[1])  # stable: sheet order within a tick (E6)
        orders = tuple(self._cleared(o, t, i) for i, (o, t) in enumerate(keep))
        return Sim(b.model_copy(update={"orders": orders}), now.routed)

    def _last_declared(self, declared: Battle) -> dict[str, list[Order]]:
        """E5: each unit's last declared orders (those of its latest tick with any), kept for
        the declared battle, which every step of a run repeats from (frozen, so kept by
        identity; issue 23).  Not to be changed by the caller."""
        got = self._last
        if got is not None and got[0] is declared:
            return got[1]
        last: dict[str, list[Order]] = {}
        for o in sorted(declared.orders, key=lambda o: o.tick):
            if last.get(o.unit) and last[o.unit][0].tick != o.tick:
                last[o.unit] = []
            last.setdefault(o.unit, []).append(o)
        self._last = (declared, last)
        return last

    def _cleared(self, o: Order, tick: int, row: int) -> Order:
        """:func:`_cleared`, kept for the same order (frozen), tick and row: the battles of a
        run repeat the same orders on the same ticks (issue 23)."""
        key = (id(o), tick, row)
        got = self._clear.get(key)
        if got is None or got[0] is not o:
            if len(self._clear) >= 4096:
                self._clear.clear()
            got = self._clear[key] = (o, _cleared(o, tick, row))
        return got[1]

    def levels(self, battle: Sim) -> tuple[int, ...]:
        b = battle.battle
        return tuple(self._state(b, u.name).magnitude for u in b.units)

    def level_bounds(self, battle: Sim) -> list[tuple[int | None, int | None]]:
        """X2, X34: Magnitude is never below 0 (a unit may grow, X24, so no ceiling)."""
        return [(0, None) for _ in battle.battle.units]

    def flags(self, battle: Sim, which: str) -> tuple[bool, ...]:
        """X36, X39: routed (a failed rout or Mob Rule check in the run); X34: destroyed."""
        b = battle.battle
        return tuple(f for u in b.units for f in (u.name in battle.routed, _destroyed(self._state(b, u.name))))

    def sides_in(self, battle: Sim) -> list[str]:
        return self._sides_in(battle.battle)

    @staticmethod
    def _state(b: Battle, name: str) -> UnitState:
        st = b.state_of(name)
        if st is None:  # the loader builds every unit's state (X1-X11)
            raise BattleStateError(f"unit {name} has no state in the battle file: build the units first")
        return st

    def _sides_in(self, b: Battle) -> list[str]:
        """X34: the sides with a unit in the fight, as the engine decides it."""
        from sheetsync.systems.exalted.rules.state import sides_in_fight

        got = self._sides
        if got is not None and got[0] is b:  # issue 23: a run asks it of each battle twice
            return list(got[1])
        named = {s.name for s in b.state}
        for u in b.units:
            if u.name not in named:
                self._state(b, u.name)  # a unit with no state is refused by name
        sides = sides_in_fight(b)
        self._sides = (b, tuple(sides))
        return sides

    def dump(self, battle: Sim) -> dict[str, Any]:
        from sheetsync.systems.exalted.files.loader import battle_to_file

        return {"battle": dict(battle_to_file(battle.battle)), "routed": sorted(battle.routed)}

    def load(self, data: dict[str, Any]) -> Sim:
        from sheetsync.systems.exalted.files.loader import load_battle

        return Sim(load_battle(data["battle"], "forecast"), frozenset(data.get("routed", ())))
