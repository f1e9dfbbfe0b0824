"""The lost-step check every rule system shares (issue 26, item 2).

Google Sheets has no conditional write, so two steps that read a tracker before either
writes both land, and the later State write wins.  Each step's Log rows carry ``rev:id``
in the Log's Step column and the State keeps a journal of the accepted steps, so a Log row
whose step the journal lacks is a step that was lost.  This module finds such rows and
words the refusal; it knows no rule system (the battalion tracker's State journal,
:mod:`sheetsync.systems.bbn.tracker.journal`, and the hex wargame's and Exalted's sessions all call
it), so a hex or Exalted step imports no battalion code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sheetsync.sheets.backend import CellValue, Grid, RangeUpdate, quote_sheet

__all__ = ["Lost", "collision_message", "find_lost", "mark_rows", "session_guard", "step_column", "whole"]


def whole(value: Any) -> bool:
    """A whole number a State may hold (a revision, a row count): not a bool, not
    negative, and short enough to read back (issue 26)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12


@dataclass(frozen=True)
class Lost:
    """A step whose State write was overwritten: its Log rows (offsets) and what it was."""

    token: str
    key: str
    """``rev:id``, as the State's list of reported steps holds it."""
    rev: int
    action: str
    phase: int
    rows: tuple[int, ...]


def _split(value: CellValue) -> tuple[str, str, int] | None:
    """A Step cell ``rev:id:action:phase:n`` as (token, ``rev:id``, rev), or ``None`` for a
    blank, marked or foreign cell.  The hex wargame's and Exalted's Log rows carry the
    token without the row's number ``n`` (``rev:id:action:turn``, issue 26)."""
    if not isinstance(value, str) or value.endswith((" lost", " duplicate")):
        return None
    parts = value.split(":")
    if len(parts) not in (4, 5) or not parts[0].isdigit():
        return None
    return ":".join(parts[:4]), f"{int(parts[0])}:{parts[1]}", int(parts[0])


def find_lost(journal: Sequence[Sequence[Any]], reported: Sequence[str], log_checked: int,
              steps: Grid) -> tuple[list[Lost], list[int]]:
    """The one lost-step check of every rule system (issue 26, item 2): ``journal`` is the
    State's accepted steps as ``(rev, id)`` pairs (the battalion blob's entries carry the
    action and phase too; the Session's of the other systems do not), ``reported`` the
    ``rev:id`` of lost steps already reported, ``log_checked`` the Log rows the step that
    stands had checked, ``steps`` the Log's Step column.  Returns the lost steps (a Log
    row whose step the journal does not hold) and the Log rows one accepted step wrote
    twice.  See :func:`lost_steps`."""
    if not journal:
        return [], []
    accepted = {f"{int(rev)}:{sid}" for rev, sid in journal}
    oldest = min(int(rev) for rev, _sid in journal)
    done = set(reported)
    found: dict[str, list[int]] = {}
    seen: set[str] = set()
    twice: list[int] = []
    start = log_checked if log_checked <= len(steps) else 0
    for i in range(start, len(steps)):
        row = steps[i]
        value = row[0] if row else None
        split = _split(value)
        if split is None:
            continue
        token, key, rev = split
        if rev < oldest or key in done:
            continue
        if key in accepted:
            if value in seen and value != token:  # a row's own number tells a row written twice
                twice.append(i)
            seen.add(str(value))
            continue
        found.setdefault(token, []).append(i)
    out = []
    for token, rows in found.items():
        rev_text, sid, action, phase = token.split(":")
        out.append(Lost(token, f"{int(rev_text)}:{sid}", int(rev_text), action,
                        int(phase) if phase.lstrip("-").isdigit() else 0, tuple(rows)))
    return sorted(out, key=lambda x: x.rev), twice


def collision_message(lost: Sequence[Lost], stands: Callable[[Lost], str], name: Callable[[str, int], str],
                      where: str, rev: int | None = None) -> str:
    """The refusal that reports lost steps, in every system's words: for each, which step
    stands (``stands``) and which was lost (``name`` of its action and turn or phase), and
    where the tracker is now (``where``: "phase 3", "turn 2" ...).

    Issue 22.3: a lost step whose revision is above the State's (``rev``) was overwritten by
    no one: its changes reached the sheets but its State write never did (a click cut short),
    and it is named so."""
    parts = []
    for x in lost:
        gone = name(x.action, x.phase)
        if rev is not None and x.rev > rev:
            parts.append(f"{gone} was cut short: its changes reached the sheets but not the State sheet, which "
                         "holds the battle (a click whose changes were not all applied); nothing of it counts "
                         "and the sheets are put back as the State holds them: run it again")
            continue
        now = stands(x)
        parts.append(f"{gone} and {now} ran at the same moment; {now} stands, {gone} was lost: run it again")
    return "; ".join(parts) + f". The tracker is at {where}; nothing else was changed by this click."


def step_column(log: Any) -> str:
    """The Log's Step column to its end, as a step reads it to check the journal
    (``Log!J2:J``)."""
    return f"{log.cell(0, 'step')}:{log.letter('step')}".replace(f"{log.sheet}!", f"{quote_sheet(log.sheet)}!", 1)


def session_guard(session: Any, lay: Any, steps: Grid, *, name: Callable[[str, int], str], where: str,
                  repair: Callable[[Sequence[Lost], str], list[RangeUpdate]]) -> tuple[list[RangeUpdate], str]:
    """Issue 26, item 2: the battalion tracker's lost-step check for a tracker whose State
    is a :class:`sheetsync.sheets.session.Session` (the hex wargame's, Exalted's), from the
    step's one read: ``steps`` is the Log's Step column (:func:`step_column`).

    A step lost to another run at the same moment is reported once: this step is refused
    with :class:`~sheetsync.core.system.StepRefused`, naming the step that stands and the
    one to run again, and its one write is ``repair(lost, message)`` (the system puts its
    rows right from the State that stands, and records the report in the blob) with the
    lost steps' Log rows marked ``lost``.  Otherwise returns the Log rows one step wrote
    twice (the same step run twice at once, applied once), marked ``duplicate``, for this
    step's write, and a note saying so."""
    from sheetsync.core.system import StepRefused

    journal = [(e[0], e[1]) for e in session.steps if isinstance(e, list) and len(e) >= 2 and whole(e[0])]
    lost, twice = find_lost(journal, session.reported, session.log_checked, steps)
    # issue 22.3: a step above the State's revision was overwritten by no one: it was cut short
    # before its State write, and the tracker's own check finds and repairs it from its rows
    lost = [x for x in lost if x.rev <= session.rev]
    session.log_read = len(steps)
    marks = mark_rows(lay, steps, twice, "duplicate")
    note = ""
    if twice:
        note = f" (note: {name(session.action, session.turn)} was run twice at the same moment and applied once)"
    if not lost:
        return marks, note
    msg = collision_message(lost, lambda _x: name(session.action, session.turn), name, where)
    raise StepRefused(msg, [*repair(lost, msg), *marks, *mark_rows(lay, steps, [i for x in lost for i in x.rows],
                                                                     "lost")])


def mark_rows(lay: Any, steps: Grid, rows: Sequence[int], mark: str) -> list[RangeUpdate]:
    """Mark Log rows in the Step column (`` lost``, `` duplicate``): they no longer stand."""
    log = lay.block("Log_Table")
    out = []
    for i in rows:
        value = steps[i][0] if i < len(steps) and steps[i] else ""
        out.append(RangeUpdate(f"{quote_sheet(log.sheet)}!{log.letter('step')}{log.first_row + i}",
                               [[f"{value} {mark}"]]))
    return out
