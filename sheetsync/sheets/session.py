"""The State of a tracker of any rule system but the battalion one (DESIGN "Undo and the
log belong to the Session, not to each system").

Two parts, both on the hidden State sheet:

* **The blob**, JSON in pieces of :data:`CHUNK` characters down column A (the layout's
  ``State_Blob`` block): ``{"mark": "hexwar@1", "battle": <the battle file's data, without
  history>, "rev": n, "step": id, "action": ..., "turn": n, "steps": [[rev, id], ...], ...}``
  plus the system's own keys.  Every step rewrites the *whole* block (pieces, then blanks
  to its end), so of two steps written at the same moment the last leaves one readable
  blob.  ``steps`` is the journal of the last :data:`JOURNAL` accepted steps, each as
  ``[rev, id]`` only (the action and turn of each are in its Log rows' token), so that the
  blob of turn 10 is hardly larger than that of turn 1.
* **The undo records**, one row per resolved turn in ``State!C:E``: ``[rev, step token,
  record JSON]``, *appended* (``RangeUpdate(append=True)``), so a step's write does not
  grow with the number of turns behind it.  Undo takes the newest record whose step is
  in the journal (a record of a step whose blob write was overwritten is not) and not yet
  undone, and marks it ``undone`` in column F of its row.

A step's token (``rev:id:action:turn``, as :func:`sheetsync.systems.bbn.tracker.journal.step_token`
writes the battalion tracker's) goes in the Step column of its Log rows.  Imports no rules.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sheetsync.core.errors import BattleStateError, Problem, SheetFormatError
from sheetsync.core.recent import keep
from sheetsync.sheets.backend import CellValue, Grid, RangeUpdate, parse_range

_B = TypeVar("_B")

__all__ = ["BLOB_RANGE", "CHUNK", "JOURNAL", "RECORDS_HEADER", "RECORDS_RANGE", "Commit", "Record", "Session", "clear_records",
           "commit", "forget_battles", "parse", "stored_battle", "stored_rows",
           "read_ranges", "record_update", "step_token", "undone_update"]

CHUNK = 30_000
"""Characters per State cell (a cell holds at most 32,767 in Excel, 50,000 in Google Sheets)."""

JOURNAL = 20
"""How many accepted steps the blob remembers."""

REPORTED = 40
"""How many reported lost steps the blob remembers."""

BLOB_RANGE = "State!A2:A401"
"""The blob's default block (the layout's ``State_Blob``: a header in A1, 400 pieces)."""

RECORDS_RANGE = "State!C1:F"
"""The undo records: rev, step token, record JSON, and ``undone`` once undone."""

UNDONE = "undone"

RECORDS_HEADER = ("Rev", "Step", "Undo record (JSON)", "Undone")
"""The header a tracker's layout draws over the records (``State!C1:F1``, issue 22.3: it
keeps the State sheet as wide as the records): it is no record, and is passed over."""


KNOWN_BATTLES = 4
"""How many stored battles this process remembers (:func:`stored_battle`)."""

_KNOWN: dict[tuple[str, str], Any] = {}
_KNOWN_LOCK = threading.Lock()


def stored_battle(session: Session, load: Callable[[], _B]) -> _B:
    """The battle ``load()`` makes of ``session``'s blob, remembered by the blob's whole text
    (issue 23: a server's next click reads back the State it read before, whose battle is
    then neither loaded nor checked again; any other text, one character changed, is loaded
    in full).  The battles are frozen models no step changes in place, so a hit is what
    loading would give; a blob that fails to load raises as before and is not remembered."""
    if not session.text:
        return load()
    key = (session.mark, session.text)
    known = _KNOWN.get(key)
    if known is None:
        known = load()
        with _KNOWN_LOCK:
            keep(_KNOWN, key, known, KNOWN_BATTLES)
    out: _B = known
    return out


def forget_battles() -> None:
    """Forget the remembered battles (a benchmark's cold runs; tests)."""
    with _KNOWN_LOCK:
        _KNOWN.clear()


def step_token(rev: int, step: str, action: str, turn: int) -> str:
    """``rev:id:action:turn``, the Step column of a step's Log rows (the battalion
    tracker's format, :func:`sheetsync.systems.bbn.tracker.journal.step_token`)."""
    return f"{rev}:{step}:{action}:{turn}"


_UNREAD: Any = object()


class Record:
    """One undo record row: its sheet row, its step's rev and token, the record (parsed
    JSON, or ``None`` with ``problem`` saying why it can't be read) and whether it was
    undone.

    Issue 23: a record read from the sheet keeps its text and is parsed the first time its
    ``data`` or ``problem`` is asked for, so a step that needs only the newest record (or
    none) does not parse the records of every step behind it."""

    __slots__ = ("row", "rev", "token", "undone", "_data", "_problem", "_text")

    def __init__(self, row: int, rev: int, token: str, data: Any = None, undone: bool = False, problem: str = "",
                 *, text: str | None = None) -> None:
        self.row, self.rev, self.token, self.undone = row, rev, token, undone
        self._text = text
        self._data: Any = _UNREAD if text is not None else data
        self._problem = problem

    def _parse(self) -> None:
        data = _loads(str(self._text))
        problem = ("this undo record can't be read (it was edited)" if data is None else
                   "" if isinstance(data, dict) else "this undo record is not sheetsync's")
        self._data, self._problem = (None if problem else data), problem

    @property
    def data(self) -> Any:
        if self._data is _UNREAD:
            self._parse()
        return self._data

    @property
    def problem(self) -> str:
        if self._data is _UNREAD:
            self._parse()
        return self._problem

    def _key(self) -> tuple[Any, ...]:
        return (self.row, self.rev, self.token, self.data, self.undone, self.problem)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Record(row={self.row!r}, rev={self.rev!r}, token={self.token!r}, data={self.data!r}, "
                f"undone={self.undone!r}, problem={self.problem!r})")

    @property
    def where(self) -> str:
        return f"State!E{self.row}"

    @property
    def step(self) -> str:
        """The step id in the token (``rev:id:action:turn``)."""
        parts = self.token.split(":")
        return parts[1] if len(parts) > 1 else ""


@dataclass
class Session:
    """The State as read: the blob's parts (``battle`` is ``None`` before the first step)
    and the undo records."""

    mark: str = ""
    battle: dict[str, Any] | None = None
    rev: int = 0
    step: str = ""
    action: str = ""
    """The last step's action and turn."""
    turn: int = 0
    steps: list[list[Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    """The system's own keys of the blob (``ended``, the units' rows ...)."""
    records: list[Record] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    """Issue 26: ``rev:id`` of the lost steps already reported (each is reported once)."""
    log_checked: int = 0
    """Issue 26: the Log rows the step that wrote the blob had checked for lost steps."""
    log_read: int | None = None
    """The Log rows this step checked (set by the lost-step check); its blob records it."""
    text: str = field(default="", compare=False, repr=False)
    """The blob's text as read (empty when there is none): the key of :func:`stored_battle`."""

    def journal(self) -> dict[int, str]:
        """The journal as ``{rev: step id}``."""
        return {int(s[0]): str(s[1]) for s in self.steps
                if isinstance(s, list) and len(s) >= 2 and isinstance(s[0], int)}

    def accepted(self, record: Record) -> bool:
        """A record counts when its step (rev *and* id) is in the journal, or when it is
        older than the journal's window; a record of a step whose blob write was
        overwritten by another step's (a collision) does not."""
        journal = self.journal()
        if record.rev > self.rev or not journal:
            return False
        if record.rev in journal:
            return record.step == journal[record.rev]
        return record.rev < min(journal)

    def undo_record(self, turn: int | None = None) -> Record | None:
        """The newest accepted record not yet undone (of ``turn``, when given: a record
        that can't be read counts as any turn, so that undo reports it)."""
        live = [r for r in self.records if not r.undone and self.accepted(r)
                and (turn is None or r.problem or (isinstance(r.data, dict) and r.data.get("turn") == turn))]
        return max(live, key=lambda r: (r.rev, r.row)) if live else None

    def same_step(self, record: Record) -> list[Record]:
        """Every record row of ``record``'s step (two colliding steps that wrote the very
        same turn append the same record twice)."""
        return [r for r in self.records if r.token == record.token]

    def history(self) -> list[Record]:
        """Every accepted record not undone, oldest first (what a battle file's history holds)."""
        return sorted((r for r in self.records if not r.undone and self.accepted(r)), key=lambda r: (r.rev, r.row))


def read_ranges(blob_range: str = BLOB_RANGE) -> list[str]:
    """The two ranges a step reads for its State (add them to the step's one read)."""
    return [blob_range, RECORDS_RANGE]


def _blob_where(blob_range: str) -> str:
    rng = parse_range(blob_range)
    return rng.cell(0, 0)


MAX_DEPTH = 64
"""How deeply the State's JSON may nest; sheetsync's own is a handful of levels deep
(issue 26: a hand-edited State 30,000 levels deep broke the parser's recursion)."""


def _depth_within(data: Any, limit: int) -> bool:
    """Whether ``data`` (parsed JSON) nests no deeper than ``limit``, walked without recursion."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return True


def _loads(text: str) -> Any:
    """The JSON in ``text``, or ``None`` when it is not JSON or nests deeper than
    :data:`MAX_DEPTH` (issue 26: JSON nested past Python's recursion limit raises
    ``RecursionError``, not a ``ValueError``)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if _depth_within(data, MAX_DEPTH) else None


def parse(blob: Grid, records: Grid, *, blob_range: str = BLOB_RANGE, mark: str = "") -> Session:
    """The State from the grids of :func:`read_ranges`.  A blob that is not sheetsync's
    JSON, or that carries another system's mark, raises :class:`SheetFormatError` naming
    its first cell."""
    where = _blob_where(blob_range)
    pieces = [row[0] for row in blob if row and row[0] not in (None, "")]
    session = Session()
    if pieces:
        if not all(isinstance(p, str) for p in pieces):
            raise SheetFormatError([Problem(where, "the State sheet holds something that is not sheetsync's "
                                                   "battle state: restore it, or make a new tracker")])
        blob_text = "".join(str(p) for p in pieces)
        data = _loads(blob_text)
        if not isinstance(data, dict) or not isinstance(data.get("rev"), int) or not isinstance(
                data.get("steps", []), list):
            raise SheetFormatError([Problem(where, "the battle state on the State sheet can't be read (it was "
                                                   "edited or cut short): restore the previous copy, or make a "
                                                   "new tracker")])
        if mark and data.get("mark") not in (None, mark):
            raise SheetFormatError([Problem(where, f"the battle state is of {data.get('mark')!r}, not {mark!r}: "
                                                   "make a new tracker")])
        battle = data.get("battle")
        session = Session(mark=str(data.get("mark") or mark), battle=battle if isinstance(battle, dict) else None,
                          rev=data["rev"], step=str(data.get("step", "")),
                          action=str(data.get("action", "")),
                          turn=data["turn"] if isinstance(data.get("turn"), int) else 0, steps=list(data.get("steps", [])),
                          extra={k: v for k, v in data.items() if k not in ("mark", "battle", "rev", "step",
                                                                            "steps", "action", "turn", "reported",
                                                                            "log_checked")})
        session.text = blob_text
        reported, checked = data.get("reported", []), data.get("log_checked", 0)
        session.reported = [str(r) for r in reported] if isinstance(reported, list) else []
        session.log_checked = checked if isinstance(checked, int) and not isinstance(checked, bool) and checked >= 0 else 0
    first = parse_range(RECORDS_RANGE).row1
    for i, row in enumerate(records):
        cells = [*row, None, None, None, None][:4]
        rev, token, text, undone = cells
        if all(v in (None, "") for v in cells[:3]) or tuple(cells) == RECORDS_HEADER:
            continue
        number = rev if isinstance(rev, int) and not isinstance(rev, bool) else (
            int(rev) if isinstance(rev, float) and rev.is_integer() else -1)
        session.records.append(Record(first + i, number, str(token or ""), text=str(text),
                                      undone=isinstance(undone, str) and undone.strip().casefold() == UNDONE))
    return session


def stored_rows(session: Session, count: int, room: int, *, blob_range: str = BLOB_RANGE) -> list[int]:
    """The table row (offset) of each of ``count`` units the blob's ``rows`` remembers, or
    one after another from the first when it remembers none.  Issue 26: offsets that
    can't be rows of a table of ``room`` rows (a hand-edited ``2**63``, a negative one, two
    alike) are refused, naming the blob's first cell, before any view is laid out by them."""
    stored = session.extra.get("rows")
    if not (isinstance(stored, list) and len(stored) == count
            and all(isinstance(o, int) and not isinstance(o, bool) for o in stored)):
        return list(range(count))
    if any(not 0 <= o < room for o in stored) or len(set(stored)) != len(stored):
        raise SheetFormatError([Problem(_blob_where(blob_range), f"the battle state's table rows {_short(stored)} "
                                        f"are not {count} different rows of the {room} there are (it was edited): "
                                        "restore the previous copy, or make a new tracker")])
    return list(stored)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:50] + "...]"


def _digest(payload: Mapping[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


@dataclass(frozen=True)
class Commit:
    """A step's State write: the whole blob block, the step's rev, id and Log token."""

    update: RangeUpdate
    rev: int
    step: str
    token: str


def commit(prior: Session, *, mark: str, action: str, turn: int, battle: Mapping[str, Any] | None,
           extra: Mapping[str, Any] | None = None, blob_range: str = BLOB_RANGE,
           reported: Sequence[str] = ()) -> Commit:
    """The blob after a step: rev one more, the step's id (a digest of what it writes, so
    two steps writing the very same thing are one step), the journal with this step.

    Issue 26: the blob also keeps the lost steps reported (``reported`` adds to the
    prior's) and how many Log rows this step checked for lost steps
    (:func:`sheetsync.systems.bbn.tracker.journal.find_lost`)."""
    rng = parse_range(blob_range)
    if rng.row2 is None:
        raise ValueError(f"the State blob range {blob_range!r} must have an end")
    rev = prior.rev + 1
    body: dict[str, Any] = {"mark": mark, "battle": dict(battle) if battle is not None else None,
                            **dict(extra if extra is not None else prior.extra)}
    step = _digest({"rev": rev, "action": action, "turn": turn, **body})
    steps = [*prior.steps, [rev, step]][-JOURNAL:]
    tail: dict[str, Any] = {"rev": rev, "step": step, "action": action, "turn": turn, "steps": steps}
    said = [*prior.reported, *reported][-REPORTED:]
    if said:
        tail["reported"] = said
    checked = prior.log_checked if prior.log_read is None else prior.log_read
    if checked:
        tail["log_checked"] = checked
    text = json.dumps({**body, **tail}, separators=(",", ":"), ensure_ascii=False)
    pieces = [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)]
    size = rng.row2 - rng.row1 + 1
    if len(pieces) > size:
        raise BattleStateError("the battle state no longer fits the State sheet; end this battle and start a new "
                               "tracker")
    rows: list[list[CellValue]] = [[p] for p in pieces]
    rows += [[None] for _ in range(size - len(pieces))]
    return Commit(RangeUpdate(blob_range, rows), rev, step, step_token(rev, step, action, turn))


def record_update(done: Commit, record: Mapping[str, Any]) -> RangeUpdate:
    """Append one undo record row ``[rev, token, JSON]`` below everything on the State sheet."""
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    if len(text) > CHUNK:
        raise BattleStateError(f"this turn's undo record is {len(text)} characters, more than a cell holds "
                               f"({CHUNK}); resolve fewer orders in one turn")
    rng = parse_range(RECORDS_RANGE)
    return RangeUpdate(f"State!C{rng.row1}:E{rng.row1}", [[done.rev, done.token, text]], append=True)


def undone_update(record: Record) -> RangeUpdate:
    """Mark ``record`` undone (column F of its row), a plain write at its known row."""
    return RangeUpdate(f"State!F{record.row}", [[UNDONE]])


def clear_records(records: Sequence[Record]) -> list[RangeUpdate]:
    """Blank every record row (a tracker loaded afresh)."""
    return [RangeUpdate(f"State!C{r.row}:F{r.row}", [[None, None, None, None]]) for r in records]
