"""The label enum every rule system's values use: a :class:`StrEnum` whose value is the
exact word a sheet's dropdown shows ("Knocked Out", "Melee Attack").  Standard library
only."""

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
