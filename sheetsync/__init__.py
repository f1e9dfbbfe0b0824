"""sheetsync: run battalion-scale mass combat from a spreadsheet.

Importing ``sheetsync`` stays cheap (a button click pays for every import): the names
below are loaded on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "SheetSyncError": "sheetsync.core.errors",
    "InputError": "sheetsync.core.errors",
    "SheetFormatError": "sheetsync.core.errors",
    "BattleStateError": "sheetsync.core.errors",
    "BackendError": "sheetsync.core.errors",
    "WorkbookLockedError": "sheetsync.core.errors",
    "Problem": "sheetsync.core.errors",
    "Roller": "sheetsync.core.dice",
    "RandomRoller": "sheetsync.core.dice",
    "ScriptedRoller": "sheetsync.core.dice",
    "SheetBackend": "sheetsync.sheets.backend",
    "MemoryBackend": "sheetsync.sheets.backend",
    "RangeUpdate": "sheetsync.sheets.backend",
    "Formula": "sheetsync.sheets.backend",
    "ExcelBackend": "sheetsync.backends.excel",
    "Battle": "sheetsync.systems.bbn.rules",
    "load_battle": "sheetsync.systems.bbn.files.loader",
    "resolve_phase": "sheetsync.systems.bbn.rules",
    "undo": "sheetsync.systems.bbn.rules",
    "aftermath": "sheetsync.systems.bbn.rules",
    "compute_pools": "sheetsync.systems.bbn.rules",
    "layout": "sheetsync.systems.bbn.tracker.layout",
    "build_template": "sheetsync.systems.bbn.tracker.template",
    "run": "sheetsync.app.usecases",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sheetsync' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
