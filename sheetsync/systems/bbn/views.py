"""Readable terminal output (rich tables) for pools, phases, the aftermath and the battle
at a glance (``sheetsync status``), drawn with the generic tables of
:mod:`sheetsync.sheets.terminal`.

Everything reads at 80 columns: names never wrap or shrink to ``Nig…``, headers are short
when the terminal is narrow, and the phase's long texts go on their own lines there."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.text import Text

from sheetsync.sheets.terminal import Col, Frag, Grid, Out, wrap_frags

if TYPE_CHECKING:
    from rich.console import Console

    from sheetsync.systems.bbn.rules import AftermathEntry, Battle, CohortPools, PhaseResult

__all__ = ["Col", "Frag", "Grid", "Out", "health_bar", "print_aftermath", "print_phase", "print_pools", "print_standing",
           "print_status", "print_step", "wrap_frags"]

STATE_STYLE = {"Active": "green", "Scared": "yellow", "Knocked Out": "red", "Stabilized": "cyan", "Dead": "bold white on red"}
OUTCOME_STYLE = {"hit": "bold green", "miss": "yellow", "refused": "bold red", "done": "cyan"}
WIDE = 120
"""At this console width and above, the full tables; below it, the compact ones."""
POOL_HEADERS = {"Actions": "Act", "Health": "HP", "Melee": "Mel", "Ranged": "Rng", "Mystical": "Mys", "Defense": "Def",
                "Temper": "Tmp", "Movement": "Mov", "Resolve": "Res", "Control": "Ctl"}

def _narrow(console: Console) -> bool:
    return console.width < WIDE


def _name_col(header: str, names: Iterable[str]) -> Col:
    """A column of names, as wide as the longest one: never wrapped, never cut."""
    return Col(header, no_wrap=True, min_width=max([len(header), *(len(n) for n in names)]))


def print_pools(console: Console, pools: Iterable[CohortPools], *, breakdown: bool = True) -> None:
    pools = list(pools)
    narrow = _narrow(console)
    out = Out(console)
    cols = [_name_col("Cohort", (p.name for p in pools))]
    for col in ("Actions", "Health", "Melee", "Ranged", "Mystical", "Defense", "Temper", "Movement", "Resolve", "Control"):
        cols.append(Col(POOL_HEADERS[col] if narrow else col, justify="right", no_wrap=True))
    table = Grid("Cohort pools", cols, narrow=narrow)
    keys = ("health", "melee", "ranged", "mystical", "defense", "temper", "movement", "resolve", "control")
    table.add_rows((p.name, str(p.actions), *[str(p.pools[k]) for k in keys]) for p in pools)
    table.print(out)
    if breakdown:
        cols = [Col("Pool", no_wrap=True), Col("From", no_wrap=True), Col("Trait", fold=True),
                Col("+", justify="right", fold=True), Col("Rule", fold=True), Col("Detail", fold=True)]
        for p in pools:
            t = Grid(f"{p.name}: who gave what", cols, narrow=narrow)
            t.add_rows((pool, c.member or "cohort", c.trait, str(c.amount), c.rule_ref, c.detail)
                       for pool, lines in p.breakdown.items() for c in lines if c.amount or c.kind != "base")
            t.print(out)
            if p.not_counted:
                out.paragraph([("  Not counted: " + "; ".join(f"{n.member}: {n.trait} ({n.reason})"
                                                            for n in p.not_counted), "dim")])
    out.print()


def _effects_text(effects: Iterable[Any]) -> str:
    parts = []
    for f in effects:
        if f.member and f.to_state:
            parts.append(f"{f.member} → {f.to_state.value}" + (f" (d{f.roll.sides}={f.roll.value})" if f.roll else ""))
        elif f.text:
            parts.append(f.text)
    return "; ".join(parts)


def _print_phase_narrow(out: Out, result: PhaseResult) -> None:
    """The phase as a list, one order a paragraph: fits 80 columns with nothing cut."""
    title = f"Phase {result.phase}"
    left = max(out.width - len(title), 0) // 2
    out.line([(" " * left, ""), (title, "bold"), (" " * max(out.width - len(title) - left, 0), "")])
    for e in result.events:
        rolls = ", ".join(f"{r.value}{'' if r.source == 'entered' else '*'}" for r in e.rolls if r.sides == 10)
        head: list[Frag] = [(f"{e.order + 1:>2}. ", ""), (e.cohort, "bold")]
        if e.target:
            head.append((f" → {e.target}", ""))
        head.append((f"  {e.task.value}" + (f" ({e.moment.value})" if e.moment else "") + "  ", ""))
        head.append((e.outcome, OUTCOME_STYLE[e.outcome]))
        numbers = []
        if rolls:
            numbers.append(f"d10 {rolls}")
        if e.total is not None and e.defense is not None:
            numbers.append(f"{e.total} vs Def {e.defense}")
        if e.damage:
            numbers.append(f"{e.damage} damage")
        if numbers:
            head.append(("  " + ", ".join(numbers), ""))
        head.append((f"  [{e.rule_ref}]", "dim"))
        out.paragraph(head)
        what = e.reason if e.outcome == "refused" else _effects_text(e.effects)
        if what:
            out.paragraph([("    " + what, "")])


def print_phase(console: Console, result: PhaseResult) -> None:
    out = Out(console)
    if _narrow(console):
        _print_phase_narrow(out, result)
    else:
        cols = [Col(c, justify="right" if c in ("#", "Roll", "Total", "Def", "Dmg") else "left")
                for c in ("#", "Cohort", "Task", "Target", "Roll", "Total", "Def", "Outcome", "Dmg", "Rule",
                          "What happened")]
        table = Grid(f"Phase {result.phase}", cols, narrow=False)
        for e in result.events:
            rolls = ", ".join(f"{r.value}{'' if r.source == 'entered' else '*'}" for r in e.rolls if r.sides == 10)
            what = e.reason if e.outcome == "refused" else _effects_text(e.effects)
            table.add_row(
                str(e.order + 1), e.cohort, e.task.value + (f" ({e.moment.value})" if e.moment else ""), e.target or "",
                rolls, "" if e.total is None else str(e.total), "" if e.defense is None else str(e.defense),
                [(e.outcome, OUTCOME_STYLE[e.outcome])], str(e.damage or ""), e.rule_ref, what or "",
            )
        table.print(out)
    out.paragraph([("  * rolled by sheetsync; other dice were typed in (R25)", "dim")])
    for f in result.end_of_phase:
        out.paragraph([(f"  End of phase: {f.cohort}: {f.text} ({f.rule_ref})", "magenta" if f.kind == "flag" else "dim")])
    _standing(out, result.battle)
    out.print()


def print_step(console: Console, data: dict[str, Any], result: PhaseResult) -> None:
    """A resolved step as every system's views print it (``data``, its JSON; ``result``, the
    engine's result): here the phase's table, :func:`print_phase`."""
    print_phase(console, result)


def _members_frags(battle: Battle, name: str) -> list[Frag]:
    """Members grouped by state (Tasks 5.12): ``Active 3: Marcus, Ana, Ben · Scared 1: Cy``."""
    from sheetsync.systems.bbn.rules import State

    states = battle.state[name].states
    out: list[Frag] = []
    for state in State:
        members = [m for m, s in states.items() if s is state]
        if not members:
            continue
        if out:
            out.append((" · ", ""))
        out.append((f"{state.value} {len(members)}", STATE_STYLE[state.value]))
        out.append((": " + ", ".join(members), ""))
    return out


def _standing(out: Out, battle: Battle) -> None:
    narrow = _narrow(out.console)
    cols = [_name_col("Cohort", (c.name for c in battle.cohorts)), Col("Side", no_wrap=True)]
    cols += [Col(c, justify="right", no_wrap=True) for c in ("Health", "Temper", "Control")]
    cols.append(Col("Members"))
    table = Grid(f"Standing before phase {battle.phase}", cols, narrow=narrow)
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        max_h = battle.pools[spec.name].pools["health"]
        table.add_row(spec.name, spec.side + (", support" if spec.support else ""),
                      [(f"{st.health}/{max_h}", "red" if st.health <= 0 else "")],
                      str(st.temper), str(st.control), _members_frags(battle, spec.name))
    table.print(out)


def print_standing(console: Console, battle: Battle) -> None:
    out = Out(console)
    _standing(out, battle)
    out.print()


def print_aftermath(console: Console, entries: list[AftermathEntry]) -> None:
    narrow = _narrow(console)
    cols = [_name_col("Cohort", (e.cohort for e in entries)), _name_col("Character", (e.name for e in entries))]
    short = {"Damage": "Dmg", "Aggravated": "Agg", "Lethal": "Let", "Temper back": "Tmp+"}
    for col in ("Damage", "Aggravated", "Lethal", "Aegis", "Torpor", "Lasting effect", "Temper back"):
        if col == "Lasting effect":
            cols.append(Col(col, fold=True))
        else:
            cols.append(Col(short.get(col, col) if narrow else col, justify="right", no_wrap=True))
    table = Grid("Battle aftermath", cols, narrow=narrow)
    for e in entries:
        if e.dead:
            table.add_row(e.cohort, [(e.name, "bold red")], [("DEAD: removed from play (R30)", "bold red")],
                          "", "", "", "", "", "")
            continue
        lasting = f"{e.lasting_effect.band}+: d10={e.lasting_effect.roll} → {e.lasting_effect.result}" if e.lasting_effect else ""
        table.add_row(e.cohort, e.name, str(e.damage), str(e.aggravated), str(e.lethal), str(e.aegis),
                      "yes" if e.torpor else "", lasting, str(e.temper_returned))
    out = Out(console)
    table.print(out)
    out.print()


def _bar_frags(health: int, max_health: int, width: int = 20) -> list[Frag]:
    share = 0.0 if max_health <= 0 else max(0.0, min(1.0, health / max_health))
    full = round(share * width)
    style = "green" if share >= 0.5 else "yellow" if share >= 0.25 else "red"
    return [("█" * full, style), ("░" * (width - full), "dim")]


def health_bar(health: int, max_health: int, width: int = 20) -> Text:
    """Health as a bar of ``width`` cells, green, yellow under half, red under a quarter."""
    return Text.assemble(*_bar_frags(health, max_health, width))


def print_status(console: Console, battle: Battle, *, status: str | None = None) -> None:
    """``sheetsync status``: the battle at a glance, at any width from 80 columns up.  The
    phase, then per cohort its Health as a bar, temper, control and actions left this phase
    (Actions 4, R11), and its members grouped by state (Tasks 5.12)."""
    from sheetsync.systems.bbn.rules.pools import actions_available

    out = Out(console)
    resolved = len(battle.history)
    out.paragraph([(f"Phase {battle.phase} to resolve", "bold"),
                   (f"  ({resolved} resolved)" if resolved else "  (none resolved yet)", "dim")])
    if status:
        out.paragraph([(status, "italic")])
    name_width = max(len(c.name) for c in battle.cohorts) if battle.cohorts else 0
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        max_h = battle.pools[spec.name].pools["health"]
        out.plain("")
        out.paragraph([(spec.name.ljust(name_width), "bold"), ("  ", ""), *_bar_frags(st.health, max_h),
                       (f" {st.health}/{max_h} Health", "bold red" if st.health <= 0 else "")])
        side = spec.side + (", support" if spec.support else "")
        actions = actions_available(st.states.values(), battle.house_rules)
        out.paragraph([(f"  {side} · Temper {st.temper} · Control {st.control} · Actions left {actions}", "")])
        out.paragraph([("  ", ""), *_members_frags(battle, spec.name)])
    out.print()
