"""A tracker written before the rule-system seam (``tests/data/trackers/*-before-seam.xlsx``,
made by commit 0dc7bac) still opens, resolves, undoes and ends as the battalion system."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sheetsync.app import usecases
from sheetsync.backends.excel import ExcelBackend
from sheetsync.core.errors import BattleStateError

DATA = Path(__file__).parent / "data" / "trackers"


def test_old_tracker_opens_resolves_undoes_and_ends_as_bbn(tmp_path: Path) -> None:
    book = tmp_path / "old.xlsx"
    shutil.copy(DATA / "bbn-before-seam.xlsx", book)
    before = usecases.export(ExcelBackend(book))
    assert before["next_phase"] == 1 and len(before["battle"]["cohorts"]) == 4
    report = usecases.run("resolve", ExcelBackend(book))
    assert report.phase == 1 and report.result is not None and report.result.events
    assert usecases.export(ExcelBackend(book))["next_phase"] == 2
    usecases.run("undo", ExcelBackend(book))
    assert usecases.export(ExcelBackend(book))["next_phase"] == 1
    usecases.run("resolve", ExcelBackend(book))
    end = usecases.run("end", ExcelBackend(book))
    assert end.aftermath is not None and end.aftermath["characters"]


def test_old_blank_tracker_reads_as_bbn_and_takes_a_battle(tmp_path: Path) -> None:
    from sheetsync.sheets.disk import example_path, read_data_file
    from sheetsync.systems.bbn.files.loader import load_battle

    book = tmp_path / "blank.xlsx"
    shutil.copy(DATA / "bbn-blank-before-seam.xlsx", book)
    with pytest.raises(BattleStateError, match="no cohorts yet"):
        usecases.run("resolve", ExcelBackend(book))
    usecases.load_battle_into(ExcelBackend(book), load_battle(read_data_file(example_path())))
    assert usecases.run("resolve", ExcelBackend(book)).phase == 1
