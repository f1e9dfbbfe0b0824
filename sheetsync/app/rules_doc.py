"""``sheetsync rules``: a rule system's reference (docs/rules/<system>.md) in the terminal,
readable at 80 columns: the house-rule keys with their defaults, every ruling, and the rule
sections.  One renderer serves every system; each system's data lives in its
``rules/<system>/reference.py``."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from sheetsync.core.reference import HouseRule, Reference, Ruling, Section

__all__ = ["SYSTEMS", "print_rules", "reference", "rules_renderables"]

SYSTEMS = {
    "bbn": "Baltimore by Night battalion combat",
    "hexwar": "the hex wargame",
    "exalted": "Exalted 2e mass combat",
}
"""The rule systems whose reference ``sheetsync rules --system`` prints."""


def _bbn() -> Reference:
    """The battalion reference in the common shape (its data stays in rules/bbn/reference.py,
    where the house-rule rows come from the model)."""
    from sheetsync.core.registry import room

    bbn = room("bbn", "reference")

    return Reference(
        "bbn", "Baltimore by Night battalion rules",
        tuple(Ruling(r.ref, r.title, r.sections, r.text, (r.key,) if r.key else ()) for r in bbn.RULINGS),
        tuple(Section(s.ref, s.title, s.about) for s in bbn.SECTIONS),
        tuple(HouseRule(*row) for row in bbn.house_rule_rows()),
        cite_example="Tasks 5.11.2, R16")


def reference(system: str) -> Reference:
    """The reference of ``system`` (an id of :data:`SYSTEMS`)."""
    if system == "bbn":
        return _bbn()
    if system in ("hexwar", "exalted"):
        from sheetsync.core.registry import room

        found: Reference = room(system, "reference").REFERENCE
        return found
    raise KeyError(system)


def _ruling(ref: Reference, r: Ruling) -> RenderableType:
    head = Text.assemble((r.ref, "bold cyan"), " ", (r.title, "bold"))
    where = Text(", ".join(r.sections), style="dim")
    for i, key in enumerate(r.keys):
        where.append(("; house rules " if len(r.keys) > 1 else "; house rule ") if i == 0 else ", ", style="dim")
        where.append(key, style="green")
        where.append(f" = {ref.default_of(key)}")
    return Group(head, Padding(where, (0, 0, 0, 4), expand=False), Padding(Text(r.text), (0, 0, 1, 4), expand=False))


def rules_renderables(ruling: Any = None, system: str = "bbn") -> list[RenderableType]:
    """What :func:`print_rules` prints: everything, or one ruling (anything with the ``ref``
    of one of the system's rulings)."""
    ref = reference(system)
    if ruling is not None:
        found = ref.find(ruling.ref)
        if found is None:
            raise KeyError(ruling.ref)
        return [_ruling(ref, found)]
    out: list[RenderableType] = [
        Text(f"{ref.title}: how sheetsync reads them", style="bold"),
        Text(f"Also in {ref.doc}. A result's citation (\"{ref.cite_example}\") points here.", style="dim"),
        Text(""),
    ]
    if ref.house_rules:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
        table.add_column("Key", style="green", no_wrap=True)
        table.add_column("Default", no_wrap=True)
        table.add_column("Ruling", no_wrap=True)
        table.add_column("Allowed")
        for h in ref.house_rules:
            table.add_row(h.key, h.default, h.ruling, h.allowed)
        out += [Text("House rules (the House Rules sheet, or house_rules: in a battle file)",
                     style="bold underline"), table]
    out += [Text("Rulings", style="bold underline"), Text("")]
    out += [_ruling(ref, r) for r in ref.rulings]
    sections = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=True)
    sections.add_column("Section", ratio=2)
    sections.add_column("What it covers", ratio=5)
    sections.add_column("Rulings", ratio=2)
    for s in ref.sections:
        refs = ", ".join(r.ref for r in ref.rulings_for(s.ref))
        covers = Text(s.about) if s.title == s.ref else Text.assemble((s.title, "bold"), ": ", s.about)
        sections.add_row(s.ref, covers, refs)
    out += [Text("Rule sections", style="bold underline"), sections]
    return out


def print_rules(console: Console, ruling: Any = None, system: str = "bbn") -> None:
    """Print ``system``'s reference, or one ruling, to ``console``."""
    for part in rules_renderables(ruling, system):
        console.print(part)
