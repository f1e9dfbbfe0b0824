"""The State blob and its step journal: how two steps run at the same moment are caught.

A tracker keeps the whole battle (undo history included) as JSON in the hidden State
sheet.  Every step reads it once and writes it once, and Google Sheets has no conditional
write, so two steps that read before either writes both land, and the later write wins.
This module makes that safe:

* The State write always covers the **whole** State block (the pieces, then blanks to the
  block's end), so whichever write lands last leaves one complete, readable blob.
* The blob carries a revision ``rev`` (every step adds one), the step's id, action and
  phase, and a journal of the last :data:`JOURNAL` accepted steps ``[rev, id, action,
  phase]``.  A step's id is a digest of what it wrote, so two steps that wrote the very
  same thing (two Trackers resolving the same orders) are one step, applied once.
* Each step's Log rows are *appended* and carry ``rev:id`` in the Log's Step column, so
  both colliding steps' rows survive.  A Log row whose step is not in the journal (and not
  yet reported) is a step whose State write was overwritten: :func:`lost_steps` finds it,
  and the next step refuses once, saying which step stands and which must be run again,
  while it repairs what the lost step left behind (:func:`repair_updates`).

A State written before the journal existed reads as revision 0 with an empty journal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.errors import BattleStateError
from sheetsync.rules.bbn import Battle
from sheetsync.sheets import writer
from sheetsync.sheets.backend import CellValue, Grid, RangeUpdate, quote_sheet
from sheetsync.sheets.layout import HISTORY_PHASES, STATE_CHUNK_CHARS, STATE_CHUNKS, Layout

__all__ = ["JOURNAL", "Lost", "StateWrite", "Stored", "health_table_update", "lost_steps", "mark_rows", "parse_state", "repair_updates",
           "state_update", "step_token"]

JOURNAL = 20
"""How many accepted steps the State remembers (older Log rows are not checked)."""

REPORTED = 40
"""How many reported lost steps the State remembers."""

ACTION_NAMES = {"build": "Build Cohorts", "resolve": "Resolve Phase", "undo": "Undo Phase", "end": "End Battle",
                "repair": "Collision report", "new": "Load"}

_RECOVER = ("Restore the previous copy (the workbook's .bak file, or an earlier version from the Google Sheet's "
            "version history), or start a new tracker and Build Cohorts again")


@dataclass
class Stored:
    """What the State sheet holds, read and checked (:func:`parse_state`)."""

    battle: Battle | None = None
    last: dict[str, Any] | None = None
    last_problem: str = ""
    """Why ``last`` (the last resolve's record, for ``export``) can't be used, if it can't."""
    rev: int = 0
    step: str = ""
    journal: list[list[Any]] = field(default_factory=list)
    """``[rev, id, action, phase]`` of the last accepted steps, oldest first."""
    reported: list[str] = field(default_factory=list)
    """``rev:id`` of lost steps already reported (so each is reported once)."""
    stamps: dict[str, list[list[CellValue]]] = field(default_factory=dict)
    """Phase -> ``[offset, outcome, damage, result]`` of every Orders row that phase
    stamped: what a repair puts back when a lost step cleared it."""


def _damaged(what: str) -> BattleStateError:
    return BattleStateError(f"State!A1: the stored battle state is damaged ({what}). {_RECOVER}.")


def _first_problem(exc: Exception) -> str:
    """The first problem of a validation error in plain words (``history.0: Input should
    be a valid dictionary``), or the exception's first line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{where}: {first.get('msg', '')}"[:200]
        except (IndexError, TypeError, AttributeError, KeyError):
            pass
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _check_battle(battle: Battle, where: str) -> None:
    names = [c.name for c in battle.cohorts]
    for name in names:
        if name not in battle.state:
            raise _damaged(f"{where}: cohort {name!r} has no standing")
        members = {m.name for m in battle.spec[name].members}
        states = battle.state[name].states
        missing = sorted(members - set(states))
        if missing:
            raise _damaged(f"{where}: {name} has no state for {', '.join(missing)}")
    extra = sorted(set(battle.state) - set(names))
    if extra:
        raise _damaged(f"{where}: standing for {', '.join(map(repr, extra))}, which is not a cohort")
    if battle.phase > HISTORY_PHASES + 1:
        raise _damaged(f"{where}: phase {battle.phase} is past the last phase a tracker holds ({HISTORY_PHASES + 1})")
    if len(battle.history) > battle.phase - 1:
        raise _damaged(f"{where}: {len(battle.history)} phases of undo history for phase {battle.phase}")


def _battle(data: Any, where: str) -> Battle:
    if not isinstance(data, dict):
        raise _damaged(f"{where} is not a record")
    try:
        battle = Battle.from_data(data)
        _ = battle.pools  # the pools are computed from the cohorts: a bad cohort fails here
    except BattleStateError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, ArithmeticError) as exc:
        raise _damaged(f"{where}: {_first_problem(exc)}") from None
    _check_battle(battle, where)
    return battle


def _history(battle: Battle) -> None:
    """Undo restores each history entry: check them all now, so an undo never fails half-way."""
    for n, entry in enumerate(battle.history, start=1):
        where = f"undo history entry {n}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("log_length"), int) \
                or isinstance(entry.get("log_length"), bool) or entry["log_length"] < 0:
            raise _damaged(f"{where} has no log length")
        snap = {k: v for k, v in entry.items() if k != "log_length"}
        snap["history"] = []
        snap["log"] = []
        _battle(snap, where)


def _last(last: Any) -> str:
    if last is None:
        return ""
    if not isinstance(last, dict):
        return "the last resolve's record is not a record"
    phase = last.get("phase")
    if not isinstance(phase, int) or isinstance(phase, bool) or not 1 <= phase <= HISTORY_PHASES + 1:
        return "the last resolve's record has no phase"
    for key in ("events", "end_of_phase"):
        value = last.get(key, [])
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            return f"the last resolve's {key.replace('_', ' ')} are not a list of records"
    return ""


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12


def parse_state(state: Grid) -> Stored:
    """Issue 8, item 10: the State sheet's blob, every part checked, or a
    :class:`BattleStateError` that names what is damaged and how to recover.  Nothing
    downstream (pools, phases, undo, export) then meets a missing cohort or a bad type."""
    pieces = [row[0] for row in state if row and isinstance(row[0], str)]
    if not pieces:
        return Stored()
    try:
        payload = json.loads("".join(pieces))
    except ValueError:
        raise _damaged("it is not readable JSON") from None
    except RecursionError:
        raise _damaged("it is nested too deeply") from None
    if not isinstance(payload, dict) or "battle" not in payload:
        raise _damaged("it holds no battle")
    battle = _battle(payload["battle"], "the battle")
    _history(battle)
    out = Stored(battle=battle)
    out.last_problem = _last(payload.get("last"))
    out.last = None if out.last_problem else payload.get("last")
    rev = payload.get("rev", 0)
    if not _whole(rev):
        raise _damaged("its revision is not a whole number")
    out.rev = rev
    out.step = str(payload.get("step", ""))
    journal = payload.get("steps", [])
    if not isinstance(journal, list) or not all(
            isinstance(e, list) and len(e) == 4 and _whole(e[0]) and isinstance(e[1], str) for e in journal):
        raise _damaged("its journal of steps is not a list of [rev, id, action, phase]")
    out.journal = journal
    reported = payload.get("reported", [])
    if not isinstance(reported, list) or not all(isinstance(r, str) for r in reported):
        raise _damaged("its list of reported steps is not a list of texts")
    out.reported = reported
    stamps = payload.get("stamps", {})
    if not isinstance(stamps, dict) or not all(
            isinstance(rows, list) and all(isinstance(r, list) and len(r) == 4 and _whole(r[0]) for r in rows)
            for rows in stamps.values()):
        raise _damaged("its record of Orders stamps is not a list of [row, outcome, damage, result]")
    out.stamps = stamps
    return out


def step_token(rev: int, step: str, action: str, phase: int) -> str:
    """What a step's Log rows carry in the Step column: ``rev:id:action:phase``, so the
    next step can name a lost step without reading the whole Log."""
    return f"{rev}:{step}:{action}:{phase}"


def _step_id(payload: Mapping[str, Any]) -> str:
    """A digest of what the step writes: two steps that write the very same battle are one
    step (resolving the same orders twice applies once, R13); any difference gives
    another id.  (A build draws a fresh seed when none is typed, so two builds differ.)"""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


@dataclass
class StateWrite:
    """The State block's update, and the token the step's Log rows carry."""

    update: RangeUpdate
    token: str
    rev: int
    step: str


def state_update(lay: Layout, battle: Battle, last: dict[str, Any] | None, *, prior: Stored, action: str,
                 phase: int, stamps: Mapping[str, list[list[CellValue]]] | None = None,
                 reported: Sequence[str] = ()) -> StateWrite:
    """The whole State block for a step (pieces, then blanks to the block's end), whatever
    was there: the last of two simultaneous writes always reads back whole."""
    data = battle.to_data()
    data["log"] = []
    rev = prior.rev + 1
    body: dict[str, Any] = {"battle": data, "last": last, "action": action, "phase": phase,
                            "stamps": dict(stamps if stamps is not None else prior.stamps)}
    step = _step_id({"rev": rev, "reported": list(reported), **body})
    journal = [*prior.journal, [rev, step, action, phase]][-JOURNAL:]
    payload = {**body, "rev": rev, "step": step, "steps": journal,
               "reported": [*prior.reported, *reported][-REPORTED:]}
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    pieces = [text[i:i + STATE_CHUNK_CHARS] for i in range(0, len(text), STATE_CHUNK_CHARS)]
    if len(pieces) > STATE_CHUNKS:
        raise BattleStateError("the battle state no longer fits the State sheet; end this battle and start a new tracker")
    block = lay.block("State_Blob")
    rows: list[list[CellValue]] = [[p] for p in pieces]
    rows += [[None] for _ in range(STATE_CHUNKS - len(pieces))]
    return StateWrite(RangeUpdate(block.range(rows=STATE_CHUNKS), rows), step_token(rev, step, action, phase), rev, step)


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
    blank, marked or foreign cell."""
    if not isinstance(value, str) or value.endswith((" lost", " duplicate")):
        return None
    parts = value.split(":")
    if len(parts) != 5 or not parts[0].isdigit():
        return None
    return ":".join(parts[:4]), f"{int(parts[0])}:{parts[1]}", int(parts[0])


def lost_steps(stored: Stored, steps: Grid) -> tuple[list[Lost], list[int]]:
    """Steps the Log shows and the State's journal does not: each a step overwritten by one
    run at the same moment.  Rows of steps older than the journal, rows already marked,
    and steps already reported are left alone.  A State without a journal (written before
    it existed) has nothing to compare with.  ``steps`` is the Log's Step column.

    Also returns the Log rows written twice by one accepted step (two Trackers ran the very
    same step at the same moment: it was applied once, and its rows appear twice)."""
    if not stored.journal:
        return [], []
    accepted = {f"{int(rev)}:{sid}" for rev, sid, _a, _p in stored.journal}
    oldest = min(int(e[0]) for e in stored.journal)
    found: dict[str, list[int]] = {}
    seen: set[str] = set()
    twice: list[int] = []
    for i, row in enumerate(steps):
        value = row[0] if row else None
        split = _split(value)
        if split is None:
            continue
        token, key, rev = split
        if rev < oldest or key in stored.reported:
            continue
        if key in accepted:
            if value in seen:
                twice.append(i)
            seen.add(str(value))
            continue
        found.setdefault(token, []).append(i)
    out = []
    for token, rows in found.items():
        rev_text, sid, action, phase = token.split(":")
        out.append(Lost(token, f"{int(rev_text)}:{sid}", int(rev_text), action,
                        int(phase) if phase.isdigit() else 0, tuple(rows)))
    return sorted(out, key=lambda x: x.rev), twice


def mark_rows(lay: Layout, steps: Grid, rows: Sequence[int], mark: str) -> list[RangeUpdate]:
    """Mark Log rows in the Step column (`` lost``, `` duplicate``): they no longer stand."""
    log = lay.block("Log_Table")
    out = []
    for i in rows:
        value = steps[i][0] if i < len(steps) and steps[i] else ""
        out.append(RangeUpdate(f"{quote_sheet(log.sheet)}!{log.letter('step')}{log.first_row + i}",
                               [[f"{value} {mark}"]]))
    return out


def _stamp_cells(row: Sequence[CellValue], block: Any) -> list[CellValue]:
    return [row[block.index(k)] if block.index(k) < len(row) else None for k in ("outcome", "damage", "result")]


def repair_updates(lay: Layout, stored: Stored, orders: Grid, lost: Sequence[Lost], steps: Grid) -> list[RangeUpdate]:
    """What a lost step left behind that would mislead the next steps, put right from the
    State that stands:

    * Orders rows stamped with a phase at or after the State's next phase are pending
      again (no phase that far has been resolved), and so are rows stamped for an earlier
      phase that the State's record of that phase does not hold;
    * rows the State's record holds for a resolved phase get their stamp back (a lost
      Undo cleared them);
    * the Battle and Cohorts sheets and the Health-by-phase table are rewritten from the
      State; the Aftermath is cleared when a lost step was an End Battle;
    * the lost steps' Log rows are marked ``lost`` in the Step column.

    A lost Build Cohorts or Load is not repaired beyond this: the State that stands rewrites
    the computed sheets, and the Tracker is told to run it again.
    """
    battle = stored.battle
    assert battle is not None
    block = lay.block("Orders_Table")
    j = block.index("phase")
    want: dict[int, tuple[int, list[CellValue]]] = {}
    for phase_text, rows in stored.stamps.items():
        if not phase_text.isdigit() or int(phase_text) >= battle.phase:
            continue
        for offset, outcome, damage, result in rows:
            if isinstance(offset, int):  # parse_state checked it is a whole number
                want[offset] = (int(phase_text), [outcome, damage, result])
    recorded = {int(p) for p in stored.stamps if p.isdigit()}
    clear: list[int] = []
    stamp_rows: list[int] = []
    stamp_values: list[tuple[CellValue, list[CellValue]]] = []
    for i, row in enumerate(orders):
        stamp = row[j] if j < len(row) else None
        if i in want:
            continue
        if isinstance(stamp, int) and not isinstance(stamp, bool) and (stamp >= battle.phase or stamp in recorded):
            clear.append(i)
    for i, (phase, cells) in sorted(want.items()):
        row = orders[i] if i < len(orders) else []
        now = row[j] if j < len(row) else None
        if now != phase or _stamp_cells(row, block) != cells:
            stamp_rows.append(i)
            stamp_values.append((phase, cells))
    sheet = quote_sheet(block.sheet)
    out: list[RangeUpdate] = []
    blank: list[CellValue] = [None, None, None]
    fixes: list[tuple[int, CellValue, list[CellValue]]] = [(i, None, blank) for i in clear]
    fixes += [(i, value, cells) for i, (value, cells) in zip(stamp_rows, stamp_values, strict=True)]
    for i, value, cells in fixes:
        r = block.first_row + i
        out.append(RangeUpdate(f"{sheet}!{block.letter('phase')}{r}", [[value]]))
        out.append(RangeUpdate(f"{sheet}!{block.letter('outcome')}{r}:{block.letter('result')}{r}", [list(cells)]))
    out.append(health_table_update(lay, battle))
    if any(x.action == "end" for x in lost):
        out.append(writer.aftermath_updates(lay, []))
    out += mark_rows(lay, steps, [i for x in lost for i in x.rows], "lost")
    return out


def health_table_update(lay: Layout, battle: Battle) -> RangeUpdate:
    """The whole Health-by-phase table from the State: row 0 the start, row ``k`` after
    phase ``k`` (the undo history's snapshots), then the current standing; later rows blank."""
    block = lay.block("Battle_HealthByPhase")
    width = len(block.columns)
    names = [c.name for c in battle.cohorts][: width - 1]
    start = battle.phase - 1 - len(battle.history)
    rows: list[list[CellValue]] = []
    for k in range(block.rows or 0):
        row: list[CellValue] = [None] * width
        phase = k
        source: Mapping[str, Any] | None = None
        if start <= phase < battle.phase - 1 and phase - start < len(battle.history):
            source = battle.history[phase - start].get("state")
        if phase == battle.phase - 1:
            source = {n: {"health": battle.state[n].health} for n in names}
        if isinstance(source, Mapping):
            row[0] = phase
            for c, n in enumerate(names):
                entry = source.get(n)
                row[1 + c] = entry.get("health") if isinstance(entry, Mapping) else None
        rows.append(row)
    return RangeUpdate(block.range(), rows)
