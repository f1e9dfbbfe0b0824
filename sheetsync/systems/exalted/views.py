"""Readable terminal output for Exalted 2e mass combat: a resolved long tick (Join War, the
orders with their rolls, rout and exhaustion), each unit's Magnitude and health track as
bars, the derived traits with the odds of each typed attack, and the aftermath (X40, X41).
Every result says its rule, and every roll says whether its dice were rolled or typed.

:func:`demo` is ``sheetsync demo --system exalted``: the embedded battle, resolved tick by
tick, with its files written."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sheetsync.systems.exalted.rules.battle import rout_checks

__all__ = ["bar", "dice_text", "print_aftermath", "print_step", "print_tick", "print_units", "print_values"]

WIDE = 120


def _table(console: Console, title: str) -> Table:
    if console.width < WIDE:
        return Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 0), pad_edge=False)
    return Table(title=title, header_style="bold")


def _names(table: Table, header: str, names: Iterable[str]) -> None:
    width = max([len(header), *(len(n) for n in names)])
    table.add_column(header, no_wrap=True, min_width=width)


def bar(value: int, most: int, *, width: int = 8, good_high: bool = True) -> Text:
    """``█████░░░ 5/8``: ``value`` out of ``most`` as a bar, green when healthy (or, with
    ``good_high=False``, when little is marked)."""
    most = max(most, 1)
    shown = max(0, min(value, most))
    full = round(width * shown / most)
    share = shown / most if good_high else 1 - shown / most
    style = "green" if share > 0.6 else ("yellow" if share > 0.3 else "red")
    return Text("█" * full, style=style) + Text("░" * (width - full), style="dim") + Text(f" {value}/{most}")


def dice_text(roll: dict[str, Any] | None) -> str:
    """E1: ``7 3 10 (typed faces): 3`` or ``(rolled) 8 1: 1`` or ``4 successes (typed)``."""
    if not roll:
        return ""
    if roll["source"] == "no dice":
        return "no dice: 0"
    if roll["source"] == "typed successes":
        return f"{roll['successes']} successes (typed)"
    faces = " ".join(str(f) for f in roll["faces"])
    return f"{faces} ({roll['source']}): {roll['successes']}"


def _v(x: Any) -> Any:
    return x.get("value") if isinstance(x, dict) else x


def print_units(console: Console, units: list[dict[str, Any]]) -> None:
    """Each unit: Magnitude and its track as bars, Endurance, formation, next tick, and who
    is engaged, hesitating or gone."""
    narrow = console.width < WIDE  # a laptop's 80 columns: shorter headers and bars, nothing cut
    t = _table(console, "Units (Magnitude X2, track X34, Endurance X4)" if narrow else "Units")
    _names(t, "Unit", (u["name"] for u in units))
    w = 4 if narrow else 8
    heads = (("Side", "Magn.", "Track", "Endur.", "Form.", "Tick", "State") if narrow else
             ("Side", "Magnitude (X2)", "Track (X34)", "Endurance (X4)", "Formation", "Next tick", "State"))
    for col in heads:
        t.add_column(col, no_wrap=col != "State", overflow="fold", min_width=len(col) if col == "State" else None)
    for u in units:
        state = []
        if not u.get("in_fight", not u.get("disbanded")):  # X34: the engine's in_fight
            state.append("left the battle")
        if u.get("solo"):
            state.append("solo")
        if u.get("mob_rule"):
            state.append("Mob Rule (X39)")
        if u.get("hesitating"):
            state.append("hesitating (X36)")
        if u.get("engaged"):
            state.append("engaged with " + ", ".join(u["engaged"]))
        t.add_row(u["name"], u.get("side", ""), bar(u["magnitude"], u.get("starting_magnitude", u["magnitude"]), width=w),
                  bar(u["levels_marked"], u.get("health_levels", 7), width=w, good_high=False),
                  bar(u["endurance"], u.get("starting_endurance", u["endurance"]), width=w), u["formation"],
                  str(u["next_tick"]), "; ".join(state))
    console.print(t)


def _attack_row(e: dict[str, Any]) -> list[str]:
    dmg = e.get("damage_dice") or {}
    lost = e.get("magnitude_lost") or {}
    out = [f"{_v(e['pool'])} dice: {dice_text(e['successes'].get('roll'))}",
           f"+{_v(e['bonus_successes'])} −{_v(e['external_penalty'])} vs DV {_v(e['dv'])}",
           "hit, threshold " + str(_v(e["threshold"])) if e.get("hit") else "miss",
           (f"raw {_v(e['raw_damage'])} − soak {_v(e['soak'])} → {_v(dmg)} dice: {dice_text(dmg.get('roll'))}"
            if e.get("hit") else ""),
           f"{_v(e['levels'])} levels, −{_v(lost)} Magnitude" if e.get("hit") else ""]
    return out


def print_tick(console: Console, data: dict[str, Any]) -> None:
    """A resolved long tick (``resolve --json``'s data): Join War, the orders with their
    rolls and rules, the rout and exhaustion rolls they called, then the units."""
    events = data.get("events", [])
    console.print(Text(f"Long tick {data.get('tick')}", style="bold"))
    for e in events:
        if e.get("kind") == "Join War":
            _join_war_table(console, e)
    orders = [e for e in events if e.get("kind") != "Join War"]
    if orders:
        t = _table(console, "Orders and what came of them")
        _names(t, "Unit", (e.get("unit", "") for e in orders))
        for col in ("Action", "Rolls", "Result", "Rule"):
            t.add_column(col, overflow="fold", no_wrap=col == "Action")
        for e in orders:
            kind = e.get("kind", "")
            if kind == "refused":
                t.add_row(e.get("unit", ""), Text(f"{e.get('action')} refused", style="bold red"), "",
                          e.get("reason", ""), e.get("rule_ref", ""))
            elif kind == "Attack":
                _attack_rows(t, e)
            elif kind == "Mob Rule check":
                t.add_row(e["unit"], kind, dice_text(e.get("roll")), _rout_text(e), e.get("rule_ref", ""))
            else:
                _action_row(t, e)
        console.print(t)
    print_units(console, data.get("units", []))
    if data.get("next_tick") is not None:
        console.print(f"Next long tick with a unit to act: {data['next_tick']}.")


def _join_war_table(console: Console, e: dict[str, Any], *, preview: bool = False) -> None:
    """E4: each unit's Join War roll and the long tick it acts on first (``preview``: as
    the first resolve will roll it, from the typed dice and the seed)."""
    t = _table(console, "Join War (E4): as the first resolve will roll it (typed dice, else the seed)" if preview
               else "Join War (E4)")
    _names(t, "Unit", (r["unit"] for r in e["rolls"]))
    for col in ("Pool", "Dice", "Acts on tick"):
        t.add_column(col, no_wrap=True)
    for r in e["rolls"]:
        t.add_row(r["unit"], str(r["pool"]["value"]), dice_text(r["roll"]), str(r["tick"]))
    console.print(t)


def _attack_rows(t: Table, e: dict[str, Any]) -> None:
    """X28-X34: an attack's rolls, its result and its odds before rolling, then the rout
    checks (X35, X36, X43) and the exhaustion rolls (X37) it called, and its notes."""
    roll, vs, hit, dmg, result = _attack_row(e)
    odds = e.get("odds") or {}
    t.add_row(e["unit"], f"{e.get('attack', '')} attack on {e.get('target')}",
              f"{roll}\n{vs}\n{dmg}".strip(),
              Text(f"{hit}; {result}".strip("; "), style="bold green" if e.get("hit") else "yellow")
              + Text(f"\nodds before rolling: {odds.get('p_hit_float', 0):.1%} to hit, "
                     f"{odds.get('expected_levels_float', 0):.2f} levels expected", style="dim"),
              e.get("rule_ref", ""))
    for sub in rout_checks(e):  # X35, X43: the target's, then the closing unit's
        t.add_row("", f"rout check of {sub['unit']}", dice_text(sub.get("roll")),
                  _rout_text(sub), sub.get("rule_ref", ""))
    for x in e.get("exhaustion", []):
        lost = x["endurance_before"] - x["endurance"]
        t.add_row("", f"exhaustion of {x['unit']}", dice_text(x.get("roll")),
                  f"difficulty {x['difficulty']['value']}: " +
                  (f"−1 Endurance ({x['endurance']} left)" if lost else "held"), x.get("rule_ref", ""))
    for note in e.get("notes", []):
        t.add_row("", "", "", Text(note, style="italic"), "")


def _action_rolls(e: dict[str, Any]) -> str:
    """The dice of any other action: its command roll, both units' rolls of a Split or a
    Merge (X23, X24), or the called shot before a duel (X27)."""
    cmd = e.get("command") or {}
    rolls = dice_text(cmd.get("roll") or e.get("roll"))
    both = {k: c for k, c in (e.get("commands") or {}).items() if c}  # X23, X24: both units roll
    if both:
        rolls = "\n".join(f"{k}: {dice_text(c.get('roll'))}, " + ("success" if c.get("success") else "failure")
                          + f" (difficulty {c['difficulty']['value']})" for k, c in both.items())
    shot = e.get("called_shot")
    if isinstance(shot, dict):  # X27: the called shot before a duel
        rolls = (f"called shot: {dice_text(shot.get('roll'))} − {shot['external_penalty']['value']} vs DV "
                 f"{shot['dv']['value']}: " + ("hit" if shot.get("hit") else "miss"))
    return rolls


def _action_row(t: Table, e: dict[str, Any]) -> None:
    """X17-X27 and E11: any other action's row: its rolls, what came of it (the command
    roll's result, the figures it changed, a rout check it called) and when the unit acts
    next (E5)."""
    cmd = e.get("command") or {}
    said: list[str] = []
    if cmd:
        said.append(("success" if cmd.get("success") else "failure") +
                    f" (difficulty {cmd['difficulty']['value']})")
    for key in ("formation", "yards", "reached", "magnitude", "disengaged", "aim_dice", "effect", "note"):
        if key in e and not isinstance(e[key], dict):
            said.append(f"{key.replace('_', ' ')}: {_v(e[key])}")
    if e.get("rout"):
        said.append(_rout_text(e["rout"]))
    nxt = (e.get("timing") or {}).get("next_tick")
    if nxt is not None:
        said.append(f"acts next on tick {nxt}")
    t.add_row(e.get("unit", ""), e.get("kind", ""), _action_rolls(e), "; ".join(said), e.get("rule_ref", ""))


def _rout_text(r: dict[str, Any]) -> str:
    if not r.get("checked"):
        return "no check needed"
    if r.get("passed"):
        return f"held (difficulty {r['difficulty']['value']})"
    return f"failed (difficulty {r['difficulty']['value']}): hesitates, −{r['magnitude_lost']} Magnitude"


def print_values(console: Console, data: dict[str, Any]) -> None:
    """``pools``: each unit's derived traits with where they came from, and the odds of each
    typed attack before rolling."""
    for u in data.get("units", []):
        t = _table(console, f"{u['name']} ({u.get('side', '')}), led by {u['commander']}")
        t.add_column("Trait", no_wrap=True)
        t.add_column("Value", no_wrap=True, justify="right")
        t.add_column("Where it comes from", overflow="fold")
        for name, tr in u["traits"].items():
            parts = ", ".join(f"{b['source']} {b['amount']:+g} ({b['rule']})" for b in tr["breakdown"])
            t.add_row(name.replace("_", " ").capitalize(), str(tr["value"]), parts)
        console.print(t)
    acting = data.get("acting") or {}
    if acting.get("join_war"):
        _join_war_table(console, acting["join_war"], preview=True)
    elif acting.get("problem"):
        console.print(Text(f"Join War (E4) cannot be rolled yet: {acting['problem']}", style="red"))
    elif acting.get("ticks"):
        console.print("Next long tick of each unit (E5): "
                      + ", ".join(f"{u} {t}" for u, t in acting["ticks"].items()) + ".")
    orders = data.get("orders", [])
    if orders:
        _odds_table(console, orders)


def _odds_table(console: Console, orders: list[dict[str, Any]]) -> None:
    """E1, E7, X28-X33: each typed attack's odds before rolling.  Issue 22: the odds
    columns stay whole at 80 columns, as the battalion tables' do: names never wrap, a
    refusal's reason is told below the table (its row says "refused", with a mark), not in
    a column that would push the odds off the screen."""
    narrow = console.width < WIDE
    t = _table(console, "Odds before rolling (E1, E7, X28-X33)")
    _names(t, "Unit", (o["unit"] for o in orders))
    t.add_column("Tick", no_wrap=True, justify="right")
    _names(t, "Target", (o.get("target") or "" for o in orders))
    for col in ("Pool", "Added", "Ext." if narrow else "External", "DV", "Hit", "Levels"):
        t.add_column(col, no_wrap=True, justify="right")
    notes: list[str] = []
    for o in orders:
        odds = o.get("odds")
        if odds is None:
            notes.append(f"{o['unit']}, tick {o['tick']}: {o.get('refused', '')}")
            t.add_row(o["unit"], str(o["tick"]), o.get("target") or "", "", "", "", "",
                      Text(f"refused ({len(notes)})", style="red"), "")
            continue
        t.add_row(o["unit"], str(o["tick"]), o.get("target") or "", str(odds["pool"]),
                  f"+{odds['successes_added']}", f"−{odds['external_penalty']}", str(odds["dv"]),
                  f"{odds['p_hit_float']:.1%}", f"{odds['expected_levels_float']:.2f}")
    console.print(t)
    for i, note in enumerate(notes, start=1):
        console.print(Text(f"({i}) refused: {note}", style="red"))


def print_aftermath(console: Console, data: dict[str, Any]) -> None:
    """X40, X41: each named member's fate, and each unit's healing days."""
    t = _table(console, "Aftermath (X40, X41)")
    _names(t, "Unit", (u["name"] for u in data.get("units", [])))
    for col in ("Magnitude", "Dots lost", "Fallen", "Named members", "Healing days"):
        t.add_column(col, overflow="fold")
    for u in data.get("units", []):
        fates = "; ".join(f"{c['character']}: {c['fate']}" + (f", {c['levels']} levels" if c["levels"] else "")
                          for c in u["casualties"]) or "none rolled"
        t.add_row(u["name"], f"{u['magnitude']}/{u['starting_magnitude']}", str(u["dots_lost"]),
                  ", ".join(u["fallen"]), fates, str(u["healing_days"]["value"]))
    console.print(t)
    for u in data.get("units", []):
        if u.get("leaving"):  # X11: beyond the limit of 2 × Magnitude at battle end
            console.print(f"{u['name']}: {', '.join(u['leaving'])} leave (X11: more special characters than "
                          f"2 × Magnitude {u['magnitude']}; the last added go first)")


def print_step(console: Console, data: dict[str, Any], result: Any = None) -> None:
    """A resolved step as every system's views print it (``data``, its JSON; ``result``, the
    engine's result): here the long tick, :func:`print_tick`."""
    print_tick(console, data)
