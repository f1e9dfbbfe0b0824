"""Readable terminal output for the hex wargame: a turn's moves and engagements, each
unit's standing and effective values, and the report (H12).  Names never wrap; every
result says its rule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["casualty_bar", "print_aftermath", "print_report", "print_step", "print_turn", "print_units", "print_values"]

OUTCOME_STYLE = {"moved": "green", "hit": "bold green", "miss": "yellow", "refused": "bold red"}
WIDE = 120


def _table(console: Console, title: str) -> Table:
    if console.width < WIDE:
        return Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    return Table(title=title, header_style="bold")


def _names(table: Table, header: str, names: Iterable[str]) -> None:
    width = max([len(header), *(len(n) for n in names)])
    table.add_column(header, no_wrap=True, min_width=width)


def casualty_bar(casualties: int, width: int = 10) -> Text:
    """``██████░░░░ 60%``: casualties as a bar (100% and more is a full red bar)."""
    shown = max(0, min(casualties, 100))
    full = round(width * shown / 100)
    style = "red" if casualties >= 100 else ("yellow" if casualties >= 50 else "green")
    return Text("█" * full, style=style) + Text("░" * (width - full), style="dim") + Text(f" {casualties}%")


def _outcome(value: str) -> Text:
    return Text(value, style=OUTCOME_STYLE.get(value, ""))


def print_turn(console: Console, data: dict[str, Any]) -> None:
    """A resolved turn (``resolve --json``'s data): moves, then engagements, then units."""
    events = data.get("events", [])
    moves = [e for e in events if e.get("kind") == "move"]
    attacks = [e for e in events if e.get("kind") == "attack"]
    head = f"Turn {data.get('turn')}"
    if data.get("initiative"):
        head += f": {data['initiative']} has the initiative (H3) and moves second"
    console.print(Text(head, style="bold"))
    if moves:
        t = _table(console, "Moves (H4, H5)")
        _names(t, "Unit", (m["unit"] for m in moves))
        for col in ("From", "To", "Outcome", "Charge", "Why / rule"):
            t.add_column(col, no_wrap=col != "Why / rule", overflow="fold")
        for m in moves:
            why = m.get("reason") or ""
            t.add_row(m["unit"], m["from"], m["to"], _outcome(m["outcome"]), "yes" if m.get("charge") else "",
                      f"{why} ({m['rule_ref']})" if why else m["rule_ref"])
        console.print(t)
    if attacks:
        t = _table(console, "Engagements (6.2, H7-H9)")
        _names(t, "Defender", (a["defender"] for a in attacks))
        for col in ("S", "D", "Chance", "Roll", "Cas.", "Outcome"):
            t.add_column(col, justify="left" if col == "Outcome" else "right", no_wrap=True)
        for a in attacks:
            roll = "" if a.get("roll") is None else f"{a['roll']}{'*' if a.get('roll_source') == 'entered' else ''}"
            chance = "" if a.get("chance") is None else f"{a['chance']}%"
            cas = (f"{a['casualties']}%" + ("†" if a.get("destroyed") else "")) if a.get("casualties") else ""
            t.add_row(a["defender"], str(a.get("strength") or ""), str(a.get("defense") or ""), chance, roll, cas,
                      _outcome(a["outcome"]))
        console.print(t)
        for a in attacks:
            parts = [f"{c['unit']} {c['value']} at {c['distance']} hex{'es' if c['distance'] != 1 else ''}"
                     + (", charging" if c.get("charge") else "") for c in a.get("contributions", [])]
            joined = "; ".join(parts) or ", ".join(a["attackers"])
            tail = f" refused: {a['reason']}" if a["outcome"] == "refused" and a.get("reason") else ""
            console.print(Text(f"  {a['defender']} ← {joined}.{tail} ({a['rule_ref']})", style="dim"))
        console.print(Text("  * typed roll   † destroyed at the end of combat (H9)", style="dim"))
    if not events:
        console.print("No moves or attacks were typed for this turn.")
    print_units(console, data.get("units", []))


def print_units(console: Console, units: list[dict[str, Any]]) -> None:
    """Each unit's side, hex and casualties as a bar."""
    t = _table(console, "Units")
    _names(t, "Unit", (u["name"] for u in units))
    t.add_column("Side", no_wrap=True)
    t.add_column("Hex", no_wrap=True)
    t.add_column("Casualties (6.2.1)", no_wrap=True)
    for u in units:
        t.add_row(u["name"], u["side"], "—" if u.get("destroyed") else u["hex"], casualty_bar(u["casualties"])
                  + (Text(" destroyed", style="bold red") if u.get("destroyed") else Text("")))
    console.print(t)


def print_values(console: Console, data: dict[str, Any]) -> None:
    """``pools`` for the hex wargame: each unit's values after its casualties (H10, H6)."""
    units = data.get("units", [])
    t = _table(console, "Effective values (6.2.2, H10; reach H6)")
    _names(t, "Unit", (u["name"] for u in units))
    _names(t, "Side", (u["side"] for u in units))
    narrow = console.width < WIDE  # the counter as typed, only when there is room: A D M R say it
    if not narrow:
        t.add_column("Counter", no_wrap=True)
    for col in ("Cas.", "A", "D", "M"):
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column("R", justify="right", no_wrap=True, min_width=5)
    t.add_column("Reach", justify="right", no_wrap=True)
    for u in units:
        charge = str(u.get("charge") or "")
        rng = str(u["range"]) + {"reduced": f"({u.get('reduced_attack')})", "extended": "(--)"}.get(u["range_kind"], "")
        cells = [u["name"], u["side"], *([] if narrow else [u["counter"]]), f"{u['casualties']}%",
                 f"{u['attack']}{charge}", str(u["defense"]), str(u["movement"]), rng, str(u["reach"])]
        t.add_row(*cells)
    console.print(t)


def print_report(console: Console, data: dict[str, Any]) -> None:
    """The report (H12): each unit's casualties, men lost and what destroyed it; side totals."""
    units = data.get("units", [])
    n = int(data.get("turns", 0))
    t = _table(console, f"Report after {n} turn{'' if n == 1 else 's'} (H12)")
    _names(t, "Unit", (u["name"] for u in units))
    t.add_column("Side", no_wrap=True)
    t.add_column("Casualties", no_wrap=True)
    t.add_column("Men lost", justify="right", no_wrap=True)
    t.add_column("Destroyed by", overflow="fold")
    for u in units:
        by = ", ".join(u.get("destroyed_by") or ()) if u.get("destroyed") else ""
        if by and u.get("destroyed_turn"):
            by += f" (turn {u['destroyed_turn']})"
        t.add_row(u["name"], u["side"], casualty_bar(u["casualties"]), f"{u['losses']} of {round(u['size'] * u['men'])}", by)
    console.print(t)
    s = _table(console, "Sides")
    _names(s, "Side", (x["side"] for x in data.get("sides", [])))
    for col in ("Units", "Destroyed", "Men", "Lost"):
        s.add_column(col, justify="right", no_wrap=True)
    for x in data.get("sides", []):
        s.add_row(x["side"], str(x["units"]), str(x["destroyed"]), str(x["men"]), str(x["losses"]))
    console.print(s)
    if data.get("over"):
        console.print(Text(f"The battle is over: only {data['survivor']} has units left (H12)." if data.get("survivor")
                           else "The battle is over: no side has units left (H12).", style="bold"))


def print_step(console: Console, data: dict[str, Any], result: Any = None) -> None:
    """A resolved step as every system's views print it (``data``, its JSON; ``result``, the
    engine's result): here the turn, :func:`print_turn`."""
    print_turn(console, data)


print_aftermath = print_report
"""The aftermath under the name every system's views give it: the report (H12)."""
