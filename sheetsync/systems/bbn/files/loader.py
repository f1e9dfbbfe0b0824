"""Battle files in, battle files out: plain dicts (parsed from YAML or JSON) to a
:class:`Battle`, collecting *every* problem with its place before raising (R1, R12, R24).

The file format is the one the README shows: ``house_rules``, ``seed``, ``phase``,
``cohorts`` (each with its members and, optionally, its current ``health``, ``temper``,
``control``, ``states`` ...), ``ranges``, ``orders``; plus ``history`` and ``log``, which
``--out`` writes so that the next phase, and undo, start from there.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from enum import Enum
from typing import Any

from sheetsync.core.errors import InputError, Problem, did_you_mean
from sheetsync.core.model import Model
from sheetsync.core.recent import keep
from sheetsync.sheets.validation import validate_python, validation_errors
from sheetsync.systems.bbn.rules.battle import Battle, RangeEntry, initial_state
from sheetsync.systems.bbn.rules.catalog import Catalog, default_catalog, normalize
from sheetsync.systems.bbn.rules.models import (
    Band,
    Benefit,
    CharacterSheet,
    CohortSpec,
    CohortState,
    HouseRules,
    Moment,
    Order,
    PoolName,
    State,
    Task,
)
from sheetsync.systems.bbn.rules.pools import CohortPools

__all__ = ["battle_to_file", "load_battle", "load_turn", "pydantic_problems"]

ENUM_FIELDS: dict[str, tuple[type[Enum], str]] = {
    "task": (Task, "task"),
    "moment": (Moment, "Hero Moment"),
    "benefit": (Benefit, "Inspire benefit"),
    "pool": (PoolName, "pool"),
    "band": (Band, "range band"),
    "state": (State, "state"),
    "states": (State, "state"),
    "pools": (PoolName, "pool"),
}
STATE_KEYS = ("health", "temper", "control", "states", "hero_used", "died_in_phase", "reroll_tokens", "units_moved",
              "below_zero_damage")
TOP_KEYS = {"house_rules", "seed", "phase", "cohorts", "ranges", "orders", "history", "log", "catalog"}


def _path(prefix: str, loc: Sequence[int | str]) -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _models_in(annotation: Any) -> list[type[Model]]:
    """The models inside an annotation (``list[CharacterSheet] | None`` → CharacterSheet)."""
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return [annotation]
    if typing.get_origin(annotation) is typing.Annotated:
        return _models_in(annotation.__origin__)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list, tuple, dict, Sequence):
        return [m for a in typing.get_args(annotation) for m in _models_in(a)]
    return []


def _keys_at(model: type[Model] | None, loc: Sequence[int | str]) -> list[str]:
    """The keys a model accepts at ``loc`` (the place of an unknown key), for "did you mean"."""
    current = [model] if model is not None else []
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        found = [f.annotation for m in current if (f := m.model_fields.get(part)) is not None]
        if found:
            current = [m for a in found for m in _models_in(a)]
    return [k for m in current for k in m.model_fields]


def _short(value: Any) -> str:
    """A value for a message, cut short when it is long (a 5,000-digit number)."""
    if isinstance(value, int) and abs(value) >= 10**40:
        return f"(a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits)"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…{text[-5:]} ({len(str(value))} characters)"


def pydantic_problems(err: Any, prefix: str = "", enums: dict[str, tuple[type[Enum], str]] | None = None,
                      model: type[Model] | None = None) -> list[Problem]:
    """Turn pydantic's errors into :class:`Problem` lines a Tracker can read; a mistyped
    label or key gets the nearest right one (``did you mean 'Melee Attack'?``)."""
    enums = ENUM_FIELDS if enums is None else enums
    out: list[Problem] = []
    for e in err.errors():
        loc = [p for p in e["loc"] if not (isinstance(p, str) and p in ("function-after", "lax-or-strict", "[key]"))]
        where = _path(prefix, loc)
        inp = e.get("input")
        kind = e["type"]
        field = next((str(p) for p in reversed(loc) if isinstance(p, str)), "")
        if kind == "enum":  # a label inside a mapping (states, pools) is named by its mapping
            field = next((str(p) for p in reversed(loc) if isinstance(p, str) and p in enums), field)
        if kind in ("int_parsing", "int_type", "int_from_float"):
            msg = f"{_short(inp)} is not a whole number"
        elif kind == "int_parsing_size":
            msg = f"{_short(inp)} has too many digits to be a whole number here"
        elif kind in ("bool_parsing", "bool_type"):
            msg = f"{inp!r} is not yes or no (true/false)"
        elif kind == "enum" or (kind == "literal_error" and field in enums):
            cls, label = enums.get(field, (None, field))
            expected = ", ".join(m.value for m in cls) if cls else e.get("ctx", {}).get("expected", "")
            hint = did_you_mean(inp, [str(m.value) for m in cls]) if cls else ""
            msg = f"{_short(inp)} is not a {label}{hint or f' (expected one of {expected})'}"
        elif kind == "literal_error":
            msg = f"{inp!r} is not one of {e.get('ctx', {}).get('expected', '')}"
        elif kind == "missing":
            msg = "is required"
        elif kind in ("extra_forbidden", "unexpected_keyword_argument"):
            hint = did_you_mean(str(loc[-1]) if loc else "", _keys_at(model, loc))
            msg = f"is not a key sheetsync knows{hint or ' (check its spelling)'}"
        elif kind == "greater_than_equal":
            msg = f"{inp!r} is less than {e['ctx']['ge']}"
        elif kind == "less_than_equal":
            msg = f"{inp!r} is more than {e['ctx']['le']}"
        elif kind == "string_too_short":
            msg = "must not be empty"
        elif kind in _WANT:
            want = _WANT[kind]
            msg = f"{inp!r} is not {want}"
        else:
            msg = e["msg"]
        out.append(Problem(where, msg))
    return out


_WANT = {"string_type": "text", "dict_type": "a mapping", "list_type": "a list", "tuple_type": "a list",
         "model_type": "a mapping", "dataclass_type": "a mapping", "dataclass_args_type": "a mapping"}
"""What a value of each kind should have been (a model is a dataclass validated by a
``TypeAdapter``, issue 24: its error kinds say the same as a pydantic model's)."""


_LABELS: dict[type[Enum], dict[str, Any]] = {}
"""Each enum's values by their normalized label, built once an enum (issue 12: a step looks
up a label for every order and every state)."""


def _label(value: Any, cls: type[Enum]) -> Any:
    """Accept a dropdown label whatever its case and spacing ("melee attack")."""
    if isinstance(value, str):
        labels = _LABELS.get(cls)
        if labels is None:
            labels = {}
            for m in cls:
                labels.setdefault(normalize(str(m.value)), m.value)
            _LABELS[cls] = labels
        return labels.get(normalize(value), value)
    return value


def _validate(model: type[Model], data: Any, where: str, problems: list[Problem], *, hints: bool = True) -> Any:
    """``model`` made from ``data`` by pydantic (the edge, issue 24; where pydantic is not
    installed, by its standard-library stand-in, issue 25), or ``None`` with its problems
    added to ``problems``; ``hints``: an unknown key gets the nearest known one."""
    try:
        return validate_python(model, data)
    except validation_errors() as err:
        problems.extend(pydantic_problems(err, where, model=model if hints else None))
        return None


def _member(data: Any) -> Any:
    if isinstance(data, str):
        return {"name": data}
    if isinstance(data, dict) and isinstance(data.get("blood_magic_paths"), dict):
        paths = {}
        for k, v in data["blood_magic_paths"].items():
            paths[k] = {"level": v} if not isinstance(v, dict) else v
        data = {**data, "blood_magic_paths": paths}
    if isinstance(data, dict) and isinstance(data.get("merits"), str):
        data = {**data, "merits": [m.strip() for m in data["merits"].split(",") if m.strip()]}
    return data


def load_battle(data: Any, source: str = "") -> Battle:
    """Check a battle file's dict and build the :class:`Battle`; raise :class:`InputError`
    listing every problem with its path (``orders[3].task: 'Melee' is not a task ...``).
    Each part of the file is checked by its own function, in the file's order: the keys,
    the house rules, the cohorts and their members, the catalog, the standings, the ranges
    (R24), the orders (R13), the phase and the seed."""
    problems: list[Problem] = []
    if not isinstance(data, dict):
        raise InputError([Problem("", "the file must hold a mapping with a 'cohorts' list")], source)
    _check_top_keys(data, problems)
    rules = _validate(HouseRules, data.get("house_rules") or {}, "house_rules", problems) or HouseRules()
    specs, raw_states, raw_names = _load_cohorts(data.get("cohorts"), rules, problems)
    spec_by = {s.name: s for s in specs}
    canon = {n.casefold(): n for n in (*raw_names, *spec_by)}
    """R12 for cohorts: a cohort named in a range or an order is found whatever its case
    ("night watch" is Night Watch); events and outputs keep the spelling of its definition."""

    def cohort_name(value: Any) -> Any:
        return canon.get(value.strip().casefold(), value) if isinstance(value, str) else value
    catalog_extra = _load_catalog(data.get("catalog"), problems)
    states = _load_states(specs, raw_states, rules, catalog_extra, problems)
    ranges = _load_ranges(data.get("ranges"), spec_by, raw_names, cohort_name, problems)
    orders = _load_orders(data.get("orders"), spec_by, raw_names, cohort_name, problems)
    phase = data.get("phase", 1)
    _check_phase_and_seed(phase, data.get("seed"), problems)
    if problems:
        raise InputError(problems, source)
    return Battle(
        cohorts=tuple(specs), state=states, ranges=tuple(ranges), orders=tuple(orders), phase=phase,
        seed=data.get("seed"), history=tuple(data.get("history") or ()), log=tuple(data.get("log") or ()),
        house_rules=rules, catalog_extra=catalog_extra,
    )


def _check_top_keys(data: dict[Any, Any], problems: list[Problem]) -> None:
    """The file's own keys: each one sheetsync knows."""
    for key in data:
        if key not in TOP_KEYS:
            hint = did_you_mean(str(key), sorted(TOP_KEYS))
            problems.append(Problem(str(key), f"is not a key sheetsync knows{hint or ' (check its spelling)'}"))


def _load_cohorts(raw_cohorts: Any, rules: HouseRules, problems: list[Problem],
                  ) -> tuple[list[CohortSpec], list[tuple[int, dict[str, Any]]], set[str]]:
    """The file's ``cohorts``: each declaration (:func:`_load_cohort`), with the standing
    keys of each one that loaded (by its place in the list), and every cohort name in the
    file, also of cohorts that are malformed (their own problems are listed; orders and
    ranges naming them are not reported again)."""
    if not isinstance(raw_cohorts, list) or not raw_cohorts:
        problems.append(Problem("cohorts", "must be a list of at least one cohort"))
        raw_cohorts = []
    specs: list[CohortSpec] = []
    raw_states: list[tuple[int, dict[str, Any]]] = []
    names: set[str] = set()
    raw_names: set[str] = set()
    for i, raw in enumerate(raw_cohorts):
        where = f"cohorts[{i}]"
        if not isinstance(raw, dict):
            problems.append(Problem(where, "must be a mapping"))
            continue
        spec = _load_cohort(raw, where, problems)
        if isinstance(raw.get("name"), str):
            raw_names.add(raw["name"])
        if spec is None:
            continue
        raw_states.append((i, {k: raw[k] for k in STATE_KEYS if k in raw}))
        if spec.name.casefold() in names:
            problems.append(Problem(f"{where}.name", f"{spec.name!r} names two cohorts"))
        names.add(spec.name.casefold())
        _check_members(spec, where, rules, problems)
        specs.append(spec)
    return specs, raw_states, raw_names


def _load_cohort(raw: dict[str, Any], where: str, problems: list[Problem]) -> CohortSpec | None:
    """One cohort's declaration (its keys but the standing's): members may be just names
    (:func:`_member`), pools' names are dropdown labels in any case."""
    spec_data = {k: v for k, v in raw.items() if k not in STATE_KEYS}
    members = spec_data.get("members")
    if isinstance(members, list):
        spec_data["members"] = [_member(m) for m in members]
    if isinstance(spec_data.get("pools"), dict):
        spec_data["pools"] = {_label(k, PoolName): v for k, v in spec_data["pools"].items()}
    spec: CohortSpec | None = _validate(CohortSpec, spec_data, where, problems)
    return spec


def _check_members(spec: CohortSpec, where: str, rules: HouseRules, problems: list[Problem]) -> None:
    """R1: a cohort's members (each once, 3 to 5 unless ``allow_any_size``), and the
    members its Sergeant, Aegis and lasting rolls name."""
    member_names = [m.name for m in spec.members]
    for j, m in enumerate(member_names):
        if member_names.index(m) != j:
            problems.append(Problem(f"{where}.members[{j}].name", f"{m!r} is in {spec.name} twice"))
    n = len(spec.members)
    if not rules.allow_any_size and not 3 <= n <= 5:
        problems.append(Problem(f"{where}.members", f"{spec.name} has {n} members; a cohort has 3 to 5 (R1; "
                                "house rule allow_any_size lifts this)"))
    if n == 0:
        problems.append(Problem(f"{where}.members", f"{spec.name} has no members"))
    for role in ("sergeant",):
        who = getattr(spec, role)
        if who is not None and who not in member_names:
            problems.append(Problem(f"{where}.{role}", f"{who!r} is not a member of {spec.name}"
                                    + did_you_mean(who, member_names)))
    for key, mapping in (("aegis", spec.aegis), ("lasting_rolls", spec.lasting_rolls)):
        for who in mapping:
            if who not in member_names:
                problems.append(Problem(f"{where}.{key}.{who}", f"{who!r} is not a member of {spec.name}"
                                        + did_you_mean(who, member_names)))


def _load_catalog(catalog_extra: Any, problems: list[Problem]) -> dict[str, Any] | None:
    """The file's ``catalog``: additions to the shipped catalog (R12), or ``None`` when
    there are none or they are wrong."""
    if catalog_extra is not None and not isinstance(catalog_extra, dict):
        problems.append(Problem("catalog", "must be a mapping shaped like the shipped catalog"))
        return None
    if catalog_extra is not None:
        try:
            if _validate(Catalog, default_catalog().extended_data(catalog_extra), "catalog", problems,
                         hints=False) is None:
                return None
        except (AttributeError, TypeError, ValueError) as exc:
            problems.append(Problem("catalog", f"must be shaped like the shipped catalog ({exc})"))
            return None
    return catalog_extra


def _load_states(specs: list[CohortSpec], raw_states: list[tuple[int, dict[str, Any]]], rules: HouseRules,
                 catalog_extra: dict[str, Any] | None, problems: list[Problem]) -> dict[str, CohortState]:
    """Each loaded cohort's standing between phases (all optional; a fresh cohort has full
    Health, its Temper and Control, everyone Active)."""
    states: dict[str, CohortState] = {}
    if specs:
        probe = Battle(cohorts=tuple(specs), state={}, house_rules=rules, catalog_extra=catalog_extra)
        for (i, raw_state), spec in zip(raw_states, specs, strict=True):
            st = _load_state(raw_state, spec, probe.pools[spec.name], f"cohorts[{i}]", problems)
            if st is not None:
                states[spec.name] = st
    return states


def _load_state(raw_state: dict[str, Any], spec: CohortSpec, pools: CohortPools, where: str,
                problems: list[Problem]) -> CohortState | None:
    """One cohort's standing: the file's keys over the fresh standing, member states by
    member name; Health at most the built maximum (Tasks 5.9, R17), Temper and Control not
    below 0, and Hero Moments used by members (R21)."""
    start = initial_state(spec, pools).model_dump()
    raw_member_states = raw_state.get("states") or {}
    if not isinstance(raw_member_states, dict):
        problems.append(Problem(f"{where}.states", "must map member names to states"))
        raw_member_states = {}
    for who in raw_member_states:
        if who not in start["states"]:
            problems.append(Problem(f"{where}.states.{who}", f"{who!r} is not a member of {spec.name}"
                                    + did_you_mean(who, start["states"])))
    merged = {**start, **{k: v for k, v in raw_state.items() if k != "states"}}
    merged["states"] = {**start["states"], **{k: _label(v, State) for k, v in raw_member_states.items()
                                             if k in start["states"]}}
    st: CohortState | None = _validate(CohortState, merged, where, problems)
    if st is None:
        return None
    top = pools.pools["health"]
    if st.health > top:
        problems.append(Problem(f"{where}.health", f"{st.health} is more than {spec.name}'s maximum "
                                f"Health {top} (Tasks 5.9, R17)"))
    for key in ("temper", "control"):
        if getattr(st, key) < 0:
            problems.append(Problem(f"{where}.{key}", f"{getattr(st, key)} is less than 0"))
    for who in st.hero_used:
        if who not in start["states"]:
            problems.append(Problem(f"{where}.hero_used", f"{who!r} is not a member of {spec.name}"))
    return st


def _check_phase_and_seed(phase: Any, seed: Any, problems: list[Problem]) -> None:
    """The number of the next phase (1 or more) and the dice seed (R25)."""
    if not isinstance(phase, int) or isinstance(phase, bool) or phase < 1:
        problems.append(Problem("phase", f"{_short(phase)} is not a phase number (1 or more)"))
    if seed is not None and not isinstance(seed, (int, str)):
        problems.append(Problem("seed", f"{_short(seed)} is not a whole number or text"))


def _load_ranges(raw_ranges: Any, spec_by: dict[str, CohortSpec], raw_names: set[str],
                 cohort_name: typing.Callable[[Any], Any], problems: list[Problem]) -> list[RangeEntry]:
    """R24: the battle's ``ranges``, each ``[cohort, cohort, band]`` (or ``{a, b, band}``)."""
    ranges: list[RangeEntry] = []
    for i, raw in enumerate(raw_ranges or []):
        where = f"ranges[{i}]"
        if isinstance(raw, dict):
            raw = [raw.get("a"), raw.get("b"), raw.get("band")]
        if not isinstance(raw, (list, tuple)) or len(raw) != 3:
            problems.append(Problem(where, "must be [cohort, cohort, band]"))
            continue
        a, b, band = (cohort_name(raw[0]), cohort_name(raw[1]), raw[2])
        for side, who in ((0, a), (1, b)):
            if who not in spec_by and who not in raw_names:
                problems.append(Problem(f"{where}[{side}]", f"{_short(who)} is not a cohort" + did_you_mean(who, spec_by)))
        entry = _validate(RangeEntry, {"a": a, "b": b, "band": _label(band, Band)}, where, problems)
        if entry is not None:
            ranges.append(entry)
    return ranges


_ALLY_TASKS = (Task.INSPIRE.value, Task.ANALYZE.value)
"""Tasks 5.5, 5.8: the tasks whose order may name an ally cohort (Inspire, Analyze)."""


def _load_orders(raw_orders: Any, spec_by: dict[str, CohortSpec], raw_names: set[str],
                 cohort_name: typing.Callable[[Any], Any], problems: list[Problem]) -> list[Order]:
    """R13: the phase's ``orders``, each checked for its shape (:func:`_check_order`)."""
    orders: list[Order] = []
    skip = raw_names - set(spec_by)
    raw_orders = raw_orders or []
    if not isinstance(raw_orders, list):
        problems.append(Problem("orders", "must be a list"))
        raw_orders = []
    for i, raw in enumerate(raw_orders):
        where = f"orders[{i}]"
        if not isinstance(raw, dict):
            problems.append(Problem(where, "must be a mapping"))
            continue
        fixed = dict(raw)
        for key, (cls, _) in ENUM_FIELDS.items():
            if key in fixed and fixed[key] is not None:
                fixed[key] = _label(fixed[key], cls)
        if isinstance(fixed.get("free_task"), str):
            fixed["free_task"] = fixed["free_task"].strip().title()
        for key in ("cohort", "target"):
            if key in fixed:
                fixed[key] = cohort_name(fixed[key])
        if "ally" in fixed and fixed.get("task") in _ALLY_TASKS:
            fixed["ally"] = cohort_name(fixed["ally"])
        order = _validate(Order, fixed, where, problems)
        if order is None:
            continue
        problems.extend(_check_order(order, where, spec_by, skip))
        orders.append(order)
    return orders


_RANGES_SEEN: dict[tuple[Any, ...], tuple[RangeEntry, ...]] = {}
"""The last few Ranges sheets :func:`load_turn` checked and found right, by their cells and
the battle's cohort names, with the entries they gave (issue 12): the Storyteller sets the
ranges once and changes them seldom, so a phase's sheet is nearly always one seen before.
Its entries are the stored battle's own when equal, so a phase shares them with its undo
snapshot."""


def _ranges_key(ranges: Any, names: set[str]) -> tuple[Any, ...] | None:
    """What the check of the ranges depends on: their cells and the cohort names (``None``
    when a cell is not plain, hashable data)."""
    if not isinstance(ranges, list) or not all(type(r) is list for r in ranges):
        return None
    try:
        key = (tuple(sorted(names)), *(tuple(r) for r in ranges))
        hash(key)
    except TypeError:
        return None
    return key


def load_turn(battle: Battle, house_rules: Any, ranges: Any, orders: Any, source: str = "") -> Battle:
    """A stored battle (one :func:`load_battle` or the State checked already) with a phase's
    ``house_rules``, ``ranges`` and ``orders`` (R13, R24), checked as :func:`load_battle`
    checks them, and with no log: the same battle, and the same problems, as
    ``load_battle`` of :func:`battle_to_file` with those three parts put in (the tests
    compare the two).

    The cohorts and their states are the stored battle's and are not checked again
    (issue 12: they are most of a Resolve's input).  When the house rules differ from the
    stored ones, or are wrong, the whole battle is loaded again instead: a house rule can
    change what a valid cohort is (R1's size)."""
    probe: list[Problem] = []
    rules = _validate(HouseRules, house_rules or {}, "house_rules", probe)
    if rules is None or rules != battle.house_rules:
        data = battle_to_file(battle)
        data.update(house_rules=house_rules, ranges=ranges, orders=orders)
        data.pop("log", None)
        return load_battle(data, source)
    problems: list[Problem] = []
    spec_by = battle.spec
    names = set(spec_by)
    canon = {n.casefold(): n for n in spec_by}

    def cohort_name(value: Any) -> Any:
        return canon.get(value.strip().casefold(), value) if isinstance(value, str) else value
    key = _ranges_key(ranges, names)
    new_ranges = _RANGES_SEEN.get(key) if key is not None else None
    if new_ranges is None:
        loaded = _load_ranges(ranges, spec_by, names, cohort_name, problems)
        new_ranges = battle.ranges if tuple(loaded) == battle.ranges else tuple(loaded)
        if key is not None and not problems:
            keep(_RANGES_SEEN, key, new_ranges, 4)
    new_orders = _load_orders(orders, spec_by, names, cohort_name, problems)
    if problems:
        raise InputError(problems, source)
    return Battle(
        cohorts=battle.cohorts, state=dict(battle.state), ranges=new_ranges, orders=tuple(new_orders),
        phase=battle.phase, seed=battle.seed, history=battle.history, log=(), house_rules=rules,
        catalog_extra=battle.catalog_extra,
    )


_NEEDS_TARGET = frozenset({Task.MELEE, Task.RANGED, Task.MYSTICAL, Task.INTIMIDATE, Task.ANALYZE, Task.INSPIRE})
"""Tasks 5.2-5.6, 5.8: the tasks aimed at another cohort (each needs its target)."""


def _check_order(order: Order, where: str, spec_by: dict[str, CohortSpec], skip: set[str]) -> list[Problem]:
    """The shape of an order: names that exist, and the fields its task needs.  (Breaking a
    rule is not a shape problem: that order is refused when resolved, R13.)  ``skip``: the
    malformed cohorts' names that are not cohorts (their own problems are listed already),
    worked out once for a phase's orders.  Each task's own fields are checked by its
    function in :data:`_TASK_CHECKS`."""
    spec = spec_by.get(order.cohort)
    if skip and (order.cohort in skip or order.target in skip):
        return []  # that cohort's own problems are listed already
    if spec is None:
        return [Problem(f"{where}.cohort", f"{_short(order.cohort)} is not a cohort"
                        + (did_you_mean(order.cohort, spec_by) or f" (expected one of {', '.join(spec_by)})"))]
    if order.target is not None and order.target not in spec_by:
        return [Problem(f"{where}.target", f"{_short(order.target)} is not a cohort"
                        + (did_you_mean(order.target, spec_by) or f" (expected one of {', '.join(spec_by)})"))]
    out: list[Problem] = []
    task = order.task
    if task in _NEEDS_TARGET and not order.target:
        out.append(Problem(f"{where}.target", f"{task.value} needs a target cohort"))
    check = _TASK_CHECKS.get(task)
    if check is not None:
        check(order, where, spec_by, spec, out)
    return out


_Check = typing.Callable[[Order, str, dict[str, CohortSpec], CohortSpec, list[Problem]], None]


def _check_ally_cohort(order: Order, where: str, spec_by: dict[str, CohortSpec], out: list[Problem]) -> None:
    """Tasks 5.5, 5.8: the ally cohort an Inspire or an Analyze names is a cohort."""
    if order.ally is not None and order.ally not in spec_by:
        out.append(Problem(f"{where}.ally", f"{order.ally!r} is not a cohort" + did_you_mean(order.ally, spec_by)))


def _check_inspire(order: Order, where: str, spec_by: dict[str, CohortSpec], spec: CohortSpec,
                   out: list[Problem]) -> None:
    """Inspire (Tasks 5.5, R20): its benefit, and its ally cohort."""
    if order.benefit is None:
        out.append(Problem(f"{where}.benefit", "Inspire needs a benefit (expected one of "
                           + ", ".join(b.value for b in Benefit) + ")"))
    _check_ally_cohort(order, where, spec_by, out)


def _check_analyze(order: Order, where: str, spec_by: dict[str, CohortSpec], spec: CohortSpec,
                   out: list[Problem]) -> None:
    """Analyze (Tasks 5.8): its ally cohort."""
    _check_ally_cohort(order, where, spec_by, out)


def _check_rescue(order: Order, where: str, spec_by: dict[str, CohortSpec], spec: CohortSpec,
                  out: list[Problem]) -> None:
    """Rescue (Tasks 5.7): the member to rescue, of the target cohort (or its own)."""
    home = spec_by[order.target] if order.target else spec
    if not order.member:
        out.append(Problem(f"{where}.member", "Rescue needs the member to rescue"))
    elif order.member not in {m.name for m in home.members}:
        out.append(Problem(f"{where}.member", f"{order.member!r} is not a member of {home.name}"
                           + did_you_mean(order.member, [m.name for m in home.members])))


def _check_heal(order: Order, where: str, spec_by: dict[str, CohortSpec], spec: CohortSpec,
                out: list[Problem]) -> None:
    """Heal (Tasks 5.9, R36): the temper it spends, 1 to 10."""
    if order.temper is not None and not 1 <= order.temper <= 10:
        out.append(Problem(f"{where}.temper", f"{order.temper} is not 1 to 10 (Heal spends 1 to 10 temper)"))


def _check_hero_moment(order: Order, where: str, spec_by: dict[str, CohortSpec], spec: CohortSpec,
                       out: list[Problem]) -> None:
    """A Hero Moment (Tasks 5.10, Hero Moments 1.1-1.5, R21): its hero, a member of the cohort, its
    moment, and what that moment needs (:func:`_check_moment`)."""
    members = {m.name for m in spec.members}
    if not order.member:
        out.append(Problem(f"{where}.member", "a Hero Moment needs its hero (a member of the cohort)"))
    elif order.member not in members:
        out.append(Problem(f"{where}.member", f"{order.member!r} is not a member of {spec.name}"
                           + did_you_mean(order.member, members)))
    if order.moment is None:
        out.append(Problem(f"{where}.moment", "a Hero Moment needs its moment (expected one of "
                           + ", ".join(m.value for m in Moment) + ")"))
    _check_moment(order, where, spec_by, spec, members, out)


def _check_moment(order: Order, where: str, spec_by: dict[str, CohortSpec], spec: CohortSpec, members: set[str],
                  out: list[Problem]) -> None:
    """What a Hero Moment needs: Boost a Pool its pool (1.4), Save an Ally the ally, a
    member of the cohort (1.1), Split the Party the second cohort and 1 to 10 temper (1.5)."""
    if order.moment is Moment.BOOST_A_POOL and order.pool is None:
        out.append(Problem(f"{where}.pool", "Boost a Pool needs the pool (expected one of "
                           + ", ".join(p.value for p in PoolName) + ")"))
    if order.moment is Moment.SAVE_AN_ALLY:
        if not order.ally:
            out.append(Problem(f"{where}.ally", "Save an Ally needs the ally to save"))
        elif order.ally not in members:
            out.append(Problem(f"{where}.ally", f"{order.ally!r} is not a member of {spec.name}"
                               + did_you_mean(order.ally, members)))
    if order.moment is Moment.SPLIT_THE_PARTY:
        if not order.target:
            out.append(Problem(f"{where}.target", "Split the Party needs the second cohort (target)"))
        elif order.ally and order.ally not in {m.name for m in spec_by[order.target].members}:
            out.append(Problem(f"{where}.ally", f"{order.ally!r} is not a member of {order.target}"
                               + did_you_mean(order.ally, [m.name for m in spec_by[order.target].members])))
        if order.temper is not None and not 1 <= order.temper <= 10:
            out.append(Problem(f"{where}.temper", f"{order.temper} is not 1 to 10"))


_TASK_CHECKS: dict[Task, _Check] = {
    Task.INSPIRE: _check_inspire,
    Task.ANALYZE: _check_analyze,
    Task.RESCUE: _check_rescue,
    Task.HEAL: _check_heal,
    Task.HERO_MOMENT: _check_hero_moment,
}
"""The checks of each task's own fields, after its target's (:func:`_check_order`)."""


def battle_to_file(battle: Battle) -> dict[str, Any]:
    """The battle in the file format :func:`load_battle` reads: it round-trips exactly."""
    cohorts = []
    for spec in battle.cohorts:
        d = spec.model_dump(mode="json", exclude_defaults=True)
        d["members"] = [_compact_member(m) for m in spec.members]
        if spec.pools is not None:
            d["pools"] = {k: v for k, v in d["pools"].items()}
        st = battle.state[spec.name].model_dump(mode="json", exclude={"name"})
        d.update(st)
        cohorts.append(d)
    out: dict[str, Any] = {}
    if battle.house_rules != HouseRules():
        out["house_rules"] = battle.house_rules.model_dump(mode="json", exclude_defaults=True)
    if battle.seed is not None:
        out["seed"] = battle.seed
    out["phase"] = battle.phase
    out["cohorts"] = cohorts
    out["ranges"] = [[r.a, r.b, r.band.value] for r in battle.ranges]
    out["orders"] = [o.model_dump(mode="json", exclude_defaults=True) for o in battle.orders]
    if battle.catalog_extra:
        out["catalog"] = battle.catalog_extra
    out["history"] = list(battle.history)
    out["log"] = list(battle.log)
    return out


def _compact_member(m: CharacterSheet) -> dict[str, Any]:
    d = m.model_dump(mode="json", exclude_defaults=True)
    if m.blood_magic_paths:
        d["blood_magic_paths"] = {
            k: (v.level if v.offensive is None else v.model_dump(mode="json")) for k, v in m.blood_magic_paths.items()
        }
    return d

