"""H11: the live odds of the Attacks sheet, as spreadsheet formulas that work in Excel and
LibreOffice alike (INDEX/MATCH, IFERROR, SUM, INT, MOD, ABS, MAX; no dynamic arrays).

While the Tracker types the turn's moves and engagements, every Attacks row shows S (the
sum of what each attacker adds at its distance to the defender, H6, H7), D (the
defender's reduced defense, H10), the chance ⌊100·S / (S + D)⌋ (6.2, H7) and the expected
casualties c·(c − 1)/200 (H11).  Distances are taken between the *planned* hexes: a unit's
``Ends at`` when it has a pending move (the last hex of its typed path, else its To hex,
H4), else its hex now; they are counted in cube coordinates exactly as
:mod:`~sheetsync.systems.hexwar.rules.grid` does (odd-q, the column number as written, H2).

The per-unit numbers the formulas need (reduced attack, charge bonus, reduced ``n``, range,
range kind, reach, reduced defense, cube ``q``/``r`` of the hex now) sit in hidden helper
columns at the end of the Units table, filled by :func:`helper_values` whenever the Units
sheet is written.  The per-row steps (each move's planned hex, each attacker's distance and
value) sit in the hidden Calc sheet, so nothing that writes the visible sheets wipes them.

What the formulas can't see: whether the engine will refuse an order (a move that is too
long or blocked, a unit attacking twice, friends attacking friends).  They show the odds
*as if* every typed order went through; ``sheetsync check`` tells the refusals.  A charge is
taken by H5's ``distance`` reading (a move ending 2 or more hexes from its start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sheetsync.core.layout import Block, Column, Layout, quote_sheet
from sheetsync.systems.hexwar.rules.counter import RangeKind, reduce_charge, reduce_value
from sheetsync.systems.hexwar.rules.grid import parse_hex
from sheetsync.systems.hexwar.rules.models import Battle, HouseRules, Unit
from sheetsync.systems.hexwar.rules.turn import reach

__all__ = [
    "ATTACK_SLOTS",
    "CALC_ATTACK_COLUMNS",
    "CALC_MOVE_COLUMNS",
    "HELPER_COLUMNS",
    "RANGE_KIND_CODE",
    "add_formulas",
    "calc_blocks",
    "helper_row",
    "helper_values",
    "house_rule_rows",
]

ATTACK_SLOTS = 6
"""H7: the Attacks sheet has room for six attackers per engagement."""

RANGE_KIND_CODE = {RangeKind.PLAIN: 0, RangeKind.REDUCED: 1, RangeKind.EXTENDED: 2}
"""6.1, 6.3.2, 6.3.3, H6: the range kind as a number the formulas test."""

HELPER_COLUMNS: tuple[Column, ...] = (
    Column("calc_attack", "A (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="H10: the attack value after casualties (0 when destroyed)"),
    Column("calc_bonus", "Charge bonus (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="6.3.1, H5, H10: what a charge adds now (+ is 1, ++ is 2)"),
    Column("calc_n", "n (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="6.3.2, H10: the reduced value n of R(n), 0 for other ranges"),
    Column("calc_range", "R (calc)", kind="int", is_input=False, width=6, hidden=True, note="6.1: the range"),
    Column("calc_kind", "Range kind (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="0 plain, 1 R(n), 2 R(--)"),
    Column("calc_reach", "Reach (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="H6: the farthest distance it adds something at (0 when destroyed)"),
    Column("calc_defense", "D (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="H10: the defense value after casualties"),
    Column("calc_q", "q (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="H2: cube q of the hex now"),
    Column("calc_r", "r (calc)", kind="int", is_input=False, width=6, hidden=True,
           note="H2: cube r of the hex now"),
)
"""The hidden helper columns appended to ``Units_Table`` (their keys are
:func:`helper_values`' keys)."""

CALC_MOVE_COLUMNS: tuple[Column, ...] = (
    Column("key", "Pending unit", is_input=False, width=18),
    Column("hexnum", "Ends at (number)", kind="int", is_input=False, width=8),
    Column("q", "q", kind="int", is_input=False, width=5),
    Column("r", "r", kind="int", is_input=False, width=5),
    Column("moved", "Hexes from start", kind="int", is_input=False, width=6),
)
"""Calc sheet, one row per Moves row (same sheet row): the pending move's planned hex."""

CALC_ATTACK_COLUMNS: tuple[Column, ...] = (
    Column("dq", "Defender q", kind="int", is_input=False, width=5),
    Column("dr", "Defender r", kind="int", is_input=False, width=5),
    *(c for i in range(1, ATTACK_SLOTS + 1) for c in (
        Column(f"q{i}", f"q {i}", kind="int", is_input=False, width=5),
        Column(f"r{i}", f"r {i}", kind="int", is_input=False, width=5),
        Column(f"d{i}", f"Distance {i}", kind="int", is_input=False, width=5),
        Column(f"v{i}", f"Value {i}", kind="int", is_input=False, width=5),
    )),
)
"""Calc sheet, one row per Attacks row (same sheet row): planned hexes, distances, values."""


def helper_row(unit: Unit, rules: HouseRules) -> dict[str, Any]:
    """The helper columns of one unit (6.2.2, H10, H6, H2).  A destroyed unit (H9) is off
    the map: it adds nothing (attack, bonus, n and reach 0)."""
    c, k, prop = unit.casualties, unit.counter, rules.proportional_reduction
    cube = parse_hex(unit.hex).cube()
    live = not unit.destroyed
    n = reduce_value(k.reduced_attack, c, prop) if k.range_kind is RangeKind.REDUCED and k.reduced_attack else 0
    return {
        "calc_attack": reduce_value(k.attack, c, prop) if live else 0,
        "calc_bonus": reduce_charge(k.charge, c, prop).bonus if live else 0,
        "calc_n": n if live else 0,
        "calc_range": k.range,
        "calc_kind": RANGE_KIND_CODE[k.range_kind],
        "calc_reach": reach(unit, rules) if live else 0,
        "calc_defense": reduce_value(k.defense, c, prop),
        "calc_q": cube.q,
        "calc_r": cube.r,
    }


def helper_values(battle: Battle) -> list[dict[str, Any]]:
    """H11: the hidden helper columns of the Units table, one dict per unit in
    ``battle.units`` order (keys: those of :data:`HELPER_COLUMNS`)."""
    return [helper_row(u, battle.house_rules) for u in battle.units]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def house_rule_rows(rules: HouseRules | None = None) -> list[tuple[str, str, str, str]]:
    """The House Rules sheet's rows: key, current value text (``rules``', by default the
    defaults), default text, ruling text (from :meth:`HouseRules.describe`)."""
    current = rules or HouseRules()
    return [(key, _shown(getattr(current, key)), _shown(default), text)
            for key, (text, default, _choices) in HouseRules.describe().items()]


# -- formulas --------------------------------------------------------------------------------

def _col(block: Block, key: str) -> str:
    """The absolute range of one column's data rows (``Units!$A$3:$A$42``)."""
    letter = block.letter(key)
    last = block.last_row if block.last_row is not None else block.first_row + 4000
    return f"{quote_sheet(block.sheet)}!${letter}${block.first_row}:${letter}${last}"


def _at(block: Block, key: str, row: int) -> str:
    """A cell of ``block`` in sheet row ``row``, column absolute (``Moves!$B7``)."""
    return f"{quote_sheet(block.sheet)}!${block.letter(key)}{row}"


def calc_blocks(lay: Layout) -> tuple[Block, Block]:
    """The Calc sheet's two blocks, row for row beside the Moves and Attacks tables."""
    moves, attacks = lay.block("Moves_Table"), lay.block("Attacks_Table")
    cm = Block("Calc_Moves", "Calc", moves.header_row, CALC_MOVE_COLUMNS, rows=moves.rows, first_col=1,
               title="H11 helpers: each pending move's planned hex (row = Moves row)")
    ca = Block("Calc_Attacks", "Calc", attacks.header_row, CALC_ATTACK_COLUMNS, rows=attacks.rows,
               first_col=len(CALC_MOVE_COLUMNS) + 2,
               title="H11 helpers: planned hexes, distances and values (row = Attacks row)")
    return cm, ca


def _name(who: str) -> str:
    """A unit name as the reader takes it: trimmed (a number typed as a name reads as text)."""
    return f'TRIM({who}&"")'


def _units(lay: Layout, key: str) -> str:
    return _col(lay.block("Units_Table"), key)


def _unit_lookup(lay: Layout, key: str, who: str) -> str:
    """The Units helper ``key`` of the unit named in cell ``who``."""
    return f"INDEX({_units(lay, key)},MATCH({_name(who)},{_units(lay, 'name')},0))"


def _planned(lay: Layout, coord: str, who: str) -> str:
    """H4, H2: cube ``coord`` (q or r) of the planned hex of the unit named in ``who``:
    that of its first pending move, else that of its hex now."""
    cm = lay.block("Calc_Moves")
    return (f"IFERROR(INDEX({_col(cm, coord)},MATCH({_name(who)},{_col(cm, 'key')},0)),"
            f"{_unit_lookup(lay, 'calc_' + coord, who)})")


def _distance(q1: str, r1: str, q2: str, r2: str) -> str:
    """H2: the cube distance of two hexes given by their q and r (s = -q - r)."""
    return f"(ABS({q1}-{q2})+ABS({r1}-{r2})+ABS({q1}-{q2}+{r1}-{r2}))/2"


def _moves_key(lay: Layout, row: int) -> str:
    m, cm = lay.block("Moves_Table"), lay.block("Calc_Moves")
    return (f'=IF(AND({_at(m, "turn", row)}="",TRIM({_at(m, "unit", row)}&"")<>"",'
            f'ISNUMBER({_at(cm, "hexnum", row)})),TRIM({_at(m, "unit", row)}&""),"")')


def _moves_hexnum(lay: Layout, row: int) -> str:
    """H4: the planned end of a Moves row as a number CCRR: the last hex of the typed path
    (separated by spaces, commas or semicolons), else the To hex; blank when neither reads."""
    m = lay.block("Moves_Table")
    path, to = _at(m, "path", row), _at(m, "to", row)
    clean = f'TRIM(SUBSTITUTE(SUBSTITUTE({path}&"",","," "),";"," "))'
    last = f'TRIM(RIGHT(SUBSTITUTE({clean}," ",REPT(" ",60)),60))'
    return f'=IFERROR(VALUE(IF({clean}<>"",{last},TRIM({to}&""))),"")'


def _moves_q(lay: Layout, row: int) -> str:
    h = _at(lay.block("Calc_Moves"), "hexnum", row)
    return f'=IF(ISNUMBER({h}),INT({h}/100),"")'


def _moves_r(lay: Layout, row: int) -> str:
    """H2: odd-q offset to cube r: ``row - (col - (col & 1)) / 2``."""
    h = _at(lay.block("Calc_Moves"), "hexnum", row)
    return f'=IF(ISNUMBER({h}),MOD({h},100)-(INT({h}/100)-MOD(INT({h}/100),2))/2,"")'


def _moves_moved(lay: Layout, row: int) -> str:
    """H5: how far the planned move ends from the unit's hex now."""
    m, cm = lay.block("Moves_Table"), lay.block("Calc_Moves")
    who = _at(m, "unit", row)
    q, r = _at(cm, "q", row), _at(cm, "r", row)
    dist = _distance(q, r, _unit_lookup(lay, "calc_q", who), _unit_lookup(lay, "calc_r", who))
    return f'=IF(ISNUMBER({q}),IFERROR({dist},0),0)'


def _attack_planned(coord: str, who_key: str) -> Callable[[Layout, int], str]:
    def build(lay: Layout, row: int) -> str:
        who = _at(lay.block("Attacks_Table"), who_key, row)
        return f'=IF(TRIM({who}&"")="","",{_planned(lay, coord, who)})'
    return build


def _attack_distance(i: int) -> Callable[[Layout, int], str]:
    def build(lay: Layout, row: int) -> str:
        ca = lay.block("Calc_Attacks")
        q, r, dq, dr = (_at(ca, k, row) for k in (f"q{i}", f"r{i}", "dq", "dr"))
        return f'=IFERROR({_distance(q, r, dq, dr)},"")'
    return build


def _attack_value(i: int) -> Callable[[Layout, int], str]:
    """6.1, 6.3, H5, H6, H10 (:func:`~sheetsync.systems.hexwar.rules.turn.attack_value`): what
    attacker ``i`` adds at its distance ``d``: at 1 the attack plus the charge bonus when its
    planned move ends 2+ hexes from its start; R(--) the attack up to R, then one less per
    hex; beyond R nothing; R(n) the value n from 2 to R; else the attack."""
    def build(lay: Layout, row: int) -> str:
        a, ca, cm = lay.block("Attacks_Table"), lay.block("Calc_Attacks"), lay.block("Calc_Moves")
        who, d = _at(a, f"attacker{i}", row), _at(ca, f"d{i}", row)

        def u(key: str) -> str:
            return _unit_lookup(lay, key, who)

        moved = f"IFERROR(INDEX({_col(cm, 'moved')},MATCH({_name(who)},{_col(cm, 'key')},0)),0)"
        att = u("calc_attack")
        value = (f"IF({d}<1,0,IF({d}=1,{att}+IF({moved}>=2,{u('calc_bonus')},0),"
                 f"IF({u('calc_kind')}=2,IF({d}<={u('calc_range')},{att},MAX(0,{att}-({d}-{u('calc_range')}))),"
                 f"IF({d}>{u('calc_range')},0,IF({u('calc_kind')}=1,{u('calc_n')},{att})))))")
        return f'=IF(OR(TRIM({who}&"")="",NOT(ISNUMBER({d}))),0,IFERROR({value},0))'
    return build


def _strength(lay: Layout, row: int) -> str:
    """H7: S, the sum of the attackers' values (a unit out of reach adds 0)."""
    a, ca = lay.block("Attacks_Table"), lay.block("Calc_Attacks")
    values = ",".join(_at(ca, f"v{i}", row) for i in range(1, ATTACK_SLOTS + 1))
    return f'=IF(TRIM({_at(a, "defender", row)}&"")="","",SUM({values}))'


def _defense(lay: Layout, row: int) -> str:
    """H7, H10: D, the defender's own defense after its casualties."""
    who = _at(lay.block("Attacks_Table"), "defender", row)
    return f'=IF(TRIM({who}&"")="","",IFERROR({_unit_lookup(lay, "calc_defense", who)},""))'


def _chance(lay: Layout, row: int) -> str:
    """6.2, H7: ⌊100·S / (S + D)⌋, blank when S is 0 or blank."""
    a = lay.block("Attacks_Table")
    s, d = _at(a, "strength", row), _at(a, "defense", row)
    return f'=IF(OR(NOT(ISNUMBER({s})),NOT(ISNUMBER({d}))),"",IF({s}<=0,"",INT(100*{s}/({s}+{d}))))'


def _expected(lay: Layout, row: int) -> str:
    """H11: c·(c − 1)/200 percentage points."""
    c = _at(lay.block("Attacks_Table"), "chance", row)
    return f'=IF(ISNUMBER({c}),{c}*({c}-1)/200,"")'


def add_formulas(lay: Layout) -> None:
    """H11: add the Calc blocks and every live formula (``lay.formulas``) to ``lay``."""
    cm, ca = calc_blocks(lay)
    lay.add(cm)
    lay.add(ca)
    f = lay.formulas
    f["Calc_Moves.key"] = _moves_key
    f["Calc_Moves.hexnum"] = _moves_hexnum
    f["Calc_Moves.q"] = _moves_q
    f["Calc_Moves.r"] = _moves_r
    f["Calc_Moves.moved"] = _moves_moved
    f["Calc_Attacks.dq"] = _attack_planned("q", "defender")
    f["Calc_Attacks.dr"] = _attack_planned("r", "defender")
    for i in range(1, ATTACK_SLOTS + 1):
        f[f"Calc_Attacks.q{i}"] = _attack_planned("q", f"attacker{i}")
        f[f"Calc_Attacks.r{i}"] = _attack_planned("r", f"attacker{i}")
        f[f"Calc_Attacks.d{i}"] = _attack_distance(i)
        f[f"Calc_Attacks.v{i}"] = _attack_value(i)
    f["Attacks_Table.strength"] = _strength
    f["Attacks_Table.defense"] = _defense
    f["Attacks_Table.chance"] = _chance
    f["Attacks_Table.expected"] = _expected
