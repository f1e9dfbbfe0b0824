"""Issue 22: every free-text cell's format is shown in the template, for all three trackers.

A free-text input column (typed as text, with no dropdown) carries a note saying what it
holds and how it is typed, and the drawn workbook shows the note on its header (a cell
comment; the Google drawer puts the same text in the header's note).  The die cells say
both spellings (faces, ``Ns`` successes), the Exalted Option cell every action's syntax,
the hex cells their hex ids."""

from __future__ import annotations

from typing import Any

import pytest

from sheetsync.core.layout import Column
from sheetsync.core.registry import find_system
from sheetsync.sheets.draw import draw_workbook
from sheetsync.systems.exalted.rules.dice import DIE_CELL_HELP
from sheetsync.systems.exalted.tracker.layout import DieCell

SYSTEMS = ("bbn", "hexwar", "exalted")


def _free_text(col: Column) -> bool:
    return col.is_input and col.kind == "text" and not col.choices


def _template(system_id: str) -> tuple[Any, Any]:
    system = find_system(system_id)
    lay = system.layout()
    return lay, draw_workbook(lay, captions=[s.caption for s in system.steps])


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue22_every_free_text_input_column_shows_its_format_in_the_template(system_id: str) -> None:
    lay, wb = _template(system_id)
    seen = 0
    for block in lay.blocks.values():
        for j, col in enumerate(block.columns):
            if not _free_text(col):
                continue
            seen += 1
            assert col.note.strip(), f"{system_id} {block.name}.{col.key} ({col.header}) has no note"
            header = wb[block.sheet].cell(row=block.header_row, column=block.first_col + j)
            assert header.value == col.header
            assert header.comment is not None and header.comment.text == col.note, (block.name, col.key)
    assert seen >= 5
    for cell in lay.cells.values():
        if cell.is_input and cell.note:
            ws = wb[cell.sheet]
            c = ws[cell.address]
            label = ws.cell(row=c.row, column=c.column - 1)
            assert label.comment is not None and label.comment.text == cell.note, cell.name


def test_issue22_exalted_die_cells_and_the_option_cell_say_how_they_are_typed() -> None:
    lay, _ = _template("exalted")
    dice = [(b.name, c) for b in lay.blocks.values() for c in b.columns if c.is_input and isinstance(c.codec, DieCell)]
    assert {c.key for _, c in dice} >= {"dice", "target_dice", "damage_dice", "rout_dice", "exhaustion_dice",
                                        "target_exhaustion_dice", "join_war"}
    for name, col in dice:
        assert DIE_CELL_HELP in col.note, (name, col.key)
    assert "own:" in lay.block("Orders_Table").column("rout_dice").note  # X43
    option = lay.block("Orders_Table").column("option").note
    for syntax in ("called shot: NAME", "envelop", "charge", "spread", "headcount: N", "follow: A, B",
                   "leader: NAME", "leaving: A, B", "as: hero", "challenger: NAME", "result: WINNER", "Second Wind",
                   "Open"):
        assert syntax in option, syntax


def test_issue22_hex_cells_show_a_hex_id() -> None:
    lay, _ = _template("hexwar")
    units, moves = lay.block("Units_Table"), lay.block("Moves_Table")
    for col in (units.column("counter"), units.column("start_hex"), moves.column("to"), moves.column("path")):
        assert "e.g." in col.note, col.key
    assert "e.g." in lay.cells["Battle_Impassable"].note
