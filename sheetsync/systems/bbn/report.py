"""The after-action report of a battalion battle (issue 11, part 3; the rules' Reporter,
who "tracks the tale of what the Cohort did").

What happened is read from the battle's history: the battle as it stood before each
resolved phase, orders included (a battle file's ``history``, written by ``resolve --out``,
or the tracker's hidden State sheet).  Each phase is resolved again from that record with
the battle's own dice (R25: the seed and the phase number; typed dice are in the orders)
and the result is checked against the standing recorded after it, so every line below is
the engine's own event.  A battle file's ``log`` is checked against the replay too.
"""

from __future__ import annotations

from typing import Any

from sheetsync.core.account import Account, Chart, Group, Line, ReportSource, StepBlock
from sheetsync.core.dice import RandomRoller
from sheetsync.core.errors import SheetSyncError
from sheetsync.systems.bbn.rules import Battle, aftermath, resolve_phase
from sheetsync.systems.bbn.rules.aftermath import AftermathEntry
from sheetsync.systems.bbn.rules.models import State, Task
from sheetsync.systems.bbn.rules.phase import Effect, Event

__all__ = ["account", "event_line", "replay"]

_ATTACKS = {Task.MELEE: "struck", Task.RANGED: "shot at", Task.MYSTICAL: "struck with blood magic at"}
_CONTESTS = (Task.INSPIRE, Task.INTIMIDATE, Task.ANALYZE)


def _ref(text: str, rule: str) -> str:
    return f"{text} ({rule})" if rule else text


def _dice(e: Event) -> tuple[str, dict[str, Any]]:
    """R25: the d10 that counted, the bonus on top of it and the total against Defense."""
    d10s = [r for r in e.rolls if r.sides == 10 and r.purpose.startswith(("d10", "reroll"))]
    nums: dict[str, Any] = {"total": e.total, "defense": e.defense}
    if not d10s or e.total is None:
        return (f"vs Defense {e.defense}" if e.defense is not None else ""), nums
    counted = d10s[-1].value  # R20: an Inspire token's reroll replaces the first die
    nums.update(roll=counted, bonus=e.total - counted)
    rolled = f"d10 {d10s[0].value}" + "".join(f", rerolled {r.value}" for r in d10s[1:])
    text = f"{rolled} + {e.total - counted} = {e.total}"
    if e.defense is not None:
        text += f" vs Defense {e.defense}"
    return text, nums


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _effect_text(f: Effect) -> str:
    if f.kind in ("casualty", "scared") and f.member and f.to_state:
        return f"{f.member} ({f.cohort}) {f.to_state.value}"
    if f.member and f.text and f.member not in f.text:
        return f"{f.member} ({f.cohort}): {f.text}"
    return f.text or f.kind


def event_line(e: Event) -> Line:
    """Tasks 5.1-5.13: one resolved order in words, with its numbers and its rule."""
    rule = e.rule_ref
    nums: dict[str, Any] = {"damage": e.damage}
    target = f" {e.target}" if e.target else ""
    if e.outcome == "refused":
        text = f"{_possessive(e.cohort)} {e.task.value}{' on' + target if e.target else ''} was refused: {e.reason or 'refused'}"
        return Line(_ref(text, rule), rule, numbers=nums)
    dice, more = _dice(e)
    nums.update(more)
    if e.task in _ATTACKS:
        if e.outcome == "hit":
            how = dice if dice.startswith("d10") else "a sure hit" + (f", {dice}" if dice else "")
            text = f"{e.cohort} {_ATTACKS[e.task]} {e.target} for {e.damage} ({how}, {rule})"
        else:
            text = f"{_possessive(e.cohort)} {e.task.value} on {e.target} missed ({dice}, {rule})"
        rule_line = text
    elif e.task == Task.HERO_MOMENT:
        moment = e.moment.value if e.moment else "Hero Moment"
        what = "; ".join(f.text for f in e.effects if f.text) or "done"
        rule_line = f"{e.member or e.cohort} of {e.cohort} took a Hero Moment, {moment}: {what} ({rule})"
    elif e.task in _CONTESTS and e.outcome in ("hit", "miss"):
        word = "succeeded" if e.outcome == "hit" else "failed"
        rule_line = f"{_possessive(e.cohort)} {e.task.value}{' on' + target if e.target else ''} {word} ({dice}, {rule})"
    else:
        what = "; ".join(_effect_text(f).removeprefix(f"{e.task.value}: ") for f in e.effects) or e.outcome
        rule_line = f"{e.cohort}: {e.task.value}{' for' + target if e.target else ''}: {what} ({rule})"
    if e.task in _ATTACKS and e.effects:
        rule_line += "; " + "; ".join(_grouped(e.effects, rule))
    return Line(rule_line, rule, numbers=nums)


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _grouped(effects: tuple[Effect, ...], rule: str = "") -> list[str]:
    """Effects in words, members of one cohort who changed alike told together
    ("G1, G2 and G3 of Ghoul Pack Scared"), each citing its rule when it is not ``rule``."""
    order: list[tuple[Any, ...]] = []
    members: dict[tuple[Any, ...], list[str]] = {}
    for f in effects:
        if f.member and f.to_state:
            state_only = f.kind in ("casualty", "scared")
            key: tuple[Any, ...] = ("m", f.cohort, f.to_state, "" if state_only else f.text, f.rule_ref)
        else:
            key = ("t", f.cohort, _effect_text(f), f.rule_ref, len(order))
        if key not in members:
            order.append(key)
            members[key] = []
        if f.member:
            members[key].append(f.member)
    out = []
    for key in order:
        ref = key[4] if key[0] == "m" else key[3]
        if key[0] == "m":
            state = key[2].value if isinstance(key[2], State) else str(key[2])
            text = f"{_names(members[key])} of {key[1]}" + (f" {state}" if not key[3] else f": {key[3]}")
        else:
            text = key[2]
        out.append(_ref(text, ref) if ref != rule else text)
    return out


def _end_lines(effects: tuple[Effect, ...]) -> list[Line]:
    """What the end of the phase did (Tasks 5.6, 5.7, R18, R19), alike members together."""
    lines = []
    for text in _grouped(effects):
        ref = text[text.rfind("(") + 1:-1] if text.endswith(")") else ""
        lines.append(Line(f"End of phase: {text}", ref, kind="end"))
    return lines


def _snapshot(snap: dict[str, Any]) -> Battle:
    data = {k: v for k, v in snap.items() if k != "log_length"}
    return Battle.model_validate({**data, "history": (), "log": ()})


def replay(battle: Battle) -> list[tuple[Battle, Any, str | None]]:
    """R25: each recorded phase resolved again from the battle as it stood before it: the
    battle before, its :class:`PhaseResult`, and a problem when the replay does not reach
    the standing recorded after it."""
    out: list[tuple[Battle, Any, str | None]] = []
    snaps = list(battle.history)
    for i, snap in enumerate(snaps):
        before = _snapshot(snap)
        result = resolve_phase(before)
        after = _snapshot(snaps[i + 1]).state if i + 1 < len(snaps) else battle.state
        problem = None
        got = {k: v.model_dump(mode="json") for k, v in result.battle.state.items()}
        want = {k: v.model_dump(mode="json") for k, v in after.items()}
        if got != want:
            problem = (f"Phase {before.phase} does not replay to the standing recorded after it (was the record "
                       "edited by hand?): the lines below are the engine's replay of its orders and dice")
        elif battle.log:
            logged = [e for e in battle.log if e.get("phase") == before.phase]
            if logged and logged != [e.model_dump(mode="json") for e in result.events]:
                problem = (f"Phase {before.phase}: the battle file's log differs from the replay of its orders; "
                           "the lines below are the replay, which reaches the recorded standing")
        out.append((before, result, problem))
    return out


def _roles(battle: Battle, name: str) -> str:
    spec = battle.spec[name]
    parts = [f"Sergeant {spec.sergeant_name}"]
    if spec.tracker:
        parts.append(f"Tracker {spec.tracker}")
    if spec.reporter:
        parts.append(f"Reporter {spec.reporter}")
    if spec.support:
        parts.append("Support cohort")
    return ", ".join(parts)


def _aftermath(src: ReportSource, battle: Battle) -> tuple[list[AftermathEntry] | None, str | None]:
    """R26-R30: on a tracker, what End Battle writes (its Aftermath sheet's Aegis and typed
    dice included), read without writing; on a battle file, the same dice as ``sheetsync
    aftermath FILE``."""
    if src.backend is None:
        return aftermath(battle, RandomRoller(f"{battle.seed}:aftermath")), None
    from sheetsync.sheets import marks as steps
    from sheetsync.sheets.backend import DryRunBackend

    try:
        report = steps.run("end", DryRunBackend(src.backend))
    except SheetSyncError as exc:
        return None, f"The aftermath could not be worked out: {exc}"
    chars = (report.aftermath or {}).get("characters", [])
    return [AftermathEntry.model_validate(c) for c in chars], None


def _aftermath_line(e: AftermathEntry) -> Line:
    if e.dead:
        return Line(f"{e.name} ({e.cohort}) is dead, removed from play (R30)", "R30")
    text = f"{e.name} ({e.cohort}): {e.damage} damage, {e.aggravated} Aggravated and {e.lethal} Lethal"
    if e.aegis:
        text += f" after {e.aegis} Aegis"
    if e.torpor:
        text += ", in Torpor"
    if e.lasting_effect:
        le = e.lasting_effect
        text += f"; lasting effect ({le.band}+, d10 {le.roll}): {le.result}"
    if e.temper_returned:
        text += f"; {e.temper_returned} temper back"
    return Line(text + " (R26-R30)", "R26-R30")


def account(src: ReportSource) -> Account:
    """Issue 11 part 3, for the battalion rules: sides and cohorts, each phase's orders in
    words (Tasks 5.1-5.13), Hero Moments (Hero Moments 1.1-1.5), casualties (Tasks 5.11.2,
    5.12, R16), the aftermath (R26-R30) and Health by phase."""
    battle: Battle = src.battle
    notes: list[str] = []
    phases = replay(battle)
    if not phases:
        pending = len(battle.orders)
        started = any(st.health != battle.pools[n].pools["health"] or any(s != State.ACTIVE for s in st.states.values())
                      for n, st in battle.state.items())
        if battle.phase > 1 or started:
            notes.append(f"This battle holds only its standing before phase {battle.phase}, not the phases that led "
                         "to it, so no step can be told. A battle file keeps its history when each phase is resolved "
                         "with `sheetsync resolve FILE --out next.yaml`; a tracker keeps it in its State sheet.")
        else:
            notes.append(f"No phase has been resolved yet: phase 1 has {pending} declared "
                         f"order{'s' if pending != 1 else ''} waiting, and every cohort is at full Health.")
    elif phases[0][0].phase > 1:
        notes.append(f"This record starts at phase {phases[0][0].phase}: the phases before it are not in it.")
    groups = []
    final = battle.state
    for spec in battle.cohorts:
        st = final[spec.name]
        members = []
        for m in spec.members:
            state = st.states.get(m.name, State.ACTIVE)
            died = st.died_in_phase.get(m.name)
            members.append(m.name + ("" if state == State.ACTIVE else
                                     f" ({state.value}{f', phase {died}' if died else ''})"))
        health = battle.pools[spec.name].pools["health"]
        groups.append(Group(spec.name, spec.side, members,
                            f"{_roles(battle, spec.name)}; Health {st.health} of {health}"))
    steps: list[StepBlock] = []
    heroes: list[Line] = []
    casualties: list[Line] = []
    for before, result, problem in phases:
        lines = [event_line(e) for e in result.events]
        lines += _end_lines(result.end_of_phase)
        steps.append(StepBlock(f"Phase {before.phase}", lines, problem))
        for e, ln in zip(result.events, lines, strict=False):
            if e.task == Task.HERO_MOMENT and e.outcome != "refused":
                heroes.append(Line(f"Phase {before.phase}: {ln.text}", ln.rule_ref))
            for f in e.effects:
                if f.kind == "casualty" and f.member and f.to_state:
                    casualties.append(Line(f"Phase {before.phase}: {f.member} of {f.cohort} {f.to_state.value}, "
                                           f"hit by {e.cohort} ({f.rule_ref})", f.rule_ref))
        for f in result.end_of_phase:
            if f.member and f.to_state in (State.KNOCKED_OUT, State.DEAD):
                casualties.append(Line(f"End of phase {before.phase}: {f.member} of {f.cohort} {f.to_state.value} "
                                       f"({f.rule_ref})", f.rule_ref))
    after_lines: list[Line] = []
    if phases:
        entries, problem = _aftermath(src, battle)
        if problem:
            notes.append(problem)
        after_lines = [_aftermath_line(e) for e in entries or []]
    charts = []
    if phases:
        labels = tuple([f"before {phases[0][0].phase}"] + [f"after {b.phase}" for b, _, _ in phases])
        series = {spec.name: tuple(float(b.state[spec.name].health) for b, _, _ in phases)
                  + (float(final[spec.name].health),) for spec in battle.cohorts}
        charts.append(Chart("Health by phase", labels, series, "line", "Health"))
    title = _title(src.name)
    return Account(title=title, system_title="Battalion combat (Baltimore by Night)", source=src.name,
                   group_word="Cohort", step_word="phase", groups=groups, steps=steps, heroes=heroes,
                   casualties=casualties, aftermath=after_lines, charts=charts, notes=notes)


def _title(name: str) -> str:
    from pathlib import PurePath

    if "://" in name:
        return "the shared battle"
    return PurePath(name).stem or name
