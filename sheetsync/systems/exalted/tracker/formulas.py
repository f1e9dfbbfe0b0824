"""E1, E7, X28-X33: the live odds of the Exalted tracker's Orders rows, as spreadsheet
formulas that work in Excel, LibreOffice and Google Sheets alike (INDEX, SUMPRODUCT, MAX,
IF; no array entry), and the House Rules rows the generic template takes from a system's
``formulas`` module.

What depends on the whole battle is written by the steps as plain values from the engine's
own attack plan (:func:`sheetsync.systems.exalted.tracker.cells.odds_rows`): the pool after
internal penalties (E3, X28), the successes added after the roll (X28, X30), the external
penalty (E3, X30, X32), the DV (E8, X29), and what the damage needs (X33): the raw damage
before the threshold, the soak, the minimum dice and the Hardness (E9).  From those cells
the formulas derive, row by row:

- ``needed``, the successes the dice must show: DV + 1 + external − added, at least 0
  (successes equal to the DV miss, fine print E7);
- ``p_hit``, the exact chance of a hit in percent: the chance the pool rolls ``needed`` or
  more successes;
- ``expected``, the expected levels of damage: over every number of successes *s* the
  pool can roll, its chance times 2/5 of the damage dice its threshold gives (a damage die
  succeeds on 7-10 and a 10 counts once, E1, so a damage pool of *d* dice averages 2d/5).
  With threshold *t* = *s* + added − external − DV and raw damage *r* = raw + *t*, the
  damage dice are 0 when Hardness ≥ *r*, else max(*r* − soak, minimum) (E9, X33).

The chance of each number of successes comes from the hidden Odds sheet, written once by
the template: a row per pool of 0 to :data:`ODDS_DICE` dice, a column per number of
successes (a die shows 0, 1 or 2 successes with chances 6/10, 3/10, 1/10, E1), the very
figures of :func:`~sheetsync.systems.exalted.rules.dice.success_distribution` as floats.  A second
table below it counts a 10 once (0 or 1 success, 6/10 and 4/10): E1 ``extras_double_tens``
off, for an extra's attack.  The Orders column ``tens`` (written by the steps: 2, or 1 for
that extra) tells which table a row reads; blank reads the first.  A row
without a pool (not an attack, refused, or not yet built) shows blanks, never an error; a
pool beyond the table shows blanks, and its Result says so.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from sheetsync.core.layout import Block, Column, DeferredStatic, Layout, Static, quote_sheet

__all__ = ["ODDS_DICE", "ODDS_KEYS", "ODDS_SHEET", "add_odds", "house_rule_rows", "odds_blocks", "odds_table",
           "success_columns"]

ODDS_DICE = 50
"""E1: the largest pool the Odds sheet holds (a row per pool of 0 to 50 dice)."""

ODDS_SHEET = "Odds"

ODDS_KEYS = ("needed", "p_hit", "expected")
"""The Orders columns that are live formulas (in this order)."""

_DIE = (6, 3, 1)
"""E1: one attack die's chance, in tenths, of 0, 1 and 2 successes (7-9 one, 10 two)."""
_DIE_ONCE = (6, 4)
"""E1 (``extras_double_tens`` off, an extra's pool): 0 or 1 success (7-10 one)."""


def house_rule_rows(rules: Any = None) -> list[tuple[str, Any, Any, str]]:
    """The House Rules sheet's rows (see :func:`sheetsync.systems.exalted.tracker.layout.house_rule_rows`)."""
    from sheetsync.systems.exalted.tracker.layout import house_rule_rows as rows

    return rows(rules)


@lru_cache(maxsize=8)
def odds_table(dice: int = ODDS_DICE, *, double_tens: bool = True) -> tuple[tuple[float, ...], ...]:
    """E1: row *n* (0 to ``dice``) holds the chance of exactly *s* successes on *n* dice,
    *s* from 0 to 2 × ``dice`` (0 beyond 2*n*, or beyond *n* when a 10 counts once,
    ``double_tens=False``).  Counted exactly in whole tenths (the ways to
    roll *s* out of 10^n, as :func:`~sheetsync.systems.exalted.rules.dice.success_distribution`
    convolves them), divided once, then kept to the 16 significant digits a workbook file
    holds, so that every backend (a workbook, a Google Sheet, memory) holds the very same
    number: each entry is within 1e-15 of the engine's Fraction."""
    width = 2 * dice + 1
    ways = [1] + [0] * (width - 1)
    rows: list[tuple[float, ...]] = []
    for n in range(dice + 1):
        scale = 10 ** n
        rows.append(tuple(_stored(w / scale) if w else 0.0 for w in ways))
        nxt = [0] * width
        for s, w in enumerate(ways):
            if w:
                for k, weight in enumerate(_DIE if double_tens else _DIE_ONCE):
                    if s + k < width:
                        nxt[s + k] += w * weight
        ways = nxt
    return tuple(rows)


def _stored(x: float) -> float:
    """``x`` as a number that a workbook file's 16 significant digits (openpyxl writes
    ``%.16g``) bring back unchanged."""
    for _ in range(4):
        back = float(f"{x:.16g}")
        if back == x:
            break
        x = back
    return x


def success_columns(dice: int = ODDS_DICE) -> tuple[Column, ...]:
    """The Odds blocks' columns: one per number of successes, 0 to 2 × ``dice``."""
    return tuple(Column(f"s{s}", str(s), kind="number", is_input=False, width=9) for s in range(2 * dice + 1))


def odds_blocks(dice: int = ODDS_DICE) -> tuple[Block, Block, Block]:
    """The Odds sheet: a row of the numbers of successes (the formulas compare with it),
    then the table, a row per pool; then the same table with a 10 counted once (E1)."""
    head = Block("Odds_Successes", ODDS_SHEET, 2, (Column("label", "", is_input=False, width=10),
                                                   *success_columns(dice)), rows=1,
                 title="E1: the numbers of successes a pool can roll")
    table = Block("Odds_Table", ODDS_SHEET, 5, (Column("dice", "Dice", kind="int", is_input=False, width=10),
                                                *success_columns(dice)), rows=dice + 1,
                  title="E1: the exact chance of each number of successes, a row per pool (10s count twice)")
    once = Block("Odds_Once", ODDS_SHEET, (table.last_row or table.first_row) + 3,
                 (Column("dice", "Dice", kind="int", is_input=False, width=10), *success_columns(dice)),
                 rows=dice + 1, title="E1: the same when a 10 counts once (an extra, extras_double_tens off)")
    return head, table, once


@lru_cache(maxsize=4)
def _static(dice: int) -> tuple[Static, ...]:
    head, table, once = odds_blocks(dice)
    out = [Static(ODDS_SHEET, f"{head.letter('label')}{head.first_row}", "Successes")]
    out += [Static(ODDS_SHEET, f"{head.letter(f's{s}')}{head.first_row}", s) for s in range(2 * dice + 1)]
    for block, twice in ((table, True), (once, False)):
        dice_col = block.letter("dice")
        letters = [block.letter(f"s{s}") for s in range(2 * dice + 1)]  # once: a column's letter is a search
        for n, row in enumerate(odds_table(dice, double_tens=twice)):
            r = block.first_row + n
            out.append(Static(ODDS_SHEET, f"{dice_col}{r}", n))
            out += [Static(ODDS_SHEET, f"{letter}{r}", p) for letter, p in zip(letters, row, strict=True)]
    return tuple(out)


# -- formulas --------------------------------------------------------------------------------

def _at(lay: Layout, key: str, row: int) -> str:
    """The Orders cell of column ``key`` in sheet row ``row``, column absolute (``Orders!$L5``)."""
    b = lay.block("Orders_Table")
    return f"{quote_sheet(b.sheet)}!${b.letter(key)}{row}"


def _span(block: Block, first: str, last: str, r1: int, r2: int) -> str:
    return f"{quote_sheet(block.sheet)}!${block.letter(first)}${r1}:${block.letter(last)}${r2}"


def _tables(lay: Layout) -> tuple[str, str, str, int]:
    """The successes row, the chance tables (successes columns only; 10s twice, then once)
    and the largest pool."""
    head, table, once = lay.block("Odds_Successes"), lay.block("Odds_Table"), lay.block("Odds_Once")
    last = head.columns[-1].key
    rows = table.rows or 1
    return (_span(head, "s0", last, head.first_row, head.first_row),
            _span(table, "s0", last, table.first_row, table.first_row + rows - 1),
            _span(once, "s0", last, once.first_row, once.first_row + rows - 1), rows - 1)


def _guard(lay: Layout, row: int, body: str) -> str:
    """Blank while the row has no pool (not an attack, refused, not built) or one beyond the table."""
    pool = _at(lay, "pool", row)
    _succ, _tab, _once, most = _tables(lay)
    return f'=IF(OR({pool}="",{pool}>{most}),"",{body})'


def _needed(lay: Layout, row: int) -> str:
    """E7, E3, X28: DV + 1 + external − added, at least 0."""
    dv, ext, added = (_at(lay, k, row) for k in ("dv", "external", "added"))
    return _guard(lay, row, f"MAX(0,{dv}+1+{ext}-{added})")


def _chances(lay: Layout, row: int) -> tuple[str, str]:
    """The pool's row of the Odds table (E1: of the second table when ``tens`` is 1, an
    extra's pool with ``extras_double_tens`` off), and the successes row, for SUMPRODUCT."""
    succ, tab, once, _most = _tables(lay)
    pool, tens = _at(lay, "pool", row), _at(lay, "tens", row)
    return (f"(({tens}=1)*INDEX({once},{pool}+1,0)+({tens}<>1)*INDEX({tab},{pool}+1,0))", succ)


def _p_hit(lay: Layout, row: int) -> str:
    """E1, E2, E7: 100 × the chance that the pool rolls ``needed`` or more successes."""
    chance, succ = _chances(lay, row)
    return _guard(lay, row, f"100*SUMPRODUCT({chance}*({succ}>={_at(lay, 'needed', row)}))")


def _expected(lay: Layout, row: int) -> str:
    """E1, E9, X33: 2/5 × the sum, over every roll that hits, of its chance times its damage
    dice: 0 when Hardness ≥ raw damage, else max(raw damage − soak, minimum)."""
    chance, succ = _chances(lay, row)
    a = {k: _at(lay, k, row) for k in ("added", "external", "dv", "raw", "soak", "min_dice", "hardness", "needed")}
    raw = f"({a['raw']}+{a['added']}-{a['external']}-{a['dv']}+{succ})"
    over = f"({raw}-{a['soak']}-{a['min_dice']})"
    dice = f"({raw}>{a['hardness']})*({a['min_dice']}+{over}*({over}>0))"
    return _guard(lay, row, f"0.4*SUMPRODUCT({chance}*({succ}>={a['needed']})*{dice})")


FORMULAS: dict[str, Callable[[Layout, int], str]] = {"needed": _needed, "p_hit": _p_hit, "expected": _expected}


def add_odds(lay: Layout) -> None:
    """E1, E7, X28-X33: add the hidden Odds sheet (its blocks and their fixed values) and the
    Orders rows' live formulas (``lay.formulas``) to ``lay``."""
    head, table, once = odds_blocks(ODDS_DICE)
    lay.add(head)
    lay.add(table)
    lay.add(once)
    last = once.last_row if once.last_row is not None else once.first_row
    lay.deferred.append(DeferredStatic(ODDS_SHEET, last, max(b.last_col for b in (head, table, once)),
                                       partial(_static, ODDS_DICE)))  # only a template or a drawing reads them
    for key, make in FORMULAS.items():
        lay.formulas[f"Orders_Table.{key}"] = make
