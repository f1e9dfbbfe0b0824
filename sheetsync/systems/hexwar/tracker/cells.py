"""What the hex tracker shows, computed from a battle and a turn's result, as rows keyed by
column key (DESIGN "computed views"): the Units sheet's standing and values now (6.2.2,
H10), each move's and each engagement's result with its reason and rule (H4-H9), the Log
rows, the sides' totals and the report (H12), and the map drawn in cells (H2).

Pure: the engine and the standard library; the generic writer puts the rows in place.
"""

from __future__ import annotations

from typing import Any

from sheetsync.systems.hexwar.rules.aftermath import (
    Report,
    aftermath,
    battle_over,
    effective_values,
)
from sheetsync.systems.hexwar.rules.models import Battle, HouseRules
from sheetsync.systems.hexwar.rules.turn import AttackEvent, MoveEvent, TurnResult
from sheetsync.systems.hexwar.tracker.formulas import helper_values
from sheetsync.systems.hexwar.tracker.layout import map_cell

__all__ = [
    "attack_results",
    "house_rule_values",
    "log_rows",
    "map_grid",
    "move_results",
    "report_rows",
    "side_rows",
    "size_word",
    "status",
    "unit_rows",
]

SIZE_WORDS = {1.0: "battalion", 0.5: "company"}
"""H1: a unit's size as the Units sheet's dropdown says it."""


def size_word(size: float) -> str | None:
    """H1: ``battalion`` (1), ``company`` (0.5); another size has no word (``None``)."""
    return SIZE_WORDS.get(size)


def _range_text(v: Any) -> str:
    """6.1, 6.3: ``2``, ``2(1)`` (R(n) after casualties, H10), ``2(--)``."""
    if v.range_kind == "reduced":
        return f"{v.range}({v.reduced_attack})"
    if v.range_kind == "extended":
        return f"{v.range}(--)"
    return str(v.range)


def _unit_status(battle: Battle, index: int) -> str:
    u = battle.units[index]
    if u.destroyed:
        by = f" by {', '.join(u.destroyed_by)}" if u.destroyed_by else ""
        when = f" in turn {u.destroyed_turn}" if u.destroyed_turn is not None else ""
        return f"destroyed{when}{by}: off the map (H9)"
    if u.casualties:
        return f"in the field, {u.casualties}% casualties (H10)"
    return "in the field"


def unit_rows(battle: Battle) -> list[dict[str, Any]]:
    """6.2.2, H10, H6: the computed Units columns, one row per unit in ``battle.units``
    order (hex now, casualties, reduced attack and charge mark, defense, movement, range
    and status), with the hidden helper columns the live odds read (H11)."""
    helpers = helper_values(battle)
    out = []
    for i, v in enumerate(effective_values(battle)):
        row: dict[str, Any] = {
            "hex": battle.units[i].hex, "casualties": v.casualties, "attack": v.attack,
            "charge": v.charge.value or None, "defense": v.defense, "movement": v.movement,
            "range": _range_text(v), "status": _unit_status(battle, i),
        }
        row.update(helpers[i])
        out.append(row)
    return out


def _move_text(e: MoveEvent) -> str:
    if e.outcome == "refused":
        return f"refused: {e.reason} ({e.rule_ref})"
    if e.from_ == e.to:
        return f"{e.unit} stays in {e.to} ({e.rule_ref})"
    via = f" via {' '.join(e.path[:-1])}" if len(e.path) > 1 else ""
    charge = "; a charge" if e.charge else ""
    return f"{e.unit} moved {e.from_} to {e.to}{via}{charge} ({e.rule_ref})"


def move_results(result: TurnResult) -> dict[int, dict[str, Any]]:
    """H4, H5: each move's computed Moves columns, by the move's index in the turn."""
    out: dict[int, dict[str, Any]] = {}
    for e in result.events:
        if isinstance(e, MoveEvent):
            out[e.order] = {"turn": e.turn, "from": e.from_, "ends": e.from_ if e.outcome == "refused" else e.to,
                            "charge": e.charge, "outcome": e.outcome, "result": _move_text(e)}
    return out


def _attack_text(e: AttackEvent) -> str:
    if e.outcome == "refused":
        return f"refused: {e.reason} ({e.rule_ref})"
    head = (f"S {e.strength} vs D {e.defense}: {e.chance}% to hit, "
            f"{'rolled' if e.roll_source == 'rolled' else 'typed'} {e.roll}")
    if e.outcome == "miss":
        return f"{head}: no casualties ({e.rule_ref})"
    end = f"; {e.defender} is destroyed" if e.destroyed else ""
    return f"{head}: {e.casualties}% casualties to {e.defender}{end} ({e.rule_ref})"


def attack_results(result: TurnResult) -> dict[int, dict[str, Any]]:
    """H7, H8, H9: each engagement's computed Attacks columns, by its index in the turn:
    S, D, the chance and the expected casualties as values (H11), the die (``Rolled``
    when sheetsync rolled it), the outcome, the casualties and the result citing its rule."""
    out: dict[int, dict[str, Any]] = {}
    for e in result.events:
        if isinstance(e, AttackEvent):
            out[e.order] = {"turn": e.turn, "roll": e.roll, "strength": e.strength, "defense": e.defense,
                            "chance": e.chance, "expected": e.expected, "outcome": e.outcome,
                            "casualties": e.casualties if e.outcome != "refused" else None,
                            "result": _attack_text(e),
                            "roll_source": "Rolled" if e.roll_source == "rolled" else None}
    return out


def log_rows(result: TurnResult, token: str) -> list[dict[str, Any]]:
    """The Log rows of a resolved turn, one per event (and one for initiative, H3), each
    carrying the step's token."""
    rows: list[dict[str, Any]] = []
    if result.initiative is not None:
        rolls = "; ".join(f"{r.side} rolled {r.roll} under {r.skill}" for r in result.initiative_rolls)
        rows.append({"turn": result.turn, "kind": "initiative", "unit": result.initiative, "rule": "1.0, H3",
                     "details": f"{result.initiative} has initiative and moves second" + (f" ({rolls})" if rolls
                                                                                        else ""),
                     "step": token})
    for e in result.events:
        if isinstance(e, MoveEvent):
            rows.append({"turn": e.turn, "order": e.order + 1, "kind": "move", "unit": e.unit, "target": e.to,
                         "outcome": e.outcome, "rule": e.rule_ref, "details": _move_text(e), "step": token})
        else:
            roll = f"{e.roll} {e.roll_source}" if e.roll is not None else None
            rows.append({"turn": e.turn, "order": e.order + 1, "kind": "attack", "unit": ", ".join(e.attackers),
                         "target": e.defender, "outcome": e.outcome,
                         "casualties": e.casualties if e.outcome != "refused" else None, "roll": roll,
                         "rule": e.rule_ref, "details": _attack_text(e), "step": token})
    return rows


def side_rows(battle: Battle) -> list[dict[str, Any]]:
    """H12: each side's units, how many are destroyed, their average casualties (at most
    100% each) and the men lost."""
    report = aftermath(battle)
    out = []
    for s in report.sides:
        mine = [u for u in report.units if u.side == s.side]
        avg = round(sum(u.casualties for u in mine) / len(mine)) if mine else 0
        out.append({"side": s.side, "units": s.units, "destroyed": s.destroyed, "casualties": avg,
                    "men_lost": s.losses})
    return out


def report_rows(report: Report) -> list[dict[str, Any]]:
    """H12: the Report sheet, one row per unit."""
    return [{"side": u.side, "unit": u.name, "casualties": u.casualties, "men_lost": u.losses,
             "destroyed": u.destroyed, "destroyed_turn": u.destroyed_turn,
             "destroyed_by": ", ".join(u.destroyed_by) or None} for u in report.units]


def map_grid(battle: Battle, rows: int, cols: int) -> list[list[Any]]:
    """H2, 5.1: the Map area (``rows`` x ``cols`` cells): each hex of the battle's map two
    cells tall at :func:`~sheetsync.systems.hexwar.tracker.layout.map_cell`, the top its id
    (``0405``), the bottom its units (``Sun Knights (Party)``, one a line) or exactly
    ``impassable``; everything else blank.  Destroyed units are off the map (H9)."""
    grid: list[list[Any]] = [[None] * cols for _ in range(rows)]
    spec = battle.map
    if spec.columns > cols or 2 * spec.rows + 1 > rows:
        raise ValueError(f"a {spec.columns}x{spec.rows} map does not fit {cols} x {rows} cells")
    here: dict[str, list[str]] = {}
    for u in battle.units:
        if not u.destroyed:
            here.setdefault(u.hex, []).append(f"{u.name} ({u.side})")
    blocked = set(spec.impassable)
    for c in range(1, spec.columns + 1):
        for r in range(1, spec.rows + 1):
            top, col = map_cell(c, r)
            hid = f"{c:02d}{r:02d}"
            grid[top][col] = hid
            grid[top + 1][col] = "impassable" if hid in blocked else ("\n".join(here[hid]) if hid in here else None)
    return grid


def status(battle: Battle, *, ended: bool = False) -> str:
    """The Battle sheet's status line (H12 when the battle is over)."""
    survivor = battle_over(battle)
    if ended:
        return (f"Battle over: ended after turn {battle.turn - 1}; the report is on the Report sheet (H12). "
                "Undo Turn reopens it")
    if survivor is not None:
        return f"Battle over: only {survivor} has units left (H12); End Battle writes the report"
    if battle.fight_over():  # H9: the last units of every side fell in one turn
        return "Battle over: no side has units left (H12); End Battle writes the report"
    return f"Turn {battle.turn}: type the turn's moves and attacks, then Resolve Turn"


def house_rule_values(rules: HouseRules) -> dict[str, Any]:
    """The House Rules sheet's Value column: each key's value as the sheet shows it."""
    out: dict[str, Any] = {}
    for key in HouseRules.model_fields:
        value = getattr(rules, key)
        out[key] = ("Yes" if value else "No") if isinstance(value, bool) else (
            f"{value:g}" if isinstance(value, float) else str(value))
    return out
