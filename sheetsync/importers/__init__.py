"""Characters from the files a chronicle already keeps, as sheetsync battle files.

Each rule system's ``importing`` room says what a Grapevine or CSV row becomes in that
system: the battalion system's (:mod:`sheetsync.systems.bbn.importing`) reads Grapevine
exchange files (``.gex``); :mod:`sheetsync.importers.csv_import` reads CSV files of
characters or units, and :mod:`sheetsync.importers.into` puts either into an existing
tracker or a new battle file (``sheetsync import``).  The battalion Grapevine names below are
found through the registry when first asked for.
"""

from __future__ import annotations

from typing import Any

from sheetsync.importers.into import ImportReport, import_into

__all__ = ["GrapevineMap", "ImportReport", "ImportResult", "Unmapped", "default_map", "import_gex", "import_into",
           "load_map"]

_GREX = ("GrapevineMap", "ImportResult", "Unmapped", "default_map", "import_gex", "load_map")


def __getattr__(name: str) -> Any:
    """The battalion system's Grapevine import, through the registry (issue 24)."""
    if name in _GREX:
        from sheetsync.core.registry import room

        return getattr(room("bbn", "importing"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
