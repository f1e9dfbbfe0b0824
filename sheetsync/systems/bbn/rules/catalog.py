"""The modifier catalog: which Ability, Merit or Discipline feeds which pool (Cohort Sheet
1.1-1.7, R2-R6, R10, R12).

The tables are data (``catalog.json`` beside this file), not code.  A chronicle extends them
with :meth:`Catalog.extend` or a JSON file of the same shape; a trait name the catalog does
not know is kept and listed as not counted (R12).
"""

from __future__ import annotations

import json
import re
from dataclasses import field
from functools import lru_cache
from importlib import resources
from typing import Any

from sheetsync.core.model import model
from sheetsync.systems.bbn.rules.models import Frozen, Memo, remembered

__all__ = ["Catalog", "PoolModifiers", "default_catalog", "normalize"]


@lru_cache(maxsize=4096)
def normalize(name: str) -> str:
    """R12: compare trait names without case, spacing, punctuation or a leading
    'Thaumaturgy:'."""
    text = name.strip().lower()
    text = re.sub(r"^thaumaturgy\s*[:\-]\s*", "", text)
    return re.sub(r"[\s'’:\-_.()]+", "", text)


@model
class PoolModifiers(Frozen):
    """What feeds one pool, and the section that says so."""

    section: str
    abilities: tuple[str, ...] = ()
    merits: tuple[str, ...] = ()
    exclusive_merits: tuple[tuple[str, ...], ...] = ()
    disciplines: tuple[str, ...] = ()
    exclusive_disciplines: tuple[tuple[str, ...], ...] = ()
    offensive_paths: bool = False


@model
class Catalog(Memo):
    """The modifier tables and name synonyms (R12)."""

    pools: dict[str, PoolModifiers]
    offensive_paths: tuple[str, ...] = ()
    synonyms: dict[str, str] = field(default_factory=dict)

    def canonical(self, name: str) -> str:
        """The catalog's spelling of ``name`` (after synonyms), or ``name`` itself (R12)."""
        return self._spelling.get(normalize(name), name.strip())

    @remembered
    def _spelling(self) -> dict[str, str]:
        """normalized name → the catalog's spelling; synonyms first, as they win."""
        out: dict[str, str] = {}
        names: list[str] = list(self.offensive_paths)
        for mods in self.pools.values():
            names += list(mods.abilities) + list(mods.merits) + list(mods.disciplines)
            for group in (*mods.exclusive_merits, *mods.exclusive_disciplines):
                names += list(group)
        for known in names:
            out.setdefault(normalize(known), known)
        for alias, target in self.synonyms.items():
            out[normalize(alias)] = target
        return out

    @remembered
    def known_names(self) -> tuple[str, ...]:
        """Every trait name the catalog knows, in its spelling (for "did you mean", R12)."""
        return tuple(sorted(set(self._spelling.values())))

    def is_offensive_path(self, name: str) -> bool:
        key = normalize(self.canonical(name))
        return any(normalize(p) == key for p in self.offensive_paths)

    def extend(self, extra: dict[str, Any]) -> Catalog:
        """A new catalog with ``extra``'s pools' lists, paths and synonyms added."""
        return Catalog.model_validate(self.extended_data(extra))

    def extended_data(self, extra: dict[str, Any]) -> dict[str, Any]:
        """The data of :meth:`extend`'s catalog, before it is checked (the battle-file
        loader checks it with pydantic, naming each problem's place)."""
        data = self.model_dump()
        for pool, mods in (extra.get("pools") or {}).items():
            base = data["pools"].setdefault(pool, {"section": mods.get("section", "chronicle")})
            for key, values in mods.items():
                if isinstance(values, list):
                    base[key] = list(base.get(key, [])) + [v for v in values if v not in base.get(key, [])]
                else:
                    base[key] = values
        data["offensive_paths"] = list(data["offensive_paths"]) + list(extra.get("offensive_paths", []))
        data["synonyms"].update(extra.get("synonyms", {}))
        return data


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The catalog sheetsync ships (``catalog.json``)."""
    text = resources.files("sheetsync.systems.bbn.rules").joinpath("catalog.json").read_text("utf-8")
    data = json.loads(text)
    data.pop("_comment", None)
    return Catalog.model_validate(data)
