"""The use cases, written once against :class:`SheetBackend`.

Build Cohorts, Resolve Phase, Undo Phase, End Battle, load a battle file into a tracker,
and export a tracker's state.  Each reads everything it needs in one ``read_ranges`` call
and writes everything in one ``write_ranges`` call, so on Google Sheets a step is two
requests and a failed step writes nothing.  The CLI, the Excel buttons, the HTTP endpoint
and the Google Sheets watcher are thin shells around :func:`run`.

Resolving twice is safe: the phase's dice come from the battle's seed and the phase
number, and a resolve only takes Orders rows that carry no phase stamp yet, so a second
resolve of the same phase either finds nothing pending (and is refused) or, when two
Trackers resolve at the very same moment, writes exactly the same cells.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.dice import RandomRoller
from sheetsync.errors import BattleStateError
from sheetsync.rules.bbn import Battle, PhaseResult, aftermath, aftermath_json, resolve_phase
from sheetsync.rules.bbn import undo as undo_phase
from sheetsync.rules.bbn.phase import cohorts_json
from sheetsync.sheets import writer
from sheetsync.sheets.backend import CellValue, RangeUpdate, SheetBackend
from sheetsync.sheets.layout import STATE_CHUNK_CHARS, STATE_CHUNKS, Layout, layout
from sheetsync.sheets.reader import Sheets, parse_battle_setup, parse_turn, read_plan

__all__ = ["ACTIONS", "StepReport", "build_cohorts", "end_battle", "export", "load_battle_into", "resolve", "run", "undo"]


@dataclass
class StepReport:
    """What a step did, for the CLI, the buttons' message box and the watcher."""

    action: str
    phase: int
    message: str
    result: PhaseResult | None = None
    aftermath: dict[str, Any] | None = None
    updates: list[RangeUpdate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "phase": self.phase, "message": self.message}
        if self.result is not None:
            out.update(self.result.to_json())
        if self.aftermath is not None:
            out.update(self.aftermath)
        return out


def _read(backend: SheetBackend, lay: Layout) -> Sheets:
    return Sheets.from_grids(backend.read_ranges(read_plan(lay)))


def _state_update(lay: Layout, battle: Battle, last: dict[str, Any] | None, previous: int = STATE_CHUNKS) -> RangeUpdate:
    """The State sheet holds ``{"battle": ..., "last": <last phase's resolve JSON>}`` in
    pieces; the write covers the pieces written now and clears any left from before
    (``previous`` rows were in use)."""
    data = battle.to_data()
    data["log"] = []
    payload = {"battle": data, "last": last}
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    pieces = [text[i:i + STATE_CHUNK_CHARS] for i in range(0, len(text), STATE_CHUNK_CHARS)]
    if len(pieces) > STATE_CHUNKS:
        raise BattleStateError("the battle state no longer fits the State sheet; end this battle and start a new tracker")
    block = lay.block("State_Blob")
    count = max(len(pieces), min(previous, STATE_CHUNKS))
    rows: list[list[CellValue]] = [[p] for p in pieces] + [[None]] * (count - len(pieces))
    return RangeUpdate(block.range(rows=count), rows)


def _stored(lay: Layout, sh: Sheets) -> tuple[Battle | None, dict[str, Any] | None]:
    """The battle kept in the hidden State sheet, and its last resolve (``None`` before
    Build Cohorts)."""
    from sheetsync.errors import Problem, SheetFormatError

    pieces = [row[0] for row in sh.state if row and isinstance(row[0], str)]
    if not pieces:
        return None, None
    try:
        payload = json.loads("".join(pieces))
        return Battle.from_data(payload["battle"]), payload.get("last")
    except (ValueError, KeyError, TypeError) as exc:
        raise SheetFormatError([Problem("State!A1", f"the stored battle state is damaged ({type(exc).__name__}); "
                                        "restore the workbook's .bak copy")]) from None


def _need_battle(lay: Layout, sh: Sheets) -> tuple[Battle, dict[str, Any] | None]:
    battle, last = _stored(lay, sh)
    if battle is None:
        raise BattleStateError("this tracker has no cohorts yet: fill in Cohorts and Characters, then Build Cohorts")
    return battle, last


def build_cohorts(backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Build Cohorts: Characters + Cohorts Setup → pools (Cohort Sheet 1.1-1.7) and a fresh
    battle at phase 1.  Refused once a phase has been resolved."""
    lay = lay or layout()
    sh = _read(backend, lay)
    old, _ = _stored(lay, sh)
    if old is not None and old.history:
        raise BattleStateError(f"the battle is under way (phase {old.phase}); Build Cohorts would wipe it. "
                               "Undo back to phase 1 first, or start a new tracker")
    battle = parse_battle_setup(lay, sh)
    if battle.seed is None:
        battle = battle.model_copy(update={"seed": secrets.randbelow(10**9)})
    msg = f"Built {len(battle.cohorts)} cohorts: " + ", ".join(
        f"{c.name} (Health {battle.pools[c.name].pools['health']})" for c in battle.cohorts)
    updates = [
        _state_update(lay, battle, None),
        RangeUpdate(lay.cells["Battle_Seed"].ref, [[battle.seed]]),
        *writer.battle_updates(lay, battle, status="Built: type the orders of phase 1", last_action=msg),
        writer.health_header_update(lay, battle),
        writer.health_row_update(lay, battle, 0),
        *writer.log_updates(lay, sh.log_length, [[0, None, None, "Build Cohorts", None, "done", 0, "", "Cohort Sheet",
                                                   msg]]),
        *extra,
    ]
    backend.write_ranges(updates)
    return StepReport("build", battle.phase, msg, updates=updates)


def resolve(backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Resolve Phase (R13): the pending Orders rows, in order; stamps them, appends the
    Log, updates every cohort, and advances the phase."""
    lay = lay or layout()
    sh = _read(backend, lay)
    stored, _ = _need_battle(lay, sh)
    battle, rows = parse_turn(lay, sh, stored)
    if not rows:
        last = stored.phase - 1
        raise BattleStateError(
            f"no pending orders for phase {stored.phase}"
            + (f": phase {last} is already resolved (its rows carry the stamp {last})" if last >= 1 else "")
            + ". Type this phase's orders in empty rows of the Orders sheet, then resolve.")
    result = resolve_phase(battle)
    new = result.battle
    flags = [f for f in result.end_of_phase if f.kind == "flag"]
    hits = sum(1 for e in result.events if e.outcome == "hit")
    refused = sum(1 for e in result.events if e.outcome == "refused")
    msg = (f"Phase {result.phase} resolved: {len(result.events)} orders, {hits} hits, {refused} refused"
           + (f", {len(flags)} flags for the Storyteller" if flags else ""))
    updates = [
        _state_update(lay, new, result.to_json(), len(sh.state)),
        *writer.order_stamp_updates(lay, rows, result.events),
        *writer.log_updates(lay, sh.log_length, writer.phase_log_rows(result)),
        *writer.battle_updates(lay, new, status=f"Phase {result.phase} resolved: type the orders of phase {new.phase}",
                               last_action=msg, breakdown_too=False),
        writer.health_row_update(lay, new, result.phase),
        *extra,
    ]
    backend.write_ranges(updates)
    return StepReport("resolve", result.phase, msg, result=result, updates=updates)


def undo(backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Undo Phase: the battle exactly as before the last resolve; its Orders rows are
    pending again and the Log records the undo (it is never rewritten)."""
    lay = lay or layout()
    sh = _read(backend, lay)
    battle, _ = _need_battle(lay, sh)
    if not battle.history:
        raise BattleStateError("there is no resolved phase to undo")
    before = undo_phase(battle)
    undone = before.phase
    block = lay.block("Orders_Table")
    j = block.index("phase")
    rows = [i for i, row in enumerate(sh.orders) if j < len(row) and row[j] == undone]
    msg = f"Phase {undone} undone: {len(rows)} orders are pending again"
    updates = [
        _state_update(lay, before, None, len(sh.state)),
        *writer.order_unstamp_updates(lay, rows),
        *writer.log_updates(lay, sh.log_length, [[undone, None, None, "Undo Phase", None, "done", 0, "", "",
                                                   f"phase {undone} undone; its results above no longer stand"]]),
        *writer.battle_updates(lay, before, status=f"Phase {undone} undone: fix the orders and resolve again",
                               last_action=msg, breakdown_too=False),
        writer.health_row_update(lay, before, undone, clear=True),
        *extra,
    ]
    backend.write_ranges(updates)
    return StepReport("undo", undone, msg, updates=updates)


def end_battle(backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """End Battle (Battle Aftermath, R26-R30): the Aftermath sheet, using the Aegis burns and
    typed rolls on the Characters sheet."""
    lay = lay or layout()
    sh = _read(backend, lay)
    battle, last = _need_battle(lay, sh)
    fresh = parse_battle_setup(lay, sh)
    aegis = {c.name: c.aegis for c in fresh.cohorts}
    lasting = {c.name: c.lasting_rolls for c in fresh.cohorts}
    entries = aftermath(battle, RandomRoller(f"{battle.seed}:aftermath"), aegis=aegis, lasting_rolls=lasting)
    dead = sum(1 for e in entries if e.dead)
    torpor = sum(1 for e in entries if e.torpor)
    msg = f"Battle ended after phase {battle.phase - 1}: {len(entries)} characters, {dead} dead, {torpor} in Torpor"
    updates = [
        writer.aftermath_updates(lay, entries),
        RangeUpdate(lay.cells["Battle_Status"].ref, [["Ended: see the Aftermath sheet"]]),
        RangeUpdate(lay.cells["Battle_LastAction"].ref, [[msg]]),
        *writer.log_updates(lay, sh.log_length, [[battle.phase - 1, None, None, "End Battle", None, "done", 0, "",
                                                   "Battle Aftermath, R26-R30", msg]]),
        *extra,
    ]
    backend.write_ranges(updates)
    return StepReport("end", battle.phase - 1, msg, aftermath=aftermath_json(entries), updates=updates)


def load_battle_into(backend: SheetBackend, battle: Battle, lay: Layout | None = None) -> StepReport:
    """Write a battle (from a battle file) into a blank tracker: its characters, cohorts,
    ranges, house rules and pending orders as inputs, and its current state."""
    lay = lay or layout()
    if battle.seed is None:
        battle = battle.model_copy(update={"seed": secrets.randbelow(10**9)})
    updates = [*writer.input_updates(lay, battle), _state_update(lay, battle, None),
               RangeUpdate(lay.cells["Battle_Seed"].ref, [[battle.seed]]),
               *writer.battle_updates(lay, battle, status=f"Loaded: phase {battle.phase} to resolve",
                                      last_action="Loaded from a battle file"),
               writer.health_header_update(lay, battle), writer.health_row_update(lay, battle, battle.phase - 1)]
    backend.write_ranges(updates)
    return StepReport("new", battle.phase, f"Tracker holds {len(battle.cohorts)} cohorts, phase {battle.phase} to resolve")


def export(backend: SheetBackend, lay: Layout | None = None) -> dict[str, Any]:
    """The tracker's battle state (and its last resolve's events), shaped like
    ``sheetsync resolve --json``, plus the battle file to script against."""
    from sheetsync.rules.bbn import battle_to_file

    lay = lay or layout()
    sh = _read(backend, lay)
    battle, last = _need_battle(lay, sh)
    out: dict[str, Any] = {"phase": battle.phase, "events": [], "end_of_phase": []}
    if last:
        out["phase"] = last["phase"]
        out["events"] = last["events"]
        out["end_of_phase"] = last.get("end_of_phase", [])
    out["next_phase"] = battle.phase
    out["cohorts"] = cohorts_json(battle)
    out["battle"] = battle_to_file(battle)
    return out


ACTIONS = {"build": build_cohorts, "resolve": resolve, "undo": undo, "end": end_battle}


def run(action: str, backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Run the use case named ``action`` (build, resolve, undo, end) on ``backend``."""
    try:
        step = ACTIONS[action]
    except KeyError:
        raise BattleStateError(f"unknown action {action!r} (expected one of {', '.join(ACTIONS)})") from None
    return step(backend, lay, extra=extra)
