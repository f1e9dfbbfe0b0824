"""pydantic's lax validation of the rules' models, on the standard library (issue 25).

Where pydantic is installed, the edge validates a :mod:`sheetsync.core.model` dataclass with a
``TypeAdapter`` (:mod:`sheetsync.sheets.validation`).  Under Pyodide there is no pydantic
(PyPI has no Pyodide build of pydantic-core), so the same models are validated here, the
way pydantic's lax mode does for the types the models use: whole numbers from whole floats,
numeric text and booleans, yes/no text as booleans, lists and tuples from any sequence but
text, unions tried exactly first and then in order.  A refusal is a list of error records
shaped like pydantic's ``ValidationError.errors()`` (``type``, ``loc``, ``input``, ``ctx``,
``msg``), in pydantic's order (a model's fields in their order, then its unknown keys), so
the messages made from them are the same words at the same paths either way
(``tests/test_pure_path.py`` checks them against pydantic).

Standard library only, and no rule system.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import operator
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union

from sheetsync.core.model import MinLen, Model, Pattern, Range

__all__ = ["LaxError", "validate_python"]

Errors = list[dict[str, Any]]
_Check = Callable[[Any, tuple[Any, ...], Errors], Any]
_FAIL: Any = object()


class LaxError(ValueError):
    """Data a model can't be made of: ``errors()`` as pydantic's ``ValidationError`` gives them."""

    def __init__(self, records: Errors) -> None:
        self._records = records
        super().__init__("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in records))

    def errors(self) -> Errors:
        return list(self._records)


def validate_python(model: type, data: Any) -> Any:
    """``model`` made from ``data``, or :class:`LaxError` with every problem."""
    errors: Errors = []
    out = _checker(model)(data, (), errors)
    if errors:
        raise LaxError(errors)
    return out


def _err(errors: Errors, kind: str, loc: tuple[Any, ...], value: Any, msg: str,
         ctx: dict[str, Any] | None = None) -> Any:
    record: dict[str, Any] = {"type": kind, "loc": loc, "msg": msg, "input": value}
    if ctx is not None:
        record["ctx"] = ctx
    errors.append(record)
    return _FAIL


# -- scalars ------------------------------------------------------------------------------------

_WHOLE = re.compile(r"^[+-]?\d+(?:_\d+)*$")
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def _int(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
    t = type(v)
    if t is int:
        return v
    if t is bool:
        return int(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return _err(errors, "finite_number", loc, v, "Input should be a finite number")
        if not v.is_integer():
            return _err(errors, "int_from_float", loc, v, "Input should be a valid integer, got a number with a "
                                                          "fractional part")
        return int(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, (str, bytes, bytearray)):
        return _int_text(v.decode() if isinstance(v, (bytes, bytearray)) else v, v, loc, errors)
    return _err(errors, "int_type", loc, v, "Input should be a valid integer")


def _int_text(text: str, v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
    s = text.strip()
    if s.endswith(".0") and _WHOLE.match(s[:-2].rstrip("0") or "0"):
        s = s[:-2]
    if not _WHOLE.match(s):
        return _err(errors, "int_parsing", loc, v, "Input should be a valid integer, unable to parse string as an "
                                                   "integer")
    if len(s.lstrip("+-")) > 4300:
        return _err(errors, "int_parsing_size", loc, v, "Unable to parse input string as an integer, exceeded "
                                                        "maximum size")
    return int(s)


def _float(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
    if type(v) is float:
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, (str, bytes, bytearray)):
        s = (v.decode() if isinstance(v, (bytes, bytearray)) else v).strip()
        try:
            return float(s)
        except ValueError:
            return _err(errors, "float_parsing", loc, v, "Input should be a valid number, unable to parse string "
                                                         "as a number")
    return _err(errors, "float_type", loc, v, "Input should be a valid number")


def _str(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
    if type(v) is str:
        return v
    if isinstance(v, enum.Enum):  # pydantic reads an enum member as its value
        return _str(v.value, loc, errors)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        try:
            return bytes(v).decode()
        except UnicodeDecodeError:
            return _err(errors, "string_unicode", loc, v, "Input should be a valid string, unable to parse raw "
                                                          "data as a unicode string")
    return _err(errors, "string_type", loc, v, "Input should be a valid string")


def _bool(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
    if type(v) is bool:
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, (str, bytes, bytearray)):
        s = (v.decode(errors="replace") if isinstance(v, (bytes, bytearray)) else v).strip().lower()
        if s in _TRUE or s in _FALSE:
            return s in _TRUE
    if (isinstance(v, (str, bytes, bytearray)) or isinstance(v, int) and abs(v) < 2**63
            or isinstance(v, float) and v.is_integer()):
        return _err(errors, "bool_parsing", loc, v, "Input should be a valid boolean, unable to interpret input")
    return _err(errors, "bool_type", loc, v, "Input should be a valid boolean")


def _none(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
    if v is None:
        return None
    return _err(errors, "none_required", loc, v, "Input should be None")


def _any(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
    return v


_SCALARS: dict[Any, _Check] = {int: _int, float: _float, str: _str, bool: _bool, type(None): _none, None: _none,
                               Any: _any}
_STRICT: dict[Any, tuple[type, ...]] = {int: (int,), float: (float,), str: (str,), bool: (bool,),
                                        type(None): (type(None),)}


# -- the checkers, one per type hint -----------------------------------------------------------

_CHECKERS: dict[Any, _Check] = {}


def _checker(hint: Any) -> _Check:
    key = (hint, repr(hint))  # ``int | str`` equals ``str | int``, and is tried in another order
    try:
        got = _CHECKERS.get(key)
    except TypeError:  # an unhashable hint
        return _make(hint)
    if got is None:
        _CHECKERS[key] = _pending(key)  # a model that holds itself
        got = _CHECKERS[key] = _make(hint)
    return got


def _pending(key: Any) -> _Check:
    return lambda v, loc, errors: _CHECKERS[key](v, loc, errors)


def _make(hint: Any) -> _Check:
    if hint in _SCALARS:
        return _SCALARS[hint]
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Annotated:
        return _annotated(_checker(hint.__origin__), tuple(hint.__metadata__))
    if origin is Literal:
        return _literal(args)
    if origin in (Union, types.UnionType):
        return _union(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(_checker(args[0]), tuple, "tuple_type", "tuple")
        return _fixed(tuple(_checker(a) for a in args))
    if origin in (list, set, frozenset):
        item = _checker(args[0]) if args else _any
        kind = {list: "list", set: "set", frozenset: "frozen_set"}[origin]
        return _sequence(item, origin, f"{kind}_type", kind)
    if origin is dict:
        return _mapping(_checker(args[0]), _checker(args[1]))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint)
    if isinstance(hint, type):
        return _instance(hint)
    raise TypeError(f"sheetsync.sheets.lax can't validate {hint!r}")


_OPS = {"ge": operator.ge, "gt": operator.gt, "le": operator.le, "lt": operator.lt}
_BOUND_WORDS = {"ge": ("greater_than_equal", "greater than or equal to"), "gt": ("greater_than", "greater than"),
                "le": ("less_than_equal", "less than or equal to"), "lt": ("less_than", "less than")}


def _bounds(r: Range, out: Any, loc: tuple[Any, ...], errors: Errors) -> bool:
    for key in ("gt", "ge", "lt", "le"):
        bound = getattr(r, key)
        if bound is None:
            continue
        ok = {"ge": out >= bound, "gt": out > bound, "le": out <= bound, "lt": out < bound}[key]
        if not ok:
            kind, words = _BOUND_WORDS[key]
            _err(errors, kind, loc, out, f"Input should be {words} {bound}", {key: bound})
            return False
    return True


def _annotated(inner: _Check, meta: tuple[Any, ...]) -> _Check:
    ranges = [m for m in meta if isinstance(m, Range)]
    lengths = [m for m in meta if isinstance(m, MinLen)]
    patterns = [m for m in meta if isinstance(m, Pattern)]
    if not (ranges or lengths or patterns):
        return inner
    limits = [(_OPS[key], bound) for r in ranges for key in ("gt", "ge", "lt", "le")
              if (bound := getattr(r, key)) is not None]

    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        out = inner(v, loc, errors)
        if out is _FAIL or out is None:
            return out
        # a number within every bound passes at once; one outside any (or NaN) is checked
        # bound by bound, to name the first it breaks (issue 23: loaders check thousands)
        if isinstance(out, (int, float)):
            for op, bound in limits:
                if not op(out, bound):
                    if not all(_bounds(r, out, loc, errors) for r in ranges):
                        return _FAIL
                    break
        for m in lengths:
            if not _long_enough(m.n, out, loc, errors):
                return _FAIL
        for p in patterns:
            if isinstance(out, str) and re.search(p.regex, out) is None:
                return _err(errors, "string_pattern_mismatch", loc, out,
                            f"String should match pattern '{p.regex}'", {"pattern": p.regex})
        return out
    return check


def _long_enough(n: int, out: Any, loc: tuple[Any, ...], errors: Errors) -> bool:
    if isinstance(out, str):
        if len(out) < n:
            _err(errors, "string_too_short", loc, out,
                 f"String should have at least {n} character{'s' if n != 1 else ''}", {"min_length": n})
            return False
        return True
    if isinstance(out, (tuple, list, set, frozenset, dict)) and len(out) < n:
        field = {tuple: "Tuple", list: "List", set: "Set", frozenset: "Frozenset", dict: "Dictionary"}[type(out)]
        _err(errors, "too_short", loc, out, f"{field} should have at least {n} item{'s' if n != 1 else ''} after "
                                           f"validation, not {len(out)}",
             {"field_type": field, "min_length": n, "actual_length": len(out)})
        return False
    return True


def _expected(values: Any) -> str:
    items = [repr(x) for x in values]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _literal(allowed: tuple[Any, ...]) -> _Check:
    expected = _expected(allowed)

    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        for a in allowed:
            if v == a and (type(v) is type(a) or isinstance(v, str) == isinstance(a, str)
                           and not isinstance(v, bool) and not isinstance(a, bool)):
                return a
        return _err(errors, "literal_error", loc, v, f"Input should be {expected}", {"expected": expected})
    return check


def _enum(kind: type[enum.Enum]) -> _Check:
    expected = _expected(m.value for m in kind)

    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        if isinstance(v, kind):
            return v
        try:
            return kind(v)
        except (ValueError, TypeError):
            return _err(errors, "enum", loc, v, f"Input should be {expected}", {"expected": expected})
    return check


def _label(hint: Any) -> str:
    """How pydantic names a union's member in an error's location."""
    if hint in (int, float, str, bool):
        return str(hint.__name__)
    origin = typing.get_origin(hint)
    if origin is Annotated:
        return _label(hint.__origin__)
    if origin is Literal:
        return f"literal[{','.join(repr(a) for a in typing.get_args(hint))}]"
    if origin is not None:
        return f"{origin.__name__}[{','.join(_label(a) for a in typing.get_args(hint))}]"
    return str(getattr(hint, "__name__", hint))


def _exact(hint: Any, v: Any) -> bool:
    base = hint.__origin__ if typing.get_origin(hint) is Annotated else hint
    if base in _STRICT:
        return type(v) in _STRICT[base]
    if isinstance(base, type) and not typing.get_origin(base):
        return type(v) is base
    return False


def _union(members: tuple[Any, ...]) -> _Check:
    rest = tuple(m for m in members if m is not type(None))
    nullable = len(rest) < len(members)
    if len(rest) == 1:
        inner = _checker(rest[0])
        return (lambda v, loc, errors: None if v is None else inner(v, loc, errors)) if nullable else inner
    checks = [(m, _checker(m), _label(m)) for m in rest]

    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        if v is None and nullable:
            return None
        for m, c, _ in checks:
            if _exact(m, v):
                mine: Errors = []
                out = c(v, loc, mine)
                if not mine:
                    return out
        tried: Errors = []
        for _, c, label in checks:
            mine = []
            out = c(v, (*loc, label), mine)
            if not mine:
                return out
            tried.extend(mine)
        errors.extend(tried)
        return _FAIL
    return check


_SEQUENCES: Any = (list, tuple, set, frozenset, type({}.keys()), type({}.values()))


def _sequence(item: _Check, kind: Any, error: str, word: str) -> _Check:
    words = {"list": "a valid list", "tuple": "a valid tuple", "set": "a valid set", "frozen_set": "a valid frozenset"}

    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        if not isinstance(v, _SEQUENCES):
            return _err(errors, error, loc, v, f"Input should be {words[word]}")
        before = len(errors)
        out = [item(x, (*loc, i), errors) for i, x in enumerate(v)]
        return _FAIL if len(errors) > before else kind(out)
    return check


def _fixed(items: tuple[_Check, ...]) -> _Check:
    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        if not isinstance(v, _SEQUENCES):
            return _err(errors, "tuple_type", loc, v, "Input should be a valid tuple")
        seq = list(v)
        before = len(errors)
        out = []
        for i, c in enumerate(items):
            if i < len(seq):
                out.append(c(seq[i], (*loc, i), errors))
            else:
                _err(errors, "missing", (*loc, i), v, "Field required")
        if len(seq) > len(items):
            _err(errors, "too_long", loc, v, f"Tuple should have at most {len(items)} items after validation, "
                                             f"not {len(seq)}",
                 {"field_type": "Tuple", "max_length": len(items), "actual_length": len(seq)})
        return _FAIL if len(errors) > before else tuple(out)
    return check


def _mapping(key: _Check, value: _Check) -> _Check:
    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        if not isinstance(v, Mapping):
            return _err(errors, "dict_type", loc, v, "Input should be a valid dictionary")
        before = len(errors)
        out = {}
        for k, x in v.items():
            kk = key(k, (*loc, k, "[key]"), errors)
            vv = value(x, (*loc, k), errors)
            if kk is not _FAIL and vv is not _FAIL:
                out[kk] = vv
        return _FAIL if len(errors) > before else out
    return check


def _instance(kind: type) -> _Check:
    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        if isinstance(v, kind):
            return v
        return _err(errors, "is_instance_of", loc, v, f"Input should be an instance of {kind.__name__}",
                    {"class": kind.__name__})
    return check


def _dataclass(cls: type) -> _Check:
    fields: list[tuple[str, _Check, Any]] | None = None
    config = getattr(cls, "__pydantic_config__", {}) or {}
    forbid = config.get("extra", "ignore") == "forbid"

    def setup() -> list[tuple[str, _Check, Any]]:
        hints = typing.get_type_hints(cls, include_extras=True)
        out = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            out.append((f.name, _checker(hints[f.name]), has_default))
        return out

    def check(v: Any, loc: tuple[Any, ...], errors: Errors) -> Any:
        nonlocal fields
        if isinstance(v, cls):
            return v
        if not isinstance(v, Mapping):
            return _err(errors, "dataclass_type", loc, v, f"Input should be a dictionary or an instance of "
                                                          f"{cls.__name__}", {"class_name": cls.__name__})
        if fields is None:
            fields = setup()
        before = len(errors)
        values: dict[str, Any] = {}
        for name, c, has_default in fields:
            if name in v:
                values[name] = c(v[name], (*loc, name), errors)
            elif not has_default:
                _err(errors, "missing", (*loc, name), v, "Field required")
        if forbid:
            known = {name for name, _, _ in fields}
            for k, x in v.items():
                if k not in known:
                    _err(errors, "unexpected_keyword_argument", (*loc, k), x, "Unexpected keyword argument")
        if len(errors) > before:
            return _FAIL
        return cls(**values)
    return check


def is_model(model: Any) -> bool:
    """Whether ``model`` is one of the rules' dataclass models this module validates."""
    return isinstance(model, type) and (issubclass(model, Model) or dataclasses.is_dataclass(model))
