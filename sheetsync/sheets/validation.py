"""What every rule system's battle-file loader shares: pydantic's validation errors turned
into problems that name their path in the file (``units[2].counter: 'x' is not text``),
all of them at once.  Pure: the standard library and pydantic only, and no rule system."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from sheetsync.core.errors import Problem

__all__ = ["validate", "validation_problems"]

_WANT = {"string_type": "text", "dict_type": "a mapping", "list_type": "a list", "tuple_type": "a list",
         "model_type": "a mapping"}


def _message(e: Any) -> str:
    kind, inp = e["type"], e.get("input")
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a key sheetsync knows (check its spelling)"
    if kind.startswith("int_"):
        return f"{inp!r} is not a whole number"
    if kind.startswith("bool_"):
        return f"{inp!r} is not yes or no (true/false)"
    if kind in ("literal_error", "enum"):
        return f"{inp!r} is not one of {e.get('ctx', {}).get('expected', '')}"
    if kind in ("string_type", "dict_type", "list_type", "tuple_type", "model_type", "float_type", "float_parsing"):
        return f"{inp!r} is not {_WANT.get(kind, 'a number')}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind in ("greater_than", "greater_than_equal", "less_than_equal", "less_than"):
        return f"{inp!r} is out of range ({e['msg'].lower()})"
    return str(e["msg"])


def validation_problems(err: ValidationError, prefix: str) -> list[Problem]:
    """Each of ``err``'s errors as a problem at its path below ``prefix`` (``units[2]``)."""
    out = []
    for e in err.errors():
        where = prefix
        for part in e["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        out.append(Problem(where, _message(e)))
    return out


def validate(model: type[BaseModel], data: Any, where: str, problems: list[Problem]) -> Any:
    """``model`` made from ``data``, or ``None`` with its problems added to ``problems``."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        problems.extend(validation_problems(err, where))
        return None
