"""X12-X16: formations, the Drill each needs, every modifier of X14, movement by formation
and by mount, and terrain (cover and what may pass).

Readings where the rulings leave room (written down here, listed in the issue note):

- X13: a solo unit has no formation; whatever is typed for it is not checked and gives no
  X14 effect (X1).
- X13, X11: a unit in communication failure can hold only Unordered, whatever its Drill.
- X15: averages are rounded down on their own (fine print): yards = (⌊avg Dex⌋ − ⌊avg
  mobility⌋) × the formation's factor, never below 0.  A solo unit uses its commander's
  Dexterity less the typed mobility and wound penalties.
- X15 ``mount_formation_multiplier = true`` scales a mount's yards by the formation's
  factor / 100 (Skirmish keeps them), rounded down.
- X16: Elephants are larger than horses: Difficult terrain halves them like horses, and
  Extreme stops them.  A wheeled unit (chariots, wagons, drawn artillery) passes only Open.
  Dash is refused in Difficult and in Extreme terrain.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from sheetsync.core.enums import StrEnum
from sheetsync.core.errors import InputError, Problem
from sheetsync.systems.exalted.rules.models import Formation, HouseRules, Mount, UnitSpec
from sheetsync.systems.exalted.rules.traits import DEFAULT_RULES, Entry, Trait

__all__ = [
    "COVER_DV",
    "DRILL_NEEDED",
    "FORMATION_YARDS",
    "MOUNT_YARDS",
    "SOLO_YARDS",
    "FormationEffects",
    "Terrain",
    "best_cover",
    "check_formation",
    "cover_dv",
    "dash_yards",
    "drawn_yards",
    "effects",
    "formation_after_drill_change",
    "formation_refusal",
    "magnitude_multiplier",
    "move_yards",
    "shield_cover_factor",
]

DRILL_NEEDED: dict[Formation, int] = {Formation.UNORDERED: 0, Formation.SKIRMISH: 1, Formation.RELAXED: 1,
                                      Formation.CLOSE: 2}
"""X13: the effective Drill each formation needs."""

FORMATION_YARDS: dict[Formation, int] = {Formation.UNORDERED: 30, Formation.SKIRMISH: 100,
                                         Formation.RELAXED: 70, Formation.CLOSE: 40}
"""X15: yards per point of (avg Dex − mobility) per long tick."""

SOLO_YARDS = 100
"""X15: a solo unit's factor."""

MOUNT_YARDS: dict[Mount, int] = {Mount.HORSE: 200, Mount.SIMHATA: 400, Mount.ELEPHANT: 100}
"""X15: a mount's yards per long tick."""

COVER_DV: dict[int, int] = {25: 1, 50: 2, 75: 3, 90: 4}
"""X16 (``cover_dv``): cover percent to DV."""


class Terrain(StrEnum):
    """X16: what a unit stands in, as the Tracker types it."""

    OPEN = "Open"
    DIFFICULT = "Difficult"
    EXTREME = "Extreme"


def cover_dv(percent: int, table: dict[int, int] | None = None) -> int:
    """X16: the DV of the largest cover entry not above the typed percentage."""
    rows = COVER_DV if table is None else table
    fits = [dv for at, dv in rows.items() if at <= percent]
    return max(fits, default=0)


def best_cover(percents: list[int] | tuple[int, ...], table: dict[int, int] | None = None) -> int:
    """X16: when several kinds of cover apply, only the best counts: the DV of the largest."""
    return max((cover_dv(p, table) for p in percents), default=0)


# --- X13: which formation a unit can hold -------------------------------------------------

def formation_refusal(formation: Formation, effective_drill: int, *, communication_failure: bool = False,
                      solo: bool = False, relays: int | None = None, magnitude: int | None = None) -> str | None:
    """X13, X11: why a unit cannot hold ``formation`` (None when it can).

    Each formation needs an effective Drill (Unordered 0, Skirmish 1, Relaxed 1, Close 2),
    and a unit in communication failure can hold only Unordered; given the unit's
    ``relays`` and ``magnitude``, the reason names the relays needed and those present."""
    if solo or formation is Formation.UNORDERED:
        return None
    if communication_failure:
        if relays is not None and magnitude is not None:
            short = f"too few relays: Magnitude {magnitude} needs {magnitude} relays, it has {relays}"
        else:
            short = "too few relays: from Magnitude 3 it needs one per dot of Magnitude"
        return f"{formation.value} is refused: the unit is in communication failure ({short}), " \
               "so it can only be Unordered (X11)"
    need = DRILL_NEEDED[formation]
    if effective_drill < need:
        return f"{formation.value} needs effective Drill {need}, the unit has {effective_drill} (X13)"
    return None


def check_formation(unit: UnitSpec, effective_drill: int, *, communication_failure: bool = False,
                    where: str = "", magnitude: int | None = None) -> None:
    """X13: refuse a typed formation the unit cannot hold, naming ``where`` (a cell such as
    ``Units!K4`` or a path such as ``units[2].formation``) and the reason (X11: with the
    unit's ``magnitude``, the relays it needs and has)."""
    why = formation_refusal(unit.formation, effective_drill, communication_failure=communication_failure,
                            solo=unit.solo, relays=unit.relays, magnitude=magnitude)
    if why is not None:
        raise InputError([Problem(where or f"units.{unit.name}.formation", f"{unit.name}: {why}")])


def formation_after_drill_change(formation: Formation, effective_drill: int, *, communication_failure: bool = False,
                                 rules: HouseRules = DEFAULT_RULES) -> Formation:
    """X13 (``drill_loss_unorders``), X11: a unit whose effective Drill falls below its
    formation's need (or that falls into communication failure) becomes Unordered."""
    if not rules.drill_loss_unorders:
        return formation
    if formation_refusal(formation, effective_drill, communication_failure=communication_failure) is None:
        return formation
    return Formation.UNORDERED


# --- X14: every modifier ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FormationEffects:
    """X14: what a formation does.

    ``close_rating_factor`` multiplies the unit's Close Rating and its War cap on its own
    close attacks; ``shield_cover_close`` and ``shield_cover_ranged`` multiply its shield and
    cover DV against each kind of attack; ``ranged_dv`` is added against ranged attacks;
    ``ranged_attacker_magnitude`` and ``close_attacker_magnitude`` multiply the Magnitude of
    an enemy attacking it in X30 (the close one ×3 instead when that enemy is in Close);
    ``rout`` is added to its rout difficulty (X35)."""

    formation: Formation
    close_rating_factor: int
    shield_cover_close: int
    shield_cover_ranged: int
    ranged_dv: int
    ranged_attacker_magnitude: int
    close_attacker_magnitude: int
    rout: int


_EFFECTS: dict[Formation, FormationEffects] = {
    Formation.CLOSE: FormationEffects(Formation.CLOSE, 2, 2, 1, 0, 2, 1, -2),
    Formation.RELAXED: FormationEffects(Formation.RELAXED, 1, 1, 2, 0, 1, 1, 0),
    Formation.SKIRMISH: FormationEffects(Formation.SKIRMISH, 1, 2, 2, 3, 1, 2, 2),
    Formation.UNORDERED: FormationEffects(Formation.UNORDERED, 1, 1, 1, 0, 1, 1, 2),
}


def effects(formation: Formation) -> FormationEffects:
    """X14: the modifiers of ``formation``."""
    return _EFFECTS[formation]


def shield_cover_factor(formation: Formation, ranged: bool) -> int:
    """X14: Close doubles shield and cover against close attacks, Relaxed against ranged,
    Skirmish always."""
    e = _EFFECTS[formation]
    return e.shield_cover_ranged if ranged else e.shield_cover_close


def magnitude_multiplier(ranged: bool, attacker: Formation, defender: Formation) -> int:
    """X14, X30: the attacker's Magnitude ×2 with a ranged attack on a Close unit or a close
    attack on a Skirmish unit, ×3 for that close attack made from Close formation."""
    e = _EFFECTS[defender]
    if ranged:
        return e.ranged_attacker_magnitude
    if e.close_attacker_magnitude > 1 and attacker is Formation.CLOSE:
        return 3
    return e.close_attacker_magnitude


# --- X15, X16: movement ---------------------------------------------------------------

def _floor(x: float) -> int:
    q = Fraction(str(x))
    return int(q.numerator // q.denominator)


def _terrain(yards: int, rows: list[Entry], terrain: Terrain, *, mounted: bool, wheeled: bool,
             large: bool) -> Trait:
    if terrain is Terrain.DIFFICULT:
        if wheeled:
            rows.append(Entry("Difficult terrain: wheels cannot pass", -yards, "X16"))
            return Trait("Move", 0, tuple(rows))
        if mounted:
            rows.append(Entry("Difficult terrain: mounts at half speed", -(yards - yards // 2), "X16"))
            yards //= 2
    elif terrain is Terrain.EXTREME:
        if mounted or wheeled or large:
            rows.append(Entry("Extreme terrain: nothing larger than infantry passes", -yards, "X16"))
            return Trait("Move", 0, tuple(rows))
        rows.append(Entry("Extreme terrain: infantry at half speed", -(yards - yards // 2), "X16"))
        yards //= 2
    return Trait("Move", yards, tuple(rows))


def _mount_yards(unit: UnitSpec, formation: Formation, rules: HouseRules, rows: list[Entry]) -> int:
    yards = MOUNT_YARDS[unit.mount]
    rows.append(Entry(f"{unit.mount.value}: {yards} yards in any formation", yards, "X15"))
    if rules.mount_formation_multiplier and not unit.solo:
        scaled = yards * FORMATION_YARDS[formation] // 100
        rows.append(Entry(f"{formation.value} × {FORMATION_YARDS[formation]}/100 (mount_formation_multiplier)",
                          scaled - yards, "X15"))
        yards = scaled
    return yards


def move_yards(unit: UnitSpec, *, formation: Formation | None = None, terrain: Terrain = Terrain.OPEN,
               wound_penalty: int = 0, wheeled: bool = False, rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X15, X16: a Move's yards per long tick, with its breakdown.

    (⌊avg Dex⌋ − ⌊avg mobility⌋) × 30 Unordered, 100 Skirmish, 70 Relaxed, 40 Close; a solo
    unit (Dex − mobility − wound penalty) × 100; a mounted unit its mount's yards in any
    formation.  Terrain then halves or stops it (X16)."""
    form = unit.formation if formation is None else formation
    rows: list[Entry] = []
    mounted = unit.mount is not Mount.NONE
    if mounted:
        yards = _mount_yards(unit, form, rules, rows)
    else:
        if unit.solo:
            dex = unit.commander.dexterity
            rows.append(Entry("Dexterity", dex, "X15"))
            if wound_penalty:
                rows.append(Entry("wound penalty", -abs(wound_penalty), "X15"))
            factor, label = SOLO_YARDS, "solo"
        else:
            dex = _floor(unit.avg_dexterity)
            rows.append(Entry("avg Dexterity, rounded down", dex, "X15"))
            factor, label = FORMATION_YARDS[form], form.value
        mob = _floor(unit.avg_mobility)
        if mob:
            rows.append(Entry("avg mobility penalty", -mob, "X15"))
        base = max(0, sum(int(e.amount) for e in rows))
        yards = base * factor
        rows.append(Entry(f"× {factor} ({label})", yards - base, "X15"))
    return _terrain(yards, rows, terrain, mounted=mounted, wheeled=wheeled, large=unit.mount is Mount.ELEPHANT)


def dash_yards(unit: UnitSpec, *, formation: Formation | None = None, terrain: Terrain = Terrain.OPEN,
               rules: HouseRules = DEFAULT_RULES) -> Trait:
    """X18, X15, X16: a successful Dash's yards: (⌊avg Dex⌋ − ⌊avg mobility⌋ + 6) × the
    formation's factor (a solo unit's Dex, ×100); mounted, twice the mount's yards.  Not in
    Difficult or Extreme terrain (0 yards, with the reason)."""
    form = unit.formation if formation is None else formation
    rows: list[Entry] = []
    if terrain is not Terrain.OPEN:
        return Trait("Dash", 0, (Entry(f"{terrain.value} terrain: no Dash", 0, "X16"),))
    if unit.mount is not Mount.NONE:
        yards = _mount_yards(unit, form, rules, rows)
        rows.append(Entry("mounted Dash: doubled", yards, "X18"))
        return Trait("Dash", yards * 2, tuple(rows))
    dex = unit.commander.dexterity if unit.solo else _floor(unit.avg_dexterity)
    rows.append(Entry("Dexterity" if unit.solo else "avg Dexterity, rounded down", dex, "X18"))
    mob = _floor(unit.avg_mobility)
    if mob:
        rows.append(Entry("avg mobility penalty", -mob, "X18"))
    rows.append(Entry("Dash", 6, "X18"))
    base = max(0, sum(int(e.amount) for e in rows))
    factor = SOLO_YARDS if unit.solo else FORMATION_YARDS[form]
    rows.append(Entry(f"× {factor} ({'solo' if unit.solo else form.value})", base * factor - base, "X15"))
    return Trait("Dash", base * factor, tuple(rows))


def drawn_yards(team_yards: int, *, artillery: bool = False) -> int:
    """X15: a chariot moves at ⅔ of its team's yards, drawn artillery at ½ (rounded down)."""
    return team_yards // 2 if artillery else team_yards * 2 // 3
