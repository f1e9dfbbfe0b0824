"""The battalion tracker's steps as pure functions of one read (issue 9, "Generic middle").

:class:`BbnSteps` is the battalion system's :class:`~sheetsync.core.system.TrackerSteps`:
the grids of :func:`~sheetsync.systems.bbn.tracker.reader.read_plan` go in, a report and the updates
of the step's one write come out, and no backend is touched here.  The envelope around
them (one ``read_ranges``, one ``write_ranges``, the buttons' extra updates riding along)
is :mod:`sheetsync.app.usecases`, written once for every rule system.

* **build** (Cohort Sheet 1.1-1.7): Characters + Cohorts Setup give the pools and a fresh
  battle at phase 1; refused once a phase has been resolved.
* **resolve** (R13): the pending Orders rows, in order; stamps them, appends the Log,
  updates every cohort and advances the phase.
* **undo** (R25): the battle exactly as before the last resolve; its rows pending again.
* **end** (Battle Aftermath, R26-R30): the Aftermath sheet.

Every step first checks the State against the Log (:func:`journal`): a step lost to one
run at the same moment is refused with :class:`~sheetsync.core.system.StepRefused`, whose
updates (the repair) are that refused step's one write.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.core.dice import RandomRoller
from sheetsync.core.errors import BattleStateError, SheetFormatError
from sheetsync.core.system import StepRefused
from sheetsync.sheets import read_from as rf
from sheetsync.sheets.backend import CellValue, Grid, RangeUpdate
from sheetsync.sheets.step_report import StepReport
from sheetsync.sheets.steps import CheckReport, Refusal
from sheetsync.systems.bbn.files.loader import battle_to_file
from sheetsync.systems.bbn.rules import Battle, aftermath, aftermath_json, resolve_phase
from sheetsync.systems.bbn.rules import undo as undo_phase
from sheetsync.systems.bbn.rules.models import forget
from sheetsync.systems.bbn.rules.phase import PhaseResult, cohorts_json
from sheetsync.systems.bbn.tracker import journal as sj
from sheetsync.systems.bbn.tracker import writer
from sheetsync.systems.bbn.tracker.layout import Layout, layout
from sheetsync.systems.bbn.tracker.reader import (
    Sheets,
    check_fits,
    missing_ranges,
    parse_battle_setup,
    parse_turn,
    read_plan,
)

__all__ = ["BbnSteps", "Journal", "check_battle", "journal"]

Step = tuple[StepReport, list[RangeUpdate]]


def _n(count: int, word: str) -> str:
    """``1 hit``, ``2 hits``: a count and its word, singular or plural."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _need(stored: sj.Stored) -> tuple[Battle, dict[str, Any] | None]:
    if stored.battle is None:
        raise BattleStateError("this tracker has no cohorts yet: fill in Cohorts and Characters, then Build Cohorts")
    return stored.battle, stored.last


def _name(action: str, phase: int) -> str:
    label = sj.ACTION_NAMES.get(action, action)
    return f"{label} {phase}" if action in ("resolve", "undo") else label


@dataclass
class Journal:
    """The State as read, with the Log rows to mark in this step's write."""

    stored: sj.Stored
    marks: list[RangeUpdate] = field(default_factory=list)
    note: str = ""


def journal(lay: Layout, sh: Sheets) -> Journal:
    """Read the State and check it against the Log (see :mod:`sheetsync.systems.bbn.tracker.journal`),
    from the step's one read: the Log's Step column is in :func:`read_plan`, so no second
    read is needed.

    A step lost to another run at the same moment is reported here, once: this step is
    refused with :class:`StepRefused` naming the step that stands and the one to run again;
    its updates (the refused step's one write) repair what the lost step left behind and
    record the report, so the next attempt goes ahead.  The same step run twice at once
    (identical writes) was applied once: its doubled Log rows are marked, and the step goes
    ahead with a note."""
    stored = sj.parse_state(sh.state, sh.history)
    if stored.battle is None:
        return Journal(stored)
    lost, twice = sj.lost_steps(stored, sh.log)
    marks = sj.mark_rows(lay, sh.log, twice, "duplicate")
    note = ""
    if twice:
        entry = stored.journal[-1]
        note = f" (note: {_name(str(entry[2]), int(entry[3]))} was run twice at the same moment and applied once)"
    if not lost:
        return Journal(stored, marks, note)
    battle = stored.battle
    by_rev = {int(e[0]): e for e in stored.journal}

    def stands(x: sj.Lost) -> str:
        entry = by_rev.get(x.rev, stored.journal[-1])
        return _name(str(entry[2]), int(entry[3]))

    msg = sj.collision_message(lost, stands, _name, f"phase {battle.phase}", stored.rev)
    write = sj.state_update(lay, battle, stored.last, prior=stored, action="repair", phase=battle.phase - 1,
                            reported=[x.key for x in lost])
    updates = [
        write.update,
        *write.extra,
        *sj.repair_updates(lay, stored, sh.orders, lost, sh.log),
        *marks,
        *writer.battle_updates(lay, battle, status=(f"A step was cut short: run {_name(lost[0].action, lost[0].phase)} "
                                                    "again" if all(x.rev > stored.rev for x in lost) else
                                                    f"Two steps collided: run {_name(lost[0].action, lost[0].phase)} "
                                                    "again if it is still wanted"), last_action=msg[:45000]),
        *writer.log_updates(lay, [[battle.phase - 1, None, None, sj.ACTION_NAMES["repair"], None, "refused", 0, "",
                                   "", msg]], step=write.token),
    ]
    raise StepRefused(msg, updates)


def build(lay: Layout, sh: Sheets) -> Step:
    """Build Cohorts (Cohort Sheet 1.1-1.7): Characters + Cohorts Setup → pools and a fresh
    battle at phase 1.  Refused once a phase has been resolved."""
    jr = journal(lay, sh)
    old = jr.stored.battle
    if old is not None and old.history:
        raise BattleStateError(f"the battle is under way (phase {old.phase}); Build Cohorts would wipe it. "
                               "Undo back to phase 1 first, or start a new tracker")
    battle = parse_battle_setup(lay, sh)
    if battle.seed is None:
        battle = battle.model_copy(update={"seed": secrets.randbelow(10**9)})
    warnings = missing_ranges(lay, sh, battle)
    msg = f"Built {_n(len(battle.cohorts), 'cohort')}: " + ", ".join(
        f"{c.name} (Health {battle.pools[c.name].pools['health']})" for c in battle.cohorts) + jr.note
    if warnings:
        msg += f". Warning: {_n(len(warnings), 'enemy pair')} with no range yet; set them on the Ranges sheet (R24)"
    state = sj.state_update(lay, battle, None, prior=jr.stored, action="build", phase=0, fresh=True)
    updates = [
        state.update,
        *state.extra,
        *jr.marks,
        RangeUpdate(lay.cells["Battle_Seed"].ref, [[battle.seed]]),
        *writer.battle_updates(lay, battle, status="Built: type the orders of phase 1", last_action=msg),
        writer.health_header_update(lay, battle),
        writer.health_row_update(lay, battle, 0),
        *writer.log_updates(lay, [[0, None, None, "Build Cohorts", None, "done", 0, "", "Cohort Sheet", msg]],
                            step=state.token),
    ]
    return StepReport("build", battle.phase, msg, warnings=warnings), updates


def resolve(lay: Layout, sh: Sheets) -> Step:
    """Resolve Phase (R13): the pending Orders rows, in order; stamps them, appends the
    Log, updates every cohort, and advances the phase."""
    jr = journal(lay, sh)
    stored, _ = _need(jr.stored)
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
           + (f", {_n(len(flags), 'flag')} for the Storyteller" if flags else "") + jr.note)
    # issue 9: the phase's undo record (its stamps, and how its snapshot turns back into the
    # one before) goes in a new row of State!C:F; the blob keeps only the newest snapshot inline
    block = lay.block("Orders_Table")
    places = [block.cell(i, "cohort") for i in rows]
    # once: the State, the stamps and the Log; a reason naming another order names its cell
    texts = [placed(writer.result_text(e), places) for e in result.events]
    shown = placed_result(result, places)
    stamps: list[list[CellValue]] = [[i, e.outcome, e.damage, t]
                                     for i, e, t in zip(rows, result.events, texts, strict=True)]
    # the engine's new battle keeps the parsed battle's cohorts and ranges, and its newest
    # undo snapshot is that battle's dump: the State then dumps and encodes them once (issue 12)
    kept = [k for k in sj.SHARED_KEYS if getattr(new, k) is getattr(battle, k)]
    state = sj.state_update(lay, new, result.to_json(), prior=jr.stored, action="resolve", phase=result.phase,
                            stamps=stamps, kept=kept)
    updates = [
        state.update,
        *state.extra,
        *jr.marks,
        *writer.order_stamp_updates(lay, rows, result.events, texts),
        *writer.log_updates(lay, writer.phase_log_rows(shown, texts), step=state.token),
        *writer.battle_updates(lay, new, status=f"Phase {result.phase} resolved: type the orders of phase {new.phase}",
                               last_action=msg, breakdown_too=False),
        writer.health_row_update(lay, new, result.phase),
    ]
    return StepReport("resolve", result.phase, msg, result=shown), updates


def undo(lay: Layout, sh: Sheets) -> Step:
    """Undo Phase (R25): the battle exactly as before the last resolve; its Orders rows are
    pending again (dice sheetsync rolled into Roll are cleared, typed ones kept), the
    Aftermath of an End Battle is cleared, and the Log records the undo (it is never
    rewritten)."""
    jr = journal(lay, sh)
    battle, _ = _need(jr.stored)
    if not battle.history:
        raise BattleStateError("there is no resolved phase to undo")
    # issue 9: the battle holds the last phase's snapshot inline; the one before it (what
    # the next undo restores) is rebuilt from the newest undo record, and checked, first
    older = sj.undo_snapshot(jr.stored)
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
           + jr.note)
    state = sj.state_update(lay, before, None, prior=jr.stored, action="undo", phase=undone, undone=True)
    updates = [
        state.update,
        *state.extra,
        *jr.marks,
        *writer.order_unstamp_updates(lay, rows, rolled),
        writer.aftermath_updates(lay, []),
        *writer.log_updates(lay, [[undone, None, None, "Undo Phase", None, "done", 0, "", "",
                                   f"phase {undone} undone; its results above no longer stand"]], step=state.token),
        *writer.battle_updates(lay, before, status=f"Phase {undone} undone: fix the orders and resolve again",
                               last_action=msg, breakdown_too=False),
        writer.health_row_update(lay, before, undone, clear=True),
    ]
    return StepReport("undo", undone, msg), updates


def end(lay: Layout, sh: Sheets) -> Step:
    """End Battle (Battle Aftermath, R26-R30): the Aftermath sheet, using the Aegis burns and
    typed rolls on the Characters sheet."""
    jr = journal(lay, sh)
    battle, last = _need(jr.stored)
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
           + jr.note)
    # End writes the State too (same battle, a new revision): a step run at the same moment
    # as this one is then caught like any other (see state_journal).
    state = sj.state_update(lay, battle, last, prior=jr.stored, action="end", phase=battle.phase - 1)
    updates = [
        state.update,
        *state.extra,
        *jr.marks,
        writer.aftermath_updates(lay, entries),
        RangeUpdate(lay.cells["Battle_Status"].ref, [[f"Battle over after phase {battle.phase - 1}: see the Aftermath "
                                                       "sheet (Undo Phase reopens it)"]]),
        RangeUpdate(lay.cells["Battle_LastAction"].ref, [[msg]]),
        *writer.log_updates(lay, [[battle.phase - 1, None, None, "End Battle", None, "done", 0, "",
                                   "Battle Aftermath, R26-R30", msg]], step=state.token),
    ]
    return StepReport("end", battle.phase - 1, msg, aftermath=aftermath_json(entries)), updates


_ORDER_PATH = re.compile(r"orders\[(\d+)\]")


def placed(text: str, places: Sequence[str]) -> str:
    """``text`` with each ``orders[i]`` the engine names (Actions 4, R13: the order that
    used an action up) as ``places[i]``, the order's cell on a tracker."""
    def one(m: re.Match[str]) -> str:
        i = int(m.group(1))
        return places[i] if i < len(places) else m.group(0)

    return _ORDER_PATH.sub(one, text) if "orders[" in text else text


def placed_result(result: PhaseResult, places: Sequence[str]) -> PhaseResult:
    """``result`` with each refusal's reason :func:`placed` (the same result when none
    names an order), for the Log and what the step reports; the battle keeps the engine's."""
    events = tuple(e.model_copy(update={"reason": placed(e.reason, places)}) if e.reason and "orders[" in e.reason
                   else e for e in result.events)
    if all(a is b for a, b in zip(events, result.events, strict=True)):
        return result
    shown = result.model_copy(update={"events": events})
    forget(shown, "events_json")  # made again from the placed events when read
    return shown


def check_battle(battle: Battle, places: Sequence[str] | None = None) -> CheckReport:
    """R13 dry run: resolve the battle's pending orders on a copy (the engine is pure) and
    keep the refused ones; ``places[i]`` names order ``i`` (default ``orders[i]``)."""
    result = resolve_phase(battle)
    where = list(places) if places is not None else [f"orders[{i}]" for i in range(len(battle.orders))]
    refused = [Refusal(where[i], e.cohort, e.task.value, placed(e.reason or "", where))
               for i, e in enumerate(result.events) if e.outcome == "refused"]
    return CheckReport(result.phase, len(result.events), refused)


_STEPS = {"build": build, "resolve": resolve, "undo": undo, "end": end}


STAMPS = {"Orders_Table": "phase"}
"""R13: the table a Resolve Phase stamps with the phase it resolved; the next one reads it
from its first row not stamped (issue 23, :mod:`sheetsync.sheets.read_from`)."""


class BbnSteps:
    """The battalion tracker's steps laid out with ``lay`` (by default a blank tracker's; a
    tracker recording another capacity in ``State!B2`` is refused there, issue 9)."""

    def __init__(self, lay: Layout | None = None, read_from: rf.ReadFrom | None = None) -> None:
        self.lay = lay or layout()
        self.read_from = read_from
        """Where a Resolve Phase starts reading the Orders and the Log (``State!B3``, issue 23)."""
        self._skipped: list[int] | None = None

    def read_plan(self, action: str | None = None) -> list[str]:
        """The ranges ``action`` reads; a Resolve Phase reads the Orders and the Log's Step
        column from where the step before it left them (issue 23, :mod:`sheetsync.sheets.read_from`)."""
        plan = read_plan(self.lay, action)
        self._skipped = None
        if action != "resolve" or self.read_from is None:
            return plan
        shifted, self._skipped = rf.shift_plan(plan, rf.starts(plan, self.lay, STAMPS, self.read_from))
        return shifted

    def _sheets(self, grids: Sequence[Grid], action: str | None = None) -> Sheets:
        return Sheets.from_grids(list(grids), action)

    def step(self, action: str, grids: Sequence[Grid]) -> Step:
        """Run ``action`` (build, resolve, undo, end) on the grids of :meth:`read_plan`."""
        try:
            fn = _STEPS[action]
        except KeyError:
            raise BattleStateError(f"unknown action {action!r} (expected one of {', '.join(_STEPS)})") from None
        skipped, self._skipped = self._skipped, None
        if skipped is not None:
            grids = rf.pad(grids, skipped)
        sh = self._sheets(grids, action)
        orders = self.lay.block("Orders_Table")
        held = self.read_from if skipped is not None else None
        if held is not None and not (sj.parse_state(sh.state).rev == held.rev and all(
                rf.holds(orders, sh.orders, "phase", start, digest) for start, digest in held.rows.values())):
            raise rf.ReadAgain(action)
        try:
            report, updates = fn(self.lay, sh)
        except StepRefused as refused:
            refused.updates.append(rf.update(None))  # a repair: the next step reads everything
            raise
        before = held.rows.get("Orders_Table") if held is not None else None
        found = rf.next_start(orders, sh.orders, "phase", updates, before[0] if before else 0)
        ahead = rf.ReadFrom(sj.parse_state(sh.state).rev + 1, {"Orders_Table": found} if found else {}, len(sh.log))
        return report, [*updates, rf.update(ahead)]

    def check(self, grids: Sequence[Grid]) -> CheckReport:
        """``sheetsync check`` (R13, issue 8 item 21): what the next Resolve Phase would
        refuse, and why; bad cells come back as refusals too, since a resolve would then
        refuse the whole phase."""
        lay, sh = self.lay, self._sheets(grids)
        stored, _ = _need(sj.parse_state(sh.state, sh.history))
        try:
            battle, rows = parse_turn(lay, sh, stored)
        except SheetFormatError as exc:
            return CheckReport(stored.phase, 0, [Refusal(p.where, "", "", p.message) for p in exc.problems],
                               bad_cells=True)
        if not rows:
            raise BattleStateError(f"no pending orders for phase {stored.phase}: type this phase's orders in empty rows "
                                   "of the Orders sheet, then check again")
        block = lay.block("Orders_Table")
        return check_battle(battle, [block.cell(i, "cohort") for i in rows])

    def export(self, grids: Sequence[Grid]) -> dict[str, Any]:
        """The tracker's battle state (and its last resolve's events), shaped like
        ``sheetsync resolve --json``, plus the battle file to script against (its history
        whole, so the file undoes every phase)."""
        sh = self._sheets(grids)
        stored = sj.parse_state(sh.state, sh.history)
        battle, last = _need(stored)
        battle = battle.model_copy(update={"history": sj.full_history(stored)})
        if stored.last_problem:
            raise BattleStateError(f"State!A1: {stored.last_problem}, so there are no last events to export. Undo "
                                   "Phase and resolve it again rewrites it; the battle itself is intact")
        out: dict[str, Any] = {"phase": battle.phase, "events": [], "end_of_phase": []}
        if last:
            out["phase"] = last["phase"]
            out["events"] = last["events"]
            out["end_of_phase"] = last.get("end_of_phase", [])
        out["next_phase"] = battle.phase
        out["cohorts"] = cohorts_json(battle)
        out["battle"] = battle_to_file(battle)
        return out

    def load_plan(self) -> list[str]:
        """Loading a battle reads nothing: it writes every input and the State afresh."""
        return []

    def load(self, battle: Battle, grids: Sequence[Grid] = ()) -> Step:
        """A battle (from a battle file) into a blank tracker: its characters, cohorts,
        ranges, house rules and pending orders as inputs, and its current state.  A battle
        larger than the tracker's blocks is refused before anything is written (issue 9)."""
        lay = self.lay
        check_fits(lay, battle)
        if battle.seed is None:
            battle = battle.model_copy(update={"seed": secrets.randbelow(10**9)})
        state = sj.state_update(lay, battle, None, prior=sj.Stored(), action="new", phase=battle.phase - 1,
                                fresh=True)
        updates = [*writer.input_updates(lay, battle), state.update, *state.extra,
                   RangeUpdate(lay.cells["Battle_Seed"].ref, [[battle.seed]]),
                   *writer.battle_updates(lay, battle, status=f"Loaded: phase {battle.phase} to resolve",
                                          last_action="Loaded from a battle file"),
                   writer.health_header_update(lay, battle),
                   writer.health_row_update(lay, battle, battle.phase - 1)]
        msg = f"Tracker holds {_n(len(battle.cohorts), 'cohort')}, phase {battle.phase} to resolve"
        return StepReport("new", battle.phase, msg), [*updates, rf.update(None)]  # a new battle: read it all
