"""The registry of rule systems, and the mark a tracker or a battle file carries.

Systems are named ``"module:attribute"`` and imported on first use, so a button click
imports only the system of its tracker.  A battle file says ``system: hexwar``; a file
without the key is the battalion system.  A tracker carries ``hexwar@1`` (system id and
schema version) in a hidden named cell; a tracker written before the mark existed reads as
the battalion system, version 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sheetsync.core.system import RuleSystem

__all__ = ["ALIASES", "DEFAULT", "MARK_CELL", "MARK_NAME", "SYSTEMS", "Mark", "find_system", "format_mark",
           "parse_mark", "room", "system_ids", "system_of_data", "tracker_system_ids", "TRACKERS"]

SYSTEMS: dict[str, str] = {
    "bbn": "sheetsync.systems.bbn.system:SYSTEM",
    "hexwar": "sheetsync.systems.hexwar.system:SYSTEM",
    "exalted": "sheetsync.systems.exalted.system:SYSTEM",
}
"""Every registered system, id -> ``"module:attribute"`` of its :class:`RuleSystem`."""

TRACKERS: frozenset[str] = frozenset({"bbn", "hexwar", "exalted"})
"""The systems that have a tracker workbook (the others run on battle files only), kept
here so no system is imported to know it."""

ALIASES: dict[str, str] = {
    "battalion": "bbn", "bbn-battalion-combat": "bbn",
    "hex": "hexwar", "dark-mysteries": "hexwar", "hex-wargame": "hexwar",
    "exalted2e": "exalted", "ex2e": "exalted", "mass-combat": "exalted",
}
"""Other names a user may type (``--system hex``), kept here so no system is imported to
resolve one."""

DEFAULT = "bbn"
"""The system of a battle file without ``system:`` and of a tracker without a mark."""

MARK_NAME = "Sheetsync_System"
MARK_CELL = ("State", "B1")
"""Where a tracker says which system it is: the hidden State sheet, which every tracker
has had from the start, so reading the mark never names a sheet an old tracker lacks."""

_loaded: dict[str, RuleSystem] = {}


def system_ids() -> tuple[str, ...]:
    return tuple(SYSTEMS)


def tracker_system_ids() -> tuple[str, ...]:
    """The registered systems with a tracker workbook, in registry order."""
    return tuple(k for k in SYSTEMS if k in TRACKERS)


def _canonical(name: str) -> str | None:
    key = name.strip().casefold()
    if key in SYSTEMS:
        return key
    return ALIASES.get(key)


def _key(name: str) -> str:
    """The id of the system called ``name`` (an id or an alias); an unknown name raises
    :class:`~sheetsync.core.errors.InputError` listing the systems there are."""
    key = _canonical(name)
    if key is None:
        from sheetsync.core.errors import InputError, Problem, did_you_mean

        known = ", ".join(SYSTEMS)
        raise InputError([Problem("system", f"there is no rule system {name!r}{did_you_mean(name, [*SYSTEMS, *ALIASES])}; "
                                            f"the systems are: {known}")])
    return key


def find_system(name: str | None = None) -> RuleSystem:
    """The system called ``name`` (an id or an alias; ``None``: the default), imported on
    first use.  An unknown name raises :class:`~sheetsync.core.errors.InputError` listing the
    systems there are."""
    key = _key(name) if name is not None else DEFAULT
    if key not in _loaded:
        module, _, attr = SYSTEMS[key].partition(":")
        _loaded[key] = getattr(import_module(module), attr)
    return _loaded[key]


def room(system: RuleSystem | str, name: str) -> ModuleType:
    """One room of a rule system (``"views"``, ``"tracker.layout"``, ``"rules.turn"``), by
    the system's id, an alias or the system object, imported on first use.

    The shells reach a system's rooms only through here: every system has the same rooms
    under the same names (docs/ARCHITECTURE.md), so ``room(system, "views").print_step``
    works whichever system a tracker or a battle file is.  The room's package is the one
    :data:`SYSTEMS` names for the system, so the registry alone says where a system lives.
    An unknown system raises :class:`~sheetsync.core.errors.InputError` as
    :func:`find_system` does."""
    key = _key(system) if isinstance(system, str) else system.id
    package = SYSTEMS[key].partition(":")[0].rpartition(".")[0]
    return import_module(f"{package}.{name}")


def system_of_data(data: Any) -> RuleSystem:
    """The system a battle file's data names with ``system:`` (the battalion system when it
    names none)."""
    name = data.get("system") if isinstance(data, Mapping) else None
    if name is not None and not isinstance(name, str):
        from sheetsync.core.errors import InputError, Problem

        raise InputError([Problem("system", f"must be the name of a rule system, not {name!r}")])
    return find_system(name)


@dataclass(frozen=True)
class Mark:
    """A tracker's mark: its system and the schema version of its layout."""

    system: str
    version: int

    def __str__(self) -> str:
        return f"{self.system}@{self.version}"


def format_mark(system: RuleSystem) -> str:
    return f"{system.id}@{system.version}"


def parse_mark(value: object) -> Mark:
    """``"hexwar@1"`` -> ``Mark("hexwar", 1)``; an empty cell -> the battalion system at
    version 0 (a tracker from before the mark).  Anything else raises
    :class:`~sheetsync.core.errors.SheetFormatError` naming the cell."""
    from sheetsync.core.errors import Problem, SheetFormatError

    where = f"{MARK_CELL[0]}!{MARK_CELL[1]}"
    if value is None or (isinstance(value, str) and not value.strip()):
        return Mark(DEFAULT, 0)
    if isinstance(value, str):
        name, sep, version = value.strip().partition("@")
        key = _canonical(name)
        # issue 26: ASCII digits only, and few of them ("bbn@²" is a digit to str.isdigit
        # but no int; 4,301 digits are past what int() converts)
        if key is not None and (not sep or (version.isascii() and version.isdigit() and len(version) <= 9)):
            return Mark(key, int(version) if sep else 0)
    raise SheetFormatError([Problem(where, f"holds {value!r}, not a rule system mark such as 'bbn@1' "
                                           f"(systems: {', '.join(SYSTEMS)}); it is written by sheetsync: "
                                           "restore it or make a new tracker")])
