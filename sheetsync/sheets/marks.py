"""Run a step on any tracker: find its rule system from the mark it carries, then ask
that system to run the step (DESIGN "Several rule systems on one seam"); every system's
``run_step`` is the one use-case envelope (:func:`sheetsync.app.usecases.run_steps`) over
its own pure steps.

The mark (``hexwar@1``) sits in the hidden State sheet at ``State!B1``, with the layout's
capacity beside it in ``State!B2``; a tracker made before the mark existed has neither and
is the battalion system at version 0.  A backend that can read the mark without a request
of its own (``read_mark``: Google Sheets serves the step's read from the same answer) is
asked that way, so a step stays one read and one write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.core.errors import Problem, SheetFormatError
from sheetsync.core.registry import MARK_CELL, Mark, find_system, parse_mark
from sheetsync.sheets.backend import RangeUpdate, SheetBackend

__all__ = ["HEAD_RANGE", "MARK_RANGE", "Tracker", "detect", "mark_updates", "run"]

MARK_RANGE = f"{MARK_CELL[0]}!B1:B2"

HEAD_RANGE = f"{MARK_CELL[0]}!B1:B3"
"""What :func:`detect` reads: the mark, the capacity, and where a Resolve starts reading
(``State!B3``, issue 23, :mod:`sheetsync.sheets.read_from`)."""


@dataclass(frozen=True)
class Tracker:
    """What a tracker says it is: its system (the object), its mark and its capacity."""

    system: Any
    mark: Mark
    capacity: dict[str, int] = field(default_factory=dict)
    read_from: Any = None
    """``State!B3`` as a :class:`sheetsync.sheets.read_from.ReadFrom` (``None``: read everything)."""


def _capacity(value: object) -> dict[str, int]:
    if value is None or value == "":
        return {}
    try:
        data = json.loads(str(value))
    except (ValueError, RecursionError):  # issue 26: nested past the recursion limit
        data = None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                             and 0 < v <= 100_000 for k, v in data.items()):
        raise SheetFormatError([Problem(f"{MARK_CELL[0]}!B2", f"holds {value!r}, not the tracker's capacity "
                                        "(written by sheetsync, e.g. {\"units\": 40}): restore it or make a new tracker")])
    return data


def detect(backend: SheetBackend) -> Tracker:
    """The tracker's system, mark and capacity, read from ``State!B1:B2``, and where a
    Resolve starts reading, from ``State!B3`` (:data:`HEAD_RANGE`)."""
    from sheetsync.sheets import read_from

    reader = getattr(backend, "read_mark", None)
    grid = reader(HEAD_RANGE) if callable(reader) else backend.read_ranges([HEAD_RANGE])[0]
    cells = [row[0] if row else None for row in grid] + [None, None, None]
    mark = parse_mark(cells[0])
    system = find_system(mark.system)
    if mark.version > system.version:
        raise SheetFormatError([Problem(f"{MARK_CELL[0]}!B1", f"says {mark}, a newer tracker than this sheetsync "
                                        f"understands ({system.id}@{system.version}): update sheetsync")])
    return Tracker(system, mark, _capacity(cells[1]), read_from.parse(cells[2]))


def mark_updates(system: Any, capacity: dict[str, int] | None = None) -> list[RangeUpdate]:
    """The two cells that say what a tracker is: ``State!B1`` the mark, ``B2`` the capacity."""
    cap = json.dumps(capacity, sort_keys=True, separators=(",", ":")) if capacity else None
    return [RangeUpdate(MARK_RANGE, [[f"{system.id}@{system.version}"], [cap]])]


def run(action: str, backend: SheetBackend, *, extra: Sequence[RangeUpdate] = ()) -> Any:
    """Run ``action`` (build, resolve, undo, end) on whatever tracker ``backend`` holds:
    its system's steps at its capacity, one read and one write (:mod:`sheetsync.app.usecases`)."""
    ahead = getattr(backend, "step_ahead", None)
    if callable(ahead):  # Google Sheets: the named ranges this step's one GET asks for (issue 23)
        ahead(action)
    tracker = detect(backend)
    return tracker.system.run_step(action, backend, extra=extra, capacity=tracker.capacity,
                                   read_from=tracker.read_from)
