"""Where the forecast (:mod:`sheetsync.app.forecast`) reads from and shows: a battle file,
a tracker workbook or a Google Sheet in (battalion, hex wargame or Exalted); a rich table
(with a progress bar), JSON, or a Forecast sheet with a chart out.

Reading never writes: a battle file is only read, and a tracker is read through its
backend as its next step would read it, pending orders included.  ``--write`` adds or
replaces the Forecast sheet: a workbook is saved the way every workbook step does
(atomically, keeping ``.bak``, refused while the workbook is open elsewhere); a Google
Sheet (``sheetsync gsheet forecast --write``) gets the sheet, its cells and a column chart
in one atomic ``batchUpdate``.  Either is refused when the tracker changed while the
forecast ran.  The sheet is laid out once, as data (:func:`forecast_sheet`), and drawn by
both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich draws the terminal's tables, and is optional on the workbook path (issue 25)
    from rich.console import Console

__all__ = ["SHEET", "ForecastSheet", "SheetCell", "battle_of_backend", "forecast_sheet", "gsheet_forecast",
           "gsheet_requests", "print_forecast", "run_forecast", "workbook_forecast", "write_forecast_sheet"]

SHEET = "Forecast"
"""The sheet ``--write`` adds to a tracker workbook (replacing an older one)."""


# -- reading ---------------------------------------------------------------------------------

def _bbn_pending(backend: Any) -> tuple[Any, list[str]]:
    """R13: a battalion tracker's stored battle with its pending Orders rows (those with
    no phase stamp), read as Resolve Phase reads them; and each order's cell."""
    from sheetsync.app.usecases import tracker_layout
    from sheetsync.core.errors import BattleStateError
    from sheetsync.core.registry import room

    sj = room("bbn", "tracker.journal")
    reader = room("bbn", "tracker.reader")
    lay = tracker_layout(backend)
    sh = reader.Sheets.from_grids(backend.read_ranges(reader.read_plan(lay)))
    stored = sj.parse_state(sh.state, sh.history).battle
    if stored is None:
        raise BattleStateError("this tracker has no cohorts yet: fill in Cohorts and Characters, then Build Cohorts")
    battle, rows = reader.parse_turn(lay, sh, stored)
    block = lay.block("Orders_Table")
    return battle, [block.cell(i, "cohort") for i in rows]


def _hex_pending(backend: Any, capacity: dict[str, int] | None) -> tuple[Any, list[str]]:
    """H4, H7: a hex tracker's stored battle with its pending Moves and Attacks rows, read
    as Resolve Turn reads them (every bad cell at once); and each order's cell."""
    from sheetsync.core.errors import InputError, Problem
    from sheetsync.core.registry import room

    ht = room("hexwar", "tracker.steps")
    lay = room("hexwar", "tracker.layout").layout(capacity or None)
    rd = ht._parse(lay, backend.read_ranges(ht._plan(lay)))
    stored = ht._stored(rd)
    problems: list[Problem] = []
    where: dict[str, str] = {"units": f"Units!A{lay.block('Units_Table').first_row}"}
    pending = ht._pending(rd, problems, where)
    data = dict(rd.session.battle or {})
    data["house_rules"] = ht._house_rules(rd, problems, where)
    data["turn"] = ht._turn_data(rd, stored.turn, pending, where, problems)
    if problems:
        raise InputError(problems)
    battle = ht._load(data, problems, where)
    places = [where.get(f"turn.moves[{i}]", f"turn.moves[{i}]") for i in range(len(battle.orders.moves))]
    places += [where.get(f"turn.attacks[{i}]", f"turn.attacks[{i}]") for i in range(len(battle.orders.attacks))]
    return battle, places


def _exalted_pending(backend: Any, capacity: dict[str, int] | None) -> tuple[Any, list[str]]:
    """E5, X17-X39: an Exalted tracker's stored battle (with its undo records, so E1's
    dice go on as Next Tick's would) and its pending Orders rows (Resolved blank), read as
    Next Tick reads them: every bad cell at once, a die typed wrong for its pool at its
    cell; and each order's cell."""
    from sheetsync.core.errors import BattleStateError, InputError, Problem
    from sheetsync.core.registry import room
    from sheetsync.sheets import table

    et = room("exalted", "tracker.steps")
    lay = room("exalted", "tracker.layout").layout(capacity or None)
    rd = et._parse(lay, backend.read_ranges(et._plan(lay)))
    et._stored(rd)  # a tracker with no units yet says so
    if rd.session.extra.get("ended"):
        raise BattleStateError("there is nothing to forecast: the battle has ended (End Battle wrote the "
                               "Aftermath); Undo Tick reopens it")
    problems: list[Problem] = []
    where: dict[str, str] = {"orders": f"Orders!A{lay.block('Orders_Table').first_row}"}
    orders = et._orders(rd, problems, where)
    data = dict(rd.session.battle or {})
    data["house_rules"] = et._house_rules(rd, problems, where)
    data["orders"] = [o for _, o in orders.pending]
    battle = et._load(data, problems, where).model_copy(update={"history": et._history(rd)})
    try:
        room("exalted", "rules.battle").resolve(battle)  # E1: a die typed wrong for its pool is named by its cell now, not in every run
    except InputError as err:
        raise InputError(table.relocate(err.problems, where)) from None
    return battle, [where.get(f"orders[{i}]", f"orders[{i}]") for i in range(len(battle.orders))]


def battle_of_backend(backend: Any) -> tuple[str, Any, list[str]]:
    """The tracker's system id, its battle with the pending orders, and each order's cell."""
    from sheetsync.sheets.marks import detect

    tracker = detect(backend)
    if tracker.system.id == "bbn":
        battle, places = _bbn_pending(backend)
    elif tracker.system.id == "hexwar":
        battle, places = _hex_pending(backend, tracker.capacity)
    elif tracker.system.id == "exalted":
        battle, places = _exalted_pending(backend, tracker.capacity)
    else:
        from sheetsync.app.forecast_systems import adapter_for

        adapter_for(tracker.system.id)  # says which systems the forecast runs
        raise AssertionError("unreachable")
    return tracker.system.id, battle, places


def run_forecast(battle: Any, system_id: str, places: list[str] | None, *, runs: int, phases: int,
                 seed: int | None, workers: int | None, console: Console | None,
                 progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The forecast, with a progress bar on ``console`` (none when ``None``, as for
    ``--json``; then ``progress``, when given, is told the runs each finished chunk adds);
    each order carries its place (cell or battle-file path)."""
    from sheetsync.app.forecast import forecast

    if console is None:
        data = forecast(battle, system_id, runs=runs, phases=phases, seed=seed, workers=workers, progress=progress)
    else:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as bar:
            task = bar.add_task("Simulating battles", total=max(1, runs))
            tick: Callable[[int], None] = lambda n: bar.advance(task, n)  # noqa: E731
            data = forecast(battle, system_id, runs=runs, phases=phases, seed=seed, workers=workers, progress=tick)
    for row in data["next_step"]["orders"]:
        i = row["order"]
        row["where"] = places[i] if places and i < len(places) else _default_place(system_id, battle, i)
    return data


def _default_place(system_id: str, battle: Any, i: int) -> str:
    if system_id == "hexwar":
        n = len(battle.orders.moves)
        return f"turn.moves[{i}]" if i < n else f"turn.attacks[{i - n}]"
    return f"orders[{i}]"


# -- the terminal ------------------------------------------------------------------------------

def _pct(x: dict[str, Any] | None) -> str:
    if x is None:
        return ""
    return f"{100 * x['p']:.1f}% [{100 * x['low']:.1f}, {100 * x['high']:.1f}]"


def _mean(x: dict[str, Any]) -> str:
    return f"{x['mean']:.1f} [{x['low']:.1f}, {x['high']:.1f}]"


def _step_word(data: dict[str, Any]) -> str:
    return {"hexwar": "turn", "exalted": "long tick"}.get(data["system"], "phase")


def print_forecast(console: Console, data: dict[str, Any], source: str) -> None:
    """The forecast as rich tables: the next step's orders, entities and members; then the
    battle to its end.  Simulated figures carry their 95% interval in brackets."""
    from rich.table import Table

    word = _step_word(data)
    console.print(f"[bold]Forecast of {source}[/bold], {word} {data['step']}: {data['runs']} simulated battles, "
                  f"up to {data['phases']} {word}s, seed {data['seed']}. Brackets: 95% confidence interval.",
                  highlight=False)
    nxt, end = data["next_step"], data["to_the_end"]
    _orders_table(console, nxt["orders"], f"The next {word}, as declared: each order's chance to succeed")
    ent = data["entity"].capitalize()
    t = Table(title=f"After the {word}: {data['level']}", title_justify="left")
    for col in (ent, "Side", "Now", "Expected after", "Exact", "Range", "Most likely"):
        t.add_column(col, justify="left" if col in (ent, "Side") else "right")
    for e in nxt["entities"]:
        dist = e["distribution"]
        likely = max(dist, key=lambda vp: vp[1])
        exact = f"{e['exact']['mean']:.1f}" if e.get("exact") else "-"
        t.add_row(e["name"], e["side"], str(e["now"]), _mean(e["after"]), exact, f"{dist[0][0]} to {dist[-1][0]}",
                  f"{likely[0]} ({100 * likely[1]:.0f}%)")
    console.print(t)
    _members_table(console, data, nxt["members"], f"After the {word}: each member's chance")
    t = Table(title=f"The battle to its end, under standing orders (at most {data['phases']} {word}s)",
              title_justify="left")
    t.add_column("Outcome")
    t.add_column("Chance", justify="right")
    for label, chance in _outcome_rows(data, word):
        t.add_row(label, _pct(chance))
    console.print(t)
    steps = end["steps"]
    spread = ", ".join(f"{n}: {100 * p:.0f}%" for n, p in steps["distribution"])
    console.print(f"{word.capitalize()}s fought, over every battle (decided or not): {_mean(steps)} on average "
                  f"({spread})", highlight=False)
    decided = steps.get("decided")
    if decided and decided["runs"] < data["runs"]:
        console.print(f"  the {decided['runs']} decided battles: {_mean(decided)} on average", highlight=False)
    t = Table(title=f"Expected losses ({_losses_caption(data['system'])})",
              title_justify="left")
    for col in (ent, "Side", "Loss"):
        t.add_column(col, justify="right" if col == "Loss" else "left")
    for e in end["entities"]:
        t.add_row(e["name"], e["side"], _mean(e["loss"]))
    console.print(t)
    _members_table(console, data, end["members"], "At the end: each member's chance")


def _outcome_rows(data: dict[str, Any], word: str) -> list[tuple[str, dict[str, Any]]]:
    """R37, H12, X34: each outcome's label and chance.  Issue 22: an undecided battle is
    either still fought after the last step or out of orders earlier; the label says
    which (both rows when both happened), so it never claims more steps than were fought."""
    end = data["to_the_end"]
    rows: list[tuple[str, dict[str, Any]]] = []
    for s in end["sides"]:
        if s["side"] == "(draw)":
            rows.append(("Draw (both sides out together)", s["win"]))
        elif s["side"] != "(undecided)":
            rows.append((f"{s['side']} wins", s["win"]))
            continue
        else:
            und = end.get("undecided")
            at_last = f"Undecided: still fighting after {data['phases']} {word}s"
            if not und or not und["no_order_left"]["count"]:
                rows.append((at_last, s["win"]))
                continue
            if und["at_last_step"]["count"]:
                rows.append((at_last, und["at_last_step"]))
            rows.append((f"Undecided: no order left, after {und['no_order_left_steps']['mean']:.1f} "
                         f"{word}s on average", und["no_order_left"]))
    return rows


def _short_place(where: str) -> str:
    """An order's place, short: a cell without its sheet (``B7``), a path's last part."""
    return where.rsplit("!", 1)[-1] if "!" in where else where.rsplit(".", 1)[-1]


def _orders_table(console: Console, orders: list[dict[str, Any]], title: str) -> None:
    """The next step's orders.  Issue 22: under 100 columns the Order column reads the
    order itself (who on one line, task and against on the next) and its place goes in a
    short At column (the cell without its sheet), so the odds columns stay whole at 80
    columns."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    narrow = console.width < 100
    cols = ("At", "Order", "Exact", "Simulated", "Refused") if narrow else \
        ("Order", "Who", "Task", "Against", "Exact", "Simulated", "Refused")
    for col in cols:
        right = col in ("Exact", "Simulated", "Refused")
        t.add_column(col, justify="right" if right else "left", no_wrap=right or col == "At")
    for o in orders:
        exact = f"{100 * o['exact']['p']:.1f}%" if o["exact"] else "-"
        refused = _pct(o["refused"]) if o["refused"]["count"] else "-"
        if narrow:
            what = f"{o['actor']}:\n{o['task']}" + (f" → {o['target']}" if o["target"] and o["task"] != "Hero Moment"
                                                     else f", {o['target']}" if o["target"] else "")
            t.add_row(_short_place(o["where"]), what, exact, _pct(o["success"]), refused)
        else:
            t.add_row(o["where"], o["actor"], o["task"], o["target"], exact, _pct(o["success"]), refused)
    console.print(t)


def _members_table(console: Console, data: dict[str, Any], members: list[dict[str, Any]], title: str) -> None:
    from rich.table import Table

    flags = [k for k in (members[0] if members else {}) if k not in ("entity", "name")]
    same = data["system"] != "bbn"
    title = title if not same else title.replace("member's", f"{data['entity']}'s")
    members = [m for m in members if any(m[f]["count"] for f in flags)]
    if not members:
        console.print(f"{title}: none in any simulated battle ({', '.join(flags)}).", highlight=False)
        return
    t = Table(title=title, title_justify="left")
    t.add_column(data["entity"].capitalize())
    if not same:
        t.add_column("Member")
    for f in flags:
        t.add_column(f, justify="right")
    for m in members:
        cells = [_pct(m[f]) if m[f]["count"] else "-" for f in flags]
        t.add_row(m["entity"], *cells) if same else t.add_row(m["entity"], m["name"], *cells)
    console.print(t)


# -- the Forecast sheet ------------------------------------------------------------------------

@dataclass(frozen=True)
class SheetCell:
    """One cell of the Forecast sheet (1-based ``row`` and ``col``) and its look:
    ``title``, ``heading``, ``bold``, ``pct`` (shown as 0.0%) or ``None``."""

    row: int
    col: int
    value: Any
    style: str | None = None


@dataclass(frozen=True)
class ForecastSheet:
    """The Forecast sheet as data, drawn by :func:`_fill_sheet` (openpyxl) and
    :func:`gsheet_requests` (Google Sheets): plain values, no formulas."""

    cells: tuple[SheetCell, ...]
    chart_header: int
    """The row of the battle-to-its-end table's header; its outcomes follow down to
    :attr:`chart_last` (the chart's categories in A, its values in B)."""
    chart_last: int
    widths: tuple[int, ...]
    """Columns A, B, ... widths, in characters."""

    @property
    def rows(self) -> int:
        return max((c.row for c in self.cells), default=1)

    @property
    def cols(self) -> int:
        return max((c.col for c in self.cells), default=1)


CHART_ANCHOR = (4, 8)
"""The chart's top-left cell (row, column): H4, beside the tables."""
CHART_TITLE = "Chance of each outcome"


def _losses_caption(system: str) -> str:
    return {"bbn": "Health lost", "exalted": "Magnitude lost"}.get(system, "casualties added, %")


def forecast_sheet(data: dict[str, Any], source: str) -> ForecastSheet:
    """R37, H12, X34: the forecast as the Forecast sheet's cells: a header per table, the
    battle to its end first (the chart's data), then the steps fought, the losses, each
    member's chances and the next step's orders and standing."""
    cells: list[SheetCell] = []
    word = _step_word(data)
    cells.append(SheetCell(1, 1, f"Forecast of {source}, {word} {data['step']}", "title"))
    cells.append(SheetCell(2, 1, f"{data['runs']} simulated battles, up to {data['phases']} {word}s, seed "
                                 f"{data['seed']}; Low and High are the 95% confidence interval. Written by "
                                 "sheetsync forecast --write."))
    row = 4

    def put(values: list[Any], *, pct_from: int | None = None, pct: tuple[int, ...] = (), style: str | None = None) -> None:
        nonlocal row
        for j, v in enumerate(values, start=1):
            look = style or ("pct" if (pct_from is not None and j >= pct_from) or j in pct else None)
            if v is not None or look in ("bold", "title", "heading"):
                cells.append(SheetCell(row, j, v, look))
        row += 1

    def title(text: str) -> None:
        put([text], style="heading")

    title("The battle to its end, under standing orders")
    chart_header = row
    put(["Outcome", "Chance", "Low", "High"], style="bold")
    for s in data["to_the_end"]["sides"]:
        label = {"(draw)": "Draw", "(undecided)": "Undecided"}.get(s["side"], f"{s['side']} wins")
        put([label, s["win"]["p"], s["win"]["low"], s["win"]["high"]], pct_from=2)
    chart_last = row - 1
    row += 1
    steps = data["to_the_end"]["steps"]
    title(f"{word.capitalize()}s fought, over every battle (decided or not): mean {steps['mean']} "
          f"(95% {steps['low']} to {steps['high']})")
    put([f"{word.capitalize()}s", "Chance"], style="bold")
    for n, p in steps["distribution"]:
        put([n, p], pct=(2,))
    row += 1
    title(f"Expected losses ({_losses_caption(data['system'])})")
    put([data["entity"].capitalize(), "Side", "Mean", "Low", "High"], style="bold")
    for e in data["to_the_end"]["entities"]:
        put([e["name"], e["side"], e["loss"]["mean"], e["loss"]["low"], e["loss"]["high"]])
    row += 1
    for key, caption in (("to_the_end", "At the end: each member's chance"),
                         ("next_step", f"After the next {word}: each member's chance")):
        members = data[key]["members"]
        flags = [k for k in (members[0] if members else {}) if k not in ("entity", "name")]
        title(caption)
        put([data["entity"].capitalize(), "Member", *[f"{f} {x}" for f in flags for x in ("", "low", "high")]],
            style="bold")
        for m in members:
            values: list[Any] = [m["entity"], m["name"]]
            for f in flags:
                values += [m[f]["p"], m[f]["low"], m[f]["high"]]
            put(values, pct_from=3)
        row += 1
    title(f"The next {word}, as declared: each order's chance to succeed")
    put(["Order", "Who", "Task", "Against", "Exact", "Simulated", "Low", "High", "Refused"], style="bold")
    for o in data["next_step"]["orders"]:
        put([o["where"], o["actor"], o["task"], o["target"], o["exact"]["p"] if o["exact"] else None,
             o["success"]["p"], o["success"]["low"], o["success"]["high"], o["refused"]["p"]], pct_from=5)
    row += 1
    title(f"After the next {word}: {data['level']}")
    put([data["entity"].capitalize(), "Side", "Now", "Mean", "Low", "High", "Exact mean"], style="bold")
    for e in data["next_step"]["entities"]:
        put([e["name"], e["side"], e["now"], e["after"]["mean"], e["after"]["low"], e["after"]["high"],
             e["exact"]["mean"] if e.get("exact") else None])
    return ForecastSheet(tuple(cells), chart_header, chart_last, (30, 16, 16, 16, 12, 12, 12))


def _fill_sheet(ws: Any, data: dict[str, Any], source: str) -> None:
    """The Forecast sheet's cells into an openpyxl sheet, with a bar chart of each
    outcome's chance beside the battle-to-its-end table."""
    from openpyxl.chart import BarChart, Reference
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    sheet = forecast_sheet(data, source)
    fonts = {"title": Font(bold=True, size=14), "heading": Font(bold=True, size=12), "bold": Font(bold=True)}
    for c in sheet.cells:
        cell = ws.cell(row=c.row, column=c.col, value=c.value)
        if c.style in fonts:
            cell.font = fonts[c.style]
        elif c.style == "pct":
            cell.number_format = "0.0%"
    chart = BarChart()
    chart.type = "col"
    chart.title = CHART_TITLE
    chart.y_axis.title = "Chance"
    chart.y_axis.number_format = "0%"
    chart.y_axis.scaling.min = 0
    chart.y_axis.scaling.max = 1
    chart.add_data(Reference(ws, min_col=2, min_row=sheet.chart_header, max_row=sheet.chart_last),
                   titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=sheet.chart_header + 1, max_row=sheet.chart_last))
    chart.legend = None
    chart.width, chart.height = 14, 7
    ws.add_chart(chart, f"{get_column_letter(CHART_ANCHOR[1])}{CHART_ANCHOR[0]}")
    for j, width in enumerate(sheet.widths, start=1):
        ws.column_dimensions[get_column_letter(j)].width = width


def write_forecast_sheet(backend: Any, data: dict[str, Any], source: str) -> None:
    """Add (or replace) the Forecast sheet in the tracker held by ``backend`` (an
    :class:`~sheetsync.backends.excel.ExcelBackend`, inside its ``locked()``) and save it
    the backend's way: atomically, the previous file kept as ``.bak``."""
    wb = backend.workbook
    if SHEET in wb.sheetnames:
        del wb[SHEET]
    ws = wb.create_sheet(SHEET)
    _fill_sheet(ws, data, source)
    backend.save()


# -- the Forecast sheet on Google Sheets -------------------------------------------------------

def _grid_range(sheet_id: int, row1: int, row2: int, col: int) -> dict[str, int]:
    """A GridRange of column ``col`` (1-based), rows ``row1`` to ``row2`` (1-based, inclusive)."""
    return {"sheetId": sheet_id, "startRowIndex": row1 - 1, "endRowIndex": row2, "startColumnIndex": col - 1,
            "endColumnIndex": col}


def gsheet_requests(sheet: ForecastSheet, sheet_id: int, *, replace: int | None = None) -> list[dict[str, Any]]:
    """The ``spreadsheets.batchUpdate`` requests that lay ``sheet`` as the Forecast sheet
    (id ``sheet_id``) of a Google Sheet, all in one atomic batch: the old Forecast sheet
    (id ``replace``) deleted, the new one added, its cells (values, bold headers, 0.0%
    chances), its column widths, and a column chart (``basicChart``, ``COLUMN``) of each
    outcome's chance, its categories and values the battle-to-its-end table's."""
    from sheetsync.backends.gsheets import cell_data

    requests: list[dict[str, Any]] = []
    if replace is not None:
        requests.append({"deleteSheet": {"sheetId": replace}})
    requests.append({"addSheet": {"properties": {
        "sheetId": sheet_id, "title": SHEET,
        "gridProperties": {"rowCount": max(100, sheet.rows + 10), "columnCount": max(26, sheet.cols + 2)}}}})
    grid: list[list[dict[str, Any]]] = [[{} for _ in range(sheet.cols)] for _ in range(sheet.rows)]
    formats: dict[str | None, dict[str, Any]] = {
        "title": {"textFormat": {"bold": True, "fontSize": 14}},
        "heading": {"textFormat": {"bold": True, "fontSize": 12}},
        "bold": {"textFormat": {"bold": True}},
        "pct": {"numberFormat": {"type": "PERCENT", "pattern": "0.0%"}},
    }
    for c in sheet.cells:
        cell = cell_data(c.value, f"{SHEET}!R{c.row}C{c.col}")
        if c.style in formats:
            cell["userEnteredFormat"] = formats[c.style]
        grid[c.row - 1][c.col - 1] = cell
    requests.append({"updateCells": {"start": {"sheetId": sheet_id, "rowIndex": 0, "columnIndex": 0},
                                     "rows": [{"values": r} for r in grid],
                                     "fields": "userEnteredValue,userEnteredFormat"}})
    for j, width in enumerate(sheet.widths):
        requests.append({"updateDimensionProperties": {
            "range": {"sheetId": sheet_id, "dimension": "COLUMNS", "startIndex": j, "endIndex": j + 1},
            "properties": {"pixelSize": width * 7}, "fields": "pixelSize"}})
    first, last = sheet.chart_header, sheet.chart_last
    requests.append({"addChart": {"chart": {
        "spec": {
            "title": CHART_TITLE,
            "basicChart": {
                "chartType": "COLUMN",
                "legendPosition": "NO_LEGEND",
                "axis": [{"position": "BOTTOM_AXIS", "title": "Outcome"},
                         {"position": "LEFT_AXIS", "title": "Chance"}],
                "domains": [{"domain": {"sourceRange": {"sources": [_grid_range(sheet_id, first, last, 1)]}}}],
                "series": [{"series": {"sourceRange": {"sources": [_grid_range(sheet_id, first, last, 2)]}},
                            "targetAxis": "LEFT_AXIS"}],
                "headerCount": 1,
            },
        },
        "position": {"overlayPosition": {
            "anchorCell": {"sheetId": sheet_id, "rowIndex": CHART_ANCHOR[0] - 1, "columnIndex": CHART_ANCHOR[1] - 1},
            "widthPixels": 560, "heightPixels": 280}},
    }}})
    return requests


class _Recording:
    """A backend that remembers what it read (to see, before writing, whether the tracker
    changed while the forecast ran)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.reads: list[tuple[list[str], list[Any]]] = []

    def read_ranges(self, ranges: Any) -> list[Any]:
        grids: list[Any] = self.inner.read_ranges(ranges)
        self.reads.append((list(ranges), grids))
        return grids

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def gsheet_forecast(backend: Any, name: str, *, runs: int, phases: int, seed: int | None, workers: int | None,
                    write: bool, console: Console | None) -> dict[str, Any]:
    """The forecast of a Google Sheet tracker, read as a step reads it.  With ``write``, the
    Forecast sheet (replacing an older one) and its chart go in ONE ``batchUpdate``, after
    the cells the forecast read are read again: when a step changed them meanwhile,
    nothing is written (the forecast would be of an older battle)."""
    from sheetsync.core.errors import BattleStateError

    reading = _Recording(backend)
    system_id, battle, places = battle_of_backend(reading)
    data = run_forecast(battle, system_id, places, runs=runs, phases=phases, seed=seed, workers=workers,
                        console=console)
    if write:
        ranges = [r for rs, _ in reading.reads for r in rs]
        before = [g for _, gs in reading.reads for g in gs]
        if backend.read_ranges(ranges) != before:
            raise BattleStateError(f"{name} changed while the forecast ran (a step was run meanwhile), so its "
                                   "forecast would be of an older battle; nothing was written. Run the forecast "
                                   "again")
        ids = backend.metadata()
        old = next((i for t, i in ids.items() if t.casefold() == SHEET.casefold()), None)
        new_id = max(ids.values(), default=0) + 1
        backend.spreadsheet_batch_update(gsheet_requests(forecast_sheet(data, name), new_id, replace=old))
    return data


def workbook_forecast(path: Path, *, runs: int, phases: int, seed: int | None, workers: int | None,
                      write: bool, console: Console | None,
                      progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The forecast of a tracker workbook.  The read holds the workbook's step lock as a
    step does; the simulation does not, so a long forecast never holds up a Resolve.  With
    ``write`` the Forecast sheet is saved under the lock again, and refused when the
    workbook was saved meanwhile (its forecast would be of an older battle)."""
    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.core.errors import BattleStateError
    from sheetsync.sheets.disk import target_of

    def stamp() -> tuple[int, int]:
        st = target_of(path).stat()
        return st.st_mtime_ns, st.st_size

    backend = excel_backend(path)
    with backend.locked():  # read as a step reads; the simulation runs without holding the lock
        system_id, battle, places = battle_of_backend(backend)
        read_at = stamp()
    data = run_forecast(battle, system_id, places, runs=runs, phases=phases, seed=seed, workers=workers,
                        console=console, progress=progress)
    if write:
        backend = excel_backend(path)
        with backend.locked():
            if stamp() != read_at:
                raise BattleStateError(f"{path.name} changed while the forecast ran (a step was saved meanwhile), "
                                       "so its forecast would be of an older battle; nothing was written. Run "
                                       "the forecast again")
            write_forecast_sheet(backend, data, path.name)
    return data
