"""A turn (1.0, 5.0, 6.0, H3-H9): initiative, the moves of the side without initiative,
then those of the side with it, then every engagement resolved simultaneously.

:func:`resolve_turn` returns a :class:`TurnResult`: one frozen event per typed move and
per typed attack, and the next turn's battle.  An order that breaks a rule is *refused*
with its reason and costs nothing: each order is verified against the current standing
before anything is applied, so a refusal needs no rollback.  :func:`undo` restores the
battle before its last turn from the small :class:`UndoRecord` the turn stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from sheetsync.core.dice import RandomRoller, Roller
from sheetsync.core.errors import BattleStateError
from sheetsync.core.model import Alias, Model, model
from sheetsync.systems.hexwar.rules.counter import Charge, RangeKind, reduce_charge, reduce_value
from sheetsync.systems.hexwar.rules.grid import Hex, hex_distance, parse_hex
from sheetsync.systems.hexwar.rules.models import (
    AttackOrder,
    Battle,
    HouseRules,
    MoveOrder,
    TurnOrders,
    UndoRecord,
    Unit,
    UnitBefore,
)

__all__ = [
    "AttackEvent",
    "Contribution",
    "InitiativeRoll",
    "MoveEvent",
    "NoDice",
    "TurnResult",
    "attack_value",
    "chance",
    "expected_casualties",
    "preview_attacks",
    "reach",
    "resolve_turn",
    "turn_roller",
    "undo",
    "units_json",
]


@model
class MoveEvent(Model):
    """H4, H5: one typed move and what became of it.  ``from`` and ``to`` are hex ids; a
    refused move leaves the unit in ``from`` and ``to`` says where it was sent."""

    kind: Literal["move"] = "move"
    turn: int
    order: int
    """The move's index in the turn's moves (its row)."""
    unit: str
    from_: Annotated[str, Alias("from")]
    to: str
    path: tuple[str, ...] = ()
    """The hexes entered, in order (the shortest legal path when a destination was typed)."""
    outcome: Literal["moved", "refused"]
    reason: str | None = None
    charge: bool = False
    rule_ref: str


@model
class Contribution(Model):
    """H6, H7: what one attacker adds to an engagement, at its distance."""

    unit: str
    distance: int
    value: int
    charge: bool = False


@model
class AttackEvent(Model):
    """H7, H8: one engagement: the defender, its attackers, S, D, the chance, the die, the
    casualties it inflicts (applied at the end of combat, H9)."""

    kind: Literal["attack"] = "attack"
    turn: int
    order: int
    defender: str
    attackers: tuple[str, ...]
    strength: int | None = None
    defense: int | None = None
    chance: int | None = None
    expected: float | None = None
    """H11: the expected casualties in percentage points before rolling."""
    roll: int | None = None
    roll_source: Literal["entered", "rolled"] | None = None
    casualties: int = 0
    outcome: Literal["hit", "miss", "refused"]
    reason: str | None = None
    destroyed: bool = False
    """H9: the defender reached 100% at the end of this turn's combat."""
    contributions: tuple[Contribution, ...] = ()
    rule_ref: str


@model
class InitiativeRoll(Model):
    """H3 (``initiative = "contest"``): a general's 3d6 under Military Science."""

    side: str
    skill: int
    roll: int
    margin: int
    source: Literal["entered", "rolled"]


Event = MoveEvent | AttackEvent


@model
class TurnResult(Model):
    """What :func:`resolve_turn` returns."""

    turn: int
    initiative: str | None
    initiative_rolls: tuple[InitiativeRoll, ...] = ()
    events: tuple[MoveEvent | AttackEvent, ...]
    battle: Battle

    def to_json(self) -> dict[str, Any]:
        """``{"system", "turn", "initiative", "events", "units"}`` as ``resolve --json``
        prints it (a move's ``from`` under its own name)."""
        return {
            "system": "hexwar",
            "turn": self.turn,
            "initiative": self.initiative,
            "initiative_rolls": [r.model_dump(mode="json") for r in self.initiative_rolls],
            "events": [e.model_dump(mode="json", by_alias=True) for e in self.events],
            "units": units_json(self.battle),
        }


def units_json(battle: Battle) -> list[dict[str, Any]]:
    """Each unit's ``name``, ``side``, ``hex``, ``casualties`` and ``destroyed``."""
    return [{"name": u.name, "side": u.side, "hex": u.hex, "casualties": u.casualties, "destroyed": u.destroyed}
            for u in battle.units]


def turn_roller(battle: Battle) -> Roller:
    """H8: the seeded roller of the battle's turn (``f"{seed}:{turn}"``, the convention of
    the battalion engine's phases): the same battle file gives the same dice."""
    return RandomRoller(f"{battle.seed}:{battle.turn}")


def chance(strength: int, defense: int) -> int:
    """6.2, H7: the chance in percent, ⌊100·S / (S + D)⌋ (4 vs 3 is 57, 8 vs 3 is 72)."""
    return (100 * strength) // (strength + defense)


def expected_casualties(chance_pct: int) -> float:
    """H11: the expected casualties of a chance of c%: c·(c − 1)/200 percentage points
    (the mean of c − roll over the rolls 1 … c − 1 that hit)."""
    return chance_pct * (chance_pct - 1) / 200


def attack_value(unit: Unit, distance: int, charged: bool, rules: HouseRules) -> int:
    """6.1, 6.3, H6, H5, H10: what ``unit`` adds to an attack at ``distance`` hexes, after
    the casualties it had when combat began; 0 means it can't reach.

    - distance 1: the (reduced) attack value, plus the charge bonus if it charged (H5);
    - plain ``R``: the attack value up to R (6.1);
    - ``R(n)``: the (reduced) value n from 2 to R (6.3.2);
    - ``R(--)``: the attack value up to R, then one less per hex beyond, while above 0
      (6.3.3)."""
    c, prop = unit.casualties, rules.proportional_reduction
    counter = unit.counter
    a = reduce_value(counter.attack, c, prop)
    if distance < 1:
        return 0
    if distance == 1:
        mark = reduce_charge(counter.charge, c, prop)
        return a + (mark.bonus if charged else 0)
    if counter.range_kind is RangeKind.EXTENDED:
        return a if distance <= counter.range else max(0, a - (distance - counter.range))
    if distance > counter.range:
        return 0
    if counter.range_kind is RangeKind.REDUCED and counter.reduced_attack is not None:
        return reduce_value(counter.reduced_attack, c, prop)
    return a


def reach(unit: Unit, rules: HouseRules) -> int:
    """H6: the farthest distance at which ``unit`` still adds something (``4 … 2(--)``
    reaches 5 hexes)."""
    counter = unit.counter
    if counter.range_kind is RangeKind.EXTENDED:
        return counter.range + max(0, reduce_value(counter.attack, unit.casualties, rules.proportional_reduction) - 1)
    return counter.range


class _Refused(Exception):
    """An order breaks a rule: it is refused with this reason and changes nothing."""

    def __init__(self, reason: str, rule_ref: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.rule_ref = rule_ref


@dataclass
class _Moves:
    """The standing while moves are applied: who is where."""

    battle: Battle
    where: dict[str, Hex]
    moved: set[str]
    units: dict[str, Unit]
    by_hex: dict[Hex, list[Unit]]

    @classmethod
    def start(cls, battle: Battle) -> _Moves:
        by_hex: dict[Hex, list[Unit]] = {}
        for u in battle.units:
            if not u.destroyed:
                by_hex.setdefault(u.at, []).append(u)
        return cls(battle, {u.name: u.at for u in battle.units}, set(), {u.name: u for u in battle.units}, by_hex)

    def occupants(self, h: Hex) -> list[Unit]:
        """The units in ``h`` now (destroyed units are off the map, H9)."""
        return self.by_hex.get(h, [])

    def move(self, unit: Unit, to: Hex) -> None:
        """Apply a verified move."""
        here = self.where[unit.name]
        self.by_hex[here] = [u for u in self.by_hex[here] if u is not unit]
        self.by_hex.setdefault(to, []).append(unit)
        self.where[unit.name] = to
        self.moved.add(unit.name)


def _charges(unit: Unit, start: Hex, end: Hex, typed_path: tuple[Hex, ...] | None, rules: HouseRules) -> bool:
    """6.3.1, H5: a unit with a charge mark (what is left of it, H10) charges when it ends
    2 or more hexes from where it began (one out and back doesn't count).  With
    ``charge_by = "path"`` a typed path entering 2 or more different hexes, none of them
    the start, counts as well."""
    if reduce_charge(unit.counter.charge, unit.casualties, rules.proportional_reduction) is Charge.NONE:
        return False
    if hex_distance(start, end) >= 2:
        return True
    if rules.charge_by == "path" and typed_path is not None:
        entered = set(typed_path)
        return len(entered) >= 2 and start not in entered
    return False


def _verify_move(st: _Moves, order: MoveOrder) -> tuple[Unit, tuple[Hex, ...]]:
    """H4, 5.0, 5.1: check one move against the current standing; return the unit and
    the path (start included) or raise :class:`_Refused`."""
    battle, rules = st.battle, st.battle.house_rules
    grid = battle.map.grid
    unit = st.units[order.unit]
    if unit.destroyed:
        raise _Refused(f"{unit.name} was destroyed{_when(unit)} and is off the map", "6.2.1, H9")
    if unit.name in st.moved:
        raise _Refused(f"{unit.name} already moved this turn; a unit moves once a turn", "5.0, H4")
    start = st.where[unit.name]

    def enemy_in(h: Hex) -> list[Unit]:
        return [u for u in st.occupants(h) if u.side != unit.side]

    if order.path is not None:
        hexes = [parse_hex(h) for h in order.path]
        if hexes and hexes[0] == start:
            hexes = hexes[1:]  # H4: a path may begin with the unit's own hex
        prev = start
        for h in hexes:
            if hex_distance(prev, h) != 1:
                raise _Refused(f"the path goes from {prev} to {h}, which are not next to each other", "H4")
            if h in grid.impassable:
                raise _Refused(f"{h} is impassable", "5.1, H4")
            foes = enemy_in(h)
            if foes:
                raise _Refused(f"{h} holds an enemy unit ({', '.join(u.name for u in foes)})", "H4")
            prev = h
        path = (start, *hexes)
        if len(hexes) > unit.counter.movement:
            raise _Refused(f"the path enters {len(hexes)} hexes and {unit.name} moves "
                           f"{unit.counter.movement}", "5.0, H4")
    else:
        if order.to is None:
            raise _Refused(f"the move of {unit.name} names no destination and no path", "H4")
        goal = parse_hex(order.to)
        if goal in grid.impassable:
            raise _Refused(f"{goal} is impassable", "5.1, H4")
        foes = enemy_in(goal)
        if foes:
            raise _Refused(f"{goal} holds an enemy unit ({', '.join(u.name for u in foes)})", "H4")
        found = grid.shortest_path(start, goal, lambda h: bool(enemy_in(h)))
        if found is None:
            raise _Refused(f"no way from {start} to {goal} avoids impassable and enemy hexes", "5.1, H4")
        if len(found) - 1 > unit.counter.movement:
            raise _Refused(f"{start} to {goal} takes {len(found) - 1} hexes and {unit.name} moves "
                           f"{unit.counter.movement}", "5.0, H4")
        path = found
    end = path[-1]
    if end != start:
        held = sum(u.size for u in st.occupants(end) if u.side == unit.side) + unit.size
        if held > rules.stack_limit:
            raise _Refused(f"{end} would hold {_fmt(held)} battalions of {unit.side}; the limit is "
                           f"{_fmt(rules.stack_limit)}", "5.0, H4")
    return unit, path


def _fmt(x: float) -> str:
    return f"{x:g}"


def _when(unit: Unit) -> str:
    return f" in turn {unit.destroyed_turn}" if unit.destroyed_turn is not None else ""


def _initiative(battle: Battle, roller: Roller) -> tuple[str | None, tuple[InitiativeRoll, ...]]:
    """1.0, 4.0, H3: who has initiative this turn.  ``set``: as typed (else last turn's
    holder, else the first side listed).  ``contest``: each general rolls 3d6 under
    Military Science and the larger margin wins; a tie keeps last turn's holder (with
    none, the tied side listed first)."""
    sides = battle.sides
    if battle.house_rules.initiative == "set":
        return battle.orders.initiative or battle.initiative_holder or (sides[0] if sides else None), ()
    rolls: list[InitiativeRoll] = []
    for side in sides:
        skill = battle.generals.get(side, 0)
        typed = battle.orders.initiative_rolls.get(side)
        value = typed if typed is not None else sum(roller.roll(6) for _ in range(3))
        rolls.append(InitiativeRoll(side=side, skill=skill, roll=value, margin=skill - value,
                                    source="entered" if typed is not None else "rolled"))
    if not rolls:
        return None, ()
    best = max(r.margin for r in rolls)
    tied = [r.side for r in rolls if r.margin == best]
    winner = battle.initiative_holder if battle.initiative_holder in tied else tied[0]
    return winner, tuple(rolls)


@dataclass
class _Plan:
    """A verified engagement, before its die."""

    order: int
    attack: AttackOrder
    contributions: tuple[Contribution, ...]
    strength: int
    defense: int
    chance: int


def _verify_attack(battle: Battle, units: dict[str, Unit], where: dict[str, Hex], charged: set[str],
                   joined: set[str], defended: set[str], attack: AttackOrder, index: int) -> _Plan:
    """6.0-6.3, H6, H7: check one engagement against the standing when combat began and
    the engagements accepted before it; return its S, D and chance, or raise
    :class:`_Refused` (then no unit is committed and no die is rolled)."""
    rules = battle.house_rules
    defender = units[attack.defender]
    if defender.destroyed:
        raise _Refused(f"{defender.name} was destroyed{_when(defender)} and is off the map", "6.2.1, H9")
    if defender.name in defended:
        raise _Refused(f"{defender.name} is already the defender of an engagement this turn; put all its "
                       "attackers in one row", "6.2, H7")
    parts: list[Contribution] = []
    for name in attack.attackers:
        unit = units[name]
        if unit.destroyed:
            raise _Refused(f"{name} was destroyed{_when(unit)} and is off the map", "6.2.1, H9")
        if unit.side == defender.side:
            raise _Refused(f"{name} and {defender.name} are both {unit.side}; an attack is on an enemy", "6.2, H7")
        if name in joined:
            raise _Refused(f"{name} already joined an engagement this turn; each unit attacks once a turn",
                           "6.0, H7")
        d = hex_distance(where[name], where[defender.name])
        value = attack_value(unit, d, name in charged, rules)
        if value <= 0:
            raise _Refused(f"{name} is {d} hexes from {defender.name} and reaches {reach(unit, rules)}",
                           "6.1, H6")
        parts.append(Contribution(unit=name, distance=d, value=value, charge=d == 1 and name in charged
                                  and value > reduce_value(unit.counter.attack, unit.casualties,
                                                           rules.proportional_reduction)))
    strength = sum(p.value for p in parts)
    defense = reduce_value(defender.counter.defense, defender.casualties, rules.proportional_reduction)
    return _Plan(index, attack, tuple(parts), strength, defense, chance(strength, defense))


def _attack_ref(plan: _Plan) -> str:
    refs = ["6.2", "6.2.1", "H7", "H8"]
    if any(p.charge for p in plan.contributions):
        refs.insert(2, "6.3.1")
    return ", ".join(refs)


def _moves_and_plans(battle: Battle, initiative: str | None) -> tuple[
        list[MoveEvent], dict[str, Hex], set[str], list[_Plan | AttackEvent]]:
    """1.0, 5.0, H3, H4: the moves (the side without initiative first, each side in sheet
    order), then every engagement verified against the standing when combat began."""
    rules = battle.house_rules
    st = _Moves.start(battle)
    start = dict(st.where)
    charged: set[str] = set()
    events: list[MoveEvent] = []
    indexed = list(enumerate(battle.orders.moves))
    side_of = {u.name: u.side for u in battle.units}
    ordered = ([im for im in indexed if side_of[im[1].unit] != initiative]
               + [im for im in indexed if side_of[im[1].unit] == initiative])
    for i, order in ordered:
        goal = order.to if order.path is None else (order.path[-1] if order.path else st.where[order.unit].id)
        try:
            unit, path = _verify_move(st, order)
        except _Refused as r:
            events.append(MoveEvent(turn=battle.turn, order=i, unit=order.unit, from_=st.where[order.unit].id,
                                    to=goal or "", outcome="refused", reason=r.reason, rule_ref=r.rule_ref))
            continue
        st.move(unit, path[-1])
        typed = tuple(parse_hex(h) for h in order.path) if order.path is not None else None
        if typed and typed[0] == start[unit.name]:
            typed = typed[1:]
        charge = _charges(unit, start[unit.name], path[-1], typed, rules)
        if charge:
            charged.add(unit.name)
        events.append(MoveEvent(turn=battle.turn, order=i, unit=unit.name, from_=path[0].id, to=path[-1].id,
                                path=tuple(h.id for h in path[1:]), outcome="moved", charge=charge,
                                rule_ref="5.0, H4, 6.3.1, H5" if charge else "5.0, H4"))
    joined: set[str] = set()
    defended: set[str] = set()
    plans: list[_Plan | AttackEvent] = []
    for i, attack in enumerate(battle.orders.attacks):
        try:
            plan = _verify_attack(battle, st.units, st.where, charged, joined, defended, attack, i)
        except _Refused as r:
            plans.append(AttackEvent(turn=battle.turn, order=i, defender=attack.defender,
                                     attackers=attack.attackers, outcome="refused", reason=r.reason,
                                     rule_ref=r.rule_ref))
            continue
        joined.update(attack.attackers)
        defended.add(attack.defender)
        plans.append(plan)
    return events, st.where, charged, plans


def preview_attacks(battle: Battle) -> tuple[AttackEvent, ...]:
    """H11: each typed engagement's S, D, chance and expected casualties before anyone
    rolls (the moves applied first), or why it would be refused.  Nothing is rolled."""
    initiative, _ = _initiative(battle, NoDice())
    _, _, _, plans = _moves_and_plans(battle, initiative)
    out = []
    for p in plans:
        if isinstance(p, AttackEvent):
            out.append(p)
        else:
            out.append(AttackEvent(turn=battle.turn, order=p.order, defender=p.attack.defender,
                                   attackers=p.attack.attackers, strength=p.strength, defense=p.defense,
                                   chance=p.chance, expected=expected_casualties(p.chance), outcome="miss",
                                   contributions=p.contributions, reason="not rolled yet",
                                   rule_ref="6.2, H7, H11"))
    return tuple(out)


class NoDice:
    """A roller for previews and dry runs (H11, ``check``): no die is really rolled, the
    middle value stands in, so what a turn would refuse is known without spending dice."""

    def roll(self, sides: int) -> int:
        return (sides + 1) // 2


def resolve_turn(battle: Battle, roller: Roller | None = None) -> TurnResult:
    """1.0, 6.0, H3-H9: resolve the battle's typed turn.

    Moves are applied side by side (H3, H4); then every engagement is verified and rolled
    against the values units had when combat began, movement and charge included; the
    casualties are added after the last engagement, and a unit at 100% is destroyed then,
    having still attacked (6.2.1, H9).  Dice not typed in come from ``roller`` (by default
    :func:`turn_roller`), in engagement order.  Raises :class:`BattleStateError` when the
    battle is over (H12)."""
    live = battle.live_sides()
    if battle.fight_over():
        raise BattleStateError("the battle is over: "
                               + (f"only {live[0]} has units left (H12)" if live else "no side has units left (H12)"))
    roller = roller if roller is not None else turn_roller(battle)
    initiative, init_rolls = _initiative(battle, roller)
    move_events, where, _, plans = _moves_and_plans(battle, initiative)
    pending: dict[str, int] = {}
    killers: dict[str, tuple[str, ...]] = {}
    attack_events: list[AttackEvent] = []
    for p in plans:
        if isinstance(p, AttackEvent):
            attack_events.append(p)
            continue
        typed = p.attack.roll
        roll = typed if typed is not None else roller.roll(100)
        hurt = max(0, p.chance - roll)
        if hurt:
            pending[p.attack.defender] = pending.get(p.attack.defender, 0) + hurt
            killers[p.attack.defender] = p.attack.attackers
        attack_events.append(AttackEvent(
            turn=battle.turn, order=p.order, defender=p.attack.defender, attackers=p.attack.attackers,
            strength=p.strength, defense=p.defense, chance=p.chance, expected=expected_casualties(p.chance),
            roll=roll, roll_source="entered" if typed is not None else "rolled", casualties=hurt,
            outcome="hit" if hurt else "miss", contributions=p.contributions, rule_ref=_attack_ref(p)))
    # H9: casualties apply together, after the last engagement.
    before: list[UnitBefore] = []
    units: list[Unit] = []
    for u in battle.units:
        new_hex = where[u.name].id
        add = pending.get(u.name, 0)
        if new_hex == u.hex and not add:
            units.append(u)
            continue
        before.append(UnitBefore(name=u.name, hex=u.hex, casualties=u.casualties, destroyed_turn=u.destroyed_turn,
                                 destroyed_by=u.destroyed_by))
        total = u.casualties + add
        changes: dict[str, Any] = {"hex": new_hex, "casualties": total}
        if total >= 100 and not u.destroyed:
            changes.update(destroyed_turn=battle.turn, destroyed_by=killers[u.name])
        units.append(u.model_copy(update=changes))
    destroyed_now = {u.name for u in units if u.destroyed_turn == battle.turn and u.destroyed}
    attack_events = [e.model_copy(update={"destroyed": True}) if e.outcome == "hit" and e.defender in destroyed_now
                     else e for e in attack_events]
    record = UndoRecord(turn=battle.turn, orders=battle.orders, units=tuple(before),
                        initiative_holder=battle.initiative_holder)
    nxt = battle.model_copy(update={
        "units": tuple(units), "turn": battle.turn + 1, "orders": TurnOrders(),
        "initiative_holder": initiative, "history": (*battle.history, record),
    })
    return TurnResult(turn=battle.turn, initiative=initiative, initiative_rolls=init_rolls,
                      events=(*move_events, *attack_events), battle=nxt)


def undo(battle: Battle) -> Battle:
    """Undo the last turn: the units it changed as they were, its orders back as typed,
    the turn number and the initiative holder restored.  Raises
    :class:`BattleStateError` when no turn has been resolved."""
    if not battle.history:
        raise BattleStateError("nothing to undo: no turn of this battle has been resolved yet")
    record = battle.history[-1]
    old = {b.name: b for b in record.units}
    units = tuple(
        u.model_copy(update={"hex": b.hex, "casualties": b.casualties, "destroyed_turn": b.destroyed_turn,
                             "destroyed_by": b.destroyed_by}) if (b := old.get(u.name)) is not None else u
        for u in battle.units
    )
    return battle.model_copy(update={
        "units": units, "turn": record.turn, "orders": record.orders,
        "initiative_holder": record.initiative_holder, "history": battle.history[:-1],
    })
