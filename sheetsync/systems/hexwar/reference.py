"""The hex wargame's rules reference: the sections of the rules text and how sheetsync
reads each gap in it (rulings H1-H12), with the house-rule keys that change a reading.

This is the one source of ``docs/rules/hexwar.md`` (the parts between its ``<!-- ... -->``
markers) and of ``sheetsync rules --system hexwar``; a test checks the house-rule keys and
defaults against :class:`~sheetsync.systems.hexwar.rules.models.HouseRules`.  Regenerate the
document with ``python -m sheetsync.systems.hexwar.reference docs/rules/hexwar.md``.

Everything here is in sheetsync's own words; the rules text stays outside the project.
Standard library only.
"""

from __future__ import annotations

import sys

from sheetsync.core.reference import HouseRule, Reference, Ruling, Section

__all__ = ["HOUSE_RULES", "REFERENCE", "RULINGS", "SECTIONS"]

SECTIONS: tuple[Section, ...] = (
    Section("1.0", "Overview", "A turn: the side without initiative moves, then the side with it, then combat."),
    Section("2.0", "Scale", "Distance is counted in hexes; a battalion is about 500 fighters."),
    Section("3.0", "Counters", "A counter's four values: attack (with charge marks), defense, movement, range."),
    Section("4.0", "Initiative", "Who moves first; a Military Science contest is suggested."),
    Section("5.0", "Movement", "Up to the movement value in hexes, never required; two battalions a hex."),
    Section("5.1", "Terrain", "No terrain rules beyond impassable hexes."),
    Section("6.0", "Combat", "Simultaneous; each unit attacks at most once a turn."),
    Section("6.1", "Range", "Which enemies a unit can reach, by its range value."),
    Section("6.2", "Basic Combat Procedure", "An engagement: attackers' strength against one defender's defense."),
    Section("6.2.1", "Damage", "The d100 roll, percentage casualties, destruction at 100%."),
    Section("6.2.2", "Proportional values", "Damaged units fight with lowered attack and defense."),
    Section("6.3", "Special Attack Values", "Charge, reduced-strength range and extended range."),
    Section("6.3.1", "Charge attacks", "A `+` or `++` unit that moved far enough adds 1 or 2."),
    Section("6.3.2", "Reduced strength range", "`R(n)`: the value n replaces the attack beyond 1 hex."),
    Section("6.3.3", "Extended range", "`R(--)`: full attack up to R, then one less per hex."),
    Section("7.0", "Example Units", "Sample counters, their values and sizes."),
    Section("8.0", "Orders of Battle", "The forces of the author's two battles."),
    Section("9.0", "Closing Comments", "The author's ideas for later, such as a summed stack defense."),
)

RULINGS: tuple[Ruling, ...] = (
    # -- units and the map
    Ruling("H1", "A unit", ("3.0", "5.0", "6.2.1", "7.0"),
           "A unit has a name, a side, a size and four values: attack (optionally marked + or ++), "
           "defense, movement and range, the range possibly carrying (n) or (--). The counter may be "
           "typed as one label (\"4 - 3 - 1 - 2(3)\") or one value per column; a label that can't be "
           "read is an error naming its cell. Size is in battalions: battalion and squadron 1, company "
           "0.5. Men (500 unless typed) only feed the report. Casualties start at 0%."),
    Ruling("H2", "The map", ("2.0", "5.1"),
           "Flat-topped hexes numbered CCRR (column then row); odd-numbered columns sit half a hex "
           "lower. Distance is counted in cube coordinates. The map has a width, a height and a list "
           "of impassable hexes; there is no other terrain."),
    # -- a turn
    Ruling("H3", "Turn sequence and initiative", ("1.0", "4.0"),
           "Initiative first, then the side without it moves every unit, then the side with it, then "
           "combat, all at once. By default the Storyteller types who has initiative each turn; the "
           "other reading has each general roll 3d6 under Military Science, the better margin winning "
           "and a tie keeping last turn's holder.",
           ("initiative",)),
    Ruling("H4", "Moves", ("5.0",),
           "A move is typed as a destination or as a path of adjacent hexes. It may enter at most the "
           "movement value in hexes (the shortest legal path for a bare destination), never an "
           "impassable hex or one holding an enemy, may pass friends, and must end in a hex holding no "
           "more than the stack limit of its side's battalions. Moves apply in sheet order within a "
           "side; an illegal one is refused with its reason and the unit stays put.",
           ("stack_limit",)),
    Ruling("H5", "Charge", ("6.3.1",),
           "A + or ++ unit charges when it ends the turn 2 or more hexes from where it began, so out "
           "and back again is no charge. The other reading also counts a typed path entering 2 or more "
           "different hexes, none of them the start. The +1 or +2 counts only attacking at 1 hex.",
           ("charge_by",)),
    # -- combat
    Ruling("H6", "Range", ("6.1", "6.3.2", "6.3.3"),
           "A unit may join an attack on a defender within its range. Plain R: full attack throughout. "
           "R(n): full attack at 1 hex, n from 2 hexes to R. R(--): full attack up to R, then 1 less "
           "for each hex beyond, as long as something is left."),
    Ruling("H7", "Engagements", ("6.0", "6.2", "9.0"),
           "One defender and the attackers that join against it. A unit joins at most one engagement "
           "a turn, need not attack, and may be attacked regardless; a defender faces one engagement a "
           "turn, so a second row against it is refused. Strength S adds the attackers' values at their "
           "distance; the chance is 100·S/(S + D) rounded down, D being the defender's own. A summed "
           "stack defense is not offered yet.",
           ("stack_defense",)),
    Ruling("H8", "Casualties", ("6.2.1",),
           "A d100 from 1 to 100 (a typed 00 is 100). At or above the chance nothing happens; below it "
           "the defender takes the difference in percent. Each die is typed or rolled from the "
           "battle's seed, turn and engagement, and the log says which."),
    Ruling("H9", "Simultaneous combat", ("6.0", "6.2.1"),
           "Every engagement in a turn uses the values units had when combat began, after movement and "
           "charges. Casualties add up and land after the last engagement; a unit at 100% or more is "
           "removed then, having still attacked that turn."),
    Ruling("H10", "Proportional reduction", ("6.2.2",),
           "On by default, as the author advises: a value v at c% casualties drops by one for each "
           "step j from 1 to v − 1 with c at least 100·j/v rounded down, so 4 falls to 3, 2 and 1 at "
           "25, 50 and 75%. It lowers attack, defense and a reduced-range value; at 50% a + is lost "
           "and a ++ becomes +.",
           ("proportional_reduction",)),
    # -- around the rules
    Ruling("H11", "Odds before rolling", ("6.2", "6.2.1"),
           "Each engagement row shows S, D, the chance and the expected casualties before any die: for "
           "a chance of c%, c·(c − 1)/200 percentage points."),
    Ruling("H12", "The end", ("2.0", "6.2.1"),
           "The battle ends when the Storyteller says so or a side has no units left. The report gives "
           "each unit's casualties, its losses in men (size × men × casualties) and what destroyed it."),
)

HOUSE_RULES: tuple[HouseRule, ...] = (
    HouseRule("initiative", '"set"', '"set", "contest"', "H3",
              "initiative typed each turn (set) or a Military Science contest"),
    HouseRule("stack_limit", "2", "a number above 0", "H4",
              "battalions of one side a hex may hold after a move (a company is 0.5)"),
    HouseRule("charge_by", '"distance"', '"distance", "path"', "H5",
              "a charge ends 2+ hexes away (distance), or also follows a typed path of 2+ new hexes"),
    HouseRule("stack_defense", '"single"', '"single"', "H7",
              "the defender's own defense (a summed stack defense is not offered yet)"),
    HouseRule("proportional_reduction", "true", "true, false", "H10",
              "values fall with casualties"),
)

REFERENCE = Reference("hexwar", "Hex wargame", RULINGS, SECTIONS, HOUSE_RULES, cite_example="6.2.1, H8")


if __name__ == "__main__":  # pragma: no cover - the maintainer's regeneration step
    from pathlib import Path

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules/hexwar.md")
    target.write_text(REFERENCE.render_document(target.read_text(encoding="utf-8")), encoding="utf-8")
