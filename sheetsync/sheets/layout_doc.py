"""``docs/LAYOUT-<system>.md``: every sheet, named cell, block and column of a tracker whose
layout is data (:class:`~sheetsync.core.layout.Layout`), and what each holds, generated from
the layout itself so it never drifts (issue 22: the layout of every tracker is written
down).  ``python -m sheetsync.sheets.layout_doc hexwar > docs/LAYOUT-hexwar.md``; a test
keeps each file in step.  The battalion tracker has its own (``docs/LAYOUT.md``)."""

from __future__ import annotations

import sys

from sheetsync.core.layout import Column, Layout

__all__ = ["layout_markdown"]


def _what(col: Column) -> str:
    """A column's kind, bounds and choices in words."""
    parts = [col.note] if col.note else []
    if col.choices:
        parts.append(f"dropdown: {col.choices.lstrip('=')}")
    if col.low is not None or col.high is not None:
        parts.append(f"{'' if col.low is None else col.low} to {'' if col.high is None else col.high}".strip())
    if col.hidden:
        parts.append("hidden column")
    return "; ".join(p for p in parts if p).replace("|", "\\|").replace("\n", " ")


def layout_markdown(lay: Layout, title: str, source: str) -> str:
    """The layout as Markdown: sheets, single cells, then each block with its columns."""
    out = [
        f"# {title} tracker layout",
        "",
        f"Generated from `{source}` by `python -m sheetsync.sheets.layout_doc {lay.system}`; a test keeps it",
        "in step. *Input* cells are pale yellow and unlocked; computed cells are grey and locked (the sheets",
        "are protected with no password, so typing into one warns). Rows that hold many things (units,",
        "orders) hold as many as the tracker's capacity, recorded in `State!B2`; `State!B3` says where",
        "the next Resolve starts reading the stamped orders and the Log (issue 23).",
        "",
        "## Sheets",
        "",
        ", ".join(f"**{s}**" + (" (hidden)" if s in lay.hidden else "") for s in lay.sheets),
        "",
        "## Single cells",
        "",
        "| Name | Cell | Holds | Input |",
        "| --- | --- | --- | --- |",
    ]
    for c in lay.cells.values():
        holds = (c.label + (". " + c.note if c.note else "")).replace("|", "\\|").replace("\n", " ")
        out.append(f"| `{c.name}` | `{c.sheet}!{c.address}` | {holds} | {'yes' if c.is_input else ''} |")
    out += ["", "## Blocks", ""]
    for b in lay.blocks.values():
        rows = f"rows {b.first_row}-{b.last_row}" if b.last_row is not None else f"from row {b.first_row} down"
        out += [f"### `{b.name}`: sheet {b.sheet}, {rows}", ""]
        if b.title or b.note:
            out += [((b.title + ". ") if b.title else "") + b.note.replace("\n", " "), ""]
        out += ["| Column | Header | Input | Notes |", "| --- | --- | --- | --- |"]
        for col in b.columns:
            header = col.header.replace("|", "\\|").replace("\n", " ")
            out.append(f"| {b.letter(col.key)} | {header} | {'yes' if col.is_input else ''} | {_what(col)} |")
        out.append("")
    if lay.lists:
        out += ["## Lists", "", "| List | Values |", "| --- | --- |"]
        for key, values in lay.lists.items():
            shown = ", ".join(values[:30]) + (", ..." if len(values) > 30 else "")
            out.append(f"| {key} | {shown.replace('|', '/')} |")
        out.append("")
    return "\n".join(out)


def system_markdown(system_id: str) -> str:
    """The layout document of a registered system's tracker at its default capacity."""
    from sheetsync.core.registry import find_system

    system = find_system(system_id)
    return layout_markdown(system.layout(), system.title,
                           f"sheetsync/systems/{system.id}/tracker/layout.py")


if __name__ == "__main__":
    print(system_markdown(sys.argv[1] if len(sys.argv) > 1 else "hexwar"), end="")
