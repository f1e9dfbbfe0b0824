"""The battalion rules reference: the rule sections and how sheetsync reads each open or
contradictory place (rulings R1-R37), with the house-rule key that changes a reading.

This is the one source of ``docs/rules/bbn.md`` (the parts between its ``<!-- ... -->``
markers) and of ``sheetsync rules``.  The house-rule keys and their defaults come from
:class:`HouseRules` itself, so the reference can't drift from the code.  Regenerate the
document with ``python -m sheetsync.systems.bbn.reference docs/rules/bbn.md``.

Everything here is written in sheetsync's own words; the rules text stays outside the
project.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from sheetsync.systems.bbn.rules.models import HouseRules

__all__ = [
    "RULINGS",
    "SECTIONS",
    "Ruling",
    "Section",
    "find_ruling",
    "house_rule_rows",
    "house_rules_markdown",
    "render_document",
    "rulings_for",
    "rulings_markdown",
    "sections_markdown",
]


@dataclass(frozen=True, slots=True)
class Section:
    """A section of the rules text, as code and results cite it ("Tasks 5.11.2")."""

    ref: str
    title: str
    about: str


@dataclass(frozen=True, slots=True)
class Ruling:
    """How sheetsync reads one open or contradictory place in the rules text."""

    number: int
    title: str
    sections: tuple[str, ...]
    text: str
    key: str | None = None

    @property
    def ref(self) -> str:
        return f"R{self.number}"


SECTIONS: tuple[Section, ...] = (
    Section("Cohort 1", "Cohort", "Characters fight in groups of 3 to 5, each with a Sergeant, a Tracker and a Reporter."),
    Section("Support Cohort 2", "Support Cohort", "A cohort that gives up fighting to help one other cohort a phase."),
    Section("Modifiers", "Modifiers", "How Abilities, Merits, Disciplines and Combination Disciplines add to a pool."),
    Section("Cohort Sheet 1.1", "Health Pool", "One shared Health pool for the whole cohort."),
    Section("Cohort Sheet 1.2", "Attack Power", "Melee, Ranged and Mystical Attack Power."),
    Section("Cohort Sheet 1.3", "Defense Rating", "What an attack roll must reach."),
    Section("Cohort Sheet 1.4", "Temper Pool", "Blood, Rage and the like, pledged at the start; 1.4.3 caps each share."),
    Section("Cohort Sheet 1.5", "Movement Rate", "Units moved a Move task; 1.5.1 has the worked example."),
    Section("Cohort Sheet 1.6", "Resolve", "Willpower spent at the start, for social and mental tasks."),
    Section("Cohort Sheet 1.7", "Control", "Battlefield sway, spent on Tactical Tasks."),
    Section("Hero Moments", "Hero Moments", "Once a battle per character, at most 3 a cohort a phase; 1.1 to 1.5 are the kinds."),
    Section("The Battle 1-2", "Basics and Movement", "A battle is a run of phases; distance is in Units."),
    Section("The Battle 3", "Ranges", "Personal, Distanced, In-Sight or Blinded, set by the Storyteller."),
    Section("The Battle 4", "Actions", "How many tasks a cohort may take in a phase."),
    Section("Tasks 5.1", "Move", "Move up to the Movement Rate; no temper."),
    Section("Tasks 5.2", "Melee Attack", "1 temper, Personal range, +5 damage."),
    Section("Tasks 5.3", "Ranged Attack", "1 temper, Distanced range."),
    Section("Tasks 5.4", "Mystical Attack", "3 temper, any range but Blinded, +2 damage."),
    Section("Tasks 5.5", "Inspire", "2 temper; d10 + Resolve against an enemy's Defense for a benefit to a friend."),
    Section("Tasks 5.6", "Intimidate", "1 temper, once a phase; each 5 of the margin scares an enemy member."),
    Section("Tasks 5.7", "Rescue", "2 temper, at most twice a phase; lifts a member one state."),
    Section("Tasks 5.8", "Analyze", "1 temper, In-Sight; the Storyteller tells what the enemy is up to."),
    Section("Tasks 5.9", "Heal", "1 to 10 temper, 3 Health each."),
    Section("Tasks 5.10", "Hero Moment task", "Takes no action."),
    Section("Tasks 5.11", "Attacking", "d10 + Attack Power against Defense; 5.11.1 damage, 5.11.2 taking damage."),
    Section("Tasks 5.12", "States", "Active, Scared, Knocked Out, Stabilized, Dead, and what each costs."),
    Section("Tasks 5.13", "Tactical Task", "1 Control for an extra task that takes no action."),
    Section("Aftermath", "Battle Aftermath", "From the cohort sheet back to each character: damage, Aegis, lasting effects, temper."),
)

RULINGS: tuple[Ruling, ...] = (
    # -- building the cohort sheet
    Ruling(1, "Cohort size", ("Cohort 1",),
           "A cohort has 3, 4 or 5 members; any other size is an error naming the cohort. The "
           "Storyteller's NPC cohorts may type their pools in by hand instead of listing sheets.",
           "allow_any_size"),
    Ruling(2, "Ability dots", ("Modifiers",),
           "For a pool, the dots of all its listed Abilities are added over the whole cohort, and "
           "each full 5 gives +1. The other reading floors each Ability's cohort total by itself.",
           "ability_bonus"),
    Ruling(3, "Merits", ("Modifiers", "Cohort Sheet 1.6"),
           "Each listed Merit gives +1, and a character counts a given modifier once per pool. Natural "
           "Leader and Enchanting Voice together still give a character only +1."),
    Ruling(4, "Disciplines and Thaumaturgy paths", ("Modifiers", "Cohort Sheet 1.2", "Cohort Sheet 1.3"),
           "A Discipline gives +1 per level. For Melee only the best of a character's shape-changing "
           "Disciplines counts. Paths named as modifiers (Path of Mars, Path of Blood, Weather Control) "
           "count their level."),
    Ruling(5, "Combination Disciplines", ("Modifiers",),
           "A combination that contains at least one of a pool's listed Disciplines adds a fixed bonus "
           "to that pool, once per combination; two such combinations add it twice. Combinations never "
           "feed Movement.",
           "combo_bonus"),
    Ruling(6, "Mystical Attack Power", ("Cohort Sheet 1.2",),
           "Occult and Thanatology count like any listed Ability. Offensive Blood Magic paths add their "
           "levels, at most the best three per character (15 at most). The catalog ships the list of "
           "offensive paths and a sheet may mark a path either way. With none of these, Mystical is 0."),
    Ruling(7, "Base values", ("Cohort Sheet 1.1", "Cohort Sheet 1.2", "Cohort Sheet 1.3", "Cohort Sheet 1.7"),
           "Before modifiers: Health 5 and Defense 5 per member, Melee 2 per member, Ranged 2 per member "
           "with a ranged attack, Control 0."),
    Ruling(8, "Temper Pool", ("Cohort Sheet 1.4",),
           "Each member's pledged temper counts up to 30 (50 with Blood Magic in-clan); the pool's "
           "modifiers are added after, uncapped."),
    Ruling(9, "Resolve", ("Cohort Sheet 1.6",),
           "The willpower the whole cohort spends, divided by 3 and rounded down, plus the modifiers."),
    Ruling(10, "Movement", ("Cohort Sheet 1.5",),
           "Each member brings one value: their best level among the movement Disciplines (or a lower "
           "one they pick), 0 with none. The cohort moves 1 + its slowest member's value. Combinations "
           "don't count."),
    Ruling(11, "Actions", ("The Battle 4", "Tasks 5.12"),
           "A cohort gets one action per member who is not Knocked Out, Stabilized or Dead, and, by "
           "default, not Scared either: the two places in the text disagree, and only this reading gives "
           "Intimidate a bite.",
           "scared_loses_action"),
    Ruling(12, "Trait names", ("Modifiers",),
           "Traits match whatever their case or spacing, with or without a leading \"Thaumaturgy:\", and "
           "the catalog's synonyms. An unknown trait is kept and shown as not counted; the breakdown "
           "names who gave each point."),
    # -- a phase
    Ruling(13, "Order of a phase", ("The Battle 4", "Tasks 5.12"),
           "Orders are resolved in the order listed. Before each one, the cohort's actions, temper, range "
           "and per-phase limits are checked; an order that fails is marked with the reason and costs "
           "nothing. States changed earlier in the phase take or give back actions at once."),
    Ruling(14, "Hitting", ("Tasks 5.5", "Tasks 5.6", "Tasks 5.8", "Tasks 5.11"),
           "d10 + the pool used must reach the target's Defense; a tie goes to the one rolling. Inspire, "
           "Intimidate and Analyze roll Resolve against Defense the same way."),
    Ruling(15, "Damage", ("Tasks 5.11.1",),
           "A hit does 2 per attacking member still able to fight, +5 for Melee and +2 for Mystical; "
           "Attack Power only decides whether it hits. Other readings count every living member, or the "
           "pool itself.",
           "damage_basis"),
    Ruling(16, "Below zero", ("Tasks 5.11.2", "Tasks 5.12"),
           "Health may go negative. Each further 10 below zero is a casualty step: a Knocked Out member "
           "dies if there is one, otherwise a random member who is up (never the Sergeant while anyone "
           "else is eligible) is Knocked Out. Stabilized members are passed over until everyone else is "
           "down, and one attack steps the same member twice only when no one else is left. Every random "
           "pick is a logged die."),
    Ruling(17, "Heal", ("Tasks 5.9", "Support Cohort 2"),
           "1 to 10 temper, 3 Health each, never above the maximum. Healing raises Health even below zero "
           "but wakes no one: only Rescue does. A Support cohort may heal another cohort."),
    Ruling(18, "Rescue", ("Tasks 5.7",),
           "2 temper lifts one member a state: Knocked Out to Stabilized, Stabilized to Active; at most 2 "
           "Rescues a phase. A member left Knocked Out when no Rescue was taken raises the Sergeant's "
           "Path/Humanity flag in the log (see R34 for when)."),
    Ruling(19, "Intimidate", ("Tasks 5.6",),
           "Once a phase per cohort. Each full 5 of the margin makes one random Active enemy member "
           "Scared, logged, until the end of the phase."),
    Ruling(20, "Inspire", ("Tasks 5.5",),
           "Rolled against an enemy threatening a friendly cohort. On a success the friendly cohort gets "
           "one benefit: a reroll token for the next phase, its Scared members back to Active, or +5 "
           "Resolve for the rest of the phase."),
    Ruling(21, "Hero Moments", ("Hero Moments", "Tasks 5.10"),
           "No action needed; one per character per battle and at most 3 per cohort a phase. A Scared "
           "character may take one, a downed one may not. The kinds are Save an Ally, Push Forward, Kill "
           "'Em All, Boost a Pool, Split the Party and a Custom moment the Storyteller rules on. Support "
           "cohorts only take the ones that aid others."),
    Ruling(22, "Support cohorts", ("Support Cohort 2",),
           "They never attack or Intimidate, and aid one other cohort a phase (a second one with Split the "
           "Party)."),
    Ruling(23, "Tactical Task", ("Tasks 5.13",),
           "At most one a phase, for 1 Control and no action; the Storyteller's ruling is logged as text."),
    Ruling(24, "Ranges", ("The Battle 3", "Tasks 5.1"),
           "The Storyteller sets a band for each pair of cohorts. A task needs the band its section lists; "
           "nothing can be done against a Blinded cohort. Move only records Units; changing bands is the "
           "Storyteller's call."),
    Ruling(25, "Dice", ("Tasks 5.11",),
           "A die typed into the sheet wins; otherwise sheetsync rolls from a seeded generator, so the same "
           "phase rolls the same. The log says which. A reroll token replaces one of the cohort's own dice "
           "in the next phase."),
    # -- aftermath
    Ruling(26, "Damage taken", ("Aftermath",),
           "Maximum Health minus final Health (negative Health counts in full), shared equally and rounded "
           "up among members not Dead; each 3 is one Aggravated level and the rest Lethal. Where the text's "
           "own Aegis example disagrees, the 3-to-1 rule wins."),
    Ruling(27, "Aegis and Torpor", ("Aftermath",),
           "Each Aegis burn (at most 3) halves the Aggravated and the Lethal levels, rounding up, so some "
           "damage always stays. More levels than the character's health levels means Torpor, never "
           "death.",
           "health_levels"),
    Ruling(28, "Lasting effects", ("Aftermath",),
           "A character who takes 25 or more rolls one d10 on the table of the highest band reached (25, 50 "
           "or 75), judged before Aegis."),
    Ruling(29, "Temper left", ("Aftermath",),
           "What is left of the Temper Pool is split equally among members not Dead, rounded down; the "
           "remainder is lost."),
    Ruling(30, "The dead", ("Aftermath",),
           "A member Dead at the end stays dead, and the report says so."),
    # -- places the text leaves open
    Ruling(31, "Casualty steps after healing", ("Tasks 5.11.2",),
           "By default a step is taken each time Health, going down, passes another multiple of 10 below "
           "zero; a cohort healed back above one passes it again on the way down and pays again. The other "
           "reading adds up all damage taken at or below zero over the battle and takes a step per full "
           "10, so healing never buys a step back.",
           "casualty_count"),
    Ruling(32, "A Stabilized member stepped", ("Tasks 5.11.2", "Tasks 5.12"),
           "A casualty step that falls on a Stabilized member takes them to Knocked Out. A further step in "
           "the same attack kills them only when nobody else can take it (R16)."),
    Ruling(33, "A Knocked Out Sergeant", ("Tasks 5.11.2",),
           "Once everyone else is Stabilized, Knocked Out or Dead, a Knocked Out Sergeant is the first "
           "step's Knocked Out member: the Sergeant dies before any Stabilized member is touched."),
    Ruling(34, "When the Path/Humanity flag is raised", ("Tasks 5.7",),
           "Only when, at the end of the phase, a member is Knocked Out, the cohort took no Rescue, its "
           "Sergeant is up (neither Knocked Out nor Dead), and the cohort began the phase with the 2 temper "
           "a Rescue costs. A Sergeant who could not have rescued is not flagged."),
    Ruling(35, "Torpor after Aegis", ("Aftermath",),
           "By default Torpor is judged on the levels left after the Aegis burns, since burning is part of "
           "settling the aftermath. The other reading judges it on the levels before any burn.",
           "torpor_after_aegis"),
    Ruling(36, "A Heal spends what it needs", ("Tasks 5.9",),
           "When the declared temper would heal past the maximum, the Heal spends only what the missing "
           "Health needs (a third of it, rounded up, at least 1), and the log shows declared and spent. The "
           "other reading spends everything declared.",
           "heal_spends_declared"),
    Ruling(37, "Out of the fight", ("The Battle 4", "Tasks 5.12"),
           "A cohort whose members are all Dead is gone: an order aimed at it is refused and costs nothing. "
           "A cohort with no member Active or Scared can take no task, though it can still be attacked. A "
           "side is out of the fight once none of its cohorts has a member Active or Scared."),
)


def find_ruling(ref: str) -> Ruling | None:
    """The ruling ``ref`` names ("R16", "r16" or "16"), or ``None``."""
    m = re.fullmatch(r"\s*[Rr]?(\d+)\s*", ref)
    if not m:
        return None
    return next((r for r in RULINGS if r.number == int(m.group(1))), None)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def house_rule_rows() -> list[tuple[str, str, str, str, str]]:
    """``(key, default, choices, ruling, what it changes)`` for every field of
    :class:`HouseRules`, in the model's order."""
    rows = []
    by_key = {r.key: r for r in RULINGS if r.key}
    for key, (text, default, choices) in HouseRules.describe().items():
        ruling = by_key.get(key)
        field = HouseRules.model_fields[key]
        if choices:
            allowed = ", ".join(_shown(c) for c in choices)
        else:
            lo = next((getattr(m, "ge", None) for m in field.metadata if hasattr(m, "ge")), None)
            hi = next((getattr(m, "le", None) for m in field.metadata if hasattr(m, "le")), None)
            allowed = f"whole number {lo} to {hi}" if lo is not None and hi is not None else "whole number"
        what = re.sub(r"^R\d+:\s*", "", text)
        rows.append((key, _shown(default), allowed, ruling.ref if ruling else "", what))
    return rows


def house_rules_markdown() -> str:
    """The house-rule keys table of ``docs/rules/bbn.md``."""
    out = ["| Key | Default | Allowed | Ruling | What it changes |", "| --- | --- | --- | --- | --- |"]
    for key, default, allowed, ruling, what in house_rule_rows():
        out.append(f"| `{key}` | `{default}` | {allowed} | {ruling} | {what} |")
    return "\n".join(out)


def rulings_markdown() -> str:
    """Every ruling, with its sections and house-rule key."""
    out: list[str] = []
    defaults = {k: d for k, d, *_ in house_rule_rows()}
    for r in RULINGS:
        head = f"- **{r.ref} {r.title}** ({', '.join(r.sections)})"
        if r.key:
            head += f". House rule `{r.key}`, default `{defaults[r.key]}`"
        out.append(f"{head}. {r.text}")
    return "\n".join(out)


def sections_markdown() -> str:
    """The rule sections as results cite them, and the rulings that read each."""
    out = ["| Section | Title | What it covers | Rulings |", "| --- | --- | --- | --- |"]
    for s in SECTIONS:
        refs = ", ".join(r.ref for r in rulings_for(s.ref))
        out.append(f"| {s.ref} | {s.title} | {s.about} | {refs} |")
    return "\n".join(out)


def rulings_for(section: str) -> list[Ruling]:
    """The rulings that read ``section``: ``Tasks 5.11`` takes in those citing ``Tasks
    5.11.2`` (and ``Tasks 5.1`` does not take in ``Tasks 5.11``)."""
    return [r for r in RULINGS if any(c == section or c.startswith(section + ".") for c in r.sections)]


PARTS = {"house-rules": house_rules_markdown, "rulings": rulings_markdown, "sections": sections_markdown}


def render_document(doc: str) -> str:
    """``doc`` with each ``<!-- NAME:begin -->`` ... ``<!-- NAME:end -->`` part regenerated."""
    for name, make in PARTS.items():
        begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->"
        start = doc.find(begin)
        stop = doc.find(end, start)
        if start < 0 or stop < 0:
            raise ValueError(f"the document has no {begin.strip()} ... {end} part")
        doc = doc[:start + len(begin)] + make() + "\n" + doc[stop:]
    return doc


if __name__ == "__main__":  # pragma: no cover - the maintainer's regeneration step
    from pathlib import Path

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules/bbn.md")
    target.write_text(render_document(target.read_text(encoding="utf-8")), encoding="utf-8")
