"""Cells to a battle: read the tracker's blocks, report every bad cell by its address.

The reader turns the sheets into the engine's battle-file dict while remembering which
cell each value came from; the engine's loader then checks it, and every problem it finds
is reported at its cell (``Orders!C7: task 'Melee' is not a task (expected one of ...)``).
Nothing is written when anything is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sheetsync.errors import InputError, Problem, SheetFormatError
from sheetsync.rules.bbn import Battle, HouseRules, load_battle
from sheetsync.rules.bbn.loader import battle_to_file
from sheetsync.sheets.backend import CellValue, Formula, Grid
from sheetsync.sheets.layout import Block, Layout

__all__ = ["Sheets", "parse_battle_setup", "parse_turn", "read_plan"]


def read_plan(lay: Layout) -> list[str]:
    """Every range a use case needs, read in one call."""
    return [
        lay.block("State_Blob").range(),
        lay.block("Characters_Table").range(),
        lay.block("Cohorts_Setup").range(),
        lay.block("Orders_Table").range(),
        lay.block("Ranges_Table").range(),
        lay.block("HouseRules_Table").range(),
        lay.cells["Battle_Seed"].ref,
        lay.block("Log_Table").range().rsplit(":", 1)[0] + ":A",
    ]


@dataclass
class Sheets:
    """The grids of :func:`read_plan`, by block name."""

    state: Grid
    characters: Grid
    setup: Grid
    orders: Grid
    ranges: Grid
    house_rules: Grid
    seed: Grid
    log: Grid

    @classmethod
    def from_grids(cls, grids: list[Grid]) -> Sheets:
        return cls(*grids)

    @property
    def log_length(self) -> int:
        return len(self.log)


@dataclass
class _Reader:
    lay: Layout
    problems: list[Problem] = field(default_factory=list)
    where: dict[str, str] = field(default_factory=dict)

    def cell(self, grid: Grid, block: Block, i: int, key: str) -> CellValue:
        row = grid[i] if i < len(grid) else []
        j = block.index(key)
        return row[j] if j < len(row) else None

    def text(self, grid: Grid, block: Block, i: int, key: str, path: str | None = None) -> str | None:
        value = self.cell(grid, block, i, key)
        addr = block.cell(i, key)
        if path:
            self.where[path] = addr
        if isinstance(value, Formula):
            label = block.columns[block.index(key)].header.lower()
            self.problems.append(Problem(addr, f"{label}: a formula ({value.text}) is not allowed here; type the text"))
            return None
        if value is None:
            return None
        if isinstance(value, bool):
            return "Yes" if value else "No"
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        return text or None

    def integer(self, grid: Grid, block: Block, i: int, key: str, path: str | None = None) -> int | None:
        value = self.cell(grid, block, i, key)
        addr = block.cell(i, key)
        col = block.columns[block.index(key)]
        if path:
            self.where[path] = addr
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        label = col.header.lower()
        if isinstance(value, Formula):
            self.problems.append(Problem(addr, f"{label}: a formula ({value.text}) is not allowed here; type a number"))
            return None
        number: int | None = None
        if isinstance(value, bool):
            number = None
        elif isinstance(value, int):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        elif isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
            number = int(value.strip())
        if number is None:
            self.problems.append(Problem(addr, f"{label} {value!r} is not a whole number"))
            return None
        if (col.low is not None and number < col.low) or (col.high is not None and number > col.high):
            self.problems.append(Problem(addr, f"{label} {number} is not {col.low} to {col.high}"))
            return None
        return number

    def boolean(self, grid: Grid, block: Block, i: int, key: str) -> bool | None:
        value = self.cell(grid, block, i, key)
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        text = str(value).strip().lower()
        if text in ("yes", "y", "true", "x", "1", "✓"):
            return True
        if text in ("no", "n", "false", "0", ""):
            return False
        label = block.columns[block.index(key)].header.lower()
        self.problems.append(Problem(block.cell(i, key), f"{label} {value!r} is not Yes or No"))
        return None


_TRAIT = re.compile(r"^\s*(.+?)\s*[:=]?\s*(\d+)\s*$")


def _split_traits(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"[;\n]", text) if p.strip()]


def _characters(r: _Reader, sh: Sheets) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Characters sheet: one member dict per row, grouped by cohort, with cell addresses."""
    lay = r.lay
    block = lay.block("Characters_Table")
    by_cohort: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for i, _row in enumerate(sh.characters):
        cohort = r.text(sh.characters, block, i, "cohort")
        name = r.text(sh.characters, block, i, "name")
        if cohort is None and name is None:
            if any(v not in (None, "") for v in _row):
                r.problems.append(Problem(block.cell(i, "name"), "this row has values but no character name and cohort"))
            continue
        if name is None:
            r.problems.append(Problem(block.cell(i, "name"), "a character needs a name"))
            continue
        if cohort is None:
            r.problems.append(Problem(block.cell(i, "cohort"), f"{name} needs a cohort"))
            continue
        m: dict[str, Any] = {"name": name}
        for key in ("temper", "willpower_spent", "health_levels"):
            v = r.integer(sh.characters, block, i, key)
            if v is not None:
                m[key] = v
        for key in ("ranged_attack", "blood_magic_in_clan"):
            b = r.boolean(sh.characters, block, i, key)
            if b is not None:
                m[key] = b
        pick = r.text(sh.characters, block, i, "movement_discipline")
        if pick:
            m["movement_discipline"] = pick
        abilities = {a: v for a in lay.ability_columns if (v := r.integer(sh.characters, block, i, "ability:" + a))}
        disciplines = {d: v for d in lay.discipline_columns if (v := r.integer(sh.characters, block, i, "discipline:" + d))}
        merits = [x for x in lay.merit_columns if r.boolean(sh.characters, block, i, "merit:" + x)]
        paths: dict[str, Any] = {}
        for part in _split_traits(r.text(sh.characters, block, i, "offensive_paths") or ""):
            mt = _TRAIT.match(part)
            if not mt:
                r.problems.append(Problem(block.cell(i, "offensive_paths"), f"{part!r} is not 'Path name level' (e.g. Lure of Flames 3)"))
                continue
            paths[mt.group(1)] = {"level": int(mt.group(2)), "offensive": True}
        combos = []
        for part in _split_traits(r.text(sh.characters, block, i, "combinations") or ""):
            cname, sep, inside = part.partition(":")
            if not sep:
                r.problems.append(Problem(block.cell(i, "combinations"), f"{part!r} is not 'Name: Discipline + Discipline'"))
                continue
            combos.append({"name": cname.strip(), "includes": [d.strip() for d in re.split(r"[+,/&]", inside) if d.strip()]})
        for part in _split_traits(r.text(sh.characters, block, i, "other_traits") or ""):
            mt = _TRAIT.match(part)
            if mt:
                disciplines.setdefault(mt.group(1), int(mt.group(2)))
            else:
                merits.append(part)
        m.update({k: v for k, v in (("abilities", abilities), ("disciplines", disciplines), ("merits", merits),
                                    ("blood_magic_paths", paths), ("combination_disciplines", combos)) if v})
        aegis = r.integer(sh.characters, block, i, "aegis")
        lasting = r.integer(sh.characters, block, i, "lasting_roll")
        m["_aegis"], m["_lasting"], m["_row"] = aegis, lasting, i
        by_cohort.setdefault(cohort, []).append((i, m))
    return by_cohort


def parse_house_rules(r: _Reader, sh: Sheets) -> dict[str, Any]:
    """House Rules sheet: key/value rows for the RULINGS-bbn.md keys."""
    block = r.lay.block("HouseRules_Table")
    out: dict[str, Any] = {}
    fields = HouseRules.model_fields
    for i, _ in enumerate(sh.house_rules):
        key = r.text(sh.house_rules, block, i, "key")
        if key is None or key not in fields:
            continue
        addr = block.cell(i, "value")
        r.where[f"house_rules.{key}"] = addr
        raw = r.cell(sh.house_rules, block, i, "value")
        if raw is None or raw == "":
            continue
        ann = fields[key].annotation
        if ann is bool:
            b = r.boolean(sh.house_rules, block, i, "value")
            if b is not None:
                out[key] = b
        elif ann is int:
            v = r.integer(sh.house_rules, block, i, "value")
            if v is not None:
                out[key] = v
        else:
            out[key] = r.text(sh.house_rules, block, i, "value")
    return out


def parse_battle_setup(lay: Layout, sh: Sheets) -> Battle:
    """Build Cohorts: the Characters and Cohorts Setup blocks (and House Rules) to a fresh
    battle.  Raises :class:`SheetFormatError` listing every bad cell."""
    r = _Reader(lay)
    setup = lay.block("Cohorts_Setup")
    chars = _characters(r, sh)
    rules = parse_house_rules(r, sh)
    cohorts: list[dict[str, Any]] = []
    named: set[str] = set()
    for i, _ in enumerate(sh.setup):
        name = r.text(sh.setup, setup, i, "name")
        if name is None:
            continue
        k = len(cohorts)
        named.add(name)
        r.where[f"cohorts[{k}]"] = setup.cell(i, "name")
        r.where[f"cohorts[{k}].name"] = setup.cell(i, "name")
        r.where[f"cohorts[{k}].members"] = setup.cell(i, "name")
        c: dict[str, Any] = {"name": name}
        for key in ("side", "sergeant", "tracker", "reporter"):
            v = r.text(sh.setup, setup, i, key, f"cohorts[{k}].{key}")
            if v is not None:
                c[key] = v
        support = r.boolean(sh.setup, setup, i, "support")
        if support:
            c["support"] = True
        pools = {}
        for col in setup.columns:
            if col.key.startswith("set:"):
                v = r.integer(sh.setup, setup, i, col.key, f"cohorts[{k}].pools.{col.key[4:]}")
                if v is not None:
                    pools[col.key[4:]] = v
        if pools:
            c["pools"] = pools
        members = []
        aegis: dict[str, int] = {}
        lasting: dict[str, int] = {}
        for j, (row, m) in enumerate(chars.get(name, [])):
            block = lay.block("Characters_Table")
            r.where[f"cohorts[{k}].members[{j}]"] = block.cell(row, "name")
            for col in block.columns:
                field_name = col.key.split(":")[0]
                target = {"ability": "abilities", "merit": "merits", "discipline": "disciplines",
                          "offensive_paths": "blood_magic_paths", "combinations": "combination_disciplines"}.get(field_name, field_name)
                r.where.setdefault(f"cohorts[{k}].members[{j}].{target}", block.cell(row, col.key))
            burned = m.pop("_aegis")
            if burned:
                aegis[m["name"]] = burned
            lv = m.pop("_lasting")
            if lv is not None:
                lasting[m["name"]] = lv
            m.pop("_row", None)
            members.append(m)
        c["members"] = members
        if aegis:
            c["aegis"] = aegis
        if lasting:
            c["lasting_rolls"] = lasting
        cohorts.append(c)
    block = lay.block("Characters_Table")
    for cohort, rows in chars.items():
        if cohort not in named:
            for row, _m in rows:
                r.problems.append(Problem(block.cell(row, "cohort"), f"{cohort!r} is not a cohort on the Cohorts sheet"))
    if not cohorts and not r.problems:
        r.problems.append(Problem(setup.cell(0, "name"), "no cohorts yet: name each cohort here, then its members on Characters"))
    data: dict[str, Any] = {"cohorts": cohorts, "house_rules": rules}
    seed = sh.seed[0][0] if sh.seed and sh.seed[0] else None
    if seed not in (None, ""):
        data["seed"] = int(seed) if isinstance(seed, (int, float)) and not isinstance(seed, bool) else str(seed)
    return _load(r, data)


def _value_at(grid: Grid, block: Block, i: int, key: str) -> CellValue:
    row = grid[i] if i < len(grid) else []
    j = block.index(key)
    return row[j] if j < len(row) else None


def _load(r: _Reader, data: dict[str, Any]) -> Battle:
    problems = list(r.problems)
    battle = None
    try:
        battle = load_battle(data)
    except InputError as exc:
        problems += [Problem(_locate(r.where, p.where), _label(p)) for p in exc.problems]
    if problems:
        raise SheetFormatError(_dedupe(problems))
    assert battle is not None
    return battle


def _label(p: Problem) -> str:
    """``orders[3].task`` + message → ``task 'Melee' is not ...`` (the field named first)."""
    field_name = re.sub(r"\[\d+\]", "", p.where.rsplit(".", 1)[-1]) if "." in p.where else ""
    if field_name and not p.message.startswith(field_name) and re.match(r"^[a-z_]+$", field_name):
        return f"{field_name.replace('_', ' ')} {p.message}"
    return p.message


def _locate(where: dict[str, str], path: str) -> str:
    """The cell of the longest known prefix of a loader path."""
    probe = path
    while probe:
        if probe in where:
            return where[probe]
        cut = max(probe.rfind("."), probe.rfind("["))
        if cut <= 0:
            break
        probe = probe[:cut]
    return path or "State"


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.where, p.message) not in seen:
            seen.add((p.where, p.message))
            out.append(p)
    return out


def parse_turn(lay: Layout, sh: Sheets, battle: Battle) -> tuple[Battle, list[int]]:
    """Resolve Phase input: the stored battle with this phase's House Rules, Ranges and
    pending Orders rows (those with no Phase stamp).  Returns the battle and the Orders
    row offsets of its orders, in order."""
    r = _Reader(lay)
    rules = parse_house_rules(r, sh)
    ranges_block = lay.block("Ranges_Table")
    ranges = []
    for i, _ in enumerate(sh.ranges):
        k = len(ranges)
        a = r.text(sh.ranges, ranges_block, i, "a", f"ranges[{k}][0]")
        b = r.text(sh.ranges, ranges_block, i, "b", f"ranges[{k}][1]")
        band = r.text(sh.ranges, ranges_block, i, "band", f"ranges[{k}]")
        if a is None and b is None and band is None:
            continue
        if None in (a, b, band):
            r.problems.append(Problem(ranges_block.cell(i, "a"), "a range needs two cohorts and a band"))
            continue
        r.where[f"ranges[{k}].band"] = ranges_block.cell(i, "band")
        ranges.append([a, b, band])
    orders_block = lay.block("Orders_Table")
    orders: list[dict[str, Any]] = []
    rows: list[int] = []
    input_keys = [c.key for c in orders_block.columns if c.is_input]
    for i, _ in enumerate(sh.orders):
        stamp = _value_at(sh.orders, orders_block, i, "phase")
        if stamp not in (None, ""):
            continue
        if all(_value_at(sh.orders, orders_block, i, k) in (None, "") for k in input_keys):
            continue
        k = len(orders)
        o: dict[str, Any] = {}
        for key in ("cohort", "task", "target", "member", "moment", "pool", "benefit", "ally", "free_task", "text"):
            v = r.text(sh.orders, orders_block, i, key, f"orders[{k}].{key}")
            if v is not None:
                o[key] = v
        for key in ("temper", "roll"):
            v = r.integer(sh.orders, orders_block, i, key, f"orders[{k}].{key}")
            if v is not None:
                o[key] = v
        reroll = _value_at(sh.orders, orders_block, i, "reroll")
        r.where[f"orders[{k}].reroll"] = orders_block.cell(i, "reroll")
        if reroll is True or (isinstance(reroll, str) and reroll.strip().lower() in ("yes", "y", "true", "x")):
            o["use_reroll"] = True
        elif reroll not in (None, "", False) and not (isinstance(reroll, str) and reroll.strip().lower() in ("no", "n")):
            v = r.integer(sh.orders, orders_block, i, "reroll")
            if v is not None:
                if not 1 <= v <= 10:
                    r.problems.append(Problem(orders_block.cell(i, "reroll"), f"reroll {v} is not a d10 (1 to 10) or Yes"))
                else:
                    o["reroll"] = v
                    o["use_reroll"] = True
        picks = r.text(sh.orders, orders_block, i, "picks", f"orders[{k}].picks")
        if picks:
            if re.fullmatch(r"[\d\s,]+", picks):
                o["picks"] = [int(x) for x in re.split(r"[\s,]+", picks) if x]
            else:
                r.problems.append(Problem(orders_block.cell(i, "picks"), f"picks {picks!r} are not dice (e.g. 2 3)"))
        r.where[f"orders[{k}]"] = orders_block.cell(i, "cohort")
        if "cohort" not in o:
            r.problems.append(Problem(orders_block.cell(i, "cohort"), "an order needs its cohort"))
        if "task" not in o:
            r.problems.append(Problem(orders_block.cell(i, "task"), "an order needs its task"))
        orders.append(o)
        rows.append(i)
    data = battle_to_file(battle)
    data["house_rules"] = rules
    data["ranges"] = ranges
    data["orders"] = orders
    data.pop("log", None)
    for idx in range(len(data["cohorts"])):
        r.where.setdefault(f"cohorts[{idx}]", "State!A2")
    return _load(r, data), rows
