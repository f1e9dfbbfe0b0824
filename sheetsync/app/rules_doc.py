"""``sheetsync rules``: the rules reference (docs/rules/bbn.md) in the terminal, readable at
80 columns: the house-rule keys with their defaults, every ruling, and the rule sections."""

from __future__ import annotations

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from sheetsync.rules.bbn.reference import RULINGS, SECTIONS, Ruling, house_rule_rows, rulings_for

__all__ = ["SYSTEMS", "print_rules", "rules_renderables"]

SYSTEMS = {"bbn": "Baltimore by Night battalion combat"}
"""The rule systems sheetsync runs today (hexwar and exalted are not built yet)."""


def _ruling(r: Ruling, defaults: dict[str, str]) -> RenderableType:
    head = Text.assemble((r.ref, "bold cyan"), " ", (r.title, "bold"))
    where = Text(", ".join(r.sections), style="dim")
    if r.key:
        where.append("; house rule ", style="dim")
        where.append(r.key, style="green")
        where.append(f" = {defaults[r.key]}")
    return Group(head, Padding(where, (0, 0, 0, 4), expand=False), Padding(Text(r.text), (0, 0, 1, 4), expand=False))


def rules_renderables(ruling: Ruling | None = None) -> list[RenderableType]:
    """What :func:`print_rules` prints: everything, or one ruling."""
    rows = house_rule_rows()
    defaults = {key: default for key, default, *_ in rows}
    if ruling is not None:
        return [_ruling(ruling, defaults)]
    out: list[RenderableType] = [
        Text("Baltimore by Night battalion rules: how sheetsync reads them", style="bold"),
        Text("Also in docs/rules/bbn.md. A result's citation (\"Tasks 5.11.2, R16\") points here.", style="dim"),
        Text(""),
        Text("House rules (the House Rules sheet, or house_rules: in a battle file)", style="bold underline"),
    ]
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
    table.add_column("Key", style="green", no_wrap=True)
    table.add_column("Default", no_wrap=True)
    table.add_column("Ruling", no_wrap=True)
    table.add_column("Allowed")
    for key, default, allowed, ref, _what in rows:
        table.add_row(key, default, ref, allowed)
    out += [table, Text("Rulings", style="bold underline"), Text("")]
    out += [_ruling(r, defaults) for r in RULINGS]
    sections = Table(box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    sections.add_column("Section", no_wrap=True)
    sections.add_column("What it covers")
    sections.add_column("Rulings")
    for s in SECTIONS:
        refs = ", ".join(r.ref for r in rulings_for(s.ref))
        sections.add_row(s.ref, Text.assemble((s.title, "bold"), ": ", s.about), refs)
    out += [Text("Rule sections", style="bold underline"), sections]
    return out


def print_rules(console: Console, ruling: Ruling | None = None) -> None:
    """Print the reference, or one ruling, to ``console``."""
    for part in rules_renderables(ruling):
        console.print(part)
