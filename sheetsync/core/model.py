"""The rules' values as frozen, slotted dataclasses with the small part of pydantic's API
the project calls (``model_copy``, ``model_dump``, ``model_dump_json``, ``model_validate``,
``model_fields``), on the standard library alone (issue 24), so the rules core imports
under Pyodide with nothing installed.

Battle files are still judged by pydantic at the edge (:mod:`sheetsync.sheets.validation`),
through ``pydantic.TypeAdapter`` over these same classes: the constraints below are plain
``Annotated`` metadata that also speak pydantic's duck-typed hooks, and a class's pydantic
config is the plain dict ``__pydantic_config__`` (``extra="forbid"`` unless it says
otherwise).  One definition of each model; the edge's messages and paths stay as they are.

Converting a pydantic model (the recipe)::

    # before                                    # after
    class Unit(Frozen):                         @model
        model_config = ConfigDict(...)          class Unit(Model):
        name: str = Field(min_length=1)             name: Annotated[str, MinLen(1)]
        men: int = Field(default=500, ge=1)         men: Annotated[int, Range(ge=1)] = 500
        tags: dict[str, int] = Field(               tags: dict[str, int] = field(default_factory=dict)
            default_factory=dict)
        src: str = Field(alias="from")              src: Annotated[str, Alias("from")]

1. ``@model`` on a subclass of :class:`Model`, in place of ``BaseModel`` (or of the system's
   ``Frozen`` base).  Drop ``model_config``; the class forbids unknown keys by default.  A
   ``title`` (or another pydantic config key) goes in ``__pydantic_config__ = {...}``.
2. ``Field(ge/gt/le/lt=...)`` becomes :class:`Range`, ``min_length`` :class:`MinLen`,
   ``pattern`` :class:`Pattern`, ``description`` :class:`Doc`, an alias :class:`Alias`
   (honoured by ``model_validate`` and ``model_dump(by_alias=True)``; not by pydantic).  A
   plain default stays ``= value``; ``default_factory`` becomes ``dataclasses.field``.
3. Fields are keyword-only, so their order and defaults are free; a default may be a model
   instance (frozen, so hashable).  Under ``from __future__ import annotations`` the hints
   are resolved on first use, so models may name models defined further down.
4. ``functools.cached_property`` needs a ``__dict__``, which a slotted class has not: make it
   a plain property, over an ``lru_cache`` function of the fields if it is costly.
5. Validators (``field_validator``, ``model_validator``) have no place here: the loader (the
   edge) checks what the types can't, before it builds the model.
6. A dump pydantic shaped with a wrap ``model_serializer`` (a key left out while it holds
   its default, say) is a method ``model_post_dump(self, data) -> dict``: it gets the
   fields' dump (either mode, at any depth, ``include``/``exclude`` applied) and returns
   the dump to use.
7. The edge validates with ``sheetsync.sheets.validation.validate(Model, data, where, problems)``
   (a cached ``TypeAdapter``); ``Model.model_validate`` is the standard-library converter for
   data sheetsync wrote itself (undo records, the State), raising :class:`ModelError`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import operator
import re
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union

if TYPE_CHECKING:
    from typing_extensions import Self, dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - Python 3.10: the hint is for type checkers only

    def dataclass_transform(**_: Any) -> Callable[[_F], _F]:
        return lambda f: f

__all__ = [
    "Alias",
    "Doc",
    "FieldInfo",
    "MinLen",
    "Model",
    "ModelError",
    "Pattern",
    "Range",
    "model",
]

_T = TypeVar("_T")
_F = TypeVar("_F")
_MISSING: Any = dataclasses.MISSING


# -- metadata ---------------------------------------------------------------------------------


class Range:
    """Bounds of a number (``ge``, ``gt``, ``le``, ``lt``), as pydantic's ``Field`` gives them."""

    __slots__ = ("ge", "gt", "le", "lt")

    def __init__(self, *, ge: float | None = None, gt: float | None = None, le: float | None = None,
                 lt: float | None = None) -> None:
        self.ge, self.gt, self.le, self.lt = ge, gt, le, lt

    def __repr__(self) -> str:
        parts = [f"{k}={getattr(self, k)!r}" for k in self.__slots__ if getattr(self, k) is not None]
        return f"Range({', '.join(parts)})"

    def problem(self, value: Any, given: Any = None) -> str | None:
        """What is wrong with ``value`` (pydantic's words, showing the ``given`` data), or ``None``."""
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        for bound, ok, words in ((self.ge, self.ge is None or value >= self.ge, "greater than or equal to"),
                                 (self.gt, self.gt is None or value > self.gt, "greater than"),
                                 (self.le, self.le is None or value <= self.le, "less than or equal to"),
                                 (self.lt, self.lt is None or value < self.lt, "less than")):
            if not ok:
                return f"{value if given is None else given!r} is out of range (input should be {words} {bound})"
        return None

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(source)
        for key in self.__slots__:
            if getattr(self, key) is not None:
                _inner(schema)[key] = getattr(self, key)
        return schema


class MinLen:
    """The fewest characters of a text, or items of a list (pydantic's ``min_length``)."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __repr__(self) -> str:
        return f"MinLen({self.n})"

    def problem(self, value: Any, given: Any = None) -> str | None:
        if isinstance(value, (str, tuple, list, dict)) and len(value) < self.n:
            return "must not be empty" if self.n == 1 else f"must have at least {self.n} items"
        return None

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(source)
        _inner(schema)["min_length"] = self.n
        return schema


class Pattern:
    """A regular expression a text must match (pydantic's ``pattern``, searched as pydantic does)."""

    __slots__ = ("regex", "_compiled")

    def __init__(self, regex: str) -> None:
        self.regex = regex
        self._compiled = re.compile(regex)

    def __repr__(self) -> str:
        return f"Pattern({self.regex!r})"

    def problem(self, value: Any, given: Any = None) -> str | None:
        if isinstance(value, str) and self._compiled.search(value) is None:
            return f"{value!r} does not match {self.regex!r}"
        return None

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(source)
        _inner(schema)["pattern"] = self.regex
        return schema


class Doc:
    """A field's description, for ``model_fields`` and the JSON Schema."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Doc({self.text!r})"

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(source)

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(core_schema)
        schema["description"] = self.text
        return schema


class Alias:
    """The key a field has in data (``from`` for a field named ``from_``): read by
    ``model_validate`` (the field's own name is read too) and written by
    ``model_dump(by_alias=True)``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Alias({self.name!r})"


_CONSTRAINTS = (Range, MinLen, Pattern)


def _inner(schema: Any) -> Any:
    """The schema a constraint applies to: an optional value's own (``int | None``), as
    pydantic's ``Field(ge=...)`` puts it."""
    while isinstance(schema, dict) and schema.get("type") == "nullable":
        schema = schema["schema"]
    return schema


# -- fields -----------------------------------------------------------------------------------


class FieldInfo:
    """What ``Model.model_fields[name]`` says of a field, as pydantic's ``FieldInfo`` does:
    ``annotation`` (the type without its ``Annotated`` metadata), ``default`` (or
    ``dataclasses.MISSING``), ``default_factory``, ``description``, ``alias``, ``metadata``."""

    __slots__ = ("name", "annotation", "default", "default_factory", "description", "alias", "metadata")

    def __init__(self, name: str, annotation: Any, default: Any, default_factory: Callable[[], Any] | None,
                 metadata: tuple[Any, ...]) -> None:
        self.name = name
        self.annotation = annotation
        self.default = default
        self.default_factory = default_factory
        self.metadata = metadata
        self.description: str | None = next((m.text for m in metadata if isinstance(m, Doc)), None)
        self.alias: str | None = next((m.name for m in metadata if isinstance(m, Alias)), None)

    def __repr__(self) -> str:
        return f"FieldInfo({self.name!r}, annotation={self.annotation!r}, default={self.default!r})"

    def is_required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def get_default(self, *, call_default_factory: bool = False) -> Any:
        if self.default_factory is not None:
            return self.default_factory() if call_default_factory else None
        return None if self.default is _MISSING else self.default


def _split(hint: Any) -> tuple[Any, tuple[Any, ...]]:
    """``Annotated[T, *meta]`` as ``(T, meta)``; any other type as ``(type, ())``."""
    if typing.get_origin(hint) is Annotated:
        return hint.__origin__, tuple(hint.__metadata__)
    return hint, ()


class _Class:
    """What a model class needs at run time, worked out once from its type hints."""

    __slots__ = ("fields", "convert", "floats", "names", "keys", "post", "values")

    def __init__(self, cls: type) -> None:
        hints = typing.get_type_hints(cls, include_extras=True)
        self.fields: dict[str, FieldInfo] = {}
        for f in dataclasses.fields(cls):
            annotation, meta = _split(hints[f.name])
            factory: Callable[[], Any] | None = None if f.default_factory is _MISSING else f.default_factory  # type: ignore[assignment]
            self.fields[f.name] = FieldInfo(f.name, annotation, f.default, factory, meta)
        self.names = tuple(self.fields)
        get = operator.attrgetter(*self.names) if self.names else (lambda obj: ())
        self.values: Callable[[Any], tuple[Any, ...]] = get if len(self.names) != 1 else (lambda obj: (get(obj),))
        self.keys = {(info.alias or name): name for name, info in self.fields.items()}
        self.keys.update({name: name for name in self.fields})
        self.convert = {name: _converter(hints[name]) for name in self.fields}
        self.floats = frozenset(name for name, info in self.fields.items() if _is_float(info.annotation))
        self.post: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = getattr(cls, "model_post_dump", None)


def _is_float(annotation: Any) -> bool:
    """``float`` or ``float | None``: pydantic writes such a field's int as a float in JSON."""
    args = set(typing.get_args(annotation)) if _is_union(annotation) else {annotation}
    return float in args and args <= {float, type(None)}


_CLASSES: dict[type, _Class] = {}


def _info(cls: type) -> _Class:
    got = _CLASSES.get(cls)
    if got is None:
        got = _CLASSES[cls] = _Class(cls)
    return got


class _ModelFields:
    """``Model.model_fields``: the class's fields by name, in order, worked out on first use."""

    def __get__(self, obj: object, owner: type) -> Mapping[str, FieldInfo]:
        return types.MappingProxyType(_info(owner).fields)


# -- the base ---------------------------------------------------------------------------------


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(dataclasses.field,))
def model(cls: type[_T]) -> type[_T]:
    """Make ``cls`` (a subclass of :class:`Model`) a frozen, slotted, keyword-only dataclass
    that pydantic validates with ``extra="forbid"`` (or the class's own ``__pydantic_config__``)."""
    config = {"extra": "forbid", **cls.__dict__.get("__pydantic_config__", {})}
    out = dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(cls)
    out.__pydantic_config__ = config  # type: ignore[attr-defined]
    return out


class Model:
    """Base of the models: pydantic's calls the project makes, on a dataclass."""

    __slots__ = ()
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}
    model_fields: ClassVar[Mapping[str, FieldInfo]] = _ModelFields()  # type: ignore[assignment]

    @classmethod
    def model_construct(cls, **values: Any) -> Self:
        """The model from ``values``, unchecked (pydantic's ``model_construct``)."""
        return cls(**values)

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update``'s fields changed, unchecked, as pydantic's ``model_copy``."""
        if not update:
            return self
        copy = _COPIERS.get(type(self)) or _copier(type(self))
        return typing.cast("Self", copy(self, update))

    def model_dump(self, *, mode: Literal["python", "json"] = "python", include: Iterable[str] | None = None,
                   exclude: Iterable[str] | None = None, by_alias: bool = False, exclude_defaults: bool = False,
                   exclude_none: bool = False) -> dict[str, Any]:
        """The model as a dict, as pydantic dumps it: nested models as dicts; in ``"json"``
        mode enums as their values, tuples as lists and a float field's whole number as a
        float.  ``include``/``exclude`` name top-level fields; the other options apply at
        every depth."""
        opts = _Dump(mode == "json", by_alias, exclude_defaults, exclude_none)
        return opts.model(self, None if include is None else set(include), set(exclude or ()))

    def model_dump_json(self, *, by_alias: bool = False, exclude_defaults: bool = False,
                        exclude_none: bool = False) -> str:
        """``model_dump(mode="json")`` as compact JSON, the bytes pydantic writes."""
        data = self.model_dump(mode="json", by_alias=by_alias, exclude_defaults=exclude_defaults,
                               exclude_none=exclude_none)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """The model from plain data (``model_dump``'s, either mode) or from Python values,
        checked against the type hints and the constraint metadata; raises
        :class:`ModelError` naming every problem's path."""
        errors: list[tuple[str, str]] = []
        out = _convert_model(cls, data, "", errors)
        if errors:
            raise ModelError(errors)
        return typing.cast("Self", out)


_Copy = Callable[[Any, Mapping[str, Any]], Any]
_COPIERS: dict[type, _Copy] = {}


def _copier(cls: type) -> _Copy:
    """``model_copy`` for ``cls``: each field set once on a new instance, as the dataclass's
    own ``__init__`` sets it but without its argument parsing, the update's value where it
    has one.  ``dataclasses.replace`` costs several times more, and the engines copy their
    values in their inner loops (issue 24: the engine must not get slower).  A class with a
    ``__post_init__`` or a field left out of ``__init__`` keeps ``dataclasses.replace``."""
    fields = dataclasses.fields(cls)
    names = frozenset(f.name for f in fields)
    if hasattr(cls, "__post_init__") or not all(f.init for f in fields):
        def replace(obj: Any, update: Mapping[str, Any]) -> Any:
            return dataclasses.replace(obj, **update)
        _COPIERS[cls] = replace
        return replace
    body = "".join(f"    _set(new, {f.name!r}, update[{f.name!r}] if {f.name!r} in update else obj.{f.name})\n"
                   for f in fields)
    src = (f"def copy(obj, update):\n    if not _names.issuperset(update):\n        _unknown(update)\n"
           f"    new = _new(_cls)\n{body}    return new\n")
    scope: dict[str, Any] = {"_names": names, "_unknown": _unknown_key(cls, names), "_new": object.__new__,
                             "_cls": cls, "_set": object.__setattr__}
    exec(src, scope)  # noqa: S102 - field names only, as dataclasses builds __init__
    _COPIERS[cls] = scope["copy"]
    return typing.cast(_Copy, scope["copy"])


def _unknown_key(cls: type, names: frozenset[str]) -> Callable[[Mapping[str, Any]], None]:
    def refuse(update: Mapping[str, Any]) -> None:
        key = next(k for k in update if k not in names)
        raise TypeError(f"{cls.__qualname__}.__init__() got an unexpected keyword argument {key!r}")
    return refuse


class _Dump:
    __slots__ = ("json", "by_alias", "exclude_defaults", "exclude_none")

    def __init__(self, as_json: bool, by_alias: bool, exclude_defaults: bool, exclude_none: bool) -> None:
        self.json, self.by_alias = as_json, by_alias
        self.exclude_defaults, self.exclude_none = exclude_defaults, exclude_none

    def model(self, obj: Model, include: set[str] | None = None, exclude: set[str] | frozenset[str] = frozenset(),
              ) -> dict[str, Any]:
        info = _info(type(obj))
        if self.exclude_none or self.exclude_defaults or self.by_alias:
            return self.fields(obj, info, include, exclude)
        out: dict[str, Any] = {}
        floats = info.floats if self.json else frozenset()
        value = self.value
        choose = include is not None or bool(exclude)
        for name, v in zip(info.names, info.values(obj), strict=True):
            if choose and (name in exclude or include is not None and name not in include):
                continue
            t = type(v)
            if t is str or t is int and name not in floats or t is bool or v is None:
                out[name] = v  # the common case, said first: a plain value is its own dump
            elif t is int:
                out[name] = float(v)
            else:
                out[name] = value(v)
        return out if info.post is None else info.post(obj, out)

    def fields(self, obj: Model, info: _Class, include: set[str] | None, exclude: set[str] | frozenset[str],
               ) -> dict[str, Any]:
        """:meth:`model` with ``exclude_none``, ``exclude_defaults`` or ``by_alias``."""
        out: dict[str, Any] = {}
        for name in info.names:
            if name in exclude or include is not None and name not in include:
                continue
            value = getattr(obj, name)
            if self.exclude_none and value is None:
                continue
            field = info.fields[name]
            if self.exclude_defaults and not field.is_required() and value == field.get_default(
                    call_default_factory=True):
                continue
            key = field.alias if self.by_alias and field.alias else name
            if self.json and name in info.floats and type(value) is int:
                out[key] = float(value)
            else:
                out[key] = self.value(value)
        return out if info.post is None else info.post(obj, out)

    def value(self, v: Any) -> Any:
        t = type(v)
        if t is str or t is int or t is bool or t is float or v is None:
            return v
        if isinstance(v, Model):
            return self.model(v)
        if isinstance(v, enum.Enum):
            return v.value if self.json else v
        if isinstance(v, (tuple, list)):
            items = [self.value(x) for x in v]
            return items if self.json or isinstance(v, list) else tuple(items)
        if isinstance(v, dict):
            if self.json:
                return {k.value if isinstance(k, enum.Enum) else k: self.value(x) for k, x in v.items()}
            return {k: self.value(x) for k, x in v.items()}
        if isinstance(v, (set, frozenset)) and self.json:
            return [self.value(x) for x in v]
        return v


# -- model_validate ---------------------------------------------------------------------------


class ModelError(ValueError):
    """Data ``model_validate`` can't make a model of; ``errors`` is ``[(path, problem)]``
    and the message lists them (``units[2].counter: 'x' is not text``)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(f"{p}: {m}" if p else m for p, m in self.errors))


_Convert = Callable[[Any, str, list[tuple[str, str]]], Any]
_FAIL: Any = object()


def _at(path: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{path}[{part}]"
    return f"{path}.{part}" if path else part


def _convert_model(cls: type[Model], data: Any, path: str, errors: list[tuple[str, str]]) -> Any:
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        errors.append((path, f"{data!r} is not a mapping"))
        return _FAIL
    info = _info(cls)
    values: dict[str, Any] = {}
    before = len(errors)
    for key, raw in data.items():
        name = info.keys.get(key) if isinstance(key, str) else None
        if name is None:
            errors.append((_at(path, str(key)), "is not a key sheetsync knows (check its spelling)"))
            continue
        values[name] = info.convert[name](raw, _at(path, key), errors)
    for name, field in info.fields.items():
        if name not in values and field.is_required():
            errors.append((_at(path, field.alias or name), "is required"))
    if len(errors) > before:
        return _FAIL
    return cls(**values)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


def _scalar(kind: type, words: str) -> _Convert:
    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        if type(v) is kind:
            return v
        if kind is int and isinstance(v, float) and v.is_integer():
            return int(v)
        if kind is float and isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, kind) and not isinstance(v, bool):  # a str or int subclass that is not an enum member
            return kind(v)
        errors.append((path, f"{v!r} is not {words}"))
        return _FAIL
    return convert


_SCALARS: dict[Any, _Convert] = {
    int: _scalar(int, "a whole number"),
    float: _scalar(float, "a number"),
    str: _scalar(str, "text"),
    bool: _scalar(bool, "yes or no (true/false)"),
}


def _converter(hint: Any) -> _Convert:
    """The function that checks and converts data of type ``hint`` (path-aware)."""
    base, meta = _split(hint)
    inner = _plain(base)
    checks = [m for m in meta if isinstance(m, _CONSTRAINTS)]
    if not checks:
        return inner

    def checked(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        out = inner(v, path, errors)
        if out is not _FAIL:
            for c in checks:
                problem = c.problem(out, v)
                if problem is not None:
                    errors.append((path, problem))
                    return _FAIL
        return out
    return checked


def _plain(hint: Any) -> _Convert:
    """The converter of a type hint without its ``Annotated`` metadata: a scalar, a generic
    form (:func:`_generic`) or a class (:func:`_of_class`)."""
    if hint is Any:
        return lambda v, path, errors: v
    if hint is None or hint is type(None):
        return _literal((None,))
    if hint in _SCALARS:
        return _SCALARS[hint]
    origin = typing.get_origin(hint)
    if origin is not None:
        return _generic(hint, origin, typing.get_args(hint))
    return _of_class(hint)


def _generic(hint: Any, origin: Any, args: tuple[Any, ...]) -> _Convert:
    """A subscripted hint: ``Annotated``, ``Literal``, a union, a tuple, a list or set, a dict."""
    if origin is Annotated:
        return _converter(hint)
    if origin is Literal:
        return _literal(args)
    if _is_union(hint):
        return _union(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(_converter(args[0]), tuple)
        return _fixed_tuple(tuple(_converter(a) for a in args))
    if origin in (list, set, frozenset):
        return _sequence(_converter(args[0]) if args else _plain(Any), origin)
    if origin is dict:
        return _mapping(_converter(args[0]), _converter(args[1]))
    raise TypeError(f"sheetsync.core.model can't convert {hint!r}")


def _of_class(hint: Any) -> _Convert:
    """A bare class: an enum, a model, or any other class its values must be instances of."""
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum(hint)
    if isinstance(hint, type) and issubclass(hint, Model):
        return lambda v, path, errors: _convert_model(hint, v, path, errors)
    if isinstance(hint, type):
        return _instance(hint)
    raise TypeError(f"sheetsync.core.model can't convert {hint!r}")


def _literal(allowed: tuple[Any, ...]) -> _Convert:
    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        for a in allowed:
            if v == a and type(v) is type(a):
                return a
            if isinstance(a, enum.Enum) and v == a.value:
                return a
        errors.append((path, f"{v!r} is not one of {', '.join(repr(getattr(a, 'value', a)) for a in allowed)}"))
        return _FAIL
    return convert


def _union(members: tuple[Any, ...]) -> _Convert:
    exact = {m for m in members if m in _SCALARS or m is type(None)}
    each = [_converter(m) for m in members]

    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        if type(v) in exact:
            return each[members.index(type(v))](v, path, errors)
        tried: list[tuple[str, str]] = []
        for c in each:
            mine: list[tuple[str, str]] = []
            out = c(v, path, mine)
            if not mine:
                return out
            tried = tried or mine
        errors.extend(tried)
        return _FAIL
    return convert


def _sequence(item: _Convert, kind: Any) -> _Convert:
    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        if not isinstance(v, (list, tuple, set, frozenset)):
            errors.append((path, f"{v!r} is not a list"))
            return _FAIL
        before = len(errors)
        out = [item(x, _at(path, i), errors) for i, x in enumerate(v)]
        return _FAIL if len(errors) > before else kind(out)
    return convert


def _fixed_tuple(items: tuple[_Convert, ...]) -> _Convert:
    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        if not isinstance(v, (list, tuple)) or len(v) != len(items):
            errors.append((path, f"{v!r} is not a list of {len(items)}"))
            return _FAIL
        before = len(errors)
        out = tuple(c(x, _at(path, i), errors) for i, (c, x) in enumerate(zip(items, v, strict=True)))
        return _FAIL if len(errors) > before else out
    return convert


def _mapping(key: _Convert, value: _Convert) -> _Convert:
    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        if not isinstance(v, Mapping):
            errors.append((path, f"{v!r} is not a mapping"))
            return _FAIL
        before = len(errors)
        out = {key(k, _at(path, str(k)), errors): value(x, _at(path, str(k)), errors) for k, x in v.items()}
        return _FAIL if len(errors) > before else out
    return convert


def _enum(kind: type[enum.Enum]) -> _Convert:
    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        if isinstance(v, kind):
            return v
        try:
            return kind(v)
        except (ValueError, TypeError):
            errors.append((path, f"{v!r} is not one of {', '.join(repr(m.value) for m in kind)}"))
            return _FAIL
    return convert


def _instance(kind: type) -> _Convert:
    def convert(v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
        if isinstance(v, kind):
            return v
        errors.append((path, f"{v!r} is not a {kind.__name__}"))
        return _FAIL
    return convert
