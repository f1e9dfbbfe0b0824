"""Compact JSON for what a step writes and answers: the State blob, the endpoint's answer.

Issue 12: a Resolve encodes some 150 KB of JSON (the State blob, then the answer that
carries it).  :func:`dumps` hands it to orjson, in a fraction of the standard encoder's
time (and half pydantic-core's), and falls back to the standard encoder for what orjson
refuses: a whole number past 64 bits, a key that is not text, an object that is not JSON
data (which the standard encoder refuses in turn, with a :class:`TypeError`).  Dataclasses
and date-times are passed through to that refusal, not encoded: neither belongs in a State
or an answer.

For texts, whole numbers, booleans, ``None``, lists and text-keyed mappings the bytes are
those of ``json.dumps(data, separators=(",", ":"), ensure_ascii=False)`` in UTF-8.  A
fraction may be written in another form that reads back the same (``1e-5`` for
``1e-05``); no State or answer holds one that is not finite (the models hold no fractions
and the backends refuse such a cell before it is encoded).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]

try:
    import orjson
except ImportError:  # Pyodide, or an install without it: the standard encoder (issue 25)
    orjson = None

_STRICT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME if orjson is not None else 0


def dumps(data: Any, *, sort_keys: bool = False) -> bytes:
    """``data`` as compact UTF-8 JSON (see the module docstring); ``sort_keys`` sorts every
    mapping's keys, as ``json.dumps(..., sort_keys=True)`` does."""
    if orjson is None:
        return _standard(data, sort_keys)
    try:
        return orjson.dumps(data, option=_STRICT | orjson.OPT_SORT_KEYS if sort_keys else _STRICT)
    except orjson.JSONEncodeError:
        pass  # past what orjson encodes: the standard encoder decides
    return _standard(data, sort_keys)


def _standard(data: Any, sort_keys: bool) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys).encode("utf-8")
