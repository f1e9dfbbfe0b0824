"""A battle to cells: the updates each use case writes, as :class:`RangeUpdate` blocks.

Everything here is pure: it returns the grids, and the use case hands them to the
backend in one ``write_ranges`` call.  Blocks are always written whole (padded with blanks)
so nothing stale survives from a longer earlier result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sheetsync.app.bbn.layout import (
    LISTS,
    Block,
    Layout,
)
from sheetsync.errors import BattleStateError
from sheetsync.rules.bbn import AftermathEntry, Battle, Event, HouseRules, PhaseResult, State
from sheetsync.rules.bbn.pools import actions_available
from sheetsync.sheets.backend import CellValue, Formula, RangeUpdate, quote_sheet

__all__ = [
    "aftermath_updates",
    "battle_updates",
    "event_row",
    "health_row_update",
    "house_rules_rows",
    "input_updates",
    "lists_updates",
    "log_updates",
    "odds_formula",
    "order_stamp_updates",
]


def _pad(rows: list[list[CellValue]], block: Block, count: int | None = None) -> list[list[CellValue]]:
    """``rows`` padded with blank rows to the block's length.  Issue 9: rows past the block
    are never cut off silently: the use cases refuse a battle larger than the tracker
    (:func:`sheetsync.app.bbn.reader.check_fits`), so this is a step laid out for a smaller
    tracker than the battle it holds, and it is refused before anything is written."""
    n = count if count is not None else (block.rows or len(rows))
    if len(rows) > n:
        raise BattleStateError(f"the {block.sheet} sheet's {block.title or block.name} table holds {n} rows and "
                               f"this step has {len(rows)} to write; nothing was written. The tracker is smaller "
                               "than its battle: carry on from a battle file (the 'battle' part of `sheetsync "
                               "export`) with `sheetsync new OUT --from battle.yaml`")
    width = len(block.columns)
    out = [list(r) + [None] * (width - len(r)) for r in rows[:n]]
    out += [[None] * width for _ in range(n - len(out))]
    return out


def _yes_no(flag: bool) -> str:
    """A boolean as the sheets show it: Yes or No (the reader takes Yes/No and TRUE/FALSE)."""
    return "Yes" if flag else "No"


def _block(block: Block, rows: list[list[CellValue]]) -> RangeUpdate:
    return RangeUpdate(block.range(), _pad(rows, block))


def _members_by_state(battle: Battle, name: str) -> str:
    st = battle.state[name]
    groups: dict[str, list[str]] = {}
    for m, s in st.states.items():
        groups.setdefault(s.value, []).append(m)
    return "; ".join(f"{s}: {', '.join(ms)}" for s, ms in groups.items())


def battle_updates(lay: Layout, battle: Battle, *, status: str, last_action: str,
                   breakdown_too: bool = True) -> list[RangeUpdate]:
    """Battle dashboard, Cohorts pools/roster/breakdown: everything derived from the state.

    The breakdown only changes when the cohorts are built, so a phase leaves it out
    (``breakdown_too=False``) and its write stays small."""
    rules = battle.house_rules
    summary, pools_rows, roster, breakdown = [], [], [], []
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        p = battle.pools[spec.name].pools
        counts = {s: sum(1 for v in st.states.values() if v is s) for s in State}
        actions = actions_available(st.states.values(), rules)
        summary.append([spec.name, spec.side + (" (support)" if spec.support else ""), st.health, p["health"], st.temper,
                        st.control, actions, counts[State.ACTIVE], counts[State.SCARED], counts[State.KNOCKED_OUT],
                        counts[State.STABILIZED], counts[State.DEAD], _members_by_state(battle, spec.name)])
        pools_rows.append([spec.name, p["health"], st.health, p["melee"], p["ranged"], p["mystical"], p["defense"],
                           p["temper"], st.temper, p["movement"], p["resolve"], p["control"], st.control, actions,
                           st.reroll_tokens, st.units_moved])
        for m in spec.members:
            roster.append([spec.name, m.name, "Sergeant" if m.name == spec.sergeant_name else "Member",
                           st.states[m.name].value, _yes_no(m.name in st.hero_used)])
        for pool, lines in battle.pools[spec.name].breakdown.items():
            for c in lines:
                if c.amount == 0 and c.kind == "base":
                    continue
                breakdown.append([spec.name, pool, c.member or "cohort", c.trait, c.amount, c.rule_ref, c.detail])
        for n in battle.pools[spec.name].not_counted:
            breakdown.append([spec.name, "not counted", n.member, n.trait, 0, "R12", n.reason])
    shown = lay.block("Cohorts_Breakdown").rows or len(breakdown)
    if len(breakdown) > shown:  # issue 9: said, not cut off; every line is in `sheetsync pools`
        rest = len(breakdown) - shown + 1
        breakdown[shown - 1:] = [[None, None, None, None, None, None,
                                  f"... and {rest} more lines this table has no room for: `sheetsync pools FILE` "
                                  "lists every one"]]
    cells = lay.cells
    phase, last = cells["Battle_Phase"], cells["Battle_LastAction"]
    return [  # Phase, Status and Last action sit one under the other: one block
        RangeUpdate(f"{phase.ref}:{last.address}", [[battle.phase], [status], [last_action]]),
        _block(lay.block("Battle_Summary"), summary),
        _block(lay.block("Cohorts_Pools"), pools_rows),
        _block(lay.block("Cohorts_Roster"), roster),
        *([_block(lay.block("Cohorts_Breakdown"), breakdown)] if breakdown_too else []),
    ]


def health_row_update(lay: Layout, battle: Battle, phase: int, *, clear: bool = False) -> RangeUpdate:
    """One row of the Health-by-phase table (the chart's data): row 0 is the start."""
    block = lay.block("Battle_HealthByPhase")
    row: list[CellValue] = [None] * len(block.columns)
    if not clear:
        row[0] = phase
        for i, spec in enumerate(battle.cohorts[:_health_columns(block, battle)]):
            row[1 + i] = battle.state[spec.name].health
    return RangeUpdate(block.row_range(phase), [row])


def _health_columns(block: Block, battle: Battle) -> int:
    """The Health-by-phase table has a column for each cohort the tracker holds (issue 9)."""
    columns = len(block.columns) - 1
    if len(battle.cohorts) > columns:
        raise BattleStateError(f"the Health by phase table has {columns} cohort columns and the battle has "
                               f"{len(battle.cohorts)} cohorts; nothing was written")
    return columns


def health_header_update(lay: Layout, battle: Battle) -> RangeUpdate:
    block = lay.block("Battle_HealthByPhase")
    columns = _health_columns(block, battle)
    names: list[CellValue] = [c.name for c in battle.cohorts]
    names += [f"Cohort {i + 1}" for i in range(len(names), columns)]
    return RangeUpdate(block.header_range(), [["Phase", *names]])


def _effect_text(e: Event) -> str:
    parts = []
    for f in e.effects:
        if f.member and f.to_state:
            dice = f" (d{f.roll.sides}={f.roll.value}{'' if f.roll.source == 'entered' else '*'})" if f.roll and f.roll.sides > 1 else ""
            parts.append(f"{f.cohort}: {f.member} → {f.to_state.value}{dice}")
        elif f.text:
            parts.append(f.text)
    return "; ".join(parts)


def result_text(e: Event) -> str:
    """The Result column: the reason when refused, else totals and what happened, and the rule."""
    if e.outcome == "refused":
        return f"Refused: {e.reason}"
    head = ""
    d10s = [r for r in e.rolls if r.sides == 10]
    if d10s:
        head = "d10 " + ", ".join(f"{r.value}{'' if r.source == 'entered' else ' (rolled)'}" for r in d10s) + ": "
    if e.total is not None and e.defense is not None:
        head += f"{e.total} vs Defense {e.defense}. "
    elif e.defense is not None:
        head = f"automatic hit vs Defense {e.defense}. "
    body = _effect_text(e)
    return f"{head}{body}{'. ' if body else ''}[{e.rule_ref}]"


def _rolls_text(e: Event) -> str:
    return ", ".join(f"d{r.sides}={r.value}{'' if r.source == 'entered' else '*'}" for r in e.rolls)


def event_row(e: Event) -> list[CellValue]:
    return [e.phase, e.order + 1, e.cohort, e.task.value + (f" ({e.moment.value})" if e.moment else ""), e.target,
            e.outcome, e.damage, _rolls_text(e), e.rule_ref, result_text(e) if e.outcome != "refused" else e.reason]


def _stamp(lay: Layout, offsets: Sequence[int], rows: Sequence[tuple[CellValue, list[CellValue]]]) -> list[RangeUpdate]:
    block = lay.block("Orders_Table")
    sheet = quote_sheet(block.sheet)
    out: list[RangeUpdate] = []
    start = 0
    while start < len(offsets):
        end = start
        while end + 1 < len(offsets) and offsets[end + 1] == offsets[end] + 1:
            end += 1
        r1, r2 = block.first_row + offsets[start], block.first_row + offsets[end]
        chunk = rows[start:end + 1]
        out.append(RangeUpdate(f"{sheet}!{block.letter('phase')}{r1}:{block.letter('phase')}{r2}",
                               [[phase] for phase, _ in chunk]))
        out.append(RangeUpdate(f"{sheet}!{block.letter('outcome')}{r1}:{block.letter('result')}{r2}",
                               [list(results) for _, results in chunk]))
        start = end + 1
    return out


ROLLED = "Rolled"
"""The Orders "Roll source" marker of a die sheetsync rolled (R25)."""


def rolled_task_die(e: Event) -> int | None:
    """The order's task d10 when sheetsync rolled it (R25), else ``None`` (typed, or no roll)."""
    for r in e.rolls:
        if r.sides == 10 and r.purpose.startswith("d10 + "):
            return r.value if r.source == "rolled" else None
    return None


def _roll_cells(lay: Layout, offset: int, value: CellValue, source: CellValue) -> list[RangeUpdate]:
    block = lay.block("Orders_Table")
    return [RangeUpdate(f"{quote_sheet(block.sheet)}!{block.letter(key)}{block.first_row + offset}", [[v]])
            for key, v in (("roll", value), ("roll_source", source))]


def order_stamp_updates(lay: Layout, rows: Sequence[int], events: Sequence[Event]) -> list[RangeUpdate]:
    """Stamp each resolved Orders row with its phase, outcome, damage and result (one block
    per run of consecutive rows).  A task die sheetsync rolled goes into the row's Roll
    cell, marked "Rolled" in the hidden Roll source column, so every die shows in its own
    cell and a conditional format tells it from a typed one (R25)."""
    stamps = [(e.phase, [e.outcome, e.damage, result_text(e)]) for e in events]
    if len(stamps) != len(rows):
        raise ValueError("one event per Orders row")
    order = sorted(range(len(rows)), key=lambda i: rows[i])
    out = _stamp(lay, [rows[i] for i in order], [stamps[i] for i in order])
    for i in order:
        die = rolled_task_die(events[i])
        if die is not None:
            out += _roll_cells(lay, rows[i], die, ROLLED)
    return out


def order_unstamp_updates(lay: Layout, rows: Sequence[int], rolled: Sequence[int] = ()) -> list[RangeUpdate]:
    """Clear the stamps of the given Orders rows: they are pending again.  The dice sheetsync
    rolled into Roll (the ``rolled`` rows) are cleared too, so the next resolve rolls them
    afresh instead of reading them as typed dice (R25); typed dice stay."""
    ordered = sorted(rows)
    out = _stamp(lay, ordered, [(None, [None, None, None]) for _ in ordered])
    for i in sorted(rolled):
        out += _roll_cells(lay, i, None, None)
    return out


def log_updates(lay: Layout, rows: list[list[CellValue]], *, step: str) -> list[RangeUpdate]:
    """Append rows to the Log, each carrying ``step`` (``rev:id:action:phase``) and its
    number in the step (``:1``, ``:2`` ...) in its Step column.

    The rows are appended (:attr:`RangeUpdate.append`): the backend puts them after the
    Log's last row when it writes, so two steps run at the same moment both keep their rows,
    and the next step can tell from the Step column which of them the State kept.  The Log
    is never rewritten."""
    if not rows:
        return []
    block = lay.block("Log_Table")
    j = block.index("step")
    padded = _pad(rows, block, len(rows))
    for k, row in enumerate(padded, start=1):
        row[j] = f"{step}:{k}"
    return [RangeUpdate(block.range(), padded, append=True)]


def phase_log_rows(result: PhaseResult) -> list[list[CellValue]]:
    rows = [event_row(e) for e in result.events]
    for f in result.end_of_phase:
        rows.append([result.phase, None, f.cohort, "End of phase", None, f.kind, 0, "", f.rule_ref, f.text])
    return rows


def aftermath_updates(lay: Layout, entries: list[AftermathEntry]) -> RangeUpdate:
    rows: list[list[CellValue]] = []
    for e in entries:
        lasting = (f"{e.lasting_effect.band}+ band, d10={e.lasting_effect.roll}"
                   f"{'' if e.lasting_effect.source == 'entered' else '*'}: {e.lasting_effect.result}") if e.lasting_effect else None
        rows.append([e.cohort, e.name, _yes_no(e.dead), None if e.dead else e.damage, None if e.dead else e.aggravated,
                     None if e.dead else e.lethal, None if e.dead else e.aegis, None if e.dead else _yes_no(e.torpor),
                     "Dead: removed from play (R30)" if e.dead else lasting, None if e.dead else e.temper_returned])
    return _block(lay.block("Aftermath_Table"), rows)


def house_rules_rows() -> list[list[CellValue]]:
    rows: list[list[CellValue]] = []
    for key, (text, default, _choices) in HouseRules.describe().items():
        shown: Any = _yes_no(default) if isinstance(default, bool) else default
        rows.append([key, shown, shown, text])
    return rows


def lists_updates(lay: Layout) -> RangeUpdate:
    block = lay.block("Lists_Table")
    longest = max(len(v) for v in LISTS.values())
    rows = [[LISTS[k][i] if i < len(LISTS[k]) else None for k in LISTS] for i in range(longest)]
    return RangeUpdate(block.range(rows=longest), rows)


def odds_formula(lay: Layout, row: int) -> Formula:
    """Orders Odds: the chance d10 + pool ≥ the target's Defense (R14), live in the sheet.

    It looks up the acting cohort's pool (by task) and the target's Defense on the Cohorts
    sheet, so it updates while the Tracker types.  An order whose two cohorts have no row
    on the Ranges sheet shows "no range" instead: the resolve would refuse it (R24).
    """
    o = lay.block("Orders_Table")
    p = lay.block("Cohorts_Pools")
    rg = lay.block("Ranges_Table")
    c, t, g = (f"{o.letter(k)}{row}" for k in ("cohort", "task", "target"))
    names = p.column_ref("name")
    ra, rb = rg.column_ref("a"), rg.column_ref("b")
    no_range = f"COUNTIFS({ra},{c},{rb},{g})+COUNTIFS({ra},{g},{rb},{c})=0"

    def look(key: str, who: str) -> str:
        return f"INDEX({p.column_ref(key)},MATCH({who},{names},0))"

    pool = (f'IF({t}="Melee Attack",{look("melee", c)},IF({t}="Ranged Attack",{look("ranged", c)},'
            f'IF({t}="Mystical Attack",{look("mystical", c)},{look("resolve", c)})))')
    rolled = f'OR({t}="Melee Attack",{t}="Ranged Attack",{t}="Mystical Attack",{t}="Inspire",{t}="Intimidate",{t}="Analyze")'
    body = f"MAX(0,MIN(10,11-({look('defense', g)}-{pool})))/10"
    return Formula(f'=IF(OR({c}="",{t}="",{g}=""),"",IF({rolled},IF({no_range},"no range",IFERROR({body},"")),""))')


def input_updates(lay: Layout, battle: Battle) -> list[RangeUpdate]:
    """The input blocks (Characters, Cohorts Setup, Ranges, Orders, House Rules) of a battle."""
    chars = lay.block("Characters_Table")
    rows: list[list[CellValue]] = []
    for spec in battle.cohorts:
        for m in spec.members:
            row: list[CellValue] = [None] * len(chars.columns)

            def put(key: str, value: CellValue, row: list[CellValue] = row) -> None:
                row[chars.index(key)] = value

            put("cohort", spec.name)
            put("name", m.name)
            put("temper", m.temper or None)
            put("willpower_spent", m.willpower_spent or None)
            put("ranged_attack", "Yes" if m.ranged_attack else None)
            put("blood_magic_in_clan", "Yes" if m.blood_magic_in_clan else None)
            put("movement_discipline", m.movement_discipline)
            put("health_levels", m.health_levels)
            other: list[str] = []
            for a, v in m.abilities.items():
                if a in lay.ability_columns:
                    put("ability:" + a, v)
                else:
                    other.append(f"{a} {v}")
            for d, v in m.disciplines.items():
                if d in lay.discipline_columns:
                    put("discipline:" + d, v)
                else:
                    other.append(f"{d} {v}")
            for x in m.merits:
                if x in lay.merit_columns:
                    put("merit:" + x, "Yes")
                else:
                    other.append(x)
            paths = []
            for name, entry in m.blood_magic_paths.items():
                offensive = entry.offensive if entry.offensive is not None else battle.catalog.is_offensive_path(name)
                if offensive:
                    paths.append(f"{name} {entry.level}")
                elif name in lay.discipline_columns:
                    put("discipline:" + name, entry.level)
                else:
                    other.append(f"{name} {entry.level}")
            put("offensive_paths", "; ".join(paths) or None)
            put("combinations", "; ".join(f"{c.name}: {' + '.join(c.includes)}" for c in m.combination_disciplines) or None)
            put("other_traits", "; ".join(other) or None)
            put("aegis", spec.aegis.get(m.name))
            put("lasting_roll", spec.lasting_rolls.get(m.name))
            rows.append(row)
    setup = lay.block("Cohorts_Setup")
    srows: list[list[CellValue]] = []
    for spec in battle.cohorts:
        row = [None] * len(setup.columns)
        row[setup.index("name")] = spec.name
        row[setup.index("side")] = spec.side
        row[setup.index("support")] = "Yes" if spec.support else "No"
        row[setup.index("sergeant")] = spec.sergeant
        row[setup.index("tracker")] = spec.tracker
        row[setup.index("reporter")] = spec.reporter
        for pool, value in (spec.pools or {}).items():
            row[setup.index("set:" + pool.value)] = value
        srows.append(row)
    ranges = [[r.a, r.b, r.band.value] for r in battle.ranges]
    orders_block = lay.block("Orders_Table")
    orows = []
    for o in battle.orders:
        row = [None] * len(orders_block.columns)
        for key in ("cohort", "target", "member", "ally", "free_task", "text", "temper", "roll"):
            row[orders_block.index(key)] = getattr(o, key)
        row[orders_block.index("reroll")] = o.reroll if o.reroll is not None else ("Yes" if o.use_reroll else None)
        for key in ("task", "moment", "pool", "benefit"):
            v = getattr(o, key)
            row[orders_block.index(key)] = v.value if v is not None else None
        row[orders_block.index("picks")] = " ".join(str(p) for p in o.picks) or None
        row[orders_block.index("odds")] = odds_formula(lay, orders_block.first_row + len(orows))
        orows.append(row)
    house = lay.block("HouseRules_Table")
    hrows = []
    for key, _value, default, text in house_rules_rows():
        value = getattr(battle.house_rules, str(key))
        hrows.append([key, _yes_no(value) if isinstance(value, bool) else value, default, text])
    out = [
        RangeUpdate(chars.range(), _pad(rows, chars)),
        RangeUpdate(setup.range(), _pad(srows, setup)),
        RangeUpdate(lay.block("Ranges_Table").range(), _pad(ranges, lay.block("Ranges_Table"))),
        RangeUpdate(house.range(), hrows),
    ]
    if orows:
        out.append(RangeUpdate(orders_block.range(rows=len(orows)), orows))
    return out
