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

**The lost-step check at constant cost (issue 9).**  The Log only grows, so the blob also
records ``log_checked``: how many Log rows the step that wrote it had read and checked.
Every row above that offset was checked by a step that stands (what it found lost it
reported and marked ``lost``, what it found twice it marked ``duplicate``), and every row
a later step writes is appended below what that step read.  So :func:`lost_steps` checks
only the rows from ``log_checked`` on: the rows of the steps since the last one that
stands, however long the battle.  A Log shorter than ``log_checked`` (rows deleted by hand)
is checked whole, as is the Log of a State written before this.

**Undo at constant cost (issue 9).**  The blob holds the current battle with at most one
undo snapshot inline (``battle.history``: the one the next undo restores), and the list
``undo`` of the undo records that stand, oldest first, each named ``rev:id``.  A resolve
*appends* one record row to ``State!C:F`` (:data:`HISTORY_BLOCK`: revision, step token,
JSON, mark): the phase, that phase's Orders stamps, and ``prev``, a reverse diff that turns
the phase's snapshot back into the one before it (only the keys whose values changed).
An undo restores the inline snapshot, rebuilds the one before it from the record, and marks
the record ``undone`` in column F.  So a step writes the same amount at phase 50 as at
phase 1, and the State grows by one small record a phase.  The ``undo`` list in the blob,
not the marks, says which records stand: a record of a lost step is simply not in it, and a
repair clears the mark a lost Undo left.  A State written before this (the whole history
inline) is read as before and moved to records by the next step's write.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.core.errors import BattleStateError
from sheetsync.core.model import ModelError
from sheetsync.core.recent import keep
from sheetsync.sheets.backend import CellValue, Grid, RangeUpdate, quote_sheet
from sheetsync.sheets.json_bytes import dumps
from sheetsync.sheets.lost_steps import (
    Lost,
    collision_message,
    find_lost,
    mark_rows,
    session_guard,
    step_column,
)
from sheetsync.sheets.lost_steps import whole as _whole
from sheetsync.systems.bbn.rules import Battle
from sheetsync.systems.bbn.rules.battle import orders_behind, state_dump
from sheetsync.systems.bbn.rules.models import Order
from sheetsync.systems.bbn.tracker import writer
from sheetsync.systems.bbn.tracker.layout import (
    HISTORY_PHASES,
    STATE_CHUNK_CHARS,
    STATE_CHUNKS,
    Layout,
)

__all__ = ["HISTORY_BLOCK", "JOURNAL", "KNOWN_STATES", "SHARED_KEYS", "Lost", "Record", "StateWrite", "Stored",
           "apply_patch", "collision_message", "find_lost", "forget_states", "full_history", "health_table_update", "lost_steps", "mark_rows",
           "parse_state", "repair_updates", "reverse_diff", "session_guard", "stamps_of", "state_update", "step_column", "step_token",
           "undo_snapshot"]

HISTORY_BLOCK = "State_History"
"""The layout block of the undo records: ``State!C:F``, one row a record (or a piece of one),
appended, never rewritten."""

UNDONE = "undone"
LOST = "lost"

JOURNAL = 20
"""How many accepted steps the State remembers (older Log rows are not checked)."""

REPORTED = 40
"""How many reported lost steps the State remembers."""

ACTION_NAMES = {"build": "Build Cohorts", "resolve": "Resolve Phase", "undo": "Undo Phase", "end": "End Battle",
                "repair": "Collision report", "new": "Load"}

_RECOVER = ("Restore the previous copy (the workbook's .bak file, or an earlier version from the Google Sheet's "
            "version history), or start a new tracker and Build Cohorts again")


@dataclass
class Record:
    """One undo record as the rows of ``State!C:F`` hold it (:func:`parse_state`); its
    JSON is read only when a step needs it (:func:`record_data`)."""

    key: str
    """``rev:id`` of the resolve that wrote it, as the blob's ``undo`` list names it."""
    token: str
    pieces: dict[int, str] = field(default_factory=dict)
    count: int = 1
    rows: list[int] = field(default_factory=list)
    """Offsets in the block of every row of the record (a step run twice writes it twice)."""
    marks: list[CellValue] = field(default_factory=list)
    """Column F of each of those rows: blank, ``undone`` or ``lost``."""

    def text(self) -> str | None:
        """The record's JSON, or ``None`` when a piece is missing."""
        if any(i not in self.pieces for i in range(self.count)):
            return None
        return "".join(self.pieces[i] for i in range(self.count))


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
    """A State written before issue 9 only: phase -> ``[offset, outcome, damage, result]``
    of every Orders row that phase stamped (now each undo record holds its phase's)."""
    chain: list[str] = field(default_factory=list)
    """``rev:id`` of the undo records that stand, oldest first: one a resolved phase that
    Undo can take back.  ``battle.history`` holds the newest one's snapshot inline."""
    records: dict[str, Record] = field(default_factory=dict)
    """The rows of ``State!C:F`` by ``rev:id`` (empty when they were not read)."""
    pending: list[list[CellValue]] = field(default_factory=list)
    """Record rows the next write appends: a State written before issue 9 (or a battle file
    with history) moved to records."""
    cached: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Records already parsed (:func:`record_data`), by ``rev:id``."""
    free: int | None = None
    """The first row of ``State!C:F`` below every row read (an offset in the block), where
    this step's record goes; ``None`` when the rows were not read (then it is appended)."""
    log_checked: int = 0
    """Issue 9: the Log rows (from the top) the step that wrote this State had checked;
    :func:`lost_steps` checks the rows from here on."""
    log_read: int | None = None
    """Issue 9: the Log rows this step read and checked (set by :func:`lost_steps`), the
    ``log_checked`` its own State write records; ``None`` when it checked none."""


def _damaged(what: str) -> BattleStateError:
    return BattleStateError(f"State!A1: the stored battle state is damaged ({what}). {_RECOVER}.")


_INDEX = re.compile(r"\[(\d+)\]")


def _first_problem(exc: Exception) -> str:
    """The first problem of a validation error in plain words, its place written as
    pydantic's was (``history.0: 'x' is not a mapping``), or the exception's first line."""
    if isinstance(exc, ModelError) and exc.errors:
        where, what = exc.errors[0]
        return (_INDEX.sub(r".\1", where) + ": " + what)[:200]
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


def _history_entry(entry: Any, where: str) -> None:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("log_length"), int) \
            or isinstance(entry.get("log_length"), bool) or entry["log_length"] < 0:
        raise _damaged(f"{where} has no log length")
    snap = {k: v for k, v in entry.items() if k != "log_length"}
    snap["history"] = []
    snap["log"] = []
    _battle(snap, where)


def _history(battle: Battle) -> None:
    """Undo restores each history entry: check them all now, so an undo never fails half-way."""
    for n, entry in enumerate(battle.history, start=1):
        _history_entry(entry, f"undo history entry {n}")


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


KNOWN_STATES = 4
"""How many State blobs this process remembers, checked, with the battle each holds."""

_KNOWN: dict[str, tuple[Battle, dict[str, Any]]] = {}
"""State blob text -> its battle, checked as :func:`parse_state` checks it, and the rest of
its JSON (revision, journal, last result ...): the blobs this process wrote
(:func:`state_update`) or read last (issue 12).  A server's next click reads back the State
its last click wrote, so it is neither parsed nor its battle checked again; any other text
(another process's write, a State edited by hand, one character changed) is parsed and
checked in full.  Keyed by the whole text, so a hit is what parsing would give: a
:class:`Battle` is frozen, and no step changes one, nor the rest's lists, in place."""


_KNOWN_LOCK = threading.Lock()
"""Two threads' steps (a server's, a watcher's) may remember at once."""


def _remember(text: str, battle: Battle, rest: dict[str, Any]) -> None:
    with _KNOWN_LOCK:
        keep(_KNOWN, text, (battle, rest), KNOWN_STATES)


def forget_states() -> None:
    """Forget the remembered State blobs (a benchmark's cold runs; tests)."""
    with _KNOWN_LOCK:
        _KNOWN.clear()


def parse_state(state: Grid, history: Grid | None = None) -> Stored:
    """Issue 8, item 10: the State sheet's blob, every part checked, or a
    :class:`BattleStateError` that names what is damaged and how to recover.  Nothing
    downstream (pools, phases, undo, export) then meets a missing cohort or a bad type.

    ``history`` is the grid of ``State!C:F`` (the undo records, issue 9); without it the
    records are not checked (a caller that only wants the battle)."""
    pieces = [row[0] for row in state if row and isinstance(row[0], str)]
    free = None if history is None else len(history)
    if not pieces:
        return Stored(records=_records(history or []), free=free)
    text = "".join(pieces)
    known = _KNOWN.get(text)
    if known is not None:
        battle, payload = known
    else:
        try:
            payload = json.loads(text)
        except ValueError:
            raise _damaged("it is not readable JSON") from None
        except RecursionError:
            raise _damaged("it is nested too deeply") from None
        if not isinstance(payload, dict) or "battle" not in payload:
            raise _damaged("it holds no battle")
        battle = _battle(payload["battle"], "the battle")
        _history(battle)
        _remember(text, battle, {k: v for k, v in payload.items() if k != "battle"})
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
    checked = payload.get("log_checked", 0)
    if not _whole(checked):
        raise _damaged("its count of the Log rows checked is not a whole number")
    out.log_checked = checked
    out.records = _records(history or [])
    out.free = free
    if "undo" not in payload:  # written before issue 9: the whole history inline
        _migrate(out, battle.history, stamps, f"{rev}:h")
        return out
    chain = payload["undo"]
    if not isinstance(chain, list) or not all(isinstance(k, str) and _KEY.fullmatch(k) for k in chain):
        raise _damaged("its list of undo records is not a list of rev:id")
    if len(chain) > battle.phase - 1:
        raise _damaged(f"{len(chain)} undo records for phase {battle.phase}")
    if len(battle.history) != min(1, len(chain)):
        raise _damaged(f"{len(battle.history)} undo snapshots inline for {len(chain)} undo records")
    out.chain = chain
    if history is not None:
        missing = [k for k in chain if k not in out.records or out.records[k].text() is None]
        if missing:
            raise _damaged(f"the undo record {missing[0]} is missing from State!C:F")
    return out


_KEY = re.compile(r"\d{1,12}:[\w.-]{1,40}")


def _records(grid: Grid) -> dict[str, Record]:
    """The record rows of ``State!C:F``: ``[rev, token, json, mark]``; a record longer than
    one cell is in pieces, its token then ending ``#i/n``.  Rows that are not records are
    passed over (they name no step the blob stands on)."""
    out: dict[str, Record] = {}
    for i, row in enumerate(grid):
        cells = [*row, None, None, None, None][:4]
        _rev, token, piece, mark = cells
        if not isinstance(token, str) or not isinstance(piece, str):
            continue
        index, count = 0, 1
        if "#" in token:
            token, _, part = token.partition("#")
            a, _, b = part.partition("/")
            if not (a.isdigit() and b.isdigit() and 0 < int(a) <= int(b) <= STATE_CHUNKS):
                continue
            index, count = int(a) - 1, int(b)
        parts = token.split(":")
        if len(parts) != 4 or not parts[0].isdigit():
            continue
        key = f"{int(parts[0])}:{parts[1]}"
        rec = out.setdefault(key, Record(key, token, count=count))
        if rec.count != count:
            continue
        rec.pieces.setdefault(index, piece)
        rec.rows.append(i)
        rec.marks.append(mark)
    return out


def reverse_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What turns ``new`` back into ``old`` (issue 9): ``s`` the keys whose values differ,
    with ``old``'s values, ``d`` the keys ``old`` lacks, ``n`` the same for a value that is
    a record in both.  Lists are replaced whole."""
    sets: dict[str, Any] = {}
    nested: dict[str, Any] = {}
    for k, v in old.items():
        if k not in new:
            sets[k] = v
        elif new[k] != v:
            if isinstance(v, Mapping) and isinstance(new[k], Mapping):
                nested[k] = reverse_diff(v, new[k])
            else:
                sets[k] = v
    dels = [k for k in new if k not in old]
    out: dict[str, Any] = {}
    if sets:
        out["s"] = sets
    if dels:
        out["d"] = dels
    if nested:
        out["n"] = nested
    return out


def apply_patch(new: Mapping[str, Any], patch: Any) -> dict[str, Any]:
    """``new`` turned back by a :func:`reverse_diff`; a :class:`ValueError` when the patch
    is not one (a damaged record)."""
    if not isinstance(patch, Mapping) or set(patch) - {"s", "d", "n"}:
        raise ValueError("not a reverse diff")
    sets, dels, nested = patch.get("s", {}), patch.get("d", []), patch.get("n", {})
    if not isinstance(sets, Mapping) or not isinstance(dels, list) or not isinstance(nested, Mapping):
        raise ValueError("not a reverse diff")
    out = dict(new)
    for k in dels:
        if not isinstance(k, str):
            raise ValueError("not a reverse diff")
        out.pop(k, None)
    out.update(sets)
    for k, sub in nested.items():
        inner = out.get(k)
        if not isinstance(inner, Mapping):
            raise ValueError(f"{k} is not a record")
        out[k] = apply_patch(inner, sub)
    return out


def _canonical(snap: Mapping[str, Any]) -> dict[str, Any]:
    """A snapshot as the State keeps it: its orders without the values each order takes by
    default (a fifth of the size; the battle reads back the same).  An order that does not
    validate is kept as it is, for the checks that name it."""
    out = dict(snap)
    orders = out.get("orders")
    behind = orders_behind(orders)
    if behind is not None:  # a snapshot this process made: compact from its Order objects (issue 12)
        out["orders"] = [o.model_dump(mode="json", exclude_defaults=True) for o in behind]
    elif isinstance(orders, list):
        compact: list[Any] = []
        for o in orders:
            try:
                compact.append(Order.model_validate(o).model_dump(mode="json", exclude_defaults=True))
            except (ValueError, TypeError):
                compact.append(o)
        out["orders"] = compact
    return out


ZIPPED = "z:"
"""How a record's cell text starts when it holds the JSON deflated and in base64: a
phase's Orders stamps repeat their words, so a record is a fifth of its JSON (issue 9:
at 12 cohorts and 24 orders a phase, about 0.8 KB a phase instead of 3.9 KB)."""


def _record_text(data: Mapping[str, Any]) -> str:
    return ZIPPED + base64.b64encode(zlib.compress(dumps(data), 9)).decode("ascii")


def _record_json(text: str) -> Any:
    """A record's JSON from its cell text (deflated or plain); a :class:`ValueError` if unreadable."""
    if text.startswith(ZIPPED):
        try:
            text = zlib.decompress(base64.b64decode(text[len(ZIPPED):], validate=True)).decode("utf-8")
        except (zlib.error, binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(str(exc)) from None
    return json.loads(text)


def _record_rows(rev: int, token: str, text: str) -> list[list[CellValue]]:
    pieces = [text[i:i + STATE_CHUNK_CHARS] for i in range(0, len(text), STATE_CHUNK_CHARS)] or [""]
    if len(pieces) == 1:
        return [[rev, token, pieces[0], None]]
    return [[rev, f"{token}#{i + 1}/{len(pieces)}", p, None] for i, p in enumerate(pieces)]


def _migrate(out: Stored, history: Sequence[Mapping[str, Any]], stamps: Mapping[str, Any], prefix: str) -> None:
    """A whole history inline (a State written before issue 9, or a battle file) as undo
    records: the newest snapshot stays inline, each one before it becomes a record's
    ``prev``.  The records are appended by the next write (:attr:`Stored.pending`); their
    ids are digests of what they hold, so two steps that both move the same State write
    the very same rows."""
    assert out.battle is not None
    chain: list[str] = []
    history = [_canonical(h) for h in history]
    for n, snap in enumerate(history):
        phase = snap.get("phase")
        data = {"phase": phase if _whole(phase) else 0,
                "prev": reverse_diff(history[n - 1], snap) if n else None,
                "stamps": list(stamps.get(str(phase), [])) if isinstance(stamps, Mapping) else []}
        text = _record_text(data)
        sid = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
        key = f"{prefix}{sid}"
        chain.append(key)
        if key not in out.records:
            out.pending += _record_rows(int(prefix.split(":")[0]), f"{key}:resolve:{data['phase']}", text)
        out.cached[key] = data
    out.chain = chain
    out.battle = out.battle.model_copy(update={"history": tuple(history[-1:])})


def record_data(stored: Stored, key: str) -> dict[str, Any]:
    """The undo record ``key`` read and checked: ``phase``, ``prev`` (a reverse diff or
    ``None`` for the oldest), ``stamps``; or a :class:`BattleStateError` naming its cells."""
    if key in stored.cached:
        return stored.cached[key]
    rec = stored.records.get(key)
    text = rec.text() if rec is not None else None
    if rec is None or text is None:
        raise _damaged(f"the undo record {key} is missing from State!C:F")
    where = f"the undo record {key} (State row {rec.rows[0] + 2 if rec.rows else '?'})"
    try:
        data = _record_json(text)
    except (ValueError, RecursionError):
        raise _damaged(f"{where} is not readable") from None
    if not isinstance(data, dict) or not _whole(data.get("phase")) or not (
            data.get("prev") is None or isinstance(data.get("prev"), dict)):
        raise _damaged(f"{where} has no phase or no reverse diff")
    stamps = data.get("stamps", [])
    if not isinstance(stamps, list) or not all(isinstance(r, list) and len(r) == 4 and _whole(r[0]) for r in stamps):
        raise _damaged(f"{where}: its Orders stamps are not a list of [row, outcome, damage, result]")
    stored.cached[key] = data
    return data


def _previous(stored: Stored, key: str, snap: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshot before ``snap`` (the one of record ``key``), rebuilt and checked."""
    data = record_data(stored, key)
    where = f"the undo record {key}"
    if data["prev"] is None:
        raise _damaged(f"{where} has no reverse diff, yet an older record stands before it")
    try:
        before = apply_patch(snap, data["prev"])
    except ValueError as exc:
        raise _damaged(f"{where}: {exc}") from None
    _history_entry(before, where)
    return before


def undo_snapshot(stored: Stored) -> dict[str, Any] | None:
    """For an Undo: the snapshot the battle before the last phase keeps inline (the one
    the next Undo restores), rebuilt from the inline one and the newest record; ``None``
    when the last phase is the only one left to undo."""
    battle = stored.battle
    if battle is None or not battle.history or len(stored.chain) < 2:
        return None
    return _previous(stored, stored.chain[-1], battle.history[-1])


def full_history(stored: Stored) -> tuple[dict[str, Any], ...]:
    """Every undo snapshot, oldest first, rebuilt from the records (for ``export``, a
    battle file, and the Health-by-phase table of a repair): O(phases), never a step's
    usual path."""
    battle = stored.battle
    if battle is None or not battle.history:
        return ()
    snaps = [dict(battle.history[-1])]
    for key in reversed(stored.chain[1:]):
        snaps.append(_previous(stored, key, snaps[-1]))
    return tuple(reversed(snaps))


def stamps_of(stored: Stored) -> dict[str, list[list[CellValue]]]:
    """Phase -> the Orders stamps of every phase that stands (the undo records' and, for a
    State written before issue 9, its own record of them)."""
    out = {k: v for k, v in stored.stamps.items() if k.isdigit()}
    for key in stored.chain:
        data = record_data(stored, key)
        out[str(data["phase"])] = data["stamps"]
    return out


def step_token(rev: int, step: str, action: str, phase: int) -> str:
    """What a step's Log rows carry in the Step column: ``rev:id:action:phase``, so the
    next step can name a lost step without reading the whole Log."""
    return f"{rev}:{step}:{action}:{phase}"


def _json(data: Any) -> str:
    """Compact JSON text (:func:`sheetsync.sheets.json_bytes.dumps`: the very text of
    ``json.dumps(data, separators=(",", ":"), ensure_ascii=False)`` for plain data, in a
    fraction of its time, issue 12).  An object it cannot encode is a :class:`TypeError`,
    as with ``json``."""
    return dumps(data).decode("utf-8")


def _step_id(body_text: str, rest: Mapping[str, Any]) -> str:
    """A digest of what the step writes (``body_text``: the blob's battle, last result,
    action and phase, as written; ``rest``: the revision, the steps reported, the undo
    chain and the new undo record): two steps that write the very same battle are one
    step (resolving the same orders twice applies once, R13); any difference gives another
    id.  (A build draws a fresh seed when none is typed, so two builds differ.)

    The body is hashed as the blob writes it, not encoded again with sorted keys (issue 12:
    that second encoding was a fifth of a Resolve): the same step builds its dicts in the
    same order from the same read, so it writes the same text."""
    head = dumps(rest, sort_keys=True)  # the text of json.dumps(rest, sort_keys=True), compact
    return hashlib.sha256(b"%s\n%s" % (head, body_text.encode())).hexdigest()[:10]


SHARED_KEYS = ("cohorts", "ranges")
"""The battle's parts that a resolve leaves as they were, so its newest undo snapshot holds
them too: the cohorts are half the State, and the ranges grow with the square of them."""


def _battle_data(battle: Battle, kept: Sequence[str] = ()) -> dict[str, Any]:
    """``battle.to_data()`` with an empty log: the State never holds the log (a step's
    events go to the Log sheet), so it is not dumped only to be dropped (issue 12: after a
    phase it is most of the battle's dump).  ``kept``: the parts of :data:`SHARED_KEYS`
    that are the very objects the battle's newest undo snapshot was dumped from
    (``Battle.snapshot``: a resolve leaves them as they were).  They are taken from that
    dump instead of dumped again, and the undo snapshots as they are (plain JSON data
    already: the engine's dump, or the State's own JSON): the same values in the same
    order, each one object."""
    fields = list(type(battle).model_fields)
    snap = battle.history[-1] if kept and battle.history else None
    if not isinstance(snap, dict) or not all(k in SHARED_KEYS and isinstance(snap.get(k), list) for k in kept):
        kept = ()
    rest = battle.model_dump(mode="json", exclude={*kept, "history", "log", "state"})
    if set(rest) != set(fields) - {*kept, "history", "log", "state"}:
        return {**battle.to_data(), "log": []}
    rest["state"] = state_dump(battle.state)  # each standing dumped once for the same object
    if kept:
        assert snap is not None
        for k in kept:
            rest[k] = snap[k]
        rest["history"] = list(battle.history)
    else:
        rest["history"] = battle.model_dump(mode="json", include={"history"})["history"]
    rest["log"] = []
    return {k: rest[k] for k in fields}


@dataclass
class StateWrite:
    """The State block's update, and the token the step's Log rows carry."""

    update: RangeUpdate
    token: str
    rev: int
    step: str
    extra: list[RangeUpdate] = field(default_factory=list)
    """The undo record rows appended (a resolve; a State moved to records) and the marks in
    column F (an undo): part of the same write."""


def state_update(lay: Layout, battle: Battle, last: dict[str, Any] | None, *, prior: Stored, action: str,
                 phase: int, stamps: Sequence[list[CellValue]] | None = None, undone: bool = False,
                 fresh: bool = False, reported: Sequence[str] = (), kept: Sequence[str] = ()) -> StateWrite:
    """The whole State block for a step (pieces, then blanks to the block's end), whatever
    was there: the last of two simultaneous writes always reads back whole.

    The blob keeps at most one undo snapshot inline (issue 9).  ``stamps`` (the rows this
    resolve stamped) makes it a resolve: its undo record is appended to ``State!C:F`` and
    named at the end of the blob's ``undo`` list.  ``undone`` pops the newest record and
    marks its rows.  ``fresh`` starts the list anew (a build or a load: a new battle, whose
    history, from a battle file, becomes records); otherwise it is carried over.

    ``kept`` names the battle's parts (:data:`SHARED_KEYS`) that are the very objects its
    newest undo snapshot was dumped from (a resolve's new battle): they are then taken from
    that dump instead of dumped again (issue 12, the cohorts are half the State); what is
    written is the same."""
    data = _battle_data(battle, kept)
    history = list(data.get("history") or [])
    newest = _canonical(history[-1]) if history else None
    rev = prior.rev + 1
    record: dict[str, Any] | None = None
    if fresh:  # a new battle: a battle file's whole history becomes records
        new = Stored(battle=battle, rev=prior.rev)
        _migrate(new, history, {}, f"{rev}:h")
        links, appended = list(new.chain), list(new.pending)
    else:
        links, appended = list(prior.chain), list(prior.pending)
    if stamps is not None:
        before = prior.battle.history[-1] if prior.battle is not None and prior.battle.history and links else None
        record = {"phase": phase, "prev": reverse_diff(before, newest if newest is not None else _canonical(history[-1]))
                  if before is not None else None, "stamps": [list(r) for r in stamps]}
    elif undone:
        links = links[:-1]
    data["history"] = [newest] if newest is not None and (links or record is not None) else []
    body: dict[str, Any] = {"battle": data, "last": last, "action": action, "phase": phase}
    body_text = _json(body)
    step = _step_id(body_text, {"rev": rev, "reported": list(reported), "undo": links, "record": record})
    if record is not None:
        links.append(f"{rev}:{step}")
    journal = [*prior.journal, [rev, step, action, phase]][-JOURNAL:]
    tail = {"undo": links, "rev": rev, "step": step, "steps": journal,
            "reported": [*prior.reported, *reported][-REPORTED:],
            "log_checked": prior.log_checked if prior.log_read is None else prior.log_read}
    # the body, encoded once (for the step id), then the rest: the text of {**body, **tail}
    text = body_text[:-1] + "," + _json(tail)[1:]
    pieces = [text[i:i + STATE_CHUNK_CHARS] for i in range(0, len(text), STATE_CHUNK_CHARS)]
    if len(pieces) > STATE_CHUNKS:
        raise BattleStateError("the battle state no longer fits the State sheet; end this battle and start a new tracker")
    # the battle this blob reads back as: the one written, with its one inline snapshot and
    # no log (the tests check it equals what parse_state makes of the text)
    _remember(text, battle.model_copy(update={"history": tuple(data["history"]), "log": ()}),
              {k: v for k, v in (*body.items(), *tail.items()) if k != "battle"})
    block = lay.block("State_Blob")
    rows: list[list[CellValue]] = [[p] for p in pieces]
    rows += [[None] for _ in range(STATE_CHUNKS - len(pieces))]
    token = step_token(rev, step, action, phase)
    if record is not None:
        appended += _record_rows(rev, token, _record_text(record))
    extra: list[RangeUpdate] = []
    hist = lay.block(HISTORY_BLOCK)
    if appended:
        # Below every row this step read, not an append: the same step run twice at once
        # writes the very same cells (applied once), and of two different steps from one
        # read, the one whose write lands last keeps its record, as it keeps the blob.
        extra.append(RangeUpdate(hist.range(), appended, append=True) if prior.free is None
                     else RangeUpdate(hist.row_range(prior.free, len(appended)), appended))
    if undone and prior.chain and prior.chain[-1] in prior.records:
        extra += _mark_records(lay, prior.records[prior.chain[-1]], UNDONE)
    return StateWrite(RangeUpdate(block.range(rows=STATE_CHUNKS), rows), token, rev, step, extra)


def _mark_records(lay: Layout, rec: Record, mark: str | None) -> list[RangeUpdate]:
    """Column F of every row of an undo record (``undone``, ``lost``, or blank again)."""
    hist = lay.block(HISTORY_BLOCK)
    return [RangeUpdate(f"{quote_sheet(hist.sheet)}!{hist.letter('mark')}{hist.first_row + i}", [[mark]])
            for i, now in zip(rec.rows, rec.marks, strict=True) if now != mark]


def lost_steps(stored: Stored, steps: Grid) -> tuple[list[Lost], list[int]]:
    """Steps the Log shows and the State's journal does not: each a step overwritten by one
    run at the same moment.  Rows of steps older than the journal, rows already marked,
    and steps already reported are left alone.  A State without a journal (written before
    it existed) has nothing to compare with.  ``steps`` is the Log's Step column.

    Issue 9: only the rows from ``stored.log_checked`` on are looked at (the rows above
    were checked by the step that stands, see the module's notes), so the check costs the
    same at phase 50 as at phase 1; a Log shorter than that is looked at whole.  Records
    on ``stored`` that this step checked the Log's ``len(steps)`` rows (:attr:`Stored.log_read`).

    Also returns the Log rows written twice by one accepted step (two Trackers ran the very
    same step at the same moment: it was applied once, and its rows appear twice)."""
    stored.log_read = len(steps)
    return find_lost([(e[0], e[1]) for e in stored.journal], stored.reported, stored.log_checked, steps)


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
    * the lost steps' Log rows are marked ``lost`` in the Step column, their undo records
      ``lost`` in column F, and the ``undone`` mark a lost Undo left on a record that stands
      is cleared (issue 9).

    A lost Build Cohorts or Load is not repaired beyond this: the State that stands rewrites
    the computed sheets, and the Tracker is told to run it again.
    """
    battle = stored.battle
    assert battle is not None
    block = lay.block("Orders_Table")
    j = block.index("phase")
    want: dict[int, tuple[int, list[CellValue]]] = {}
    stamps = stamps_of(stored)
    for phase_text, rows in stamps.items():
        if not phase_text.isdigit() or int(phase_text) >= battle.phase:
            continue
        for offset, outcome, damage, result in rows:
            if isinstance(offset, int):  # parse_state checked it is a whole number
                want[offset] = (int(phase_text), [outcome, damage, result])
    recorded = {int(p) for p in stamps if p.isdigit()}
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
    out.append(health_table_update(lay, battle, full_history(stored)))
    if any(x.action == "end" for x in lost):
        out.append(writer.aftermath_updates(lay, []))
    out += mark_rows(lay, steps, [i for x in lost for i in x.rows], "lost")
    standing = set(stored.chain)
    for key in stored.chain:
        if key in stored.records:
            out += _mark_records(lay, stored.records[key], None)
    for x in lost:
        if x.key in stored.records and x.key not in standing:
            out += _mark_records(lay, stored.records[x.key], LOST)
    return out


def health_table_update(lay: Layout, battle: Battle,
                        history: Sequence[Mapping[str, Any]] | None = None) -> RangeUpdate:
    """The whole Health-by-phase table from the State: row 0 the start, row ``k`` after
    phase ``k`` (the undo snapshots: ``history``, by default the battle's own), then the
    current standing; later rows blank."""
    block = lay.block("Battle_HealthByPhase")
    width = len(block.columns)
    names = [c.name for c in battle.cohorts][: width - 1]
    snaps = battle.history if history is None else history
    start = battle.phase - 1 - len(snaps)
    rows: list[list[CellValue]] = []
    for k in range(block.rows or 0):
        row: list[CellValue] = [None] * width
        phase = k
        source: Mapping[str, Any] | None = None
        if start <= phase < battle.phase - 1 and phase - start < len(snaps):
            source = snaps[phase - start].get("state")
        if phase == battle.phase - 1:
            source = {n: {"health": battle.state[n].health} for n in names}
        if isinstance(source, Mapping):
            row[0] = phase
            for c, n in enumerate(names):
                entry = source.get(n)
                row[1 + c] = entry.get("health") if isinstance(entry, Mapping) else None
        rows.append(row)
    return RangeUpdate(block.range(), rows)
