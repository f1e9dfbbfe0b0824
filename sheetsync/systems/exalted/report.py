"""The after-action report of an Exalted battle file (issue 11, part 3; E1-E11, X1-X41).

An Exalted battle file written by ``sheetsync resolve --out`` keeps one undo record per
resolved long tick: the tick and start flag before it, its orders as typed and the unit
states it replaced.  Undoing every record gives the battle before Join War (or before the
first tick recorded); each tick is then resolved again with the battle's own dice (E1: the
seed and the number of ticks resolved; typed dice are in the orders) and checked against
the states recorded after it, so each line below is the engine's own event.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from sheetsync.core.account import Account, Chart, Group, Line, ReportSource, StepBlock
from sheetsync.systems.exalted.rules.battle import resolve, rout_checks, undo
from sheetsync.systems.exalted.rules.breakdowns import aftermath_json
from sheetsync.systems.exalted.rules.state import Battle

__all__ = ["account", "event_lines", "replay"]


def _ref(text: str, rule: str) -> str:
    return f"{text} ({rule})" if rule else text


def _value(part: Any) -> Any:
    return part.get("value") if isinstance(part, dict) else part


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _dice(n: int, what: str = "") -> str:
    word = f"{what} di{'e' if n == 1 else 'ce'}" if what else f"di{'e' if n == 1 else 'ce'}"
    return f"{n} {word}"


def replay(battle: Battle) -> tuple[Battle, list[tuple[Battle, Any, str | None]]]:
    """E1, E5: the battle before its first recorded long tick, and each recorded tick
    resolved again (the battle before it, its :class:`TickResult`, and a problem when the
    replay does not reach the unit states recorded after it)."""
    states = [battle]
    while states[0].history:
        states.insert(0, undo(states[0]))
    out: list[tuple[Battle, Any, str | None]] = []
    for i in range(len(states) - 1):
        before, after = states[i], states[i + 1]
        result = resolve(before, after.tick)
        problem = None if result.battle.state == after.state else (
            f"Long tick {after.tick} does not replay to the units recorded after it (were the house rules or the "
            "record changed since?): the lines below are the engine's replay of its orders and dice")
        out.append((before, result, problem))
    return states[0], out


def _join_war_line(e: dict[str, Any]) -> Line:
    """E4: each unit's Join War roll and the long tick it first acts on."""
    parts = [f"{r['unit']} {_dice(r['pool']['value'])}, {_successes(r['successes'])}: long tick {r['tick']}"
             for r in e["rolls"]]
    nums = {r["unit"]: {"pool": r["pool"]["value"], "successes": r["successes"], "tick": r["tick"]}
            for r in e["rolls"]}
    return Line(_ref("Join War: " + "; ".join(parts), e["rule_ref"]), e["rule_ref"], numbers=nums)


def _successes(n: int) -> str:
    return f"{n} success" if n == 1 else f"{n} successes"


def _attack_line(e: dict[str, Any]) -> Line:
    """X28-X34: an attack's pool and successes, the successes added and the penalty, the
    DV, and on a hit the raw damage, soak, damage dice, levels and the Magnitude lost."""
    rule = e.get("rule_ref", "")
    who, target = e["unit"], e.get("target", "")
    if "attack" not in e:  # E6: its target left the battle earlier in the tick
        return Line(_ref(f"{who}'s attack on {target} had no effect: {e.get('reason', '')}", rule), rule)
    loss = e["magnitude_lost"]
    nums: dict[str, Any] = {
        "pool": _value(e["pool"]), "successes": _value(e["successes"]), "bonus_successes": _value(e["bonus_successes"]),
        "external_penalty": _value(e["external_penalty"]), "dv": _value(e["dv"]), "threshold": _value(e["threshold"]),
        "hit": e["hit"], "raw_damage": _value(e["raw_damage"]), "soak": _value(e["soak"]),
        "damage_dice": _value(e["damage_dice"]), "levels": _value(e["levels"]), "magnitude_lost": loss["value"],
        "p_hit": e["odds"]["p_hit_float"]}
    text = (f"{who} attacked {target} ({e['attack']}): {_dice(nums['pool'])}, "
            f"{_successes(nums['successes'])}, +{nums['bonus_successes']} added, −{nums['external_penalty']} "
            f"penalty, against DV {nums['dv']}: ")
    if e["hit"]:
        text += (f"a hit by {nums['threshold']}; raw damage {nums['raw_damage']} less soak {nums['soak']} gives "
                 f"{_dice(nums['damage_dice'], 'damage')}, {_plural(nums['levels'], 'level')}")
        if loss.get("victim"):
            text += f" on {loss['victim']} ({loss['levels_marked']} marked, X32)"
        elif "magnitude" not in loss:
            text += f" on {target}'s own track ({loss['levels_marked']} marked)"
        elif loss["value"]:
            nums["magnitude"] = loss["magnitude"]
            text += f"; {target} lost {loss['value']} Magnitude (now {loss['magnitude']})"
        else:
            text += f"; {target}'s track shows {loss['levels_marked']} marked"
    else:
        text += "a miss"
    text += f" (exact chance of a hit {float(e['odds']['p_hit_float']):.0%})"
    for note in e.get("notes", ()):
        text += f"; {note}"
    return Line(_ref(text, rule), rule, numbers=nums)


def _rout_line(r: dict[str, Any], after: str) -> Line:
    """X35, X36 (and X39 for a Mob Rule check): the rout check's pool, difficulty and
    result, and the Magnitude a failure costs."""
    rule = r.get("rule_ref", "X35")
    what = "Mob Rule check" if r["kind"] != "rout" else "rout check"
    lead = f"{after}{r['unit']} " if after else f"{r['unit']} "
    nums: dict[str, Any] = {"passed": r["passed"], "magnitude_lost": r["magnitude_lost"],
                            "magnitude": r["magnitude"]}
    if not r["checked"]:
        return Line(_ref(f"{lead}needed no {what} ({', '.join(r['triggers'])})", rule), rule, kind="end",
                    numbers=nums)
    nums.update(pool=r["pool"]["value"], difficulty=r["difficulty"]["value"], successes=r["successes"])
    text = (f"{lead}made a {what} ({', '.join(r['triggers']) or 'idle under Mob Rule'}): "
            f"{_dice(nums['pool'])} against difficulty {nums['difficulty']}, {_successes(r['successes'] or 0)}: ")
    if r["passed"]:
        text += "held"
    else:
        text += "failed" + (", and hesitates" if r["hesitating"] else "")
        if r["magnitude_lost"]:
            text += f", losing {r['magnitude_lost']} Magnitude (now {r['magnitude']})"
    return Line(_ref(text, rule), rule, kind="end" if after else "event", numbers=nums)


def _exhaustion_line(x: dict[str, Any], after: str) -> Line:
    """X37: the exhaustion roll after an attack, and the Endurance it leaves."""
    rule = x.get("rule_ref", "X37")
    nums = {"pool": x["pool"]["value"], "difficulty": x["difficulty"]["value"], "successes": x["successes"],
            "endurance_before": x["endurance_before"], "endurance": x["endurance"]}
    result = ("kept its Endurance" if x["endurance"] >= x["endurance_before"]
              else f"lost {x['endurance_before'] - x['endurance']} Endurance (now {x['endurance']})")
    text = (f"{after}{x['unit']} rolled exhaustion: {_dice(nums['pool'])} against difficulty "
            f"{nums['difficulty']}, {_successes(x['successes'])}: {result}")
    return Line(_ref(text, rule), rule, kind="end", numbers=nums)


def _other_line(e: dict[str, Any]) -> Line:
    """E5, E11, X17-X27: an order other than an attack, or a refusal, in words."""
    rule = e.get("rule_ref", "")
    kind, who = e["kind"], e["unit"]
    if kind == "refused":
        return Line(_ref(f"{who}'s {e['action']} (typed for long tick {e['tick']}) was refused: {e['reason']}", rule),
                    rule)
    if kind == "Guard (no order)":
        return Line(_ref(f"{who} had no order and stood on guard", rule), rule)
    text = f"{who}: {kind}" + (f" ({e['option']})" if e.get("option") else "")
    if e.get("target"):
        text += f", target {e['target']}"
    nums: dict[str, Any] = {}
    if "yards" in e:
        nums["yards"] = e["yards"]["value"]
        text += f", {nums['yards']} yards"
    if "command" in e:
        c = e["command"]
        nums.update(pool=c["pool"]["value"], difficulty=c["difficulty"]["value"], successes=c["successes"],
                    success=c["success"])
        text += (f"; command roll {_dice(nums['pool'])} against difficulty {nums['difficulty']}, "
                 f"{_successes(c['successes'])}: {'done' if c['success'] else 'failed'}")
    if "formation" in e:
        text += f"; formation now {e['formation']}"
    if "disengaged" in e:
        text += f"; {_successes(e['successes'])}: " + ("disengaged" if e["disengaged"] else "still engaged")
    if "rally" in e:
        text += f"; rally for {e['rally']}, Magnitude {e['magnitude']}, Endurance {e['endurance']}"
    if "aim_dice" in e:
        text += f"; +{e['aim_dice']} dice on its next attack"
    if e.get("reached"):
        text += f"; reached {', '.join(e['reached'])}"
    if e.get("note"):
        text += f"; {e['note']}"
    return Line(_ref(text, rule), rule, numbers=nums)


def event_lines(e: dict[str, Any]) -> list[Line]:
    """One engine event in words: exactly one ``event`` line (citing its rule), then, for an
    attack, its rout checks (X35, X36, X43) and both exhaustion rolls (X37) as ``end`` lines."""
    kind = e["kind"]
    if kind == "Join War":
        return [_join_war_line(e)]
    if kind == "Mob Rule check":
        return [_rout_line(e, "")]
    if kind == "Attack":
        lines = [_attack_line(e)]
        after = f"After {e['unit']}'s attack on {e.get('target', '')}: "
        lines += [_rout_line(r, after) for r in rout_checks(e)]  # X35, X43
        lines += [_exhaustion_line(x, after) for x in e.get("exhaustion", ())]
        return lines
    return [_other_line(e)]


def _losses(tick: int, e: dict[str, Any]) -> list[Line]:
    """X34, X36: the Magnitude an event cost (damage, a failed rout or Mob Rule check), and
    the special characters and commanders it slew (X32, X34, X39)."""
    out = []
    if e["kind"] == "Attack" and "magnitude_lost" in e:
        n = e["magnitude_lost"]["value"]
        if n:
            out.append(Line(f"Long tick {tick}: {e['target']} lost {n} Magnitude to {e['unit']}'s attack (X34)", "X34"))
        for note in e.get("notes", ()):
            if "slain" in note or "die" in note:
                out.append(Line(f"Long tick {tick}: {note}", "X32, X34"))
    checks = rout_checks(e) if e["kind"] in ("Attack", "Mob Rule check") else []
    for r in checks:
        if r.get("magnitude_lost"):
            rule = r.get("rule_ref", "X36")
            out.append(Line(f"Long tick {tick}: {r['unit']} lost {r['magnitude_lost']} Magnitude in a failed "
                            f"{'rout' if r['kind'] == 'rout' else 'Mob Rule'} check ({rule})", rule))
    return out


def _group(battle: Battle, start: Battle, name: str) -> Group:
    """X1, X11, X40: a unit, its commander, special characters by role, named members and
    rank and file, and where it stands now."""
    u = battle.unit(name)
    assert u is not None
    st, first = battle.state_of(name), start.state_of(name)
    members = [f"commander {u.spec.commander.name}"]
    for role, names in (("hero", u.heroes), ("sorcerer", u.sorcerers), ("relay", u.relays)):
        members += [f"{role} {n}" for n in names]
    members += [f"member {n}" for n in u.named_members]
    members += [f"{g.count} {g.kind}{'s' if g.count != 1 and not str(g.kind).endswith('s') else ''}"
                for g in u.spec.members]
    if st is None:
        return Group(name, u.spec.side, members, "not yet in the battle (Build Units and Join War, E4)")
    began = first.magnitude if first is not None else st.starting_magnitude
    state = ("disbanded" if st.disbanded else "under Mob Rule" if st.mob_rule else
             "its commander fights alone" if st.solo else f"{st.formation.value} formation")
    details = (f"Magnitude {began} → {st.magnitude}, Endurance {st.starting_endurance} → {st.endurance}, {state}"
               + (f", led now by {st.commander}" if st.commander != u.spec.commander.name else "")
               + (f"; fallen: {', '.join(st.fallen)}" if st.fallen else ""))
    return Group(name, u.spec.side, members, details)


def _aftermath(src: ReportSource, battle: Battle) -> list[Line]:
    """X40, X41: each named member's fate from the casualty rolls, and each unit's days to
    heal back to its starting Magnitude (the dice End Battle rolls, from the seed)."""
    data = aftermath_json(battle)
    out = []
    for u in data["units"]:
        days = u["healing_days"]["value"]
        heal = f", {_plural(days, 'day')} to heal back (X41)" if days else " (X41)"
        out.append(Line(f"{u['name']} ({u['side']}): Magnitude {u['starting_magnitude']} → {u['magnitude']}, "
                        f"{u['dots_lost']} lost{heal}", "X41", numbers={"dots_lost": u["dots_lost"],
                                                                         "healing_days": days}))
        for c in u["casualties"]:
            lv = f", {_plural(c['levels'], 'level')}" if c["levels"] else ""
            first, second = c["first_roll"], c["second_roll"]
            rolls = f"Wits + Willpower {first['successes']} against largest loss {u['largest_loss']}" if first else ""
            if second:
                rolls += f", then {second['successes']} against total loss {u['dots_lost']}"
            out.append(Line(f"{c['character']} of {u['name']}: {c['fate']}{lv}" + (f" ({rolls}, X40)" if rolls
                                                                                    else " (X40)"), "X40"))
    over = ("End Battle has been run." if battle.ended or src.ended
            else "End Battle has not been run: these are the casualty rolls it would make from the seed.")
    out.append(Line(over, "X40", kind="note"))
    return out


def account(src: ReportSource) -> Account:
    """Issue 11 part 3, for Exalted: each side and unit with its commander, special
    characters and named members (X1, X11, X40); each long tick in words (Join War E4,
    actions X17-X27, attacks X28-X34, rout X35/X36, exhaustion X37, Mob Rule X39);
    casualties and the aftermath (X40, X41); and Magnitude by long tick."""
    battle: Battle = src.battle
    start, ticks = replay(battle)
    notes: list[str] = []
    if not ticks:
        if battle.started:
            notes.append(f"This battle holds only its standing at long tick {battle.tick}, not the ticks that led "
                         "to it, so no tick can be told. A battle file keeps each tick's record when it is resolved "
                         "with `sheetsync resolve FILE --out next.yaml`.")
        else:
            notes.append(f"No long tick has been resolved yet: Join War has not been rolled and "
                         f"{_plural(len(battle.orders), 'order')} are waiting.")
    elif start.started:
        notes.append(f"This record starts at long tick {start.tick}: the ticks before it are not in it.")
    steps: list[StepBlock] = []
    casualties: list[Line] = []
    names = [u.name for u in battle.units]
    labels = ["start"]
    series: dict[str, list[float]] = {n: [] for n in names}
    for n in names:
        first = start.state_of(n)
        series[n].append(float(first.magnitude) if first is not None else 0.0)
    for _before, result, problem in ticks:
        lines: list[Line] = []
        for e in result.events:
            lines += event_lines(e)
            casualties += _losses(result.tick, e)
        steps.append(StepBlock(f"Long tick {result.tick}", lines, problem))
        labels.append(f"tick {result.tick}")
        for n in names:
            st = result.battle.state_of(n)
            series[n].append(float(st.magnitude) if st is not None else 0.0)
    for n in names:
        st = battle.state_of(n)
        if st is not None and st.fallen and not any(n in ln.text and "slain" in ln.text for ln in casualties):
            casualties.append(Line(f"{n} lost {', '.join(st.fallen)} in the battle (X32, X34)", "X32, X34"))
    charts = []
    if ticks:
        charts.append(Chart("Magnitude by long tick", tuple(labels), {n: tuple(v) for n, v in series.items()},
                            "line", "Magnitude"))
    after_lines = _aftermath(src, battle) if battle.started else []
    title = "the shared battle" if "://" in src.name else PurePath(src.name).stem or src.name
    groups = [_group(battle, start, n) for n in names]
    return Account(title=title, system_title="Exalted 2e mass combat", source=src.name, group_word="Unit",
                   step_word="long tick", groups=groups, steps=steps, heroes=None, casualties=casualties,
                   aftermath=after_lines, charts=charts, notes=notes)
