"""The hex wargame's forecast adapter (issue 11, part 1; H3-H12): it runs the system's
own engine, so a simulated turn is exactly what ``sheetsync resolve`` would do with those
dice."""

from __future__ import annotations

from typing import Any

from sheetsync.core.dice import Roller
from sheetsync.core.forecast import Exact, OrderInfo, no_orders

__all__ = ["HexForecast"]


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
        from sheetsync.core.errors import BattleStateError

        live = battle.live_sides()
        if battle.fight_over():  # H12: said first, as resolve does: no orders can change it
            raise BattleStateError("there is nothing to forecast: the battle is over ("
                                   + (f"only {live[0]} has units left, H12)" if live else "no side has units left, H12)"))
        if not battle.orders.moves and not battle.orders.attacks:
            raise no_orders("turn", battle.turn, "Type the turn's moves and attacks (the Moves and Attacks "
                                                  "sheets, or turn: in the battle file), then forecast again")
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
        from sheetsync.systems.hexwar.rules.turn import preview_attacks

        if battle.house_rules.initiative != "set":
            return None
        return list(preview_attacks(battle))

    def exact(self, battle: Any) -> list[Exact | None]:
        """6.2, 6.2.1, H7, H8, H11: an engagement of chance c% inflicts casualties when the
        d100 is below c, so with probability (c − 1)/100, and c·(c − 1)/200 percentage
        points are expected; a refused one never does.  Moves take no dice: made or
        refused for certain.  Exact when initiative is set (H3); with a contest the order
        of the moves rides on the dice, and the simulation alone answers."""
        from sheetsync.systems.hexwar.rules.turn import NoDice, expected_casualties, resolve_turn

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
        from sheetsync.systems.hexwar.rules.turn import resolve_turn

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
        if now.fight_over():
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
        from sheetsync.systems.hexwar.files.loader import battle_to_file

        return dict(battle_to_file(battle))

    def load(self, data: dict[str, Any]) -> Any:
        from sheetsync.systems.hexwar.files.loader import load_battle

        return load_battle(data, "forecast")
