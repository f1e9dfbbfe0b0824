"""Issue 22: the layout of every tracker is written down, generated from the layout data
so it never drifts: docs/LAYOUT.md (the battalion tracker, checked in test_workbook.py),
docs/LAYOUT-hexwar.md and docs/LAYOUT-exalted.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from sheetsync.core.registry import find_system
from sheetsync.sheets.layout_doc import system_markdown

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize("system_id", ["hexwar", "exalted"])
def test_issue22_layout_doc_of_each_tracker_is_in_step(system_id: str) -> None:
    doc = (DOCS / f"LAYOUT-{system_id}.md").read_text(encoding="utf-8")
    assert doc == system_markdown(system_id), f"run: python -m sheetsync.sheets.layout_doc {system_id}"


@pytest.mark.parametrize("system_id", ["hexwar", "exalted"])
def test_issue22_layout_doc_names_every_block_and_input_column(system_id: str) -> None:
    doc = system_markdown(system_id)
    lay = find_system(system_id).layout()
    for block in lay.blocks.values():
        assert f"### `{block.name}`" in doc
        for col in block.columns:
            assert f"| {block.letter(col.key)} | {col.header.replace('|', chr(92) + '|')} | {'yes' if col.is_input else ''} |" \
                in doc
    for cell in lay.cells.values():
        assert f"`{cell.sheet}!{cell.address}`" in doc


def test_issue22_the_battalion_layout_doc_points_to_the_others() -> None:
    doc = (DOCS / "LAYOUT.md").read_text(encoding="utf-8")
    assert "docs/LAYOUT-hexwar.md" in doc and "docs/LAYOUT-exalted.md" in doc


@pytest.mark.parametrize("system_id", ["bbn", "hexwar", "exalted"])
def test_issue22_no_table_has_two_columns_with_one_header(system_id: str) -> None:
    """Typed and computed values are told apart in the header itself (the Exalted Units
    sheet's typed Drill and its derived Drill; the two cohorts of a Range)."""
    lay = find_system(system_id).layout()
    for block in lay.blocks.values():
        headers = [col.header for col in block.columns]
        assert len(headers) == len(set(headers)), (block.name, sorted(h for h in headers if headers.count(h) > 1))
