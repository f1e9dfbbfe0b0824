"""Characters from the files a chronicle already keeps, as sheetsync battle files.

:mod:`sheetsync.importers.grapevine` reads Grapevine exchange files (``.gex``).
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

__all__ = ["GrapevineMap", "ImportResult", "Unmapped", "default_map", "import_gex", "load_map"]
