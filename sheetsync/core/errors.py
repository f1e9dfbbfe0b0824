"""The one error tree of sheetsync.

Every failure a user can cause is a :class:`SheetSyncError`.  The CLI, the Excel buttons
and the HTTP endpoint catch this root only and show ``ClassName: message``; anything else
is a bug.  Errors that come from a place in a file or a sheet carry that place
(``Characters!D7`` or ``cohorts[0].members[2].temper``) in each of their problems, and a
reader collects every problem in one pass before it raises.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "BackendError",
    "BattleStateError",
    "InputError",
    "Problem",
    "SheetFormatError",
    "SheetSyncError",
    "WorkbookLockedError",
    "did_you_mean",
]


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """`` (did you mean 'Night Watch'?)`` when ``value`` is close to one of ``choices``
    (ignoring case), else ``""``: the tail of a message about a mistyped name."""
    if not isinstance(value, str) or not value.strip():
        return ""
    options = {c.casefold(): c for c in choices}
    found = difflib.get_close_matches(value.strip().casefold(), list(options), n=1, cutoff=0.6)
    if not found or options[found[0]] == value:
        return ""
    return f" (did you mean {options[found[0]]!r}?)"


@dataclass(frozen=True)
class Problem:
    """One bad value and where it is (a YAML path such as ``orders[3].task`` or a cell such
    as ``Orders!C7``)."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class SheetSyncError(Exception):
    """Root of every error sheetsync raises on purpose."""


class InputError(SheetSyncError):
    """A battle file or a sheet holds values sheetsync cannot use.

    It lists *every* problem found, each with its place, so that a Tracker fixes them all
    in one go.  Nothing has been written when this is raised.
    """

    def __init__(self, problems: Iterable[Problem], source: str = "") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.source = source
        head = f"{len(self.problems)} problems" + (f" in {source}" if source else "")
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{head}:\n{lines}" if len(self.problems) != 1 else str(self.problems[0]))


class SheetFormatError(InputError):
    """A workbook or Google Sheet whose cells are bad: every problem names its cell."""


class BattleStateError(SheetSyncError):
    """A step that can't run in the battle's current state (a phase already resolved,
    nothing to undo, a battle not yet built)."""


class BackendError(SheetSyncError):
    """The spreadsheet could not be read or written (file missing, network, quota)."""


class WorkbookLockedError(BackendError):
    """The workbook is open in LibreOffice or Excel; nothing was written."""
