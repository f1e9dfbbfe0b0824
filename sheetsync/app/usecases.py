"""The use cases, written once against :class:`SheetBackend`.

Build Cohorts, Resolve Phase, Undo Phase, End Battle, load a battle file into a tracker,
and export a tracker's state.  Each reads everything it needs in one ``read_ranges`` call
and writes everything in one ``write_ranges`` call, so on Google Sheets a step is two
requests and a failed step writes nothing.  The CLI, the Excel buttons, the HTTP endpoint
and the Google Sheets watcher are thin shells around :func:`run`.

Resolving twice is safe: the phase's dice come from the battle's seed and the phase
number, and a resolve only takes Orders rows that carry no phase stamp yet, so a second
resolve of the same phase either finds nothing pending (and is refused) or, when two
Trackers resolve at the very same moment, writes the same State (the same step id) and is
applied once.  Two different steps run at the same moment are caught by the next step
(:mod:`sheetsync.app.state_journal`): it names the one that stands and the one to run again.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.app import state_journal as sj
from sheetsync.app.bbn import writer
from sheetsync.app.bbn.layout import Layout, layout
from sheetsync.app.bbn.reader import (
    Sheets,
    check_fits,
    missing_ranges,
    parse_battle_setup,
    parse_turn,
    read_plan,
)
from sheetsync.app.step_report import StepReport
from sheetsync.dice import RandomRoller
from sheetsync.errors import BattleStateError, SheetFormatError
from sheetsync.rules.bbn import Battle, aftermath, aftermath_json, resolve_phase
from sheetsync.rules.bbn import undo as undo_phase
from sheetsync.rules.bbn.phase import cohorts_json
from sheetsync.sheets.backend import CellValue, RangeUpdate, SheetBackend

__all__ = ["ACTIONS", "CheckReport", "Refusal", "StepReport", "build_cohorts", "check", "check_battle", "end_battle",
           "export", "load_battle_into", "resolve", "run", "tracker_layout", "undo"]


def tracker_layout(backend: SheetBackend) -> Layout:
    """The layout of the tracker ``backend`` holds, at the capacity it records (``State!B2``,
    issue 9), for callers outside :func:`sheetsync.app.steps.run` (which finds it itself).
    A step called with no layout takes a blank tracker's and refuses a bigger tracker at
    ``State!B2``; it never reads one at the wrong rows."""
    from sheetsync.app.steps import detect

    return layout(capacity=detect(backend).capacity)


def _n(count: int, word: str) -> str:
    """``1 hit``, ``2 hits``: a count and its word, singular or plural."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _read(backend: SheetBackend, lay: Layout) -> Sheets:
    return Sheets.from_grids(backend.read_ranges(read_plan(lay)))


def _need(journal: _Journal) -> tuple[Battle, dict[str, Any] | None]:
    if journal.stored.battle is None:
        raise BattleStateError("this tracker has no cohorts yet: fill in Cohorts and Characters, then Build Cohorts")
    return journal.stored.battle, journal.stored.last


def _name(action: str, phase: int) -> str:
    label = sj.ACTION_NAMES.get(action, action)
    return f"{label} {phase}" if action in ("resolve", "undo") else label


@dataclass
class _Journal:
    """The State as read, with the Log rows to mark in this step's write."""

    stored: sj.Stored
    marks: list[RangeUpdate] = field(default_factory=list)
    note: str = ""


def _journal(backend: SheetBackend, lay: Layout, sh: Sheets) -> _Journal:
    """Read the State and check it against the Log (see :mod:`sheetsync.app.state_journal`).

    A step lost to another run at the same moment is reported here, once: this step is
    refused with a message naming the step that stands and the one to run again, and its
    one write repairs what the lost step left behind and records the report, so the next
    attempt goes ahead.  The same step run twice at once (identical writes) was applied
    once: its doubled Log rows are marked, and the step goes ahead with a note."""
    stored = sj.parse_state(sh.state, sh.history)
    if stored.battle is None:
        return _Journal(stored)
    lost, twice = sj.lost_steps(stored, sh.log)
    marks = sj.mark_rows(lay, sh.log, twice, "duplicate")
    note = ""
    if twice:
        entry = stored.journal[-1]
        note = f" (note: {_name(str(entry[2]), int(entry[3]))} was run twice at the same moment and applied once)"
    if not lost:
        return _Journal(stored, marks, note)
    battle = stored.battle
    by_rev = {int(e[0]): e for e in stored.journal}
    parts = []
    for x in lost:
        entry = by_rev.get(x.rev, stored.journal[-1])
        stands, gone = _name(str(entry[2]), int(entry[3])), _name(x.action, x.phase)
        parts.append(f"{gone} and {stands} ran at the same moment; {stands} stands, {gone} was lost: run it again")
    msg = "; ".join(parts) + f". The tracker is at phase {battle.phase}; nothing else was changed by this click."
    write = sj.state_update(lay, battle, stored.last, prior=stored, action="repair", phase=battle.phase - 1,
                            reported=[x.key for x in lost])
    updates = [
        write.update,
        *write.extra,
        *sj.repair_updates(lay, stored, sh.orders, lost, sh.log),
        *marks,
        *writer.battle_updates(lay, battle, status=f"Two steps collided: run {_name(lost[0].action, lost[0].phase)} "
                                                   "again if it is still wanted", last_action=msg[:45000]),
        *writer.log_updates(lay, [[battle.phase - 1, None, None, sj.ACTION_NAMES["repair"], None, "refused", 0, "",
                                   "", msg]], step=write.token),
    ]
    backend.write_ranges(updates)
    raise BattleStateError(msg)


def build_cohorts(backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Build Cohorts: Characters + Cohorts Setup → pools (Cohort Sheet 1.1-1.7) and a fresh
    battle at phase 1.  Refused once a phase has been resolved."""
    lay = lay or layout()
    sh = _read(backend, lay)
    journal = _journal(backend, lay, sh)
    old = journal.stored.battle
    if old is not None and old.history:
        raise BattleStateError(f"the battle is under way (phase {old.phase}); Build Cohorts would wipe it. "
                               "Undo back to phase 1 first, or start a new tracker")
    battle = parse_battle_setup(lay, sh)
    if battle.seed is None:
        battle = battle.model_copy(update={"seed": secrets.randbelow(10**9)})
    warnings = missing_ranges(lay, sh, battle)
    msg = f"Built {_n(len(battle.cohorts), 'cohort')}: " + ", ".join(
        f"{c.name} (Health {battle.pools[c.name].pools['health']})" for c in battle.cohorts) + journal.note
    if warnings:
        msg += f". Warning: {_n(len(warnings), 'enemy pair')} with no range yet; set them on the Ranges sheet (R24)"
    state = sj.state_update(lay, battle, None, prior=journal.stored, action="build", phase=0, fresh=True)
    updates = [
        state.update,
        *state.extra,
        *journal.marks,
        RangeUpdate(lay.cells["Battle_Seed"].ref, [[battle.seed]]),
        *writer.battle_updates(lay, battle, status="Built: type the orders of phase 1", last_action=msg),
        writer.health_header_update(lay, battle),
        writer.health_row_update(lay, battle, 0),
        *writer.log_updates(lay, [[0, None, None, "Build Cohorts", None, "done", 0, "", "Cohort Sheet", msg]],
                            step=state.token),
        *extra,
    ]
    backend.write_ranges(updates)
    return StepReport("build", battle.phase, msg, updates=updates, warnings=warnings)


def resolve(backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Resolve Phase (R13): the pending Orders rows, in order; stamps them, appends the
    Log, updates every cohort, and advances the phase."""
    lay = lay or layout()
    sh = _read(backend, lay)
    journal = _journal(backend, lay, sh)
    stored, _ = _need(journal)
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
    msg = (f"Phase {result.phase} resolved: {_n(len(result.events), 'order')}, {_n(hits, 'hit')}, {refused} refused"
           + (f", {_n(len(flags), 'flag')} for the Storyteller" if flags else "") + journal.note)
    # issue 9: the phase's undo record (its stamps, and how its snapshot turns back into the
    # one before) goes in a new row of State!C:F; the blob keeps only the newest snapshot inline
    stamps: list[list[CellValue]] = [[i, e.outcome, e.damage, writer.result_text(e)] for i, e in zip(rows, result.events, strict=True)]
    state = sj.state_update(lay, new, result.to_json(), prior=journal.stored, action="resolve", phase=result.phase,
                            stamps=stamps)
    updates = [
        state.update,
        *state.extra,
        *journal.marks,
        *writer.order_stamp_updates(lay, rows, result.events),
        *writer.log_updates(lay, writer.phase_log_rows(result), step=state.token),
        *writer.battle_updates(lay, new, status=f"Phase {result.phase} resolved: type the orders of phase {new.phase}",
                               last_action=msg, breakdown_too=False),
        writer.health_row_update(lay, new, result.phase),
        *extra,
    ]
    backend.write_ranges(updates)
    return StepReport("resolve", result.phase, msg, result=result, updates=updates)


def undo(backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Undo Phase: the battle exactly as before the last resolve; its Orders rows are
    pending again (dice sheetsync rolled into Roll are cleared, typed ones kept, R25), the
    Aftermath of an End Battle is cleared, and the Log records the undo (it is never
    rewritten)."""
    lay = lay or layout()
    sh = _read(backend, lay)
    journal = _journal(backend, lay, sh)
    battle, _ = _need(journal)
    if not battle.history:
        raise BattleStateError("there is no resolved phase to undo")
    # issue 9: the battle holds the last phase's snapshot inline; the one before it (what
    # the next undo restores) is rebuilt from the newest undo record, and checked, first
    older = sj.undo_snapshot(journal.stored)
    before = undo_phase(battle)
    if older is not None:
        before = before.model_copy(update={"history": (older,)})
    undone = before.phase
    block = lay.block("Orders_Table")
    j = block.index("phase")
    rows = [i for i, row in enumerate(sh.orders) if j < len(row) and row[j] == undone]
    src = block.index("roll_source")
    rolled = [i for i in rows if src < len(sh.orders[i]) and sh.orders[i][src] == writer.ROLLED]
    msg = (f"Phase {undone} undone: {_n(len(rows), 'order')} {'is' if len(rows) == 1 else 'are'} pending again"
           + journal.note)
    state = sj.state_update(lay, before, None, prior=journal.stored, action="undo", phase=undone, undone=True)
    updates = [
        state.update,
        *state.extra,
        *journal.marks,
        *writer.order_unstamp_updates(lay, rows, rolled),
        writer.aftermath_updates(lay, []),
        *writer.log_updates(lay, [[undone, None, None, "Undo Phase", None, "done", 0, "", "",
                                   f"phase {undone} undone; its results above no longer stand"]], step=state.token),
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
    journal = _journal(backend, lay, sh)
    battle, last = _need(journal)
    if not battle.history:
        raise BattleStateError(f"no phase has been resolved yet, so there is no battle to end (phase {battle.phase} "
                               "is still to resolve). Resolve at least one phase first")
    fresh = parse_battle_setup(lay, sh)
    aegis = {c.name: c.aegis for c in fresh.cohorts}
    lasting = {c.name: c.lasting_rolls for c in fresh.cohorts}
    entries = aftermath(battle, RandomRoller(f"{battle.seed}:aftermath"), aegis=aegis, lasting_rolls=lasting)
    dead = sum(1 for e in entries if e.dead)
    torpor = sum(1 for e in entries if e.torpor)
    msg = (f"Battle ended after phase {battle.phase - 1}: {_n(len(entries), 'character')}, {dead} dead, {torpor} in Torpor"
           + journal.note)
    # End writes the State too (same battle, a new revision): a step run at the same moment
    # as this one is then caught like any other (see state_journal).
    state = sj.state_update(lay, battle, last, prior=journal.stored, action="end", phase=battle.phase - 1)
    updates = [
        state.update,
        *state.extra,
        *journal.marks,
        writer.aftermath_updates(lay, entries),
        RangeUpdate(lay.cells["Battle_Status"].ref, [[f"Battle over after phase {battle.phase - 1}: see the Aftermath "
                                                       "sheet (Undo Phase reopens it)"]]),
        RangeUpdate(lay.cells["Battle_LastAction"].ref, [[msg]]),
        *writer.log_updates(lay, [[battle.phase - 1, None, None, "End Battle", None, "done", 0, "",
                                   "Battle Aftermath, R26-R30", msg]], step=state.token),
        *extra,
    ]
    backend.write_ranges(updates)
    return StepReport("end", battle.phase - 1, msg, aftermath=aftermath_json(entries), updates=updates)


def load_battle_into(backend: SheetBackend, battle: Battle, lay: Layout | None = None) -> StepReport:
    """Write a battle (from a battle file) into a blank tracker: its characters, cohorts,
    ranges, house rules and pending orders as inputs, and its current state.  Without
    ``lay``, the tracker's own capacity (``State!B2``, issue 9) says what it holds."""
    if lay is None:
        from sheetsync.app.steps import detect

        lay = layout(capacity=detect(backend).capacity)
    check_fits(lay, battle)  # a battle larger than the tracker's blocks is refused before anything is written
    if battle.seed is None:
        battle = battle.model_copy(update={"seed": secrets.randbelow(10**9)})
    state = sj.state_update(lay, battle, None, prior=sj.Stored(), action="new", phase=battle.phase - 1, fresh=True)
    updates = [*writer.input_updates(lay, battle), state.update, *state.extra,
               RangeUpdate(lay.cells["Battle_Seed"].ref, [[battle.seed]]),
               *writer.battle_updates(lay, battle, status=f"Loaded: phase {battle.phase} to resolve",
                                      last_action="Loaded from a battle file"),
               writer.health_header_update(lay, battle), writer.health_row_update(lay, battle, battle.phase - 1)]
    backend.write_ranges(updates)
    return StepReport("new", battle.phase, f"Tracker holds {_n(len(battle.cohorts), 'cohort')}, phase {battle.phase} to resolve")


def export(backend: SheetBackend, lay: Layout | None = None) -> dict[str, Any]:
    """The tracker's battle state (and its last resolve's events), shaped like
    ``sheetsync resolve --json``, plus the battle file to script against."""
    from sheetsync.rules.bbn import battle_to_file

    lay = lay or layout()
    sh = _read(backend, lay)
    stored = sj.parse_state(sh.state, sh.history)
    battle, last = _need(_Journal(stored))
    battle = battle.model_copy(update={"history": sj.full_history(stored)})  # the battle file undoes every phase
    if stored.last_problem:
        raise BattleStateError(f"State!A1: {stored.last_problem}, so there are no last events to export. Undo Phase "
                               "and resolve it again rewrites it; the battle itself is intact")
    out: dict[str, Any] = {"phase": battle.phase, "events": [], "end_of_phase": []}
    if last:
        out["phase"] = last["phase"]
        out["events"] = last["events"]
        out["end_of_phase"] = last.get("end_of_phase", [])
    out["next_phase"] = battle.phase
    out["cohorts"] = cohorts_json(battle)
    out["battle"] = battle_to_file(battle)
    return out


@dataclass(frozen=True)
class Refusal:
    """One thing the next Resolve Phase would refuse: an order (R13) or a bad cell."""

    where: str
    """The order's cell (``Orders!B7``) or, in a battle file, its path (``orders[3]``)."""
    cohort: str
    task: str
    reason: str


@dataclass
class CheckReport:
    """What :func:`check` found: ``refusals`` is empty when the next resolve refuses nothing."""

    phase: int
    orders: int
    refusals: list[Refusal] = field(default_factory=list)
    bad_cells: bool = False
    """True when the orders could not be read at all: every refusal is then a bad cell."""

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "orders": self.orders, "bad_cells": self.bad_cells,
                "refusals": [vars(r) for r in self.refusals]}


def check_battle(battle: Battle, places: Sequence[str] | None = None) -> CheckReport:
    """R13 dry run: resolve the battle's pending orders on a copy (the engine is pure) and
    keep the refused ones; ``places[i]`` names order ``i`` (default ``orders[i]``)."""
    result = resolve_phase(battle)
    where = list(places) if places is not None else [f"orders[{i}]" for i in range(len(battle.orders))]
    refused = [Refusal(where[i], e.cohort, e.task.value, e.reason or "")
               for i, e in enumerate(result.events) if e.outcome == "refused"]
    return CheckReport(result.phase, len(result.events), refused)


def check(backend: SheetBackend, lay: Layout | None = None) -> CheckReport:
    """``sheetsync check``: what the next Resolve Phase would refuse, and why, with nothing
    written (issue 8, item 21).  It reads once, as a resolve does; bad cells come back as
    refusals too, since a resolve would then refuse the whole phase."""
    lay = lay or layout()
    sh = _read(backend, lay)
    stored, _ = _need(_Journal(sj.parse_state(sh.state, sh.history)))
    try:
        battle, rows = parse_turn(lay, sh, stored)
    except SheetFormatError as exc:
        return CheckReport(stored.phase, 0, [Refusal(p.where, "", "", p.message) for p in exc.problems], bad_cells=True)
    if not rows:
        raise BattleStateError(f"no pending orders for phase {stored.phase}: type this phase's orders in empty rows "
                               "of the Orders sheet, then check again")
    block = lay.block("Orders_Table")
    return check_battle(battle, [block.cell(i, "cohort") for i in rows])


ACTIONS = {"build": build_cohorts, "resolve": resolve, "undo": undo, "end": end_battle}


def run(action: str, backend: SheetBackend, lay: Layout | None = None, *, extra: Sequence[RangeUpdate] = ()) -> StepReport:
    """Run the use case named ``action`` (build, resolve, undo, end) on ``backend``."""
    try:
        step = ACTIONS[action]
    except KeyError:
        raise BattleStateError(f"unknown action {action!r} (expected one of {', '.join(ACTIONS)})") from None
    return step(backend, lay, extra=extra)
