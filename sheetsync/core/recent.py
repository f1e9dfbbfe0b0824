"""The few-entries memory that sheetsync's step caches share (issue 12).

A click remembers what it read or wrote (a State blob, a Ranges sheet, a House Rules
sheet) so that the next click, which nearly always reads the same again, skips the work.
Each such memory is a plain dict kept in the order entries were last put in, and holds
only the last few.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["keep"]

K = TypeVar("K")
V = TypeVar("V")


def keep(seen: dict[K, V], key: K, value: V, limit: int) -> None:
    """Put ``key`` in ``seen`` as its newest entry, and drop the oldest beyond ``limit``."""
    seen.pop(key, None)
    seen[key] = value
    while len(seen) > limit:
        del seen[next(iter(seen))]
