"""A battle to cells: the updates each use case writes, as :class:`RangeUpdate` blocks.

Everything here is pure: it returns the grids, and the use case hands them to the
backend in one ``write_ranges`` call.  Blocks are always written whole (padded with blanks)
so nothing stale survives from a longer earlier result.

Issue 9: every row is built as ``{column key: value}`` and encoded by its columns' codecs
(:meth:`Block.row_values`, through :func:`_cells`), never as a positional list; a flag is
given as a bool and its codec writes Yes or No.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sheetsync.core.errors import BattleStateError
from sheetsync.sheets.backend import CellValue, Formula, RangeUpdate, quote_sheet
from sheetsync.systems.bbn.rules import (
    AftermathEntry,
    Battle,
    Event,
    HouseRules,
    PhaseResult,
    State,
)
from sheetsync.systems.bbn.rules.pools import actions_available
from sheetsync.systems.bbn.tracker.layout import (
    LISTS,
    Block,
    Layout,
    layout,
)

__all__ = [
    "aftermath_updates",
    "battle_updates",
    "event_row",
    "health_row_update",
    "house_rules_rows",
    "house_rules_values",
    "input_updates",
    "lists_updates",
    "log_updates",
    "odds_formula",
    "order_stamp_updates",
]


Values = Mapping[str, Any]
"""One row, keyed by column (``{"cohort": "Night Watch", "health": 12}``)."""


_MISSING = object()

Plan = tuple[tuple[str, Callable[[Any], Any] | None], ...]
"""Each column's key and its codec's ``encode``, or ``None`` where the codec writes a value
as it is (:attr:`~sheetsync.core.layout.Codec.encodes_as_is`)."""

_PLANS: dict[int, tuple[Block, frozenset[str], Plan]] = {}
"""Per block (by identity, the block kept alive beside it): its column keys and its
:data:`Plan`, looked up once, not once a row (issue 12: a Resolve writes
some thousand cells).  A layout is built once and cached, so its blocks are few."""


def _plan(block: Block) -> tuple[frozenset[str], Plan]:
    got = _PLANS.get(id(block))
    if got is None or got[0] is not block:
        got = (block, frozenset(c.key for c in block.columns),
               tuple((c.key, None if getattr(c.codec, "encodes_as_is", False) else c.codec.encode)
                     for c in block.columns))
        if len(_PLANS) > 256:
            _PLANS.clear()
        _PLANS[id(block)] = got
    return got[1], got[2]


def _encoded(plan: Plan, row: Values) -> list[CellValue]:
    """The cells of ``plan``'s columns for ``row``: a missing key is blank, a live
    :class:`Formula` is written as it is, any other value encoded by its column's codec
    (an encoder that would give the value back is not called: issue 12)."""
    get = row.get
    return [
        None if (v := get(k, _MISSING)) is _MISSING else v if enc is None or isinstance(v, Formula) else enc(v)
        for k, enc in plan
    ]


def _cells(block: Block, row: Values) -> list[CellValue]:
    """One row's cells, each value encoded by its column's codec (:meth:`Block.row_values`,
    the same cells and the same error for a key the block has not); a live :class:`Formula`
    is written as it is."""
    keys, plan = _plan(block)
    if not keys.issuperset(row):
        return block.row_values(row)  # raises, naming the unknown column
    return _encoded(plan, row)


def _span(block: Block, row: Values, first: str, last: str) -> list[CellValue]:
    """The cells of columns ``first`` to ``last`` of one row (a stamp beside typed cells);
    only those are encoded (the others would be cut off)."""
    lo, hi = block.index(first), block.index(last) + 1
    keys, plan = _plan(block)
    if not keys.issuperset(row):
        return _cells(block, row)[lo:hi]
    return _encoded(plan[lo:hi], row)


def _pad(rows: Sequence[Values], block: Block, count: int | None = None) -> list[list[CellValue]]:
    """``rows`` encoded and padded with blank rows to the block's length.  Issue 9: rows past the block
    are never cut off silently: the use cases refuse a battle larger than the tracker
    (:func:`sheetsync.systems.bbn.tracker.reader.check_fits`), so this is a step laid out for a smaller
    tracker than the battle it holds, and it is refused before anything is written."""
    n = count if count is not None else (block.rows or len(rows))
    if len(rows) > n:
        raise BattleStateError(f"the {block.sheet} sheet's {block.title or block.name} table holds {n} rows and "
                               f"this step has {len(rows)} to write; nothing was written. The tracker is smaller "
                               "than its battle: carry on from a battle file (the 'battle' part of `sheetsync "
                               "export`) with `sheetsync new OUT --from battle.yaml`")
    width = len(block.columns)
    keys, plan = _plan(block)  # once a block, not once a row (issue 12): _cells, row by row
    out = [_encoded(plan, r) if keys.issuperset(r) else block.row_values(r)  # raises, naming the unknown column
           for r in rows]
    out += [[None] * width for _ in range(n - len(out))]
    return out


def _block(block: Block, rows: Sequence[Values]) -> RangeUpdate:
    return RangeUpdate(block.range(), _pad(rows, block))


def _members_by_state(battle: Battle, name: str) -> str:
    st = battle.state[name]
    groups: dict[str, list[str]] = {}
    for m, s in st.states.items():
        groups.setdefault(s.value, []).append(m)
    return "; ".join(f"{s}: {', '.join(ms)}" for s, ms in groups.items())


_STATES = tuple(State)
_STATE_BY_ID = {id(s): s for s in _STATES}


def battle_updates(lay: Layout, battle: Battle, *, status: str, last_action: str,
                   breakdown_too: bool = True) -> list[RangeUpdate]:
    """Battle dashboard, Cohorts pools/roster/breakdown: everything derived from the state.

    The breakdown only changes when the cohorts are built, so a phase leaves it out
    (``breakdown_too=False``) and its write stays small."""
    rules = battle.house_rules
    summary: list[Values] = []
    pools_rows: list[Values] = []
    roster: list[Values] = []
    breakdown: list[Values] = []
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        p = battle.pools[spec.name].pools
        counts = dict.fromkeys(_STATES, 0)
        for v in st.states.values():  # each member's state, counted by identity
            s = _STATE_BY_ID.get(id(v))
            if s is not None:
                counts[s] += 1
        actions = actions_available(st.states.values(), rules)
        summary.append({"cohort": spec.name, "side": spec.side + (" (support)" if spec.support else ""),
                        "health": st.health, "max_health": p["health"], "temper": st.temper, "control": st.control,
                        "actions": actions, "active": counts[State.ACTIVE], "scared": counts[State.SCARED],
                        "knocked_out": counts[State.KNOCKED_OUT], "stabilized": counts[State.STABILIZED],
                        "dead": counts[State.DEAD], "members": _members_by_state(battle, spec.name)})
        pools_rows.append({"name": spec.name, "max_health": p["health"], "health": st.health, "melee": p["melee"],
                           "ranged": p["ranged"], "mystical": p["mystical"], "defense": p["defense"],
                           "max_temper": p["temper"], "temper": st.temper, "movement": p["movement"],
                           "resolve": p["resolve"], "max_control": p["control"], "control": st.control,
                           "actions": actions, "reroll_tokens": st.reroll_tokens, "units_moved": st.units_moved})
        for m in spec.members:
            roster.append({"cohort": spec.name, "member": m.name,
                           "role": "Sergeant" if m.name == spec.sergeant_name else "Member",
                           "state": st.states[m.name].value, "hero": m.name in st.hero_used})
        if not breakdown_too:
            continue  # a phase leaves the breakdown as it is: its lines are not even built
        for pool, lines in battle.pools[spec.name].breakdown.items():
            for c in lines:
                if c.amount == 0 and c.kind == "base":
                    continue
                breakdown.append({"cohort": spec.name, "pool": pool, "member": c.member or "cohort", "trait": c.trait,
                                  "amount": c.amount, "rule": c.rule_ref, "detail": c.detail})
        for n in battle.pools[spec.name].not_counted:  # R12: kept, listed as not counted
            breakdown.append({"cohort": spec.name, "pool": "not counted", "member": n.member, "trait": n.trait,
                              "amount": 0, "rule": "R12", "detail": n.reason})
    shown = lay.block("Cohorts_Breakdown").rows or len(breakdown)
    if len(breakdown) > shown:  # issue 9: said, not cut off; every line is in `sheetsync pools`
        rest = len(breakdown) - shown + 1
        breakdown[shown - 1:] = [{"detail": f"... and {rest} more lines this table has no room for: "
                                            "`sheetsync pools FILE` lists every one"}]
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
    row: dict[str, Any] = {}
    if not clear:
        row["phase"] = phase
        for i, spec in enumerate(battle.cohorts[:_health_columns(block, battle)]):
            row[f"c{i}"] = battle.state[spec.name].health
    return RangeUpdate(block.row_range(phase), [_cells(block, row)])


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


def event_row(e: Event, text: str | None = None) -> dict[str, Any]:
    """One Log row of a resolved order, keyed by the Log's columns (``text``: its
    :func:`result_text`, when the caller has it already)."""
    return {"phase": e.phase, "order": e.order + 1, "cohort": e.cohort,
            "task": e.task.value + (f" ({e.moment.value})" if e.moment else ""), "target": e.target,
            "outcome": e.outcome, "damage": e.damage, "rolls": _rolls_text(e), "rule": e.rule_ref,
            "details": (result_text(e) if text is None else text) if e.outcome != "refused" else e.reason}


def _stamp(lay: Layout, offsets: Sequence[int], rows: Sequence[tuple[CellValue, Values]]) -> list[RangeUpdate]:
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
                               [_span(block, {"phase": phase}, "phase", "phase") for phase, _ in chunk]))
        out.append(RangeUpdate(f"{sheet}!{block.letter('outcome')}{r1}:{block.letter('result')}{r2}",
                               [_span(block, results, "outcome", "result") for _, results in chunk]))
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
    _keys, plan = _plan(block)
    prefix, row = f"{quote_sheet(block.sheet)}!", block.first_row + offset
    out = []
    for key, v in (("roll", value), ("roll_source", source)):  # each cell encoded alone (issue 12)
        j = block.index(key)
        out.append(RangeUpdate(f"{prefix}{block.letter(key)}{row}", [_encoded(plan[j:j + 1], {key: v})]))
    return out


def order_stamp_updates(lay: Layout, rows: Sequence[int], events: Sequence[Event],
                        texts: Sequence[str] | None = None) -> list[RangeUpdate]:
    """Stamp each resolved Orders row with its phase, outcome, damage and result (one block
    per run of consecutive rows).  A task die sheetsync rolled goes into the row's Roll
    cell, marked "Rolled" in the hidden Roll source column, so every die shows in its own
    cell and a conditional format tells it from a typed one (R25).  ``texts``: each
    event's :func:`result_text`, when the caller has them already."""
    if texts is None:
        texts = [result_text(e) for e in events]
    stamps = [(e.phase, {"outcome": e.outcome, "damage": e.damage, "result": t})
              for e, t in zip(events, texts, strict=True)]
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
    out = _stamp(lay, ordered, [(None, {}) for _ in ordered])
    for i in sorted(rolled):
        out += _roll_cells(lay, i, None, None)
    return out


def log_row(lay: Layout, row: Values | Sequence[CellValue]) -> dict[str, Any]:
    """A Log row keyed by column.  A positional row (Phase, Order, Cohort, Task, Target,
    Outcome, Damage, Rolls, Rule, Details, as the use cases still pass their own) is
    keyed here, in this one place; a row with more cells than the Log's columns is an error."""
    if isinstance(row, Mapping):
        return dict(row)
    keys = [c.key for c in lay.block("Log_Table").columns]
    if len(row) > len(keys):
        raise ValueError(f"a Log row has {len(keys)} columns, not {len(row)}")
    return dict(zip(keys, row, strict=False))


def log_updates(lay: Layout, rows: Sequence[Values | Sequence[CellValue]], *, step: str) -> list[RangeUpdate]:
    """Append rows to the Log, each carrying ``step`` (``rev:id:action:phase``) and its
    number in the step (``:1``, ``:2`` ...) in its Step column.  A row is keyed by column
    (:func:`event_row`); a positional one is keyed by :func:`log_row`.

    The rows are appended (:attr:`RangeUpdate.append`): the backend puts them after the
    Log's last row when it writes, so two steps run at the same moment both keep their rows,
    and the next step can tell from the Step column which of them the State kept.  The Log
    is never rewritten."""
    if not rows:
        return []
    block = lay.block("Log_Table")
    keyed = [{**log_row(lay, row), "step": f"{step}:{k}"} for k, row in enumerate(rows, start=1)]
    return [RangeUpdate(block.range(), _pad(keyed, block, len(keyed)), append=True)]


def phase_log_rows(result: PhaseResult, texts: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The Log rows of a resolved phase: its orders, then the end-of-phase checks
    (``texts``: each event's :func:`result_text`, when the caller has them already)."""
    rows = [event_row(e, None if texts is None else texts[k]) for k, e in enumerate(result.events)]
    for f in result.end_of_phase:
        rows.append({"phase": result.phase, "cohort": f.cohort, "task": "End of phase", "outcome": f.kind,
                     "damage": 0, "rolls": "", "rule": f.rule_ref, "details": f.text})
    return rows


def aftermath_updates(lay: Layout, entries: list[AftermathEntry]) -> RangeUpdate:
    rows: list[Values] = []
    for e in entries:
        lasting = (f"{e.lasting_effect.band}+ band, d10={e.lasting_effect.roll}"
                   f"{'' if e.lasting_effect.source == 'entered' else '*'}: {e.lasting_effect.result}") if e.lasting_effect else None
        row: dict[str, Any] = {"cohort": e.cohort, "name": e.name, "dead": e.dead,
                               "lasting": "Dead: removed from play (R30)" if e.dead else lasting}
        if not e.dead:  # R30: a dead character's other cells stay blank
            row.update(damage=e.damage, aggravated=e.aggravated, lethal=e.lethal, aegis=e.aegis, torpor=e.torpor,
                       temper_returned=e.temper_returned)
        rows.append(row)
    return _block(lay.block("Aftermath_Table"), rows)


def _shown(value: Any) -> Any:
    """A House Rules value as the sheet shows it: a switch as Yes or No (R11)."""
    return ("Yes" if value else "No") if isinstance(value, bool) else value


def house_rules_values(rules: HouseRules | None = None) -> list[dict[str, Any]]:
    """The House Rules rows keyed by column: each rule's key, its value in ``rules`` (the
    default when none), its default and its ruling (RULINGS-bbn.md)."""
    rows: list[dict[str, Any]] = []
    for key, (text, default, _choices) in HouseRules.describe().items():
        value = default if rules is None else getattr(rules, key)
        rows.append({"key": key, "value": _shown(value), "default": _shown(default), "ruling": text})
    return rows


def house_rules_rows() -> list[list[CellValue]]:
    """The House Rules rows with the defaults, as cells over the block's columns (the
    template writes them cell by cell)."""
    block = layout().block("HouseRules_Table")
    return [_cells(block, row) for row in house_rules_values()]


def lists_updates(lay: Layout) -> RangeUpdate:
    block = lay.block("Lists_Table")
    longest = max(len(v) for v in LISTS.values())
    rows = [_cells(block, {k: v[i] for k, v in LISTS.items() if i < len(v)}) for i in range(longest)]
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
    """The input blocks (Characters, Cohorts Setup, Ranges, Orders, House Rules) of a
    battle, each cell written by its column's codec, so the reader reads back the battle
    (R5, R6, R12: a trait with no column of its own goes into Other Traits)."""
    chars = lay.block("Characters_Table")
    rows: list[Values] = []
    for spec in battle.cohorts:
        for m in spec.members:
            row: dict[str, Any] = {
                "cohort": spec.name, "name": m.name, "temper": m.temper or None,
                "willpower_spent": m.willpower_spent or None, "ranged_attack": m.ranged_attack or None,
                "blood_magic_in_clan": m.blood_magic_in_clan or None, "movement_discipline": m.movement_discipline,
                "health_levels": m.health_levels,
            }
            other: list[tuple[str, int] | str] = []
            for a, v in m.abilities.items():
                if a in lay.ability_columns:
                    row["ability:" + a] = v
                else:
                    other.append((a, v))
            for d, v in m.disciplines.items():
                if d in lay.discipline_columns:
                    row["discipline:" + d] = v
                else:
                    other.append((d, v))
            for x in m.merits:
                if x in lay.merit_columns:
                    row["merit:" + x] = True
                else:
                    other.append(x)
            paths: list[tuple[str, int]] = []
            for name, entry in m.blood_magic_paths.items():
                offensive = entry.offensive if entry.offensive is not None else battle.catalog.is_offensive_path(name)
                if offensive:
                    paths.append((name, entry.level))
                elif name in lay.discipline_columns:
                    row["discipline:" + name] = entry.level
                else:
                    other.append((name, entry.level))
            row["offensive_paths"] = paths
            row["combinations"] = [(c.name, c.includes) for c in m.combination_disciplines]
            row["other_traits"] = other
            row["aegis"] = spec.aegis.get(m.name)
            row["lasting_roll"] = spec.lasting_rolls.get(m.name)
            rows.append(row)
    setup = lay.block("Cohorts_Setup")
    srows: list[Values] = []
    for spec in battle.cohorts:
        srow: dict[str, Any] = {"name": spec.name, "side": spec.side, "support": spec.support,
                                "sergeant": spec.sergeant, "tracker": spec.tracker, "reporter": spec.reporter}
        for pool, value in (spec.pools or {}).items():  # R1: a pool set by hand
            srow["set:" + pool.value] = value
        srows.append(srow)
    ranges_block = lay.block("Ranges_Table")
    ranges = [{"a": r.a, "b": r.b, "band": r.band.value} for r in battle.ranges]
    orders_block = lay.block("Orders_Table")
    orows: list[list[CellValue]] = []
    for o in battle.orders:
        orow: dict[str, Any] = {key: getattr(o, key) for key in
                                ("cohort", "target", "member", "ally", "free_task", "text", "temper", "roll", "picks")}
        for key in ("task", "moment", "pool", "benefit"):
            v = getattr(o, key)
            orow[key] = v.value if v is not None else None
        orow["reroll"] = o.reroll if o.reroll is not None else (True if o.use_reroll else None)  # R25
        orow["odds"] = odds_formula(lay, orders_block.first_row + len(orows))
        orows.append(_cells(orders_block, orow))
    house = lay.block("HouseRules_Table")
    out = [
        RangeUpdate(chars.range(), _pad(rows, chars)),
        RangeUpdate(setup.range(), _pad(srows, setup)),
        RangeUpdate(ranges_block.range(), _pad(ranges, ranges_block)),
        RangeUpdate(house.range(), [_cells(house, row) for row in house_rules_values(battle.house_rules)]),
    ]
    if orows:
        out.append(RangeUpdate(orders_block.range(rows=len(orows)), orows))
    return out
