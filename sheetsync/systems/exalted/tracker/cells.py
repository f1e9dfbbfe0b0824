"""The computed cells of the Exalted tracker (:mod:`sheetsync.systems.exalted.tracker.layout`) from a
battle: the Units traits with their breakdowns (X1-X11), the Sides, the Ticks board (E5),
the cells the Orders odds formulas read (E1, E7, X28-X33) and the results, the Log rows and
the Aftermath (X40, X41).  Pure: every function returns rows keyed by the layout's column keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules.attack import AttackPlan
from sheetsync.systems.exalted.rules.battle import (
    acting_ticks,
    current_unit,
    odds_json,
    rout_checks,
)
from sheetsync.systems.exalted.rules.state import Battle, in_fight
from sheetsync.systems.exalted.tracker.layout import UNIT_TRAITS

__all__ = ["ODDS_INPUTS", "aftermath_rows", "dice_text", "event_outcome", "log_rows", "odds_rows", "side_rows", "status",
           "tick_board", "unit_rows"]


ODDS_INPUTS = ("pool", "added", "external", "dv", "raw", "soak", "min_dice", "hardness", "tens")
"""The Orders columns the steps write for the odds formulas (E1, E3, E7, E9, X28-X33)."""


def _v(x: Any) -> Any:
    return x.get("value") if isinstance(x, dict) else x


def dice_text(roll: Mapping[str, Any] | None) -> str:
    """E1: ``7 3 10 (typed faces): 3``, ``8 1 (rolled): 1`` or ``4 successes (typed)``."""
    if not roll:
        return ""
    if roll.get("source") == "no dice":
        return "no dice: 0"
    if roll.get("source") == "typed successes":
        return f"{roll['successes']} successes (typed)"
    faces = " ".join(str(f) for f in roll.get("faces") or ())
    return f"{faces} ({roll.get('source')}): {roll.get('successes')}"


def _gone(battle: Battle, name: str) -> bool:
    """X34: out of the fight, as the engine decides it (:func:`in_fight`)."""
    return not in_fight(battle.state_of(name))


def unit_rows(battle: Battle) -> list[dict[str, Any]]:
    """X1-X11, X31, X34: each unit's computed Units columns as it stands now: Magnitude,
    the health levels left on its track, Endurance, the arrows left, the derived traits, formation, next tick,
    status (X24: a merged unit says which unit it is merged into) and every trait's
    breakdown (``Close rating 3 = avg Dexterity 3 + ...``)."""
    out = []
    ticks, join, problem = _acting(battle)
    joined = {r["unit"]: r for r in (join or {}).get("rolls", ())}
    for u in battle.units:
        spec, t, st = current_unit(battle, u.name)
        row: dict[str, Any] = {"magnitude_now": st.magnitude, "health_left": max(st.health_levels - st.marked, 0),
                               "endurance_now": st.endurance, "ammunition_now": st.ammunition,
                               "formation_now": st.formation.value,
                               "next_tick": st.next_tick if battle.started else ticks.get(u.name)}
        parts = []
        for key in UNIT_TRAITS:
            trait = getattr(t, key)
            row[f"t_{key}"] = trait.value
            terms = ", ".join(f"{e.source} {e.amount:+g} ({e.rule})" for e in trait.breakdown)
            parts.append(f"{key.replace('_', ' ')} {trait.value}: {terms}" if terms else
                         f"{key.replace('_', ' ')} {trait.value}")
        row["breakdown"] = "; ".join(parts)
        words = []
        if st.merged_into:  # X24: it lives on in the unit that absorbed it
            words.append(f"merged into {st.merged_into}")
        elif st.disbanded:
            words.append("disbanded")
        elif st.mob_rule:
            words.append("under Mob Rule")
        if st.hesitating:
            words.append("hesitating")
        if st.engaged:
            words.append("engaged with " + ", ".join(st.engaged))
        if st.fallen:
            words.append("lost " + ", ".join(st.fallen))
        if not battle.started:
            words.insert(0, _join_war_words(joined.get(u.name), problem))
        row["status"] = "; ".join(words) or "fighting"
        out.append(row)
    return out


def _acting(battle: Battle) -> tuple[dict[str, int], dict[str, Any] | None, str | None]:
    """E4, E5: each unit's next long tick, the Join War that decides it before the first
    resolve (as that resolve will roll it), or why Join War cannot be rolled yet."""
    try:
        ticks, join = acting_ticks(battle)
    except InputError as exc:
        return {}, None, "; ".join(p.message for p in exc.problems)
    return ticks, join, None


def _join_war_words(roll: Mapping[str, Any] | None, problem: str | None) -> str:
    """E4: a unit's status before the first resolve: its Join War roll and the long tick it
    gives (from the typed Join War dice, else the seed), or why it cannot be rolled."""
    if roll is None:
        return f"ready; Join War cannot be rolled: {problem}" if problem else "ready"
    source = str((roll.get("roll") or {}).get("source", ""))
    how = "typed" if "typed" in source else "no dice" if source == "no dice" else "from the seed"
    return (f"ready: Join War {roll['successes']} of {roll['pool']['value']} dice ({how}): acts on long tick "
            f"{roll['tick']} (E4)")


def side_rows(battle: Battle) -> list[dict[str, Any]]:
    """The Battle sheet's Sides rows, in the order each side's first unit is listed."""
    sides: list[str] = []
    for u in battle.units:
        if u.spec.side not in sides:
            sides.append(u.spec.side)
    rows = []
    for side in sides:
        states = [battle.state_of(u.name) for u in battle.units if u.spec.side == side]
        live = [s for s in states if s is not None]
        rows.append({"side": side, "units": len(live), "standing": sum(1 for s in live if in_fight(s)),
                     "magnitude": sum(s.magnitude for s in live if in_fight(s)),
                     "dots_lost": sum(s.dots_lost for s in live)})
    return rows


def tick_board(battle: Battle, orders: Sequence[tuple[int, str, str]], rows: int, cols: int) -> list[list[Any]]:
    """E5: the Ticks board, a header row (``Tick``, then each unit) and a row per long tick
    from the current one: ``acts`` where a unit's next action falls, with the action typed
    for it on that tick (``acts: Attack``); ``orders`` are the pending (tick, unit, action).
    Before the first resolve (E4) the tick is the one Join War will give, as that resolve
    rolls it (``acts (Join War)``): the Units sheet's Status says the roll."""
    names = [u.name for u in battle.units][: cols - 1]
    grid: list[list[Any]] = [["Tick", *names, *([None] * (cols - 1 - len(names)))]]
    first = {} if battle.started else _acting(battle)[0]  # E4: before the first resolve, Join War's ticks
    typed: dict[tuple[int, str], list[str]] = {}
    for tick, unit, action in orders:
        typed.setdefault((tick, unit), []).append(action)
    for i in range(rows - 1):
        tick = battle.tick + i
        line: list[Any] = [tick]
        for name in names:
            st = battle.state_of(name)
            cell = None
            if st is not None and not in_fight(st):
                cell = (f"merged into {st.merged_into}" if st.merged_into else "disbanded") if i == 0 else None
            elif st is not None and battle.started and st.next_tick == tick:
                cell = "acts"
            elif first.get(name) == tick:
                cell = "acts (Join War)"
            actions = typed.get((tick, name))
            if actions:
                cell = f"{cell or 'order'}: {', '.join(actions)}"
            line.append(cell)
        line += [None] * (cols - len(line))
        grid.append(line)
    return grid


def odds_rows(battle: Battle) -> dict[int, dict[str, Any]]:
    """E1, E3, E7, E9, X28-X33: what each typed attack's odds depend on, by its index in
    ``battle.orders``, from the engine's own plan against the battle as it stands: the
    pool after internal penalties, the successes added, the external penalty, the DV, the
    raw damage before the threshold, the soak, the minimum dice, the Hardness and what a 10
    counts on the attack dice (E1: 1 for an extra with ``extras_double_tens`` off).  The
    chance of a hit and the expected levels are the Orders sheet's live formulas over these
    (:mod:`sheetsync.systems.exalted.tracker.formulas`).  An attack the rules refuse says why in
    Result; a pool beyond the Odds sheet says so."""
    from sheetsync.systems.exalted.tracker.formulas import ODDS_DICE

    plans = _plans(battle)
    out: dict[int, dict[str, Any]] = {}
    for row in odds_json(battle):
        odds = row.get("odds")
        plan = plans.get(row["order"])
        if odds is None or plan is None:
            out[row["order"]] = {**dict.fromkeys(ODDS_INPUTS),
                                 "result": f"would be refused: {row.get('refused')} ({row.get('rule_ref')})"}
            continue
        note = (f"the Odds sheet holds pools of up to {ODDS_DICE} dice: sheetsync pools shows the odds of this "
                f"{odds['pool']}-die pool" if odds["pool"] > ODDS_DICE else None)
        out[row["order"]] = {"pool": odds["pool"], "added": odds["successes_added"],
                             "external": odds["external_penalty"], "dv": odds["dv"], "raw": plan.base_raw.value,
                             "soak": plan.soak.value, "min_dice": plan.minimum, "hardness": plan.hardness,
                             "tens": 2 if plan.double_tens else 1, "result": note}
    return out


def _plans(battle: Battle) -> dict[int, AttackPlan]:
    """X28-X33: the engine's plan of each typed attack it would not refuse, by order index."""
    from sheetsync.systems.exalted.rules.battle import attack_plans

    return attack_plans(battle)


def event_outcome(e: Mapping[str, Any]) -> tuple[str, str]:
    """An engine event as an Outcome word (hit, miss, done, refused, routed) and a Result line."""
    kind = e.get("kind", "")
    if kind == "refused":
        return "refused", f"refused: {e.get('reason')} ({e.get('rule_ref')})"
    parts: list[str] = []
    outcome = "done"
    if kind == "Attack":
        outcome = "hit" if e.get("hit") else "miss"
        parts.append(f"{_v(e.get('pool'))} dice: {dice_text((e.get('successes') or {}).get('roll'))}")
        parts.append(f"+{_v(e.get('bonus_successes'))} -{_v(e.get('external_penalty'))} vs DV {_v(e.get('dv'))}")
        if e.get("hit"):
            dmg = e.get("damage_dice") or {}
            parts.append(f"{_v(dmg)} damage dice: {dice_text(dmg.get('roll'))}")
            parts.append(f"{_v(e.get('levels'))} levels, -{_v(e.get('magnitude_lost'))} Magnitude")
    else:
        cmd = e.get("command") or {}
        if cmd:
            parts.append(dice_text(cmd.get("roll")) + (": success" if cmd.get("success") else ": failure"))
        for key in ("formation", "yards", "reached", "magnitude", "disengaged", "aim_dice", "effect", "note"):
            if key in e:
                parts.append(f"{key.replace('_', ' ')}: {_v(e[key])}")
    for rout in rout_checks(e) if kind != "Mob Rule check" else []:  # X35, X43: the target's, then the closer's
        if not rout.get("checked"):
            continue
        failed = not rout.get("passed")
        rule = "X43" if rout is e.get("attacker_rout") else "X35"
        parts.append(f"rout check of {rout.get('unit')} ({rule}): {dice_text(rout.get('roll'))}"
                     + (f" - failed, Magnitude {rout.get('magnitude')}" if failed else " - held"))
        if failed:
            outcome = "routed"
    nxt = (e.get("timing") or {}).get("next_tick")
    if nxt is not None:
        parts.append(f"acts next on tick {nxt}")
    return outcome, "; ".join(p for p in parts if p)


def log_rows(tick: int, events: Sequence[Mapping[str, Any]], token: str) -> list[dict[str, Any]]:
    """One Log row per engine event of a resolved long tick (Join War: one per unit)."""
    rows: list[dict[str, Any]] = []
    for e in events:
        if e.get("kind") == "Join War":
            for r in e.get("rolls", []):
                rows.append({"tick": tick, "kind": "Join War", "unit": r.get("unit"), "outcome": "done",
                             "roll": dice_text(r.get("roll")), "rule": "E4",
                             "details": f"{r.get('successes')} successes: acts first on tick {r.get('tick')}",
                             "step": token})
            continue
        outcome, details = event_outcome(e)
        order = e.get("order")
        rows.append({"tick": e.get("tick", tick), "order": order + 1 if isinstance(order, int) and order >= 0
                     else None, "kind": e.get("kind") if e.get("kind") != "refused" else e.get("action"),
                     "unit": e.get("unit"), "target": e.get("target"), "outcome": outcome,
                     "roll": dice_text((e.get("successes") or {}).get("roll") or (e.get("command") or {}).get("roll")
                                       or e.get("roll")),
                     "rule": e.get("rule_ref"), "details": details, "step": token})
    return rows


def aftermath_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """X40, X41: the Aftermath sheet's rows from :func:`~sheetsync.systems.exalted.rules.breakdowns.aftermath_json`."""
    rows = []
    for u in data.get("units", []):
        fates = "; ".join(f"{c['character']}: {c['fate']}" + (f" ({c['levels']} levels)" if c.get("levels") else "")
                          for c in u.get("casualties", []))
        rows.append({"unit": u["name"], "side": u["side"], "magnitude": u["magnitude"],
                     "starting_magnitude": u["starting_magnitude"], "dots_lost": u["dots_lost"],
                     "healing_days": _v(u["healing_days"]), "casualties": fates or None})
    return rows


def status(battle: Battle, *, ended: bool = False) -> str:
    """The Battle sheet's status line."""
    if ended:
        return f"ended at long tick {battle.tick}: the Aftermath sheet has the casualties and healing"
    if not battle.started:
        ticks, _, problem = _acting(battle)
        when = ("; Join War (typed dice, else the seed): " + ", ".join(f"{u} acts on long tick {t}"
                                                                        for u, t in ticks.items())
                if ticks else f"; Join War cannot be rolled: {problem}" if problem else "")
        return f"built: type the orders, then Next Tick (Join War is rolled first, E4){when}"
    standing = [u.name for u in battle.units if not _gone(battle, u.name)]
    return f"long tick {battle.tick} resolved; {len(standing)} of {len(battle.units)} units still fighting"
