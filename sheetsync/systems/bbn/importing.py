"""Characters from a Grapevine exchange file (``.gex``, XML) into a battalion battle file
(Cohort Sheet 1.1-1.7, R1-R12).

Grapevine keeps each character as a ``<vampire name=… clan=… coterie=… blood=…
willpower=…>`` element holding ``<traitlist name="Abilities">``, ``"Disciplines"``,
``"Merits"`` … of ``<trait name=… val=…/>``.  How those lists become a
:class:`~sheetsync.systems.bbn.rules.models.CharacterSheet` is data (``grapevine_map.json``
beside this file, extendable per chronicle with :meth:`GrapevineMap.extend`):

- an Ability's dots are its ``val``, or 1 when ``val`` is absent (R2);
- a Discipline's level is the number of its powers listed (``Fortitude: Endurance`` and
  ``Fortitude: Mettle`` make Fortitude 2), and so is a Blood Magic path's
  (``Thaumaturgy: Path of Blood: …``) (R4, R6);
- a Merit counts once, whatever its ``val`` (its cost) says (R3);
- ``blood`` is the temper the character offers, capped when the pools are built at 30, or
  50 for a clan with Blood Magic in-clan (R8; the clans are listed in the map);
- ``willpower`` is the willpower available; what is spent is the Tracker's to type (R9).

Several files (the players' and the Storyteller's) are read as one: a character's name is
unique across them.  Cohorts are formed by coterie, sect or clan (``cohort_by``), or picked
one by one (``--cohort NAME=clan:Tremere``, ``--cohort NAME=Ana,Ben,Cy``) (R1).

Every trait that feeds no pool is kept on the sheet, never counted, and listed by
character in the result's notes (R12).  The file is untrusted input: a DTD or entity
declaration is refused, and every problem names its line.  Grapevine's older binary
format is not read; the error says how to export XML from Grapevine.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from xml.parsers import expat

from sheetsync.core.errors import InputError, Problem, SheetFormatError, did_you_mean
from sheetsync.sheets.backend import CellValue, Grid
from sheetsync.sheets.csv_rows import CELL, CsvTable, block_grid, match_headers, merged, relocate
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules.catalog import Catalog, default_catalog, normalize
from sheetsync.systems.bbn.rules.models import CharacterSheet, CohortSpec
from sheetsync.systems.bbn.rules.pools import compute_pools
from sheetsync.systems.bbn.tracker.layout import MAX_CAPACITY, capacity_json, layout
from sheetsync.systems.bbn.tracker.reader import Sheets, parse_battle_setup

__all__ = [
    "COHORT_HELP",
    "CSV_SHEETS",
    "EXPORT_HINT",
    "GrapevineMap",
    "ImportResult",
    "Unmapped",
    "battle_from_csv",
    "character_rows",
    "check_rows",
    "cohort_names",
    "csv_columns",
    "default_map",
    "import_gex",
    "load_map",
    "parse_cohorts",
]

MAX_BYTES = 64 * 1024 * 1024
"""A larger exchange file is refused rather than read into memory."""

EXPORT_HINT = ("open the game in Grapevine, choose File → Export (Data Exchange), pick the XML exchange "
               "format, and import the .gex file it saves")

_LIST_KINDS = ("abilities", "disciplines", "merits")


@dataclass(frozen=True)
class GrapevineMap:
    """Which Grapevine lists feed which part of a character sheet (``grapevine_map.json``)."""

    creature: str = "vampire"
    lists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``abilities`` / ``disciplines`` / ``merits`` → the Grapevine trait lists read as such."""
    ignored_lists: tuple[str, ...] = ()
    """Lists the battalion rules never use (attributes, health levels, equipment …): not listed as unmapped."""
    path_disciplines: tuple[str, ...] = ()
    """Disciplines whose traits read ``Discipline: Path: Power`` (R4, R6)."""
    blood_magic_clans: tuple[str, ...] = ()
    """Clans with Blood Magic in-clan, whose members may offer up to 50 temper (R8)."""
    cohort_by: tuple[str, ...] = ("coterie",)
    """The character attributes a cohort may be formed by."""
    side_from: str = "sect"
    default_side: str = "players"

    def kind_of(self, list_name: str) -> str | None:
        """``"abilities"``, ``"disciplines"``, ``"merits"``, ``"ignored"`` or ``None`` (unknown list)."""
        key = normalize(list_name)
        for kind in _LIST_KINDS:
            if any(normalize(n) == key for n in self.lists.get(kind, ())):
                return kind
        if any(normalize(n) == key for n in self.ignored_lists):
            return "ignored"
        return None

    def is_path_discipline(self, name: str) -> bool:
        return normalize(name) in {normalize(n) for n in self.path_disciplines}

    def in_clan_blood_magic(self, clan: str) -> bool:
        """R8: whether ``clan`` has Blood Magic in-clan (the map's clan list)."""
        return normalize(clan) in {normalize(c) for c in self.blood_magic_clans} if clan.strip() else False

    def extend(self, extra: Mapping[str, Any]) -> GrapevineMap:
        """A new map with ``extra``'s lists added (a chronicle's own file, same shape); its
        ``creature``, ``side_from`` and ``default_side`` replace these."""
        problems: list[Problem] = []
        known = {"_comment", "creature", "lists", "ignored_lists", "path_disciplines", "blood_magic_clans",
                 "cohort_by", "side_from", "default_side"}
        for key in extra:
            if key not in known:
                problems.append(Problem(str(key), "is not a key of the Grapevine map"
                                        + (did_you_mean(str(key), sorted(known)) or " (check its spelling)")))

        def names(key: str, value: Any) -> tuple[str, ...]:
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                problems.append(Problem(key, "must be a list of names"))
                return ()
            return tuple(v.strip() for v in value)

        def merged(old: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
            out = list(old)
            out += [n for n in new if normalize(n) not in {normalize(o) for o in out}]
            return tuple(out)

        lists = {k: tuple(v) for k, v in self.lists.items()}
        raw_lists = extra.get("lists", {})
        if not isinstance(raw_lists, Mapping):
            problems.append(Problem("lists", "must map abilities, disciplines and merits to lists of trait lists"))
            raw_lists = {}
        for kind, value in raw_lists.items():
            if kind not in _LIST_KINDS:
                problems.append(Problem(f"lists.{kind}", "is not abilities, disciplines or merits"
                                        + did_you_mean(str(kind), _LIST_KINDS)))
                continue
            lists[kind] = merged(lists.get(kind, ()), names(f"lists.{kind}", value))
        changes: dict[str, Any] = {"lists": lists}
        for key in ("ignored_lists", "path_disciplines", "blood_magic_clans", "cohort_by"):
            if key in extra:
                changes[key] = merged(getattr(self, key), names(key, extra[key]))
        for key in ("creature", "side_from", "default_side"):
            if key in extra:
                if isinstance(extra[key], str) and extra[key].strip():
                    changes[key] = extra[key].strip()
                else:
                    problems.append(Problem(key, "must be a name"))
        if problems:
            raise InputError(problems, "the Grapevine map")
        return replace(self, **changes)


@lru_cache(maxsize=1)
def default_map() -> GrapevineMap:
    """The Grapevine map sheetsync ships (``grapevine_map.json``)."""
    text = resources.files("sheetsync.systems.bbn").joinpath("grapevine_map.json").read_text("utf-8")
    return GrapevineMap().extend(json.loads(text))


def load_map(path: str | Path) -> GrapevineMap:
    """The shipped map extended with a chronicle's JSON file of the same shape."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except OSError as exc:
        raise InputError([Problem(where, f"can't be read ({exc.strerror or exc})")]) from None
    except UnicodeDecodeError:
        raise InputError([Problem(where, "is not UTF-8 text")]) from None
    except json.JSONDecodeError as exc:
        raise InputError([Problem(f"{where}:{exc.lineno}", f"is not valid JSON ({exc.msg})")]) from None
    if not isinstance(data, dict):
        raise InputError([Problem(where, "must hold a JSON object shaped like grapevine_map.json")])
    try:
        return default_map().extend(data)
    except InputError as err:
        raise InputError(err.problems, where) from None


@dataclass(frozen=True)
class Unmapped:
    """A trait of a character that feeds no pool (R12): kept on the sheet, never counted."""

    character: str
    trait: str
    list_name: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.trait} ({self.list_name}, line {self.line}: {self.reason})"


@dataclass(frozen=True)
class ImportResult:
    """A battle file's dict (:func:`~sheetsync.systems.bbn.files.loader.load_battle` reads it) and the notes
    for the Storyteller."""

    battle: dict[str, Any]
    notes: tuple[str, ...]
    unmapped: dict[str, tuple[Unmapped, ...]]
    """Character → every trait of theirs that feeds no pool (R12)."""
    willpower_available: dict[str, int]
    """Character → Grapevine's ``willpower``: the most they can spend (R9)."""
    source: str = ""
    files: str = ""
    """The files' names, as messages show them (``players.gex, npcs.gex``)."""


class _Refused(Exception):
    """A DTD, entity declaration or external entity in an untrusted file."""


def _parse(raw: bytes, where: str) -> tuple[ET.Element, dict[ET.Element, int]]:
    """The XML tree and each element's line; a DTD or entity is refused (untrusted input)."""
    builder = ET.TreeBuilder()
    lines: dict[ET.Element, int] = {}
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(what: str) -> Any:
        def handler(*_args: Any) -> Any:
            raise _Refused(what)
        return handler

    parser.StartDoctypeDeclHandler = refuse("declares a DTD, which a Grapevine exchange file never needs")
    parser.EntityDeclHandler = refuse("declares an entity, which a Grapevine exchange file never needs")
    parser.ExternalEntityRefHandler = refuse("refers to an external entity")

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(_as_declared(raw), True)
    except LookupError as exc:  # an encoding Python does not know
        raise InputError([Problem(f"{where}:1", f"is not readable XML: {exc}")]) from None
    except expat.ExpatError as exc:
        raise InputError([Problem(f"{where}:{exc.lineno}", f"is not readable XML: {expat.ErrorString(exc.code)} "
                                  f"(column {exc.offset + 1})")]) from None
    except _Refused as exc:
        raise InputError([Problem(f"{where}:{parser.CurrentLineNumber}", f"is refused: the file {exc}")]) from None
    return builder.close(), lines


def _as_declared(raw: bytes) -> bytes:
    """The bytes expat should read: a file with no BOM and no encoding declaration that is
    not UTF-8 was written on Windows (Grapevine), so it is read as Windows-1252."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        return raw
    prolog = raw[:200].split(b"?>")[0] if raw.lstrip().startswith(b"<?xml") else b""
    if b"encoding" in prolog:
        return raw
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace").encode("utf-8")
    return raw


def _looks_like_xml(raw: bytes) -> bool:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = raw[2:80].decode("utf-16-le" if raw[:1] == b"\xff" else "utf-16-be", errors="replace")
    else:
        text = raw.removeprefix(b"\xef\xbb\xbf")[:80].decode("latin-1")
    return text.lstrip().startswith("<")


def _read(path: Path, where: str) -> bytes:
    try:
        size = path.stat().st_size
        if not path.is_dir() and not path.is_file():  # a FIFO or a device: reading it would never end
            raise InputError([Problem(where, "is not a regular file (a FIFO, a device or a socket); only a Grapevine exchange file is read")])
        if size > MAX_BYTES:
            raise InputError([Problem(where, f"is {size // (1024 * 1024)} MB; a Grapevine exchange file over "
                                      f"{MAX_BYTES // (1024 * 1024)} MB is refused")])
        raw = path.read_bytes()
    except IsADirectoryError:
        raise InputError([Problem(where, "is a folder, not a Grapevine exchange file")]) from None
    except OSError as exc:
        raise InputError([Problem(where, f"can't be read ({exc.strerror or exc})")]) from None
    if not raw.strip():
        raise InputError([Problem(where, "is empty: a Grapevine exchange file (.gex) is XML")])
    if not _looks_like_xml(raw):
        raise InputError([Problem(where, "is not XML: it looks like Grapevine's older binary format (a .gv3 game "
                                  "or a binary exchange file), which sheetsync does not read; " + EXPORT_HINT)])
    return raw


def _whole(value: str | None, default: int) -> int | None:
    """A whole number ≥ 0 from an attribute, ``default`` when absent, ``None`` when bad."""
    if value is None or not value.strip():
        return default
    text = value.strip()
    if len(text) > 9:
        return None
    return int(text) if text.isascii() and text.isdigit() else None


def _bad_number(value: str | None, what: str) -> str:
    text = (value or "").strip()
    if text.isascii() and text.isdigit():
        return f"{text[:12]}… ({len(text)} digits) is too large for {what}"
    shown = repr(text) if len(text) <= 40 else repr(text[:20] + "…")
    return f"{shown} is not {what}"


@dataclass
class _Character:
    name: str
    line: int
    where: str
    """The file's name, for messages about characters of several files."""
    attrs: dict[str, str]
    abilities: dict[str, int] = field(default_factory=dict)
    merits: list[str] = field(default_factory=list)
    powers: dict[str, tuple[str, set[str]]] = field(default_factory=dict)
    paths: dict[str, tuple[str, set[str]]] = field(default_factory=dict)
    lines: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    """(kind, normalized trait) → (list name, line), for the notes."""
    unlisted: list[Unmapped] = field(default_factory=list)


def _add_power(table: dict[str, tuple[str, set[str]]], name: str, power: str) -> None:
    """R4: one more power of ``name``; a power listed twice is one power."""
    key = normalize(name)
    table.setdefault(key, (name, set()))[1].add(normalize(power) or key)


def _character(vamp: ET.Element, lines: dict[ET.Element, int], gmap: GrapevineMap, where: str,
               problems: list[Problem]) -> _Character | None:
    line = lines.get(vamp, 0)
    name = (vamp.get("name") or "").strip()
    if not name:
        problems.append(Problem(f"{where}:{line}", f"a {gmap.creature} has no name (Grapevine's name=\"…\")"))
        return None
    ch = _Character(name=name, line=line, where=where, attrs={k: v.strip() for k, v in vamp.attrib.items()})
    for key in ("blood", "willpower"):
        if _whole(vamp.get(key), 0) is None:
            problems.append(Problem(f"{where}:{line}", f"{name}: {key} {_bad_number(vamp.get(key), 'a whole number')}"))
    for tl in vamp.findall("traitlist"):
        list_name = (tl.get("name") or "").strip()
        kind = gmap.kind_of(list_name)
        if kind == "ignored":
            continue
        for trait in tl.findall("trait"):
            tline = lines.get(trait, 0)
            tname = " ".join((trait.get("name") or "").split())
            if not tname:
                problems.append(Problem(f"{where}:{tline}", f"{name}: a trait in {list_name or 'a list'} has no name"))
                continue
            if kind is None:
                ch.unlisted.append(Unmapped(name, tname, list_name or "(unnamed list)", tline,
                                            "this list is not in the Grapevine map"))
            elif kind == "abilities":
                dots = _whole(trait.get("val"), 1)
                if dots is None:
                    problems.append(Problem(f"{where}:{tline}", f"{name}: {tname} val "
                                            f"{_bad_number(trait.get('val'), 'a whole number of dots')}"))
                    continue
                spelled = next((a for a in ch.abilities if normalize(a) == normalize(tname)), tname)
                ch.abilities[spelled] = ch.abilities.get(spelled, 0) + dots
                ch.lines.setdefault(("ability", normalize(tname)), (list_name, tline))
            elif kind == "merits":
                if normalize(tname) not in {normalize(m) for m in ch.merits}:
                    ch.merits.append(tname)
                    ch.lines[("merit", normalize(tname))] = (list_name, tline)
            else:
                parts = [p.strip() for p in tname.split(":")]
                if len(parts) >= 3 and gmap.is_path_discipline(parts[0]) and parts[1]:
                    _add_power(ch.paths, parts[1], ":".join(parts[2:]))
                    ch.lines.setdefault(("path", normalize(parts[1])), (list_name, tline))
                else:
                    disc = parts[0] or tname
                    _add_power(ch.powers, disc, ":".join(parts[1:]))
                    ch.lines.setdefault(("discipline", normalize(disc)), (list_name, tline))
    return ch


def _sheet(ch: _Character, gmap: GrapevineMap) -> dict[str, Any]:
    """The battle file's member: Cohort Sheet 1.1-1.7 inputs (R2-R4, R6, R8, R9)."""
    return {
        "name": ch.name,
        "abilities": dict(ch.abilities),
        "merits": list(ch.merits),
        "disciplines": {written: len(powers) for written, powers in ch.powers.values()},
        "blood_magic_paths": {written: len(powers) for written, powers in ch.paths.values()},
        "blood_magic_in_clan": gmap.in_clan_blood_magic(ch.attrs.get("clan", "")),
        "ranged_attack": False,
        "temper": _whole(ch.attrs.get("blood"), 0) or 0,
        "willpower_spent": 0,
    }


def _not_counted(ch: _Character, member: dict[str, Any], catalog: Catalog) -> list[Unmapped]:
    """R12: the traits on the sheet that feed no pool, by the engine's own reckoning."""
    sheet = CharacterSheet.model_validate({**member, "blood_magic_paths": {
        k: {"level": v} for k, v in member["blood_magic_paths"].items()}})
    pools = compute_pools(CohortSpec(name=ch.name, members=(sheet,)), catalog=catalog)
    out = []
    for nc in pools.not_counted:
        list_name, line = ch.lines.get((nc.kind, normalize(nc.trait)), ("", ch.line))
        reason = "feeds no pool" if nc.kind != "path" else "not an offensive path and feeds no pool"
        out.append(Unmapped(ch.name, nc.trait, list_name or nc.kind, line, reason))
    return out


_PLURALS = {"coterie": "coteries", "sect": "sects", "clan": "clans"}

_LISTED = 8
"""A message names at most this many characters, then counts the rest."""


def _plural(key: str) -> str:
    return _PLURALS.get(key.casefold(), f"{key} values")


def _who(members: Sequence[_Character], several: bool) -> str:
    """The characters of a group, each with its line (and file when several are read), the
    first few only: a count, not a wall of names."""
    shown = [f"{m.name} ({m.where + ', ' if several else ''}line {m.line})" for m in members[:_LISTED]]
    more = len(members) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


@dataclass(frozen=True)
class _Selector:
    """``--cohort NAME=coterie:VALUE`` (or ``sect:``/``clan:``), or ``--cohort NAME=A,B,C``."""

    text: str
    name: str
    attribute: str | None
    value: str
    names: tuple[str, ...] = ()


COHORT_HELP = ("NAME=coterie:VALUE, NAME=sect:VALUE, NAME=clan:VALUE, or NAME=Character,Character,...")


def parse_cohorts(specs: Sequence[str], gmap: GrapevineMap | None = None) -> list[_Selector]:
    """R1: each ``--cohort`` as a selector: a cohort named NAME holding the characters whose
    coterie, sect or clan (the map's ``cohort_by`` attributes) is VALUE, or the characters
    named.  ``NAME=`` may be left out of an attribute pick (the cohort is named VALUE)."""
    gmap = gmap or default_map()
    by_key = {normalize(c): c for c in gmap.cohort_by}
    out: list[_Selector] = []
    problems: list[Problem] = []
    for spec in specs:
        text = spec.strip()
        name, eq, rest = text.partition("=")
        if not eq:
            name, rest = "", text
        name = name.strip()
        head, colon, value = rest.partition(":")
        attribute = by_key.get(normalize(head)) if colon else None
        if attribute is not None:
            value = value.strip()
            if not value:
                problems.append(Problem("--cohort", f"{spec!r} names no {attribute}: write --cohort "
                                        f"\"NAME={attribute}:VALUE\""))
                continue
            out.append(_Selector(spec, name or value, attribute, value))
            continue
        names = tuple(n.strip() for n in rest.split(",") if n.strip())
        if not name or not names:
            problems.append(Problem("--cohort", f"{spec!r} is not a cohort pick: write {COHORT_HELP} (e.g. --cohort "
                                    "\"Night Watch=coterie:Night Watch\" or --cohort \"Hunters=Ana,Ben,Cy\")"))
            continue
        out.append(_Selector(spec, name, None, "", names))
    seen: dict[str, str] = {}
    for sel in out:
        key = sel.name.casefold()
        if key in seen:
            problems.append(Problem("--cohort", f"{sel.text!r} names the cohort {sel.name!r} again (also "
                                    f"{seen[key]!r}): give each cohort its own name"))
        seen.setdefault(key, sel.text)
    if problems:
        raise InputError(problems)
    return out


def _picked(selectors: Sequence[_Selector], characters: Sequence[_Character], gmap: GrapevineMap,
            problems: list[Problem], files: str) -> dict[str, list[_Character]]:
    """R1: the characters of each ``--cohort`` pick; a pick that finds no one, a name not in
    the files, or a character picked twice is a problem."""
    groups: dict[str, list[_Character]] = {}
    taken: dict[str, str] = {}
    by_name = {c.name.casefold(): c for c in characters}
    for sel in selectors:
        if sel.attribute is not None:
            members = [c for c in characters
                       if c.attrs.get(sel.attribute, "").strip().casefold() == sel.value.casefold()]
            if not members:
                values = sorted({c.attrs.get(sel.attribute, "").strip() for c in characters} - {""})
                there = (f"the {_plural(sel.attribute)} in {files}: {', '.join(values[:_LISTED])}"
                         + (f" and {len(values) - _LISTED} more" if len(values) > _LISTED else "")
                         if values else f"no character in {files} has a {sel.attribute}")
                problems.append(Problem("--cohort", f"{sel.text!r}: no {gmap.creature} has {sel.attribute} "
                                        f"{sel.value!r}{did_you_mean(sel.value, values)} ({there})"))
                continue
        else:
            members = []
            for wanted in sel.names:
                ch = by_name.get(wanted.casefold())
                if ch is None:
                    problems.append(Problem("--cohort", f"{sel.text!r}: {wanted!r} is not a {gmap.creature} in "
                                            f"{files}{did_you_mean(wanted, [c.name for c in characters])}"))
                elif ch not in members:
                    members.append(ch)
        for ch in members:
            key = ch.name.casefold()
            if key in taken:
                problems.append(Problem("--cohort", f"{ch.name} is picked by {taken[key]!r} and by {sel.text!r}: "
                                        "a character fights in one cohort"))
            taken.setdefault(key, sel.text)
        groups[sel.name] = members
    return groups


def _clashes(characters: Sequence[_Character], problems: list[Problem]) -> None:
    """Two characters of one name (in one file or two) would be one row twice: refused."""
    first: dict[str, _Character] = {}
    for ch in characters:
        other = first.setdefault(ch.name.casefold(), ch)
        if other is not ch:
            problems.append(Problem(f"{ch.where}:{ch.line}", f"{ch.name} is also at {other.where}:{other.line}: "
                                    "two characters of one name can't both fight; rename one in Grapevine, or "
                                    "leave one out with --only or --cohort"))


def _files_read(paths: Sequence[Path], gmap: GrapevineMap,
                problems: list[Problem]) -> tuple[list[_Character], dict[str, int]]:
    """Every character of the map's creature in the files, in file order, and how many
    characters of each other kind were passed over; a file with none is a problem."""
    characters: list[_Character] = []
    others: dict[str, int] = {}
    for p in paths:
        where = p.name
        root, lines = _parse(_read(p, str(p)), where)
        found = 0
        for el in root.iter():
            if el.tag == gmap.creature:
                ch = _character(el, lines, gmap, where, problems)
                if ch is not None:
                    characters.append(ch)
                    found += 1
            elif el is not root and el.get("name") is not None and el.find("traitlist") is not None:
                others[el.tag] = others.get(el.tag, 0) + 1
        if not found and not problems:
            problems.append(Problem(where, f"holds no {gmap.creature} to import"))
    return characters, others


def _only(characters: list[_Character], only: Sequence[str], gmap: GrapevineMap, files: str,
          problems: list[Problem]) -> list[_Character]:
    """The characters named in ``--only``; a name not in the files is a problem."""
    by_name = {c.name.casefold(): c for c in characters}
    for wanted in only:
        if wanted.strip().casefold() not in by_name:
            problems.append(Problem("--only", f"{wanted!r} is not a {gmap.creature} in {files}"
                                    + did_you_mean(wanted, [c.name for c in characters])))
    keep = {w.strip().casefold() for w in only}
    return [c for c in characters if c.name.casefold() in keep]


def _grouped(characters: list[_Character], cohort_key: str, gmap: GrapevineMap, files: str, several: bool,
             source: str) -> dict[str, list[_Character]]:
    """One cohort per value of ``cohort_key`` (those without one together); files where no
    character has a value are refused, with how to pick the cohorts instead."""
    if not any(ch.attrs.get(cohort_key, "") for ch in characters):
        n = len(characters)
        raise InputError([Problem(files, f"{'have' if several else 'has'} {n} {gmap.creature}"
                                  f"{'s' if n != 1 else ''} and no {_plural(cohort_key)}: pick the cohorts with "
                                  f"--cohort NAME=..., by clan or sect (--cohort \"Hunters=clan:Gangrel\") or by "
                                  f"name (--cohort \"Hunters=Ana,Ben,Cy\"), or form them with --cohort-by "
                                  f"{next((c for c in gmap.cohort_by if c != cohort_key), 'clan')}")], source)
    groups: dict[str, list[_Character]] = {}
    for ch in characters:
        label = ch.attrs.get(cohort_key, "") or f"No {cohort_key}"
        groups.setdefault(label, []).append(ch)
    return groups


def _check_sizes(groups: Mapping[str, list[_Character]], picked: bool, cohort_key: str, files: str,
                 several: bool, problems: list[Problem]) -> None:
    """R1: a cohort has 3 to 5 members; any other size is a problem naming who is in it."""
    for label, members in groups.items():
        if members and not 3 <= len(members) <= 5:
            what = f"cohort {label!r}" if picked else f"{cohort_key} {label!r}"
            problems.append(Problem(files, f"{what} has {len(members)} characters, and a cohort has 3 to 5 (R1): "
                                    f"{_who(members, several)}; pick 3 to 5 with "
                                    + ("--cohort NAME=Character,Character,..." if picked else
                                       "--only or --cohort, or form cohorts by another attribute with --cohort-by")))


def _member_notes(ch: _Character, listed: tuple[Unmapped, ...], willpower: int) -> list[str]:
    """What the import tells about one member: traits not counted (R12), the willpower
    available (R9), and a missing blood (R8) or willpower (R9)."""
    notes: list[str] = []
    if listed:
        notes.append(f"{ch.name}: not counted (R12): " + "; ".join(str(u) for u in listed))
    notes.append(f"{ch.name}: {willpower} willpower available; type what they spend in "
                 "willpower_spent (R9)")
    if "blood" not in ch.attrs:
        notes.append(f"{ch.name}: no blood in the file, so no temper offered (R8)")
    if "willpower" not in ch.attrs:
        notes.append(f"{ch.name}: no willpower in the file, so none available (R9)")
    return notes


def _battle_cohorts(groups: Mapping[str, list[_Character]], gmap: GrapevineMap, catalog: Catalog,
                    ) -> tuple[list[dict[str, Any]], dict[str, tuple[Unmapped, ...]], dict[str, int], list[str]]:
    """Each cohort as the battle file holds it (its side: its members' one side, else the
    map's default), with each member's traits not counted, willpower available and notes."""
    out_cohorts: list[dict[str, Any]] = []
    unmapped: dict[str, tuple[Unmapped, ...]] = {}
    willpower: dict[str, int] = {}
    notes: list[str] = []
    for label, members in groups.items():
        sides = {m.attrs.get(gmap.side_from, "") for m in members}
        side = sides.pop() if len(sides) == 1 and "" not in sides else gmap.default_side
        sheets = [_sheet(m, gmap) for m in members]
        out_cohorts.append({"name": label, "side": side, "members": sheets})
        for ch, member in zip(members, sheets, strict=True):
            listed = tuple(ch.unlisted + _not_counted(ch, member, catalog))
            unmapped[ch.name] = listed
            willpower[ch.name] = _whole(ch.attrs.get("willpower"), 0) or 0
            notes += _member_notes(ch, listed, willpower[ch.name])
    return out_cohorts, unmapped, willpower, notes


def _cohort_key(cohort_by: str, gmap: GrapevineMap) -> str:
    """The map's name for the attribute ``--cohort-by`` names; another is refused."""
    if normalize(cohort_by) not in {normalize(c) for c in gmap.cohort_by}:
        raise InputError([Problem("--cohort-by", f"{cohort_by!r} is not a way to form cohorts (expected one of "
                                  f"{', '.join(gmap.cohort_by)}){did_you_mean(cohort_by, gmap.cohort_by)}")])
    return next(c for c in gmap.cohort_by if normalize(c) == normalize(cohort_by))


def import_gex(path: str | Path | Sequence[str | Path], *, cohort_by: str = "coterie",
               only: Sequence[str] | None = None, cohorts: Sequence[str] | None = None,
               mapping: GrapevineMap | None = None, catalog: Catalog | None = None) -> ImportResult:
    """Cohort Sheet 1.1-1.7, R1-R12: the vampires of one Grapevine exchange file, or of
    several read as one (the players' file and the Storyteller's, say), as a battle file:
    one cohort per ``cohort_by`` value (the coterie by default), keeping only the characters
    named in ``only`` when given; or, with ``cohorts`` (``--cohort`` picks, see
    :func:`parse_cohorts`), only the cohorts picked.

    Raises :class:`InputError` naming the line of every problem (an unreadable file, a
    character without a name, a val that is not a number, two characters of one name), a
    name in ``only`` or ``cohorts`` that is not in the files, a cohort of other than 3 to 5
    members (R1), and files with no ``cohort_by`` value at all (counted, with how to pick).
    """
    gmap = mapping or default_map()
    catalog = catalog or default_catalog()
    paths = [Path(p) for p in ([path] if isinstance(path, (str, Path)) else path)]
    if not paths:
        raise InputError([Problem("FILE", "name the Grapevine exchange file (.gex) to import")])
    several = len(paths) > 1
    source = ", ".join(str(p) for p in paths)
    files = ", ".join(p.name for p in paths)
    cohort_key = _cohort_key(cohort_by, gmap)
    selectors = parse_cohorts(cohorts, gmap) if cohorts else []
    if selectors and only:
        raise InputError([Problem("--only", "and --cohort both pick characters: --cohort picks each cohort's "
                                  "members, so leave --only out")])
    problems: list[Problem] = []
    characters, others = _files_read(paths, gmap, problems)
    _clashes(characters, problems)
    if only:
        characters = _only(characters, only, gmap, files, problems)
    if problems:
        raise InputError(problems, source)

    if selectors:
        groups = _picked(selectors, characters, gmap, problems, files)
    else:
        groups = _grouped(characters, cohort_key, gmap, files, several, source)
    _check_sizes(groups, bool(selectors), cohort_key, files, several, problems)
    if problems:
        raise InputError(problems, source)

    out_cohorts, unmapped, willpower, notes = _battle_cohorts(groups, gmap, catalog)
    if selectors:
        left = len(characters) - sum(len(m) for m in groups.values())
        if left:
            notes.append(f"{left} other {gmap.creature}{'s' if left != 1 else ''} in {files} not picked by --cohort, "
                         "so not imported")
    notes.append("ranged_attack is not in a Grapevine file: set it for each member with a ranged attack (R7)")
    for tag, count in others.items():
        notes.append(f"{count} {tag} character(s) skipped: only {gmap.creature} characters are imported")
    battle: dict[str, Any] = {"cohorts": out_cohorts, "ranges": [], "orders": []}
    load_battle(battle, source)  # the file it makes must load; any problem here is a map problem
    return ImportResult(battle=battle, notes=tuple(notes), unmapped=unmapped, willpower_available=willpower,
                        source=source, files=files)


# -- CSV: a battalion Characters CSV (Cohort Sheet 1.1-1.7) ------------------------------------
#
# A CSV of characters, one row each, with the typed columns of the Characters sheet, read by
# :mod:`sheetsync.sheets.csv_rows`; each cell by its column's codec, the one the tracker's
# reader uses, and every problem at its CSV cell (``chars.csv:C7``).

CSV_SHEETS: tuple[str | None, ...] = (None,)
"""A battalion CSV holds one sheet's rows: the Characters sheet's."""


def csv_columns(sheet: str | None = None) -> tuple[Any, list[Any]]:
    """The Characters block and the typed columns a CSV row holds, in the sheet's order."""
    block = layout().block("Characters_Table")
    return block, [c for c in block.columns if c.is_input]


def character_rows(table: CsvTable, lay: Any, problems: list[Problem]) -> tuple[Grid, dict[int, Any]]:
    """Cohort Sheet 1.1-1.7: the CSV's characters as rows of the tracker's Characters
    block (``lay``), and which CSV column is which block column; header problems are
    added to ``problems``, each at its CSV cell."""
    block = lay.block("Characters_Table")
    found = match_headers(table, [c for c in block.columns if c.is_input], ("cohort", "name"), problems)
    return block_grid(table, block, found), found


def cohort_names(grid: Grid, block: Any) -> list[str]:
    """The Cohort values of the Characters rows, each once (case ignored), in the order first named."""
    out: dict[str, str] = {}
    j = block.index("cohort")
    for row in grid:
        name = row[j] if j < len(row) else None
        if isinstance(name, str) and name.strip():
            out.setdefault(name.strip().casefold(), name.strip())
    return list(out.values())


def battle_from_csv(csvs: Sequence[CsvTable]) -> Any:
    """Cohort Sheet 1.1-1.7, R1-R12: the CSV's characters as a battalion battle, one cohort
    per Cohort value (in the order first named), checked as Build Cohorts checks the
    Characters sheet; every problem is named by its CSV cell, all at once.  ``csvs`` holds
    the one CSV."""
    (table,) = csvs
    probe = layout()
    problems: list[Problem] = []
    grid, _found = character_rows(table, probe, [])
    cohorts = cohort_names(grid, probe.block("Characters_Table"))
    limits = (("characters", len(table.rows)), ("cohorts", len(cohorts)))
    too_many = [Problem(table.where, f"holds {n} {key}; a battle holds at most {MAX_CAPACITY[key]}")
                for key, n in limits if n > MAX_CAPACITY[key]]
    if too_many:
        raise InputError(too_many, table.where)
    cap = {"characters": max(probe.capacity["characters"], len(table.rows)),
           "cohorts": max(probe.capacity["cohorts"], len(cohorts))}
    lay = layout(capacity=cap)
    grid, found = character_rows(table, lay, problems)
    setup_block = lay.block("Cohorts_Setup")
    setup: Grid = []
    for name in cohorts:
        row: list[CellValue] = [None] * len(setup_block.columns)
        row[setup_block.index("name")] = name
        setup.append(row)
    return check_rows(lay, grid, setup, table, found, problems, new_from=0,
                     mark=[[None], [capacity_json(lay.capacity)]])


def check_rows(lay: Any, grid: Grid, setup: Grid, table: CsvTable, found: dict[int, Any], problems: list[Problem],
               *, new_from: int, mark: Grid, base: Any = None) -> Any:
    """Build Cohorts' own check (:func:`~sheetsync.systems.bbn.tracker.reader.parse_battle_setup`) of
    the CSV's Characters rows ``grid`` with the Cohorts rows ``setup`` (those from
    ``new_from`` on were made for the CSV's cohorts) and the other grids of ``base`` (a
    tracker's read, or none).  Every problem is moved to the CSV cell it came from and
    raised with ``problems`` (the header's) as one :class:`InputError`."""
    if base is not None:
        sheets = Sheets(state=base.state, characters=grid, setup=setup, orders=base.orders, ranges=base.ranges,
                        house_rules=base.house_rules, seed=base.seed, log=base.log,
                        aftermath_head=base.aftermath_head, mark=mark, history=base.history)
    else:
        sheets = Sheets(state=[], characters=grid, setup=setup, orders=[], ranges=[], house_rules=[], seed=[],
                        log=[], mark=mark)
    try:
        battle = parse_battle_setup(lay, sheets)
    except SheetFormatError as err:
        moved = relocate(_cohort_problems(err.problems, lay, table, found, setup, new_from), table,
                         lay.block("Characters_Table"), found)
        raise InputError(merged(problems, moved), table.where) from None
    if problems:
        raise InputError(problems, table.where)
    return battle


def _cohort_problems(problems: Sequence[Problem], lay: Any, table: CsvTable, found: dict[int, Any],
                     setup: Grid, new_from: int) -> list[Problem]:
    """A problem the reader put on a Cohorts row made for the CSV (row ``new_from`` on; not
    on the sheet, e.g. R1's 3 to 5 members) is said of the CSV's Cohort cell on the first
    row that names that cohort."""
    block = lay.block("Cohorts_Setup")
    name_at = block.index("name")
    cohort_col = next(j for j, c in found.items() if c.key == "cohort")
    out = []
    for p in problems:
        m = CELL.match(p.where)
        k = int(m["row"]) - block.first_row if m is not None and m["sheet"] == block.sheet else -1
        if new_from <= k < len(setup):
            name = str(setup[k][name_at]).casefold()
            number = next((n for n, cells in table.rows
                           if cohort_col < len(cells) and cells[cohort_col].casefold() == name), 2)
            out.append(Problem(table.at(cohort_col, number), p.message))
        else:
            out.append(p)
    return out
