"""``docs/LAYOUT.md``: every defined name of the tracker and what it holds, generated from
the layout map (``python -m sheetsync.systems.bbn.tracker.layout_doc > docs/LAYOUT.md``)."""

from __future__ import annotations

from sheetsync.systems.bbn.tracker.layout import LISTS, Layout, layout
from sheetsync.systems.bbn.tracker.template import defined_names

__all__ = ["layout_markdown"]


def layout_markdown(lay: Layout | None = None) -> str:
    lay = lay or layout()
    names = defined_names(lay)
    out = [
        "# Tracker layout",
        "",
        "Generated from `sheetsync/systems/bbn/tracker/layout.py` by `python -m sheetsync.systems.bbn.tracker.layout_doc`; a test keeps it in step.",
        "Every block below is a defined name in the workbook (and a named range in Google Sheets), so a script can",
        "find it without knowing rows and columns. *Input* cells are pale yellow and unlocked; computed cells are",
        "grey and locked (sheets are protected with no password, so typing into one warns).",
        "This is the battalion tracker; the hex wargame's and Exalted's are in `docs/LAYOUT-hexwar.md` and",
        "`docs/LAYOUT-exalted.md`.",
        "",
        "## Sheets",
        "",
        ", ".join(f"**{s}**" + (" (hidden)" if s in lay.hidden else "") for s in lay.sheets),
        "",
        "## Single cells",
        "",
        "| Name | Range | Holds | Input |",
        "| --- | --- | --- | --- |",
    ]
    for c in lay.cells.values():
        out.append(f"| `{c.name}` | `{names[c.name]}` | {c.label}{'. ' + c.note if c.note else ''} | {'yes' if c.is_input else ''} |")
    out += ["", "## Blocks", ""]
    for b in lay.blocks.values():
        out += [f"### `{b.name}`: `{names[b.name]}`", ""]
        if b.note or b.title:
            out += [(b.title + ". " if b.title else "") + b.note, ""]
        out += ["| Column | Header | Input | Notes |", "| --- | --- | --- | --- |"]
        for c in b.columns:
            notes = c.note
            if c.choices:
                notes = (notes + "; " if notes else "") + f"dropdown: {c.choices.lstrip('=')}"
            if c.low is not None:
                notes = (notes + "; " if notes else "") + f"{c.low} to {c.high}"
            out.append(f"| {b.letter(c.key)} | {c.header} | {'yes' if c.is_input else ''} | {notes} |")
        out.append("")
    out += ["## Lists and other names", "", "| Name | Range | Holds |", "| --- | --- | --- |"]
    for key in ("Cohort_Names", "Character_Names", "Cohort_Pool_Names"):
        out.append(f"| `{key}` | `{names[key]}` | the names column, for dropdowns and formulas |")
    for key, values in LISTS.items():
        out.append(f"| `List_{key}` | `{names['List_' + key]}` | {', '.join(values)} |")
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(layout_markdown(), end="")
