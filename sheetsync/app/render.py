"""Readable terminal output (rich tables) for pools, phases and the aftermath."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sheetsync.rules.bbn import AftermathEntry, Battle, CohortPools, PhaseResult

__all__ = ["print_aftermath", "print_phase", "print_pools", "print_standing"]

STATE_STYLE = {"Active": "green", "Scared": "yellow", "Knocked Out": "red", "Stabilized": "cyan", "Dead": "bold white on red"}
OUTCOME_STYLE = {"hit": "bold green", "miss": "yellow", "refused": "bold red", "done": "cyan"}


def print_pools(console: Console, pools: Iterable[CohortPools], *, breakdown: bool = True) -> None:
    pools = list(pools)
    table = Table(title="Cohort pools", header_style="bold")
    for col in ("Cohort", "Actions", "Health", "Melee", "Ranged", "Mystical", "Defense", "Temper", "Movement",
                "Resolve", "Control"):
        table.add_column(col, justify="left" if col == "Cohort" else "right")
    for p in pools:
        v = p.pools
        table.add_row(p.name, str(p.actions), *(str(v[k]) for k in ("health", "melee", "ranged", "mystical", "defense",
                                                                      "temper", "movement", "resolve", "control")))
    console.print(table)
    if not breakdown:
        return
    for p in pools:
        t = Table(title=f"{p.name}: who gave what", header_style="bold", show_lines=False)
        for col in ("Pool", "From", "Trait", "+", "Rule", "Detail"):
            t.add_column(col, justify="right" if col == "+" else "left")
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


def print_phase(console: Console, result: PhaseResult) -> None:
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
    console.print(Text("  * rolled by sheetsync; other dice were typed in (R25)", style="dim"))
    for f in result.end_of_phase:
        console.print(Text(f"  End of phase: {f.cohort}: {f.text} ({f.rule_ref})", style="magenta" if f.kind == "flag" else "dim"))
    print_standing(console, result.battle)


def print_standing(console: Console, battle: Battle) -> None:
    table = Table(title=f"Standing before phase {battle.phase}", header_style="bold")
    for col in ("Cohort", "Side", "Health", "Temper", "Control", "Members"):
        table.add_column(col, justify="right" if col in ("Health", "Temper", "Control") else "left")
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        max_h = battle.pools[spec.name].pools["health"]
        members = Text()
        for i, m in enumerate(spec.members):
            if i:
                members.append(", ")
            s = st.states[m.name].value
            members.append(f"{m.name} ({s})", style=STATE_STYLE[s])
        health = Text(f"{st.health}/{max_h}", style="red" if st.health <= 0 else "")
        table.add_row(spec.name + (" [support]" if spec.support else ""), spec.side, health, str(st.temper),
                      str(st.control), members)
    console.print(table)


def print_aftermath(console: Console, entries: list[AftermathEntry]) -> None:
    table = Table(title="Battle aftermath", header_style="bold")
    for col in ("Cohort", "Character", "Damage", "Aggravated", "Lethal", "Aegis", "Torpor", "Lasting effect", "Temper back"):
        table.add_column(col, justify="left" if col in ("Cohort", "Character", "Lasting effect") else "right")
    for e in entries:
        if e.dead:
            table.add_row(e.cohort, Text(e.name, style="bold red"), Text("DEAD: removed from play (R30)", style="bold red"),
                          "", "", "", "", "", "")
            continue
        lasting = f"{e.lasting_effect.band}+: d10={e.lasting_effect.roll} → {e.lasting_effect.result}" if e.lasting_effect else ""
        table.add_row(e.cohort, e.name, str(e.damage), str(e.aggravated), str(e.lethal), str(e.aegis),
                      "yes" if e.torpor else "", lasting, str(e.temper_returned))
    console.print(table)
