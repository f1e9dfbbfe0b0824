"""Where the forecast (:mod:`sheetsync.app.forecast`) reads from and shows: a battle file,
a tracker workbook or a Google Sheet in; a rich table (with a progress bar), JSON, or a
Forecast sheet with a chart out.

Reading never writes: a battle file is only read, and a tracker is read through its
backend like ``sheetsync check`` reads it, pending orders included.  ``--write`` adds or
replaces the Forecast sheet and saves the workbook the way every workbook step does
(atomically, keeping ``.bak``, refused while the workbook is open elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["SHEET", "battle_of_backend", "print_forecast", "run_forecast", "write_forecast_sheet"]

SHEET = "Forecast"
"""The sheet ``--write`` adds to a tracker workbook (replacing an older one)."""


# -- reading ---------------------------------------------------------------------------------

def _bbn_pending(backend: Any) -> tuple[Any, list[str]]:
    """R13: a battalion tracker's stored battle with its pending Orders rows (those with
    no phase stamp), read as Resolve Phase reads them; and each order's cell."""
    from sheetsync.app import state_journal as sj
    from sheetsync.app.bbn.reader import Sheets, parse_turn, read_plan
    from sheetsync.app.usecases import tracker_layout
    from sheetsync.errors import BattleStateError

    lay = tracker_layout(backend)
    sh = Sheets.from_grids(backend.read_ranges(read_plan(lay)))
    stored = sj.parse_state(sh.state, sh.history).battle
    if stored is None:
        raise BattleStateError("this tracker has no cohorts yet: fill in Cohorts and Characters, then Build Cohorts")
    battle, rows = parse_turn(lay, sh, stored)
    block = lay.block("Orders_Table")
    return battle, [block.cell(i, "cohort") for i in rows]


def _hex_pending(backend: Any, capacity: dict[str, int] | None) -> tuple[Any, list[str]]:
    """H4, H7: a hex tracker's stored battle with its pending Moves and Attacks rows, read
    as Resolve Turn reads them (every bad cell at once); and each order's cell."""
    from sheetsync.app import hexwar_tracker as ht
    from sheetsync.errors import InputError, Problem
    from sheetsync.rules.hexwar.sheet import layout

    lay = layout(capacity or None)
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


def battle_of_backend(backend: Any) -> tuple[str, Any, list[str]]:
    """The tracker's system id, its battle with the pending orders, and each order's cell."""
    from sheetsync.app.steps import detect

    tracker = detect(backend)
    if tracker.system.id == "bbn":
        battle, places = _bbn_pending(backend)
    elif tracker.system.id == "hexwar":
        battle, places = _hex_pending(backend, tracker.capacity)
    else:
        from sheetsync.app.forecast_systems import adapter_for

        adapter_for(tracker.system.id)  # says which systems the forecast runs
        raise AssertionError("unreachable")
    return tracker.system.id, battle, places


def run_forecast(battle: Any, system_id: str, places: list[str] | None, *, runs: int, phases: int,
                 seed: int | None, workers: int | None, console: Console | None) -> dict[str, Any]:
    """The forecast, with a progress bar on ``console`` (none when ``None``, as for
    ``--json``); each order carries its place (cell or battle-file path)."""
    from sheetsync.app.forecast import forecast

    if console is None:
        data = forecast(battle, system_id, runs=runs, phases=phases, seed=seed, workers=workers)
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
    word = _step_word(data)
    console.print(f"[bold]Forecast of {source}[/bold], {word} {data['step']}: {data['runs']} simulated battles, "
                  f"up to {data['phases']} {word}s, seed {data['seed']}. Brackets: 95% confidence interval.",
                  highlight=False)
    nxt, end = data["next_step"], data["to_the_end"]
    t = Table(title=f"The next {word}, as declared: each order's chance to succeed", title_justify="left")
    for col in ("Order", "Who", "Task", "Against", "Exact", "Simulated", "Refused"):
        t.add_column(col, justify="right" if col in ("Exact", "Simulated", "Refused") else "left")
    for o in nxt["orders"]:
        exact = f"{100 * o['exact']['p']:.1f}%" if o["exact"] else "-"
        refused = _pct(o["refused"]) if o["refused"]["count"] else "-"
        t.add_row(o["where"], o["actor"], o["task"], o["target"], exact, _pct(o["success"]), refused)
    console.print(t)
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
    for s in end["sides"]:
        label = {"(draw)": "Draw (both sides out together)",
                 "(undecided)": f"Undecided after {data['phases']} {word}s"}.get(s["side"], f"{s['side']} wins")
        t.add_row(label, _pct(s["win"]))
    console.print(t)
    steps = end["steps"]
    spread = ", ".join(f"{n}: {100 * p:.0f}%" for n, p in steps["distribution"])
    console.print(f"{word.capitalize()}s fought: {_mean(steps)} on average ({spread})", highlight=False)
    lost = {"bbn": "Health lost", "exalted": "Magnitude lost"}.get(data["system"], "casualties added, %")
    t = Table(title=f"Expected losses ({lost})",
              title_justify="left")
    for col in (ent, "Side", "Loss"):
        t.add_column(col, justify="right" if col == "Loss" else "left")
    for e in end["entities"]:
        t.add_row(e["name"], e["side"], _mean(e["loss"]))
    console.print(t)
    _members_table(console, data, end["members"], "At the end: each member's chance")


def _members_table(console: Console, data: dict[str, Any], members: list[dict[str, Any]], title: str) -> None:
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

def _fill_sheet(ws: Any, data: dict[str, Any], source: str) -> None:
    """Plain values (no formulas), a header per table, and a bar chart of each outcome's
    chance beside the battle-to-its-end table."""
    from openpyxl.chart import BarChart, Reference
    from openpyxl.styles import Font

    bold = Font(bold=True)
    word = _step_word(data)
    ws["A1"] = f"Forecast of {source}, {word} {data['step']}"
    ws["A1"].font = Font(bold=True, size=14)
    ws["A2"] = (f"{data['runs']} simulated battles, up to {data['phases']} {word}s, seed {data['seed']}; "
                "Low and High are the 95% confidence interval. Written by sheetsync forecast --write.")
    row = 4

    def header(cols: list[str]) -> None:
        nonlocal row
        for j, c in enumerate(cols, start=1):
            ws.cell(row=row, column=j, value=c).font = bold
        row += 1

    def title(text: str) -> None:
        nonlocal row
        ws.cell(row=row, column=1, value=text).font = Font(bold=True, size=12)
        row += 1

    title("The battle to its end, under standing orders")
    header(["Outcome", "Chance", "Low", "High"])
    first = row
    for s in data["to_the_end"]["sides"]:
        label = {"(draw)": "Draw", "(undecided)": "Undecided"}.get(s["side"], f"{s['side']} wins")
        for j, v in enumerate((label, s["win"]["p"], s["win"]["low"], s["win"]["high"]), start=1):
            ws.cell(row=row, column=j, value=v)
        for j in (2, 3, 4):
            ws.cell(row=row, column=j).number_format = "0.0%"
        row += 1
    last = row - 1
    chart = BarChart()
    chart.type = "col"
    chart.title = "Chance of each outcome"
    chart.y_axis.title = "Chance"
    chart.y_axis.number_format = "0%"
    chart.y_axis.scaling.min = 0
    chart.y_axis.scaling.max = 1
    chart.add_data(Reference(ws, min_col=2, min_row=first - 1, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.legend = None
    chart.width, chart.height = 14, 7
    ws.add_chart(chart, "H4")
    row += 1
    steps = data["to_the_end"]["steps"]
    title(f"{word.capitalize()}s fought: mean {steps['mean']} (95% {steps['low']} to {steps['high']})")
    header([f"{word.capitalize()}s", "Chance"])
    for n, p in steps["distribution"]:
        ws.cell(row=row, column=1, value=n)
        ws.cell(row=row, column=2, value=p).number_format = "0.0%"
        row += 1
    row += 1
    title("Expected losses" + (" (Health lost)" if data["system"] == "bbn" else " (casualties added, %)"))
    header([data["entity"].capitalize(), "Side", "Mean", "Low", "High"])
    for e in data["to_the_end"]["entities"]:
        for j, v in enumerate((e["name"], e["side"], e["loss"]["mean"], e["loss"]["low"], e["loss"]["high"]), start=1):
            ws.cell(row=row, column=j, value=v)
        row += 1
    row += 1
    for key, caption in (("to_the_end", "At the end: each member's chance"),
                         ("next_step", f"After the next {word}: each member's chance")):
        members = data[key]["members"]
        flags = [k for k in (members[0] if members else {}) if k not in ("entity", "name")]
        title(caption)
        header([data["entity"].capitalize(), "Member", *[f"{f} {x}" for f in flags for x in ("", "low", "high")]])
        for m in members:
            values: list[Any] = [m["entity"], m["name"]]
            for f in flags:
                values += [m[f]["p"], m[f]["low"], m[f]["high"]]
            for j, v in enumerate(values, start=1):
                c = ws.cell(row=row, column=j, value=v)
                if j > 2:
                    c.number_format = "0.0%"
            row += 1
        row += 1
    title(f"The next {word}, as declared: each order's chance to succeed")
    header(["Order", "Who", "Task", "Against", "Exact", "Simulated", "Low", "High", "Refused"])
    for o in data["next_step"]["orders"]:
        values = [o["where"], o["actor"], o["task"], o["target"], o["exact"]["p"] if o["exact"] else None,
                  o["success"]["p"], o["success"]["low"], o["success"]["high"], o["refused"]["p"]]
        for j, v in enumerate(values, start=1):
            c = ws.cell(row=row, column=j, value=v)
            if j > 4:
                c.number_format = "0.0%"
        row += 1
    row += 1
    title(f"After the next {word}: {data['level']}")
    header([data["entity"].capitalize(), "Side", "Now", "Mean", "Low", "High", "Exact mean"])
    for e in data["next_step"]["entities"]:
        values = [e["name"], e["side"], e["now"], e["after"]["mean"], e["after"]["low"], e["after"]["high"],
                  e["exact"]["mean"] if e.get("exact") else None]
        for j, v in enumerate(values, start=1):
            ws.cell(row=row, column=j, value=v)
        row += 1
    for col, width in zip("ABCDEFG", (30, 16, 16, 16, 12, 12, 12), strict=True):
        ws.column_dimensions[col].width = width


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


def workbook_forecast(path: Path, *, runs: int, phases: int, seed: int | None, workers: int | None,
                      write: bool, console: Console | None) -> dict[str, Any]:
    """The forecast of a tracker workbook.  The read holds the workbook's step lock as a
    step does; the simulation does not, so a long forecast never holds up a Resolve.  With
    ``write`` the Forecast sheet is saved under the lock again, and refused when the
    workbook was saved meanwhile (its forecast would be of an older battle)."""
    from sheetsync.app.files import target_of
    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.errors import BattleStateError

    def stamp() -> tuple[int, int]:
        st = target_of(path).stat()
        return st.st_mtime_ns, st.st_size

    backend = excel_backend(path)
    with backend.locked():  # read as a step reads; the simulation runs without holding the lock
        system_id, battle, places = battle_of_backend(backend)
        read_at = stamp()
    data = run_forecast(battle, system_id, places, runs=runs, phases=phases, seed=seed, workers=workers,
                        console=console)
    if write:
        backend = excel_backend(path)
        with backend.locked():
            if stamp() != read_at:
                raise BattleStateError(f"{path.name} changed while the forecast ran (a step was saved meanwhile), "
                                       "so its forecast would be of an older battle; nothing was written. Run "
                                       "the forecast again")
            write_forecast_sheet(backend, data, path.name)
    return data
