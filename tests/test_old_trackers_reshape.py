"""Issue 24: trackers written by the version before the reshape (one package per rule
system, standard-library models) still open, undo, resolve and end, for every system.

``tests/data/trackers/<system>-before-reshape.xlsx`` was made by commit bc0bb9f from each
system's embedded example (``sheetsync new --from``, then one ``sheetsync resolve``);
``<system>-before-reshape.json`` holds that version's ``sheetsync export`` of the tracker
before and after the step.  Undoing the old step must give back the battle as it was before
it, and resolving again must give the very same battle (the dice come from the battle's
seed), down to every value the export shows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sheetsync.app import usecases
from sheetsync.app.workbook_cli import excel_backend

DATA = Path(__file__).parent / "data" / "trackers"


def _unset(value: Any) -> Any:
    """The value without keys that hold nothing: a key added to the battle file since that
    version (such as an order's ``own_rout_dice``, X43) is blank in an old tracker."""
    if isinstance(value, dict):
        return {k: _unset(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_unset(v) for v in value]
    return value


def _battle(export: dict[str, Any]) -> Any:
    return _unset(json.loads(json.dumps(export["battle"], sort_keys=True)))


@pytest.mark.parametrize("system", ["bbn", "hexwar", "exalted"])
def test_issue24_an_old_tracker_undoes_resolves_and_ends(tmp_path: Path, system: str) -> None:
    stored = json.loads((DATA / f"{system}-before-reshape.json").read_text(encoding="utf-8"))
    book = tmp_path / f"{system}.xlsx"
    shutil.copy(DATA / f"{system}-before-reshape.xlsx", book)
    assert _battle(usecases.export_steps(usecases.tracker_steps(excel_backend(book)), excel_backend(book))) \
        == _battle(stored["after"])
    usecases.run("undo", excel_backend(book))
    assert _battle(usecases.export_steps(usecases.tracker_steps(excel_backend(book)), excel_backend(book))) \
        == _battle(stored["before"])
    usecases.run("resolve", excel_backend(book))
    assert _battle(usecases.export_steps(usecases.tracker_steps(excel_backend(book)), excel_backend(book))) \
        == _battle(stored["after"])
    end = usecases.run("end", excel_backend(book))
    if system == "bbn":
        assert end.aftermath is not None and end.aftermath["characters"]
    else:
        assert usecases.export_steps(usecases.tracker_steps(excel_backend(book)), excel_backend(book))["ended"]
