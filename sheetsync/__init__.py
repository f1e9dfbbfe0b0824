"""sheetsync: run battalion-scale mass combat from a spreadsheet.

Importing ``sheetsync`` stays cheap (a button click pays for every import): the names
below are loaded on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "SheetSyncError": "sheetsync.errors",
    "InputError": "sheetsync.errors",
    "SheetFormatError": "sheetsync.errors",
    "BattleStateError": "sheetsync.errors",
    "BackendError": "sheetsync.errors",
    "WorkbookLockedError": "sheetsync.errors",
    "Problem": "sheetsync.errors",
    "Roller": "sheetsync.dice",
    "RandomRoller": "sheetsync.dice",
    "ScriptedRoller": "sheetsync.dice",
    "SheetBackend": "sheetsync.sheets.backend",
    "MemoryBackend": "sheetsync.sheets.backend",
    "RangeUpdate": "sheetsync.sheets.backend",
    "Formula": "sheetsync.sheets.backend",
    "ExcelBackend": "sheetsync.backends.excel",
    "Battle": "sheetsync.rules.bbn",
    "load_battle": "sheetsync.rules.bbn",
    "resolve_phase": "sheetsync.rules.bbn",
    "undo": "sheetsync.rules.bbn",
    "aftermath": "sheetsync.rules.bbn",
    "compute_pools": "sheetsync.rules.bbn",
    "layout": "sheetsync.app.bbn.layout",
    "build_template": "sheetsync.app.bbn.template",
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
