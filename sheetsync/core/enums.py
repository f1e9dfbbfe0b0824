"""Rule systems.  Pure: the standard library and pydantic only (no spreadsheet libraries).

Each rule system lives in its own package: :mod:`sheetsync.systems.bbn.rules` holds the Baltimore by
Night battalion rules.  Exalted 2e mass combat and the hex wargame will join as siblings.
"""

from __future__ import annotations

import enum
import sys

__all__ = ["StrEnum"]

if sys.version_info >= (3, 11):
    StrEnum = enum.StrEnum
else:  # pragma: no cover - Python 3.10

    class StrEnum(str, enum.Enum):
        """``enum.StrEnum`` for Python 3.10: members are their string values."""

        def __str__(self) -> str:
            return str(self.value)
