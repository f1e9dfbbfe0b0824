"""Readable terminal output (rich tables) for pools, phases, the aftermath and the battle
at a glance (``sheetsync status``).

Everything reads at 80 columns: names never wrap or shrink to ``Nig…``, headers are short
when the terminal is narrow, and the phase's long texts go on their own lines there."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sheetsync.rules.bbn import AftermathEntry, Battle, CohortPools, PhaseResult

__all__ = ["health_bar", "print_aftermath", "print_phase", "print_pools", "print_standing", "print_status"]

STATE_STYLE = {"Active": "green", "Scared": "yellow", "Knocked Out": "red", "Stabilized": "cyan", "Dead": "bold white on red"}
OUTCOME_STYLE = {"hit": "bold green", "miss": "yellow", "refused": "bold red", "done": "cyan"}
WIDE = 120
"""At this console width and above, the full tables; below it, the compact ones."""
POOL_HEADERS = {"Actions": "Act", "Health": "HP", "Melee": "Mel", "Ranged": "Rng", "Mystical": "Mys", "Defense": "Def",
                "Temper": "Tmp", "Movement": "Mov", "Resolve": "Res", "Control": "Ctl"}


def _narrow(console: Console) -> bool:
    return console.width < WIDE


def _table(console: Console, title: str) -> Table:
    """A table that fits: on a narrow console, light borders and tight padding."""
    if _narrow(console):
        return Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    return Table(title=title, header_style="bold")


def _name_column(table: Table, header: str, names: Iterable[str]) -> None:
    """A column of names, as wide as the longest one: never wrapped, never cut."""
    width = max([len(header), *(len(n) for n in names)])
    table.add_column(header, no_wrap=True, min_width=width)


def print_pools(console: Console, pools: Iterable[CohortPools], *, breakdown: bool = True) -> None:
    pools = list(pools)
    table = _table(console, "Cohort pools")
    _name_column(table, "Cohort", (p.name for p in pools))
    for col in ("Actions", "Health", "Melee", "Ranged", "Mystical", "Defense", "Temper", "Movement", "Resolve", "Control"):
        table.add_column(POOL_HEADERS[col] if _narrow(console) else col, justify="right", no_wrap=True)
    for p in pools:
        v = p.pools
        table.add_row(p.name, str(p.actions), *(str(v[k]) for k in ("health", "melee", "ranged", "mystical", "defense",
                                                                      "temper", "movement", "resolve", "control")))
    console.print(table)
    if not breakdown:
        return
    for p in pools:
        t = _table(console, f"{p.name}: who gave what")
        for col in ("Pool", "From", "Trait", "+", "Rule", "Detail"):
            if col in ("Pool", "From"):
                t.add_column(col, no_wrap=True)
            else:
                t.add_column(col, justify="right" if col == "+" else "left", overflow="fold")
        for pool, lines in p.breakdown.items():
            for c in lines:
                if c.amount == 0 and c.kind == "base":
                    continue
                t.add_row(pool, c.member or "cohort", c.trait, str(c.amount), c.rule_ref, c.detail)
        console.print(t)
        if p.not_counted:
            console.print(Text("  Not counted: " + "; ".join(f"{n.member}: {n.trait} ({n.reason})" for n in p.not_counted),
                               style="dim"))


def _effects_text(effects: Iterable[Any]) -> str:
    parts = []
    for f in effects:
        if f.member and f.to_state:
            parts.append(f"{f.member} → {f.to_state.value}" + (f" (d{f.roll.sides}={f.roll.value})" if f.roll else ""))
        elif f.text:
            parts.append(f.text)
    return "; ".join(parts)


def _print_phase_narrow(console: Console, result: PhaseResult) -> None:
    """The phase as a list, one order a paragraph: fits 80 columns with nothing cut."""
    console.print(Text(f"Phase {result.phase}", style="bold"), justify="center")
    for e in result.events:
        rolls = ", ".join(f"{r.value}{'' if r.source == 'entered' else '*'}" for r in e.rolls if r.sides == 10)
        head = Text(f"{e.order + 1:>2}. ")
        head.append(e.cohort, style="bold")
        if e.target:
            head.append(f" → {e.target}")
        head.append(f"  {e.task.value}" + (f" ({e.moment.value})" if e.moment else ""))
        head.append("  ")
        head.append(e.outcome, style=OUTCOME_STYLE[e.outcome])
        numbers = []
        if rolls:
            numbers.append(f"d10 {rolls}")
        if e.total is not None and e.defense is not None:
            numbers.append(f"{e.total} vs Def {e.defense}")
        if e.damage:
            numbers.append(f"{e.damage} damage")
        if numbers:
            head.append("  " + ", ".join(numbers))
        head.append(f"  [{e.rule_ref}]", style="dim")
        console.print(head)
        what = e.reason if e.outcome == "refused" else _effects_text(e.effects)
        if what:
            console.print(Text("    " + what))


def print_phase(console: Console, result: PhaseResult) -> None:
    if _narrow(console):
        _print_phase_narrow(console, result)
        _print_phase_footer(console, result)
        return
    table = Table(title=f"Phase {result.phase}", header_style="bold")
    for col in ("#", "Cohort", "Task", "Target", "Roll", "Total", "Def", "Outcome", "Dmg", "Rule", "What happened"):
        table.add_column(col, justify="right" if col in ("#", "Roll", "Total", "Def", "Dmg") else "left")
    for e in result.events:
        rolls = ", ".join(f"{r.value}{'' if r.source == 'entered' else '*'}" for r in e.rolls if r.sides == 10)
        what = e.reason if e.outcome == "refused" else _effects_text(e.effects)
        table.add_row(
            str(e.order + 1), e.cohort, e.task.value + (f" ({e.moment.value})" if e.moment else ""), e.target or "",
            rolls, "" if e.total is None else str(e.total), "" if e.defense is None else str(e.defense),
            Text(e.outcome, style=OUTCOME_STYLE[e.outcome]), str(e.damage or ""), e.rule_ref, what or "",
        )
    console.print(table)
    _print_phase_footer(console, result)


def _print_phase_footer(console: Console, result: PhaseResult) -> None:
    console.print(Text("  * rolled by sheetsync; other dice were typed in (R25)", style="dim"))
    for f in result.end_of_phase:
        console.print(Text(f"  End of phase: {f.cohort}: {f.text} ({f.rule_ref})", style="magenta" if f.kind == "flag" else "dim"))
    print_standing(console, result.battle)


def _members_text(battle: Battle, name: str) -> Text:
    """Members grouped by state (Tasks 5.12): ``Active 3: Marcus, Ana, Ben · Scared 1: Cy``."""
    from sheetsync.rules.bbn import State

    st = battle.state[name]
    out = Text()
    for state in State:
        members = [m for m, s in st.states.items() if s is state]
        if not members:
            continue
        if out:
            out.append(" · ")
        out.append(f"{state.value} {len(members)}", style=STATE_STYLE[state.value])
        out.append(": " + ", ".join(members))
    return out


def print_standing(console: Console, battle: Battle) -> None:
    table = _table(console, f"Standing before phase {battle.phase}")
    _name_column(table, "Cohort", (c.name for c in battle.cohorts))
    for col in ("Side", "Health", "Temper", "Control"):
        table.add_column(col, justify="left" if col == "Side" else "right", no_wrap=True)
    table.add_column("Members", ratio=1)
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        max_h = battle.pools[spec.name].pools["health"]
        health = Text(f"{st.health}/{max_h}", style="red" if st.health <= 0 else "")
        table.add_row(Text(spec.name), Text(spec.side + (", support" if spec.support else "")), health,
                      str(st.temper), str(st.control), _members_text(battle, spec.name))
    console.print(table)


def print_aftermath(console: Console, entries: list[AftermathEntry]) -> None:
    table = _table(console, "Battle aftermath")
    narrow = _narrow(console)
    _name_column(table, "Cohort", (e.cohort for e in entries))
    _name_column(table, "Character", (e.name for e in entries))
    short = {"Damage": "Dmg", "Aggravated": "Agg", "Lethal": "Let", "Temper back": "Tmp+"}
    for col in ("Damage", "Aggravated", "Lethal", "Aegis", "Torpor", "Lasting effect", "Temper back"):
        if col == "Lasting effect":
            table.add_column(col, ratio=1, overflow="fold")
        else:
            table.add_column(short.get(col, col) if narrow else col, justify="right", no_wrap=True)
    for e in entries:
        if e.dead:
            table.add_row(e.cohort, Text(e.name, style="bold red"), Text("DEAD: removed from play (R30)", style="bold red"),
                          "", "", "", "", "", "")
            continue
        lasting = f"{e.lasting_effect.band}+: d10={e.lasting_effect.roll} → {e.lasting_effect.result}" if e.lasting_effect else ""
        table.add_row(e.cohort, e.name, str(e.damage), str(e.aggravated), str(e.lethal), str(e.aegis),
                      "yes" if e.torpor else "", lasting, str(e.temper_returned))
    console.print(table)


def health_bar(health: int, max_health: int, width: int = 20) -> Text:
    """Health as a bar of ``width`` cells, green, yellow under half, red under a quarter."""
    share = 0.0 if max_health <= 0 else max(0.0, min(1.0, health / max_health))
    full = round(share * width)
    style = "green" if share >= 0.5 else "yellow" if share >= 0.25 else "red"
    bar = Text("█" * full, style=style)
    bar.append("░" * (width - full), style="dim")
    return bar


def print_status(console: Console, battle: Battle, *, status: str | None = None) -> None:
    """``sheetsync status``: the battle at a glance, at any width from 80 columns up.  The
    phase, then per cohort its Health as a bar, temper, control and actions left this phase
    (Actions 4, R11), and its members grouped by state (Tasks 5.12)."""
    from sheetsync.rules.bbn.pools import actions_available

    resolved = len(battle.history)
    head = Text(f"Phase {battle.phase} to resolve", style="bold")
    head.append(f"  ({resolved} resolved)" if resolved else "  (none resolved yet)", style="dim")
    console.print(head)
    if status:
        console.print(Text(status, style="italic"))
    name_width = max(len(c.name) for c in battle.cohorts) if battle.cohorts else 0
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        max_h = battle.pools[spec.name].pools["health"]
        line = Text("\n")
        line.append(spec.name.ljust(name_width), style="bold")
        line.append("  ")
        line.append_text(health_bar(st.health, max_h))
        line.append(f" {st.health}/{max_h} Health", style="bold red" if st.health <= 0 else "")
        console.print(line)
        side = spec.side + (", support" if spec.support else "")
        actions = actions_available(st.states.values(), battle.house_rules)
        console.print(Text(f"  {side} · Temper {st.temper} · Control {st.control} · Actions left {actions}"))
        console.print(Text("  ") + _members_text(battle, spec.name))
