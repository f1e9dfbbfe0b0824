"""The after-action report of a hex wargame battle (issue 11, part 3; H1-H12).

A hex battle keeps one undo record per resolved turn: its orders as typed and the units
it changed as they were.  Undoing every record gives the battle before turn 1 (or before
the first turn recorded); each turn is then resolved again with the battle's own dice
(H8: the seed and the turn; typed dice are in the orders) and checked against the units
that followed it, so each line is the engine's own event.
"""

from __future__ import annotations

from typing import Any

from sheetsync.core.account import Account, Chart, Group, Line, Picture, ReportSource, StepBlock
from sheetsync.systems.hexwar.rules.aftermath import aftermath
from sheetsync.systems.hexwar.rules.models import Battle
from sheetsync.systems.hexwar.rules.turn import AttackEvent, MoveEvent, resolve_turn, undo

__all__ = ["MAP_HEX_SIZE", "account", "event_line", "replay", "unit_size"]

MAP_HEX_SIZE = 64
"""Pixels from a hex's centre to its corners in the report's maps: readable on A4 at full width."""


def _ref(text: str, rule: str) -> str:
    return f"{text} ({rule})" if rule else text


def event_line(e: MoveEvent | AttackEvent) -> Line:
    """H4, H5 (moves), H7-H9 (attacks): one resolved order in words, with its numbers."""
    rule = e.rule_ref
    if isinstance(e, MoveEvent):
        if e.outcome == "refused":
            return Line(_ref(f"{e.unit}'s move to {e.to} was refused: {e.reason}", rule), rule)
        how = " (a charge)" if e.charge else ""
        via = f" by {', '.join(e.path)}" if len(e.path) > 1 else ""
        return Line(_ref(f"{e.unit} moved from {e.from_} to {e.to}{via}{how}", rule), rule)
    who = " and ".join(e.attackers)
    if e.outcome == "refused":
        return Line(_ref(f"{who}'s attack on {e.defender} was refused: {e.reason}", rule), rule)
    nums: dict[str, Any] = {"strength": e.strength, "defense": e.defense, "chance": e.chance, "roll": e.roll,
                            "casualties": e.casualties}
    odds = f"S {e.strength} vs D {e.defense}, chance {e.chance}%, d100 {e.roll}"
    if e.outcome == "hit":
        text = f"{who} struck {e.defender} for {e.casualties}% casualties ({odds}, {rule})"
        if e.destroyed:
            text += f"; {e.defender} destroyed (H9)"
    else:
        text = f"{who} attacked {e.defender} and inflicted no casualties ({odds}, {rule})"
    return Line(text, rule, numbers=nums)


def unit_size(u: Any) -> str:
    """H1, H12: a unit's size in words, as typed (``a squadron``, ``a company``, ``2
    battalions``), and its men as the aftermath counts them: size × the men of a battalion
    of it (a company of a 500-man unit is 250 men)."""
    import math

    from sheetsync.systems.hexwar.tracker.cells import size_word

    word = u.size_name or size_word(u.size)
    men = math.floor(u.size * u.men + 0.5)
    return f"a {word} of {men} men" if word else f"{u.size:g} battalions of {men} men"


def replay(battle: Battle) -> tuple[Battle, list[tuple[Battle, Any, str | None]]]:
    """H8: the battle before its first recorded turn, and each recorded turn resolved again
    (the battle before it, its :class:`TurnResult`, and a problem when the replay does not
    reach the units recorded after it)."""
    states = [battle]
    while states[0].history:
        states.insert(0, undo(states[0]))
    out: list[tuple[Battle, Any, str | None]] = []
    for i in range(len(states) - 1):
        before = states[i]
        result = resolve_turn(before)
        want = [u.model_dump(mode="json") for u in states[i + 1].units]
        got = [u.model_dump(mode="json") for u in result.battle.units]
        problem = None if got == want else (
            f"Turn {before.turn} does not replay to the units recorded after it (were the house rules or the record "
            "changed since?): the lines below are the engine's replay of its orders and dice")
        out.append((before, result, problem))
    return states[0], out


def account(src: ReportSource) -> Account:
    """Issue 11 part 3, for the hex wargame: sides and units (H1), each turn's initiative
    (H3), moves (H4, H5) and attacks (H7-H9) in words, casualties and destroyed units (H9),
    the report's losses in men (H12), casualties by turn and the map (H2)."""
    battle: Battle = src.battle
    start, turns = replay(battle)
    notes: list[str] = []
    if not turns:
        if battle.turn > 1 or any(u.casualties for u in battle.units):
            notes.append(f"This battle holds only its standing before turn {battle.turn}, not the turns that led to "
                         "it, so no step can be told. A battle file keeps each turn's record when it is resolved "
                         "with `sheetsync resolve FILE --out next.yaml`; a tracker keeps it in its State sheet.")
        else:
            typed = len(battle.orders.moves) + len(battle.orders.attacks)
            notes.append(f"No turn has been resolved yet: turn 1 has {typed} typed "
                         f"move{'s' if typed != 1 else ''} and attacks waiting, and no unit has casualties.")
    elif start.turn > 1:
        notes.append(f"This record starts at turn {start.turn}: the turns before it are not in it.")
    groups = []
    for u in battle.units:
        first = start.unit(u.name)
        state = (f"destroyed in turn {u.destroyed_turn}" if u.destroyed and u.destroyed_turn
                 else "destroyed" if u.destroyed else f"{u.casualties}% casualties, at {u.hex}")
        groups.append(Group(u.name, u.side, [f"{unit_size(u)}, counter {u.counter}"],
                            f"started at {first.hex}; {state}"))
    steps: list[StepBlock] = []
    casualties: list[Line] = []
    sides = battle.sides
    by_turn: dict[str, list[float]] = {s: [] for s in sides}
    for before, result, problem in turns:
        lines: list[Line] = []
        if result.initiative:
            rolls = "; ".join(f"{r.side} 3d6 {r.roll} under {r.skill}" for r in result.initiative_rolls)
            lines.append(Line(_ref(f"Initiative: {result.initiative}" + (f" ({rolls})" if rolls else ""), "H3"),
                              "H3", kind="note"))
        side_of = {u.name: u.side for u in battle.units}
        suffered = dict.fromkeys(sides, 0.0)
        for e in result.events:
            ln = event_line(e)
            lines.append(ln)
            if isinstance(e, AttackEvent) and e.outcome == "hit":
                suffered[side_of[e.defender]] += e.casualties
                text = f"Turn {before.turn}: {e.defender} took {e.casualties}% casualties from {' and '.join(e.attackers)}"
                if e.destroyed:
                    text += ", and was destroyed (H9)"
                casualties.append(Line(_ref(text, e.rule_ref), e.rule_ref))
        for s in sides:
            by_turn[s].append(suffered[s])
        steps.append(StepBlock(f"Turn {before.turn}", lines, problem))
    after_lines: list[Line] = []
    if turns:
        rep = aftermath(battle)
        for sr in rep.sides:
            after_lines.append(Line(f"{sr.side}: {sr.losses} of {sr.men} men lost, {sr.destroyed} of {sr.units} "
                                    "units destroyed (H12)", "H12"))
        for ur in rep.units:
            if ur.casualties:
                after_lines.append(Line(f"{ur.name} ({ur.side}): {ur.casualties}% casualties, {ur.losses} men lost"
                                        + (" (destroyed)" if ur.destroyed else "") + " (H12)", "H12"))
        over = (f"The battle is over: {rep.survivor} holds the field (H12)." if rep.over and rep.survivor
                else "The battle is over: no side has units left (H12)." if rep.over
                else f"After {rep.turns} turn{'s' if rep.turns != 1 else ''} both sides still have units on the map"
                     + (" and End Battle has been run" if src.ended else "") + " (H12).")
        after_lines.append(Line(over, "H12"))
    charts = []
    if turns:
        labels = tuple(f"turn {b.turn}" for b, _, _ in turns)
        charts.append(Chart("Casualties by turn (percentage points suffered)", labels,
                            {s: tuple(v) for s, v in by_turn.items()}, "bar", "Casualties %"))
    pictures = _pictures(start, battle, bool(turns))
    from pathlib import PurePath

    title = "the shared battle" if "://" in src.name else PurePath(src.name).stem or src.name
    return Account(title=title, system_title="Hex wargame", source=src.name, group_word="Unit", step_word="turn",
                   groups=groups, steps=steps, heroes=None, casualties=casualties, aftermath=after_lines,
                   charts=charts, pictures=pictures, notes=notes)


def _pictures(start: Any, battle: Any, played: bool) -> list[Picture]:
    """H1, H2: the map before the first turn played and now: PNGs drawn by Pillow, or SVG
    drawn with the standard library where Pillow can't be imported (issue 25: the report
    runs under Pyodide without it)."""
    from sheetsync.systems.hexwar.picture import pillow_available, render_map_png, render_map_svg

    def picture(title: str, state: Any) -> Picture:
        if not pillow_available():
            return Picture(title, svg=render_map_svg(state, hex_size=MAP_HEX_SIZE))
        return Picture(title, render_map_png(state, hex_size=MAP_HEX_SIZE))

    pictures = []
    if played:
        pictures.append(picture(f"The map before turn {start.turn}", start))
    pictures.append(picture(f"The map before turn {battle.turn}" + (" (now)" if played else ""), battle))
    return pictures
