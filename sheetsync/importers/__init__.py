"""Characters from the files a chronicle already keeps, as sheetsync battle files.

:mod:`sheetsync.importers.grapevine` reads Grapevine exchange files (``.gex``),
:mod:`sheetsync.importers.csv_import` CSV files of characters or hex units, and
:mod:`sheetsync.importers.into` puts either into an existing tracker or a new battle file
(``sheetsync import``).
"""

from __future__ import annotations

from sheetsync.importers.grapevine import (
    GrapevineMap,
    ImportResult,
    Unmapped,
    default_map,
    import_gex,
    load_map,
)
from sheetsync.importers.into import ImportReport, import_into

__all__ = ["GrapevineMap", "ImportReport", "ImportResult", "Unmapped", "default_map", "import_gex", "import_into",
           "load_map"]
