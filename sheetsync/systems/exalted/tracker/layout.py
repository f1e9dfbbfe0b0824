"""The Exalted mass-combat tracker layout as data (DESIGN "The layout is data with codecs").

Sheets: Battle (the current long tick, status, dice seed, the buttons), Characters (the
commanders, special characters and named members, E7-E10), Units (typed headcount,
formation, averages, Drill, Might, special characters,
ammunition, fortified position and cover, X16, X31; computed traits X1-X11 with
Magnitude and the health track drawn as bars, and each trait's breakdown), Ticks (a row per
long tick, a column per unit: who acts when, E5), Orders (typed tick, unit, action, target,
option and die cells; the odds E1, E7, X28-X33 and, once resolved, the outcome), Log,
Aftermath (X40, X41), House Rules, and the hidden Odds, Lists and State.

The odds of each Orders row are live formulas (:mod:`sheetsync.systems.exalted.tracker.formulas`):
the steps write what depends on the whole battle (the pool, the successes added, the
external penalty, the DV, the raw damage, soak, minimum dice and Hardness) as the engine's
own values, and the successes needed, the exact chance of a hit and the expected levels
are formulas over those cells and the hidden Odds sheet.  Capacity grows with the battle:
``layout({"units": 40, "characters": 120, "orders": 400})``; the capacity used is recorded
beside the mark ``exalted@1``, so every step reads the same cells.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from sheetsync.core.errors import InputError
from sheetsync.core.layout import (
    PRINT_MARGINS,
    Area,
    Block,
    Cell,
    Choice,
    CodecError,
    Colours,
    Column,
    DataBar,
    Kind,
    Layout,
    Names,
    PrintSetup,
    table_printing,
)
from sheetsync.systems.exalted.rules.dice import DIE_CELL_HELP, read_die_cell
from sheetsync.systems.exalted.rules.models import (
    DamageType,
    Formation,
    HouseRules,
    Mount,
    RangedKind,
)
from sheetsync.systems.exalted.rules.morale import Weather
from sheetsync.systems.exalted.rules.timeline import Action
from sheetsync.systems.exalted.tracker.formulas import ODDS_SHEET, add_odds

__all__ = ["ABILITIES", "CAPACITY", "DICE", "HOUSE_RULE_NOTES", "house_rule_rows", "MAX_CAPACITY", "OUTCOME_COLOURS", "SIDE_COLOURS", "SYSTEM_ID",
           "ROUT_DICE", "ROUT_DICE_HELP", "TRACK", "VERSION", "RoutDiceCell", "RoutPair", "Abilities", "DieCell", "HealthTrack", "layout"]

SYSTEM_ID = "exalted"
VERSION = 1

CAPACITY: dict[str, int] = {"units": 20, "characters": 60, "orders": 200, "ticks": 40, "sides": 6}
"""A blank tracker's capacity; a battle loaded with ``new --from`` gets room for all of it."""

MAX_CAPACITY: dict[str, int] = {"units": 200, "characters": 600, "orders": 2000, "ticks": 400, "sides": 12}
"""The most a tracker is made to hold: a battle beyond it is refused, naming the limit."""

SIDE_COLOURS = ("C6DBEF", "F4CCCC", "D9EAD3", "FFF2CC", "E1D5E7", "FCE5CD")
"""Fills for the sides, in the order their first unit is listed."""

OUTCOME_COLOURS = {"hit": "C6EFCE", "done": "C6EFCE", "miss": "FFEB9C", "refused": "FFC7CE", "routed": "F4B084",
                   "broken": "808080"}
"""Fills of the Outcome cells of Orders and Log."""

ROLES = ("commander", "hero", "sorcerer", "relay", "member")

LISTS: dict[str, list[str]] = {
    "YesNo": ["Yes", "No"],
    "Roles": list(ROLES),
    "Formations": [f.value for f in Formation],
    "Actions": [a.value for a in Action],
    "DamageTypes": [d.value for d in DamageType],
    "Mounts": [m.value for m in Mount],
    "RangedKinds": [k.value for k in RangedKind],
    "Weather": [w.value for w in Weather],
}


class DieCell:
    """E1: a die cell says what it holds: the faces rolled (``7 3 10 2 1``, each 1 to 10;
    one die ``7,`` or ``faces: 7``) or a number of successes (``3s``, ``3 successes``).  A
    bare number other than 0 could be either and is refused, showing both spellings (issue
    22).  How many faces the pool takes is checked when it is rolled."""

    @property
    def kind(self) -> Kind:
        return "text"

    def decode(self, value: Any) -> Any:
        try:
            faces, count = read_die_cell(value, "")
        except InputError as exc:
            raise CodecError("; ".join(p.message for p in exc.problems)) from None
        if count is not None:
            return f"{count}s" if count else 0
        if faces is None:
            return None
        return " ".join(str(f) for f in faces) if len(faces) > 1 else f"{faces[0]},"

    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, (int, str)):
            return value
        return " ".join(str(f) for f in value)


OWN_ROUT = re.compile(r"\bown\s*:", re.IGNORECASE)
"""X43: where a Rout dice cell's second part, the attacking unit's own check, begins."""

ROUT_DICE_HELP = ("the target's rout check (a Disengage's or a spread's: the unit's own); a close attack that "
                  "engages also makes the attacker's own (X43): type it after \"own:\", e.g. \"7 3 2; own: 8 1 "
                  "4\" or \"own: 2s\"")
"""X35, X43: what the Orders sheet's Rout dice cell holds (its note and its messages)."""


class RoutPair(NamedTuple):
    """X43: a Rout dice cell that types both checks of an engagement."""

    target: Any
    own: Any


class RoutDiceCell(DieCell):
    """X35, X43: the Orders sheet's Rout dice: one die cell, or two when a close attack
    engages and both units check: the target's, then ``own:`` and the attacker's own
    (``7 3 2; own: 8 1 4``; ``own: 2s`` alone types only the attacker's).  A cell with
    ``own:`` decodes to a :class:`RoutPair`, either part ``None`` when blank."""

    def decode(self, value: Any) -> Any:
        if not isinstance(value, str) or OWN_ROUT.search(value) is None:
            return super().decode(value)
        head, tail = OWN_ROUT.split(value, maxsplit=1)
        if OWN_ROUT.search(tail):
            raise CodecError(f"{value.strip()!r} says \"own:\" twice: type {ROUT_DICE_HELP}")
        parts = []
        for part, whose in ((head.strip().rstrip(";|/ ").strip(), "the target's"), (tail.strip(), "own")):
            try:
                parts.append(super().decode(part) if part else None)
            except CodecError as exc:
                raise CodecError(f"{whose} rout dice: {exc}") from None
        return RoutPair(parts[0], parts[1])

    def encode(self, value: Any) -> Any:
        if isinstance(value, RoutPair):
            target, own = (super(RoutDiceCell, self).encode(v) for v in value)
            if own in (None, ""):
                return target
            return f"{target}; own: {own}" if target not in (None, "") else f"own: {own}"
        return super().encode(value)


OPTION_HELP = ("E11, X16-X27: Attack: Close or Ranged, and any of envelop, charge, called shot (the commander) or "
               "\"called shot: NAME\", commas between (e.g. \"Close, envelop\"); Move, Dash: a terrain (Open, "
               "Difficult, Extreme); Change Formation: a formation, or \"spread\" on the tick a volley hits it "
               "(X20); Rally: Organization, Numbers or Second Wind; Split Unit: \"NEW NAME; hero: NAME; headcount: "
               "N; follow: A, B\"; Expel Special Character: her name; Merge Units: \"leader: NAME; leaving: A, B\" "
               "(a solo target: \"as: hero\", sorcerer or relay); Initiate Duel: \"challenger: NAME; foe: NAME; "
               "willing\", and its outcome \"result: WINNER (or draw); slain: NAMES; wounds: NAME N\"")
"""The Orders sheet's Option cell: what each action takes (its note in the template)."""


class Abilities:
    """E7, E8: a character's Abilities in one cell: ``Melee 4, War 3`` (name, then dots)."""

    @property
    def kind(self) -> Kind:
        return "text"

    def decode(self, value: Any) -> Any:
        out: dict[str, int] = {}
        for part in (p.strip() for p in re.split(r"[;,]", str(value))):
            if not part:
                continue
            m = re.fullmatch(r"(.+?)\s*[:=]?\s*(\d{1,2})", part)
            if m is None:
                raise CodecError(f"{part!r} is not an Ability and its dots (such as \"Melee 4, War 3\")")
            out[m.group(1).strip()] = int(m.group(2))
        return out or None

    def encode(self, value: Any) -> Any:
        if not value:
            return None
        return ", ".join(f"{k} {v}" for k, v in dict(value).items())


class HealthTrack:
    """E10: a typed health track in one cell: the wound penalties of the levels before
    Incapacitated, worst last (``0 -1 -1 -2 -2 -4``, the default; ``-1 -3``, an extra's).
    Each is a whole number from -4 to 0; blank: the default track."""

    @property
    def kind(self) -> Kind:
        return "text"

    def decode(self, value: Any) -> Any:
        if isinstance(value, bool):
            raise CodecError(f"{value!r} is not a health track (such as \"0 -1 -1 -2 -2 -4\", E10)")
        if isinstance(value, (int, float)):
            value = str(int(value)) if float(value).is_integer() else str(value)
        parts = [p for p in re.split(r"[\s,;]+", str(value).strip()) if p]
        if not parts:
            return None
        if not all(re.fullmatch(r"[-+−]?\d+", p) for p in parts):
            raise CodecError(f"{str(value).strip()!r} is not a health track: the wound penalties before "
                             "Incapacitated, such as \"0 -1 -1 -2 -2 -4\" (E10)")
        track = tuple(int(p.replace("−", "-")) for p in parts)
        bad = [f"level {i + 1}: {v} is not a wound penalty (-4 to 0, E10)" for i, v in enumerate(track)
               if not -4 <= v <= 0]
        if bad:
            raise CodecError("; ".join(bad))
        return track

    def encode(self, value: Any) -> Any:
        if not value:
            return None
        return " ".join(str(v) for v in value)


DICE, ABILITIES, NAMES, TRACK = DieCell(), Abilities(), Names(), HealthTrack()
ROUT_DICE = RoutDiceCell()
DAMAGE_TYPES = Choice(tuple(d.value for d in DamageType))

HOUSE_RULE_NOTES: dict[str, str] = {
    "extras_double_tens": "E1: an extra's 10 counts as two successes (No: as one)",
    "heroic_weight": "X2: ceil weighs each member by its health levels / 3 rounded up; exact sums them first",
    "endurance_stamina": "X4: Endurance uses the members' average Stamina (members) or the commander's",
    "mixed_accuracy": "X6: with mixed weapons the ratings use the average Accuracy (average) or none",
    "ranged_strength_archery": "X7, X33: Strength adds to Archery damage",
    "ranged_strength_thrown": "X7, X33: Strength adds to Thrown damage",
    "hardness_fallback": "X8: Hardness when not every member has it: zero, or the smallest (minimum)",
    "dv_round": "E8: DVs round up from Essence 2 and down at Essence 1 (essence), or always up",
    "close_doubles_parry": "X14: Close formation also doubles the Parry bonus of X29",
    "commander_armor": "X29: the commander's own armour soak is ignored",
    "drill_loss_unorders": "X13: a unit whose Drill falls below its formation's need becomes Unordered",
    "mount_formation_multiplier": "X15: a mount's yards are scaled by the formation's multiplier",
    "onslaught": "E5: -1 DV for each attack suffered since the unit last acted",
    "same_tick": "E6: orders of one tick roll against the tick's start (simultaneous) or one after another",
    "inactive_dv": "E11: the DV of an Inactive unit",
    "rout_dice": "X35: the rout pool subtracts (penalty) or adds (bonus) Magnitude - Drill",
    "mob_rule": "X39: a unit without a leader fights on under Mob Rule (No: it disbands)",
    "rally_pool": "X26: each dot lost feeds one rally for numbers",
}
"""The House Rules sheet's ruling text per key (the dict-valued ``speed`` and ``dv``
overrides are battle-file keys only)."""


def _shown(value: Any) -> Any:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    return value


def house_rule_rows(rules: HouseRules | None = None) -> list[tuple[str, Any, Any, str]]:
    """The House Rules sheet's rows: key, current value (``rules``', by default the
    defaults), default, ruling text."""
    current = rules or HouseRules()
    default = HouseRules()
    return [(key, _shown(getattr(current, key)), _shown(getattr(default, key)), text)
            for key, text in HOUSE_RULE_NOTES.items()]


UNIT_TRAITS = ("magnitude", "drill", "endurance", "might", "close_rating", "ranged_rating", "close_damage",
               "ranged_damage", "armor", "mobility", "hardness", "shield", "morale")
"""X1-X11: the derived traits the Units sheet shows (each with its breakdown)."""


def _trait_header(trait: str) -> str:
    """A derived trait's header (X1-X11), told apart from the typed column of the same name
    (issue 22: no sheet has two columns with one header)."""
    name = trait.replace("_", " ").capitalize()
    return f"{name} (derived)" if trait in ("magnitude", "drill", "endurance", "might") else name


def _capacity(capacity: Mapping[str, int] | None) -> dict[str, int]:
    out = dict(CAPACITY)
    for key, value in (capacity or {}).items():
        if key in out:  # tables only grow
            out[key] = max(out[key], int(value))
    return out


def _int(key: str, header: str, *, low: int = 0, high: int | None = None, width: int = 6, note: str = "",
         field: str | None = None) -> Column:
    return Column(key, header, kind="int", low=low, high=high, width=width, note=note, field_=field)


def _num(key: str, header: str, *, width: int = 7, note: str = "") -> Column:
    return Column(key, header, kind="number", width=width, note=note)


def _out(key: str, header: str, kind: Kind = "int", width: int = 7, note: str = "") -> Column:
    return Column(key, header, kind=kind, is_input=False, width=width, note=note)


def layout(capacity: Mapping[str, int] | None = None) -> Layout:
    """The Exalted tracker's layout, with room for ``capacity`` (at least :data:`CAPACITY`)."""
    cap = _capacity(capacity)
    lay = Layout(system=SYSTEM_ID, version=VERSION, capacity=cap, lists={k: list(v) for k, v in LISTS.items()})
    lay.sheets = ["Battle", "Characters", "Units", "Ticks", "Orders", "Log", "Aftermath", "House Rules", ODDS_SHEET,
                  "Lists", "State"]
    lay.hidden = [ODDS_SHEET, "Lists", "State"]
    lay.protected = ["Battle", "Characters", "Units", "Ticks", "Orders", "Log", "Aftermath", "House Rules",
                     ODDS_SHEET]

    # -- Battle ---------------------------------------------------------------------------
    lay.add_cell(Cell("Battle_Tick", "Battle", "B3", "Current long tick",
                      note="E5: the long tick the next Next Tick resolves"))
    lay.add_cell(Cell("Battle_Status", "Battle", "B4", "Status"))
    lay.add_cell(Cell("Battle_LastAction", "Battle", "B5", "Last action"))
    lay.add_cell(Cell("Battle_Seed", "Battle", "B6", "Dice seed", is_input=True,
                      note="E1: dice not typed in are rolled from this seed"))
    lay.add(Block("Battle_Buttons", "Battle", 2, (
        Column("action", "Action", is_input=False, width=18),
        Column("tick", "Tick to run", kind="bool", width=12),
    ), rows=4, first_col=5, title="Google Sheets only: tick while `sheetsync watch` runs",
        note="Google Sheets only: tick a box while `sheetsync watch` runs (Excel: the buttons of a .xlsm, or the CLI)."))
    lay.add(Block("Battle_Sides", "Battle", 10, (
        Column("side", "Side", is_input=False, width=16),
        _out("units", "Units", width=8),
        _out("standing", "Still fighting", width=10),
        _out("magnitude", "Magnitude now", width=10),
        _out("dots_lost", "Dots lost", width=10),
    ), rows=cap["sides"], title="Sides"))

    # -- Characters -----------------------------------------------------------------------
    lay.add(Block("Characters_Table", "Characters", 2, (
        Column("name", "Character", width=22, note="A name, unique among the characters (Units and Orders use it)"),
        Column("role", "Role", choices="Roles", width=11, codec_=Choice(ROLES),
               note="commander, hero, sorcerer, relay or member (X11, X40)"),
        _int("dexterity", "Dex"), _int("strength", "Str"), _int("stamina", "Sta"), _int("charisma", "Cha"),
        _int("wits", "Wits"), _int("essence", "Ess"), _int("valor", "Valor"), _int("willpower", "Will"),
        Column("abilities", "Abilities", width=28, codec_=ABILITIES, note="E7: e.g. Melee 4, War 3, Dodge 2"),
        Column("mortal", "Mortal", kind="bool", choices="YesNo", width=8, note="X40: a mortal checks for infection"),
        Column("close_weapon", "Close weapon", width=16, note="E7: its name (blank: Unarmed)"),
        Column("close_ability", "Close ability", width=10, note="E7: the Ability it uses (blank: Melee)"),
        _int("close_accuracy", "Acc", low=-10), _int("close_damage", "Dmg"),
        Column("close_damage_type", "Type", choices="DamageTypes", width=9, codec_=DAMAGE_TYPES, note="E9"),
        _int("close_defense", "Def", low=-10), _int("close_speed", "Spd"),
        Column("ranged_weapon", "Ranged weapon", width=16, note="E7: blank when the character has none"),
        Column("ranged_ability", "Ranged ability", width=10, note="E7: blank: Melee"),
        _int("ranged_accuracy", "R acc", low=-10), _int("ranged_damage", "R dmg"),
        Column("ranged_damage_type", "R type", choices="DamageTypes", width=9, codec_=DAMAGE_TYPES),
        _int("ranged_speed", "R spd"),
        _int("shield_dv", "Shield DV"), _int("armor_soak", "Armour soak", width=8),
        _int("hardness", "Hardness", width=8, note="E9: against every damage type"),
        Column("extra", "Extra", kind="bool", choices="YesNo", width=7,
               note="E1, E10: an extra (track -1 -3; her 10s count once with House Rules extras_double_tens No)"),
        Column("health_track", "Health track", width=18, codec_=TRACK,
               note="E10: the wound penalties before Incapacitated, e.g. 0 -1 -1 -2 -2 -4 (blank: the default)"),
    ), rows=cap["characters"], title="Characters (commanders, special characters, named members)"))

    # -- Units ----------------------------------------------------------------------------
    lay.add(Block("Units_Table", "Units", 2, (
        Column("name", "Unit", width=22, note="A name, unique among the units (Orders use it)"),
        Column("side", "Side", width=12, note="A side's name, e.g. Realm: units of different sides are enemies"),
        Column("commander", "Commander", choices="=Character_Names", width=20, note="X3: a Characters row"),
        Column("solo", "Solo", kind="bool", choices="YesNo", width=8, note="X1: one character alone: Magnitude 0, Drill 0, her own health"),
        _int("extras", "Extras", high=100000, width=8, note="X2: members who are extras (3 health levels)"),
        _int("heroic", "Heroic mortals", high=100000, width=8, note="X2: members with 7 health levels"),
        Column("formation", "Formation", choices="Formations", width=11,
               codec_=Choice(tuple(f.value for f in Formation)), note="X13"),
        _int("drill", "Drill", high=5, note="X4: 0 to 5"),
        _int("might", "Might", note="X5"),
        _int("might_bonus", "Might bonus", width=8, note="X5: the best equipment's bonus"),
        _num("avg_dexterity", "Avg Dex"), _num("avg_strength", "Avg Str"), _num("avg_stamina", "Avg Sta"),
        _num("avg_valor", "Avg Valor"),
        Column("perfect_morale", "Perfect Morale", kind="bool", choices="YesNo", width=8, note="X10: passes every Morale check but X39's"),
        Column("close_weapons", "Close weapons", kind="bool", choices="YesNo", width=8, note="X6: blank: Yes (No: no close attacks)"),
        _num("close_ability", "Close ability"), _num("close_accuracy", "Close acc"),
        _num("close_damage", "Close dmg"),
        Column("close_damage_type", "Close type", choices="DamageTypes", width=9, codec_=DAMAGE_TYPES,
               note="E9 (blank: Lethal)"),
        Column("ranged_weapons", "Ranged weapons", kind="bool", choices="YesNo", width=8),
        _num("ranged_ability", "Ranged ability"), _num("ranged_accuracy", "Ranged acc"),
        _num("ranged_damage", "Ranged dmg"),
        Column("ranged_damage_type", "Ranged type", choices="DamageTypes", width=9, codec_=DAMAGE_TYPES,
               note="E9 (blank: Lethal)"),
        _num("avg_lethal_soak", "Avg lethal soak", note="X8: natural + armour"),
        _num("avg_mobility", "Avg mobility"), _num("avg_fatigue", "Avg fatigue"),
        Column("rested", "Rested", kind="bool", choices="YesNo", width=8, note="X4: blank: Yes (No: Endurance less the avg fatigue)"),
        _num("hardness_avg", "Avg Hardness", note="X8: the members' average Hardness"),
        _int("hardness_min", "Least Hardness", width=8, note="X8: the smallest Hardness among the members"),
        Column("shields", "Shields", kind="bool", choices="YesNo", width=8, note="X9"),
        Column("ranged_kind", "Ranged kind", choices="RangedKinds", width=9,
               codec_=Choice(tuple(k.value for k in RangedKind)), note="X7: Archery or Thrown"),
        Column("mount", "Mount", choices="Mounts", width=9, codec_=Choice(tuple(m.value for m in Mount)),
               note="X10, X15"),
        _num("steed_valor", "Steed Valor", note="X10: the steeds' avg Valor (blank: horse 2, simhata 4, elephant 3)"),
        Column("heroes", "Heroes", width=18, codec_=NAMES,
               note="X11: Characters rows, separated by commas, e.g. Peleps Ama, Ledaal Kes"),
        Column("sorcerers", "Sorcerers", width=18, codec_=NAMES, note="X11: Characters rows, separated by commas"),
        Column("relays", "Relays", width=18, codec_=NAMES, note="X11: Characters rows, separated by commas"),
        Column("named_members", "Named members", width=18, codec_=NAMES,
               note="X40: rank and file with names: Characters rows, separated by commas"),
        Column("ammunition", "Ammunition", kind="int", low=0, width=8,
               note="X31: arrows carried, 3 a volley (blank: 12 mobile, 21 fortified, when it shoots)"),
        Column("fortified", "Fortified", kind="bool", choices="YesNo", width=8,
               note="X31: a prepared, fortified position: 7 volleys instead of 4"),
        Column("cover", "Cover %", kind="int", width=8,
               note="X16: 0 to 100; the largest of 25/50/75/90% not above it gives DV 1/2/3/4"),
        Column("join_war", "Join War dice", width=14, codec_=DICE, note=f"E4: {DIE_CELL_HELP}"),
        _out("magnitude_now", "Magnitude now", note="X2, X34: now (the bar: out of the starting Magnitude)"),
        _out("health_left", "Health left", note="X34: levels left on the track"),
        _out("endurance_now", "Endurance now", note="X4: now"),
        _out("ammunition_now", "Arrows left", note="X31: now (a volley spends 3)"),
        *(_out(f"t_{t}", _trait_header(t)) for t in UNIT_TRAITS),
        _out("formation_now", "Formation now", kind="text", width=11),
        _out("next_tick", "Next tick", note="E5"),
        _out("status", "Status", kind="text", width=24),
        _out("breakdown", "Breakdown", kind="text", width=80, note="X1-X11: who gave what, under which rule"),
    ), rows=cap["units"], title="Units (type the columns up to Join War dice)"))

    # -- Ticks ----------------------------------------------------------------------------
    lay.add_area(Area("Ticks_Board", "Ticks", 2, 1, cap["ticks"] + 1, cap["units"] + 1,
                      title="E5: a row per long tick, a column per unit: who acts when (before the first Next "
                            "Tick: the tick Join War gives, E4; the Units sheet's Status says the roll)"))

    # -- Orders ---------------------------------------------------------------------------
    lay.add(Block("Orders_Table", "Orders", 2, (
        _int("tick", "Tick", note="E5: the long tick the unit acts on"),
        Column("unit", "Unit", choices="=Unit_Names", width=20),
        Column("action", "Action", choices="Actions", width=18, codec_=Choice(tuple(a.value for a in Action)),
               note="E11, X17-X27"),
        Column("target", "Target", choices="=Unit_Names", width=20),
        Column("option", "Option", width=14, note=OPTION_HELP),
        Column("weather", "Weather", choices="Weather", width=9, codec_=Choice(tuple(w.value for w in Weather)),
               note="X37"),
        Column("dice", "Dice", width=16, codec_=DICE, note=f"E1: {DIE_CELL_HELP}"),
        Column("target_dice", "Target dice", width=14, codec_=DICE,
               note="X23, X24: the other unit's command roll (a split's new unit, a merge's second unit); "
                    f"{DIE_CELL_HELP}"),
        Column("damage_dice", "Damage dice", width=14, codec_=DICE,
               note=f"E7, X33: the damage roll of a hit; {DIE_CELL_HELP}"),
        Column("rout_dice", "Rout dice", width=12, codec_=ROUT_DICE,
               note=f"X35, X43: {ROUT_DICE_HELP}; each part {DIE_CELL_HELP}"),
        Column("exhaustion_dice", "Exhaustion dice", width=12, codec_=DICE,
               note=f"X37: the attacking unit's exhaustion roll after an attack; {DIE_CELL_HELP}"),
        Column("target_exhaustion_dice", "Target exhaustion dice", width=12, codec_=DICE,
               note=f"X37: the target's exhaustion roll after an attack; {DIE_CELL_HELP}"),
        _out("pool", "Pool", note="E1, X28: dice rolled"),
        _out("added", "Successes added", note="X28"),
        _out("external", "External penalty", note="X30"),
        _out("dv", "DV", note="E8, X29"),
        _out("raw", "Raw damage", note="X33: Strength + weapon + Damage Rating, before the threshold"),
        _out("soak", "Soak", note="X29, X33: taken off the raw damage"),
        _out("min_dice", "Minimum dice", note="X33: the least damage dice of a hit (E9: not past Hardness)"),
        _out("hardness", "Hardness", note="E9, X8: a hit whose raw damage is not above it does nothing"),
        _out("tens", "A 10 counts", note="E1: successes a 10 gives on the attack dice: 2, or 1 for an extra's "
                                        "pool with extras_double_tens No"),
        _out("needed", "Successes needed", note="E7: DV + 1 + external penalty - successes added (a formula)"),
        _out("p_hit", "Hit chance %", kind="number", width=8, note="E1, E7: exact (a formula over the Odds sheet)"),
        _out("expected", "Expected levels", kind="number", width=8, note="E1, X33: a formula over the Odds sheet"),
        _out("resolved", "Resolved", width=8, note="Stamped with the long tick when resolved; blank = pending"),
        _out("outcome", "Outcome", kind="text", width=9),
        _out("result", "Result", kind="text", width=60),
    ), rows=cap["orders"], title="Orders (type the first twelve columns)"))

    # -- Log, Aftermath, House Rules, hidden ------------------------------------------------
    lay.add(Block("Log_Table", "Log", 1, (
        _out("tick", "Tick", width=6),
        _out("order", "Order", width=7),
        _out("kind", "Kind", kind="text", width=12),
        _out("unit", "Unit", kind="text", width=22),
        _out("target", "Target", kind="text", width=22),
        _out("outcome", "Outcome", kind="text", width=9),
        _out("roll", "Roll", kind="text", width=18),
        _out("rule", "Rule", kind="text", width=16),
        _out("details", "Details", kind="text", width=80),
        _out("step", "Step", kind="text", width=6, note="Written by sheetsync: the step that wrote the row"),
    ), rows=None, title="Log"))
    lay.add(Block("Aftermath_Table", "Aftermath", 2, (
        _out("unit", "Unit", kind="text", width=22),
        _out("side", "Side", kind="text", width=14),
        _out("magnitude", "Magnitude", width=9),
        _out("starting_magnitude", "Starting Magnitude", width=9),
        _out("dots_lost", "Dots lost", width=8),
        _out("healing_days", "Healing days", width=8, note="X41"),
        _out("casualties", "Named members", kind="text", width=80, note="X40: each named member's fate"),
    ), rows=cap["units"], title="Aftermath (X40, X41)"))
    lay.add(Block("HouseRules_Table", "House Rules", 2, (
        Column("key", "Key", is_input=False, width=24),
        Column("value", "Value", width=14, note="Yes or No, a number, or one of the values the Ruling names "
                                                 "(blank: the default)"),
        Column("default", "Default", is_input=False, width=12),
        Column("ruling", "Ruling", is_input=False, width=80),
    ), rows=len(HOUSE_RULE_NOTES), title="House Rules"))
    lay.add(Block("Lists_Table", "Lists", 1, tuple(Column(k, k, is_input=False) for k in LISTS), rows=20))
    lay.add(Block("State_Blob", "State", 1, (Column("json", "Battle state (JSON, in pieces)", is_input=False),),
                  rows=400, note="The battle: sheetsync reads and writes it."))
    # Issue 22.3: the undo records' columns (State!C:F, sheetsync.sheets.session.RECORDS_RANGE) are
    # laid out with a header, so the State sheet spans them wherever the tracker goes (a
    # Google Sheet made from this .xlsx is no narrower than its used range: a Resolve's
    # record would fall outside a two-column State and the step would stand half-applied).
    lay.add(Block("State_Records", "State", 1, (
        Column("rev", "Rev", kind="int", is_input=False), Column("step", "Step", is_input=False),
        Column("json", "Undo record (JSON)", is_input=False), Column("mark", "Undone", is_input=False),
    ), rows=None, first_col=3, note="Undo records: one a resolved turn; sheetsync marks the undone ones."))

    for target in ("Orders_Table.outcome", "Log_Table.outcome"):
        lay.colours.append(Colours(target, OUTCOME_COLOURS))
    sides = lay.block("Battle_Sides")
    refs = [f"{sides.sheet}!${sides.letter('side')}${sides.first_row + i}" for i in range(sides.rows or 0)]
    exact = {f"={ref}": SIDE_COLOURS[i % len(SIDE_COLOURS)] for i, ref in enumerate(refs)}
    lay.colours.append(Colours("Units_Table.side", exact))
    lay.colours.append(Colours("Battle_Sides.side", exact))
    lay.bars.append(DataBar("Units_Table.magnitude_now", colour="5B9BD5"))
    lay.bars.append(DataBar("Units_Table.health_left", colour="70AD47"))
    lay.names.update({"Unit_Names": "Units_Table.name", "Character_Names": "Characters_Table.name"})
    add_odds(lay)
    _printing(lay)
    return lay


def _printing(lay: Layout) -> None:
    """Issue 22: each table prints with its header row on every page, fitted across
    (:func:`~sheetsync.core.layout.table_printing`): the wide Characters, Units and Orders
    on a few pages across, each repeating the name column (Orders: tick and unit); the
    Ticks board with its row of units; the Battle sheet landscape, one page wide."""
    lay.printing["Battle"] = PrintSetup(margins=PRINT_MARGINS, grid_lines=False)
    keep = {"Characters": 1, "Units": 1, "Orders": 2}
    for sheet, block in (("Characters", "Characters_Table"), ("Units", "Units_Table"), ("Orders", "Orders_Table"),
                         ("Log", "Log_Table"), ("Aftermath", "Aftermath_Table"), ("House Rules", "HouseRules_Table")):
        lay.printing[sheet] = table_printing(lay.block(block), keep=keep.get(sheet, 0))
    board = lay.areas["Ticks_Board"]
    lay.printing["Ticks"] = PrintSetup(title_rows=f"{board.first_row}:{board.first_row}",
                                       margins=PRINT_MARGINS, grid_lines=False)
