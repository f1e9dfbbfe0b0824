"""Cohort pools from the members' sheets (Cohort Sheet 1.1-1.7, R1-R12).

:func:`compute_pools` gives every pool of a cohort together with a breakdown of each
contribution (who gave what, under which rule) and the traits it kept but did not count.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import field

from sheetsync.core.errors import did_you_mean
from sheetsync.core.model import model
from sheetsync.systems.bbn.rules.catalog import Catalog, PoolModifiers, default_catalog, normalize
from sheetsync.systems.bbn.rules.models import (
    POOL_NAMES,
    CharacterSheet,
    CohortSpec,
    Frozen,
    HouseRules,
    State,
)

__all__ = [
    "CohortPools",
    "Contribution",
    "NotCounted",
    "actions_available",
    "compute_pools",
    "member_movement",
    "temper_cap",
]


@model
class Contribution(Frozen):
    """One line of a pool's breakdown."""

    pool: str
    member: str | None
    """The member who gave it, or ``None`` for a cohort-wide line (a base, pooled Abilities)."""
    trait: str
    kind: str
    amount: int
    rule_ref: str
    detail: str = ""


@model
class NotCounted(Frozen):
    """A trait on a sheet that feeds no pool (R12): kept, listed, never counted."""

    member: str
    trait: str
    kind: str
    reason: str


@model
class CohortPools(Frozen):
    """Every pool of one cohort, with its breakdown (``sheetsync pools``)."""

    name: str
    actions: int
    pools: dict[str, int]
    breakdown: dict[str, tuple[Contribution, ...]]
    not_counted: tuple[NotCounted, ...] = ()
    member_movement: dict[str, int] = field(default_factory=dict)


def temper_cap(member: CharacterSheet) -> int:
    """Cohort Sheet 1.4.3, R8: a member gives at most 30 temper, or 50 with Blood Magic
    in-clan."""
    return 50 if member.blood_magic_in_clan else 30


def _powers(member: CharacterSheet, catalog: Catalog) -> dict[str, tuple[str, int]]:
    """``{normalized canonical name: (name as written, level)}`` of Disciplines and paths
    (R4: Thaumaturgy paths named as modifiers count their level wherever they are listed)."""
    out: dict[str, tuple[str, int]] = {}
    items: list[tuple[str, int]] = list(member.disciplines.items())
    items += [(name, entry.level) for name, entry in member.blood_magic_paths.items()]
    for name, level in items:
        key = normalize(catalog.canonical(name))
        if key not in out or out[key][1] < level:
            out[key] = (name, level)
    return out


def member_movement(member: CharacterSheet, catalog: Catalog) -> tuple[int, str | None]:
    """R10: the member's single movement discipline level (their pick, else their best) and
    its name; ``(0, None)`` with none.  Combinations never count."""
    powers = _powers(member, catalog)
    listed = [normalize(d) for d in catalog.pools["movement"].disciplines]
    have = [(powers[k][1], powers[k][0]) for k in listed if k in powers]
    if not have:
        return 0, None
    if member.movement_discipline:
        pick = normalize(catalog.canonical(member.movement_discipline))
        if pick in powers and pick in listed:
            return powers[pick][1], powers[pick][0]
    level, name = max(have)
    return level, name


def actions_available(states: Iterable[State], rules: HouseRules) -> int:
    """Actions 4, States 5.12, R11: one action per member who is not Knocked Out,
    Stabilized or Dead, nor Scared while ``scared_loses_action``."""
    lost = {State.KNOCKED_OUT, State.STABILIZED, State.DEAD}
    if rules.scared_loses_action:
        lost.add(State.SCARED)
    return sum(1 for s in states if s not in lost)


class _Builder:
    def __init__(self, spec: CohortSpec, catalog: Catalog, rules: HouseRules) -> None:
        self.spec = spec
        self.catalog = catalog
        self.rules = rules
        self.lines: dict[str, list[Contribution]] = {p: [] for p in POOL_NAMES}
        self.used: set[tuple[str, str, str]] = set()

    def add(self, pool: str, member: str | None, trait: str, kind: str, amount: int, rule: str, detail: str = "") -> None:
        self.lines[pool].append(Contribution(pool=pool, member=member, trait=trait, kind=kind, amount=amount, rule_ref=rule, detail=detail))

    def mark(self, member: str, kind: str, name: str) -> None:
        self.used.add((member, kind, normalize(self.catalog.canonical(name))))

    # -- the pieces, each with its section -------------------------------------------
    def bases(self) -> None:
        """R7 bases: Health 5 and Defense 5 per member, Melee 2 per member, Ranged 2 per
        member with a ranged attack, Mystical and Control 0."""
        members = self.spec.members
        n = len(members)
        self.add("health", None, "5 per member", "base", 5 * n, "Cohort Sheet 1.1.1, R7", f"{n} members")
        self.add("melee", None, "2 per member", "base", 2 * n, "Cohort Sheet 1.2.1.1, R7", f"{n} members")
        shooters = [m.name for m in members if m.ranged_attack]
        self.add("ranged", None, "2 per member with a ranged attack", "base", 2 * len(shooters),
                 "Cohort Sheet 1.2.1.2, R7", ", ".join(shooters) or "nobody")
        self.add("defense", None, "5 per member", "base", 5 * n, "Cohort Sheet 1.3.1, R7", f"{n} members")
        self.add("mystical", None, "base", "base", 0, "Cohort Sheet 1.2.1.3, R6")
        self.add("control", None, "base", "base", 0, "Cohort Sheet 1.7.1, R7")

    def temper(self) -> None:
        """Cohort Sheet 1.4.1/1.4.3, R8: contributed temper, capped per member."""
        for m in self.spec.members:
            cap = temper_cap(m)
            given = min(m.temper, cap)
            detail = f"{m.temper} offered, capped at {cap}" if m.temper > cap else f"{m.temper} offered"
            self.add("temper", m.name, "temper contributed", "temper", given, "Cohort Sheet 1.4.3, R8", detail)

    def resolve_base(self) -> None:
        """Cohort Sheet 1.6.1, R9: 1 Resolve per 3 Willpower the whole cohort spends."""
        total = sum(m.willpower_spent for m in self.spec.members)
        who = ", ".join(f"{m.name} {m.willpower_spent}" for m in self.spec.members if m.willpower_spent)
        self.add("resolve", None, "Willpower spent / 3", "willpower", total // 3, "Cohort Sheet 1.6.1, R9",
                 f"{total} spent" + (f" ({who})" if who else ""))

    def movement(self) -> dict[str, int]:
        """Cohort Sheet 1.5.1, R10: 1 + the slowest member's single movement discipline."""
        per: dict[str, int] = {}
        names: dict[str, str | None] = {}
        for m in self.spec.members:
            level, name = member_movement(m, self.catalog)
            per[m.name] = level
            names[m.name] = name
            if name:
                self.mark(m.name, "discipline", name)
        self.add("movement", None, "base", "base", 1, "Cohort Sheet 1.5.1, R10")
        if per:
            slow = min(per, key=lambda k: per[k])
            what = f"{names[slow]} {per[slow]}" if names[slow] else "no movement discipline"
            self.add("movement", slow, "slowest member", "movement", per[slow], "Cohort Sheet 1.5.1, R10", what)
        return per

    def abilities(self, pool: str, mods: PoolModifiers) -> None:
        """Modifiers, R2: +1 per 5 dots of the listed Abilities across the cohort (pooled),
        or per Ability with ``ability_bonus = per_ability``."""
        listed = {normalize(a): a for a in mods.abilities}
        dots: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for m in self.spec.members:
            for name, level in m.abilities.items():
                key = normalize(self.catalog.canonical(name))
                if key in listed and level > 0:
                    dots[listed[key]].append((m.name, level))
                    self.mark(m.name, "ability", name)
        if not dots:
            return
        rule = f"{mods.section}, R2"
        def detail(items: list[tuple[str, list[tuple[str, int]]]]) -> str:
            return " + ".join(f"{a} {lv} ({who})" for a, people in items for who, lv in people)
        if self.rules.ability_bonus == "pooled":
            total = sum(lv for people in dots.values() for _, lv in people)
            self.add(pool, None, "Abilities: " + ", ".join(dots), "ability", total // 5, rule,
                     f"{detail(list(dots.items()))} = {total} dots")
        else:
            for ability, people in dots.items():
                total = sum(lv for _, lv in people)
                self.add(pool, None, ability, "ability", total // 5, rule, f"{detail([(ability, people)])} = {total} dots")

    def merits(self, pool: str, mods: PoolModifiers) -> None:
        """Modifiers, R3: +1 per listed Merit, counted once per character; an exclusive
        group (Natural Leader / Enchanting Voice) gives at most +1 per character."""
        rule = f"{mods.section}, R3"
        for m in self.spec.members:
            have = {normalize(self.catalog.canonical(x)): x for x in m.merits}
            for merit in mods.merits:
                if normalize(merit) in have:
                    self.add(pool, m.name, merit, "merit", 1, rule)
                    self.mark(m.name, "merit", have[normalize(merit)])
            for group in mods.exclusive_merits:
                hits = [g for g in group if normalize(g) in have]
                if hits:
                    self.add(pool, m.name, " / ".join(hits), "merit", 1, rule, "one of " + " or ".join(group))
                    for h in hits:
                        self.mark(m.name, "merit", have[normalize(h)])

    def disciplines(self, pool: str, mods: PoolModifiers) -> None:
        """Modifiers, R4: +1 per level of a listed Discipline (or named Thaumaturgy path);
        in an exclusive group (shape-changing) only the character's highest counts."""
        rule = f"{mods.section}, R4"
        for m in self.spec.members:
            powers = _powers(m, self.catalog)
            for disc in mods.disciplines:
                key = normalize(disc)
                if key in powers and powers[key][1] > 0:
                    written, level = powers[key]
                    self.add(pool, m.name, f"{disc} {level}", "discipline", level, rule)
                    self.mark(m.name, "discipline", written)
            for group in mods.exclusive_disciplines:
                hits = [(powers[normalize(g)][1], g, powers[normalize(g)][0]) for g in group if normalize(g) in powers]
                if hits:
                    level, disc, written = max(hits)
                    others = [h[1] for h in hits if h[1] != disc]
                    self.add(pool, m.name, f"{disc} {level}", "discipline", level, rule,
                             ("only the highest counts; not " + ", ".join(others)) if others else "")
                    for h in hits:
                        self.mark(m.name, "discipline", h[2])

    def combinations(self, pool: str, mods: PoolModifiers) -> None:
        """Modifiers, R5: a Combination Discipline that includes a listed Discipline of the
        pool gives ``combo_bonus`` (3) once per combination; never toward Movement."""
        listed = {normalize(d) for d in mods.disciplines}
        for group in mods.exclusive_disciplines:
            listed |= {normalize(g) for g in group}
        rule = f"{mods.section}, R5"
        for m in self.spec.members:
            for combo in m.combination_disciplines:
                inside = [d for d in combo.includes if normalize(self.catalog.canonical(d)) in listed]
                if inside:
                    self.add(pool, m.name, combo.name, "combination", self.rules.combo_bonus, rule,
                             "includes " + ", ".join(inside))
                    self.mark(m.name, "combination", combo.name)

    def paths(self, pool: str, mods: PoolModifiers) -> None:
        """R6: offensive Blood Magic paths add their level, the best three per character
        (at most 15)."""
        rule = f"{mods.section}, R6"
        for m in self.spec.members:
            offensive = []
            for name, entry in m.blood_magic_paths.items():
                is_off = entry.offensive if entry.offensive is not None else self.catalog.is_offensive_path(name)
                if is_off and entry.level > 0:
                    offensive.append((min(entry.level, 5), name))
            offensive.sort(key=lambda t: (-t[0], t[1]))
            for level, name in offensive[:3]:
                self.add(pool, m.name, f"{name} {level}", "path", level, rule)
                self.mark(m.name, "path", name)
                self.mark(m.name, "discipline", name)
            for level, name in offensive[3:]:
                self.add(pool, m.name, f"{name} {level}", "path", 0, rule, "only the best 3 paths count")
                self.mark(m.name, "path", name)

    def not_counted(self) -> list[NotCounted]:
        out: list[NotCounted] = []
        for m in self.spec.members:
            items: list[tuple[str, str]] = [("ability", a) for a in m.abilities]
            items += [("merit", x) for x in m.merits]
            items += [("discipline", d) for d in m.disciplines]
            items += [("combination", c.name) for c in m.combination_disciplines]
            for kind, name in items:
                if (m.name, kind, normalize(self.catalog.canonical(name))) not in self.used:
                    out.append(NotCounted(member=m.name, trait=name, kind=kind,
                                          reason="feeds no pool in the catalog (R12)"
                                          + did_you_mean(name, self.catalog.known_names)))
            for name in m.blood_magic_paths:
                key = normalize(self.catalog.canonical(name))
                if (m.name, "path", key) not in self.used and (m.name, "discipline", key) not in self.used:
                    out.append(NotCounted(member=m.name, trait=name, kind="path",
                                          reason="not an offensive path and feeds no pool (R6, R12); mark it offensive to count it"))
        return out


def compute_pools(spec: CohortSpec, rules: HouseRules | None = None, catalog: Catalog | None = None) -> CohortPools:
    """Cohort Sheet 1.1-1.7 (R2-R12): every pool of ``spec`` with its breakdown.

    Pools the Storyteller set by hand for an NPC cohort (``spec.pools``) replace the
    computed value of that pool (R1).
    """
    rules = rules or HouseRules()
    catalog = catalog or default_catalog()
    b = _Builder(spec, catalog, rules)
    b.bases()
    b.temper()
    b.resolve_base()
    movement = b.movement()
    for pool, mods in catalog.pools.items():
        if pool not in b.lines:
            continue
        b.abilities(pool, mods)
        b.merits(pool, mods)
        if pool != "movement":
            b.disciplines(pool, mods)
            b.combinations(pool, mods)
        if mods.offensive_paths:
            b.paths(pool, mods)
    lines = b.lines
    if spec.pools:
        for pool, value in spec.pools.items():
            lines[pool.value] = [Contribution(pool=pool.value, member=None, trait="set by the Storyteller",
                                              kind="manual", amount=value, rule_ref="R1")]
    totals = {p: sum(c.amount for c in lines[p]) for p in POOL_NAMES}
    return CohortPools(
        name=spec.name,
        actions=len(spec.members),
        pools=totals,
        breakdown={p: tuple(lines[p]) for p in POOL_NAMES},
        not_counted=tuple(b.not_counted()),
        member_movement=movement,
    )
