"""What every rule system's battle-file loader shares: pydantic's validation errors turned
into problems that name their path in the file (``units[2].counter: 'x' is not text``),
all of them at once.  Pure: the standard library and pydantic only, and no rule system.

This is the pydantic edge (issue 24): the rules' models are standard-library dataclasses
(:mod:`sheetsync.core.model`), validated here through a ``TypeAdapter`` over the same class,
its constraints carried as ``Annotated`` metadata.  A dataclass's own error types
(``dataclass_type``, ``unexpected_keyword_argument``) say the same as a ``BaseModel``'s.

Issue 25: pydantic is optional.  Where it can't be imported (Pyodide has no pydantic-core),
:func:`validate_python` validates with :mod:`sheetsync.sheets.lax`, which gives the same
models and the same error records, so the problems below read the same either way."""

from __future__ import annotations

from typing import Any

from sheetsync.core.errors import Problem
from sheetsync.sheets.lax import LaxError
from sheetsync.sheets.lax import validate_python as lax_validate

__all__ = ["prefer_lax", "pydantic_available", "validate", "validate_python", "validation_errors",
           "validation_problems"]

_WANT = {"string_type": "text", "dict_type": "a mapping", "list_type": "a list", "tuple_type": "a list",
         "model_type": "a mapping", "dataclass_type": "a mapping", "dataclass_args_type": "a mapping"}
_NOT_A = tuple(_WANT) + ("float_type", "float_parsing")


def _message(e: Any) -> str:
    kind, inp = e["type"], e.get("input")
    if kind == "missing":
        return "is required"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return "is not a key sheetsync knows (check its spelling)"
    if kind.startswith("int_"):
        return f"{inp!r} is not a whole number"
    if kind.startswith("bool_"):
        return f"{inp!r} is not yes or no (true/false)"
    if kind in ("literal_error", "enum"):
        return f"{inp!r} is not one of {e.get('ctx', {}).get('expected', '')}"
    if kind in _NOT_A:
        return f"{inp!r} is not {_WANT.get(kind, 'a number')}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind in ("greater_than", "greater_than_equal", "less_than_equal", "less_than"):
        return f"{inp!r} is out of range ({e['msg'].lower()})"
    return str(e["msg"])


def validation_problems(err: Any, prefix: str) -> list[Problem]:
    """Each of ``err``'s errors as a problem at its path below ``prefix`` (``units[2]``)."""
    out = []
    for e in err.errors():
        where = prefix
        for part in e["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        out.append(Problem(where, _message(e)))
    return out


_PYDANTIC: list[Any] = []


def pydantic_available() -> bool:
    """Whether pydantic can be imported here (not under Pyodide); asked once."""
    if not _PYDANTIC:
        try:
            import pydantic
        except ImportError:
            _PYDANTIC.append(None)
        else:
            _PYDANTIC.append(pydantic)
    return _PYDANTIC[0] is not None


def prefer_lax() -> None:
    """Validate with :mod:`sheetsync.sheets.lax` from now on, even where pydantic is installed.

    Issue 23: a process that runs one step on a tracker (``sheetsync resolve FILE.xlsx``, a
    RunPython button) would spend more importing pydantic and building its validators than
    on the step.  The lax validator makes the same models and the same error records
    (``tests/test_pure_path.py`` checks every step of every system against the CLI's, and
    a battle's problems against pydantic's), so such a process asks for it before its step."""
    _PYDANTIC[:] = [None]


def _errors() -> tuple[type[BaseException], ...]:
    if pydantic_available():
        return (_PYDANTIC[0].ValidationError, LaxError)
    return (LaxError,)


_ADAPTERS: dict[type, Any] = {}


def _adapter(model: type) -> Any:
    """The validator of a dataclass model, built on its first use (issue 12) and kept.  Its
    core schema is left on the class, where pydantic looks for a dataclass's schema when the
    class is a field of another (as it keeps a ``BaseModel``'s), so that a model nested in
    several others is worked out once, not once per adapter (issue 24)."""
    got = _ADAPTERS.get(model)
    if got is None:
        got = _ADAPTERS[model] = _PYDANTIC[0].TypeAdapter(model)
        if "__pydantic_core_schema__" not in model.__dict__:
            model.__pydantic_core_schema__ = got.core_schema  # type: ignore[attr-defined]
    return got


def validate_python(model: type, data: Any) -> Any:
    """``model`` made from ``data`` by pydantic, or by :mod:`sheetsync.sheets.lax` where
    pydantic is not installed; a refusal raises an error whose ``errors()`` are pydantic's
    records (catch :func:`validation_errors`)."""
    if not pydantic_available():
        return lax_validate(model, data)
    if issubclass(model, _PYDANTIC[0].BaseModel):
        return model.model_validate(data)  # type: ignore[attr-defined]
    return _adapter(model).validate_python(data)


def validation_errors() -> tuple[type[BaseException], ...]:
    """The errors :func:`validate_python` raises, for ``except``."""
    return _errors()


def validate(model: type, data: Any, where: str, problems: list[Problem]) -> Any:
    """``model`` (a pydantic model, or a :mod:`sheetsync.core.model` dataclass) made from
    ``data``, or ``None`` with its problems added to ``problems``."""
    try:
        return validate_python(model, data)
    except validation_errors() as err:
        problems.extend(validation_problems(err, where))
        return None
