"""A battle: cohorts, their standing, ranges, declared orders, history for undo.

:class:`Battle` is the whole truth of a battle between two steps.  It serializes to a
plain dict (:meth:`Battle.to_data`) that round-trips exactly, which is what the YAML
battle file, the workbook's hidden state sheet and the undo history all hold.
"""

from __future__ import annotations

from typing import Annotated, Any

from sheetsync.core.model import Range, model
from sheetsync.systems.bbn.rules.catalog import Catalog, default_catalog
from sheetsync.systems.bbn.rules.models import (
    Band,
    CohortSpec,
    CohortState,
    Frozen,
    HouseRules,
    Memo,
    Order,
    State,
    remembered,
)
from sheetsync.systems.bbn.rules.pools import CohortPools, compute_pools

__all__ = ["Battle", "RangeEntry", "initial_state"]


@model
class RangeEntry(Frozen):
    """Ranges (The Battle 3), R24: the band the Storyteller set between two cohorts."""

    a: str
    b: str
    band: Band


def initial_state(spec: CohortSpec, pools: CohortPools) -> CohortState:
    """A cohort at the start of a battle: full Health, its Temper and Control, all Active."""
    return CohortState(
        name=spec.name,
        health=pools.pools["health"],
        temper=pools.pools["temper"],
        control=pools.pools["control"],
        states={m.name: State.ACTIVE for m in spec.members},
    )


_POOLS_CACHE: dict[tuple[str, str, str], CohortPools] = {}
_POOLS_BY_SPEC: dict[int, tuple[CohortSpec, str, str, CohortPools]] = {}
"""The same cache by the cohort object (held beside its pools, so its id stays its own):
a battle a step parses holds the cohort objects of the State it read (issue 12), and the
cohort's JSON, the other key, takes longer to make than the lookup saves."""


def _pools_of(rules_json: str, catalog_key: str, spec: CohortSpec, battle: Battle) -> CohortPools:
    """compute_pools, remembered for the last few hundred cohorts: a step builds the same
    battle more than once (stored state, then this phase's sheet), and pools depend only on
    the cohort, the house rules and the catalog."""
    held = _POOLS_BY_SPEC.get(id(spec))
    if held is not None and held[0] is spec and held[1] == rules_json and held[2] == catalog_key:
        return held[3]
    key = (spec.model_dump_json(), rules_json, catalog_key)
    found = _POOLS_CACHE.get(key)
    if found is None:
        found = compute_pools(spec, battle.house_rules, battle.catalog)
        if len(_POOLS_CACHE) > 512:
            _POOLS_CACHE.clear()
        _POOLS_CACHE[key] = found
    if len(_POOLS_BY_SPEC) > 512:
        _POOLS_BY_SPEC.clear()
    _POOLS_BY_SPEC[id(spec)] = (spec, rules_json, catalog_key, found)
    return found


_DEFAULT_RULES = HouseRules()
"""The readings RULINGS-bbn.md gives (R1-R37)."""


_SHARED_DUMPS: list[tuple[tuple[Frozen, ...], list[dict[str, Any]]]] = []
"""The last few tuples of cohorts or ranges dumped, each with its dump (issue 12): the same
objects (frozen models, held here so their ids stay theirs) go into every phase's undo
snapshot, the cohorts always and the ranges while the Ranges sheet is unchanged."""


def _shared_dump(items: tuple[Frozen, ...]) -> list[dict[str, Any]]:
    """``[x.model_dump(mode="json") for x in items]``, made once for the same objects.
    The dump is shared by the snapshots that hold it: JSON data no step changes in place."""
    for held, dump in _SHARED_DUMPS:
        if len(held) == len(items) and all(a is b for a, b in zip(held, items, strict=True)):
            return dump
    dump = [x.model_dump(mode="json") for x in items]
    _SHARED_DUMPS.insert(0, (tuple(items), dump))
    del _SHARED_DUMPS[8:]
    return dump


_STATE_DUMPS: dict[int, tuple[CohortState, dict[str, Any]]] = {}
"""Each cohort standing dumped lately, by the object (held beside its dump, so its id stays
its own), with its dump (issue 12): a click dumps the standings it writes, and the next
click's undo snapshot dumps those very objects (the State it reads back is the one it
remembers writing)."""


def state_dump(state: dict[str, CohortState]) -> dict[str, dict[str, Any]]:
    """``{name: st.model_dump(mode="json")}``, each standing's dump made once for the same
    object.  The dumps are shared by whatever holds them: JSON data no step changes in place."""
    out: dict[str, dict[str, Any]] = {}
    for name, st in state.items():
        held = _STATE_DUMPS.get(id(st))
        if held is None or held[0] is not st:
            if len(_STATE_DUMPS) > 1024:
                _STATE_DUMPS.clear()
            held = _STATE_DUMPS[id(st)] = (st, st.model_dump(mode="json"))
        out[name] = held[1]
    return out


_SNAPSHOT_ORDERS: list[tuple[list[dict[str, Any]], tuple[Order, ...]]] = []
"""The orders dumps of the last few snapshots, each with the :class:`Order` objects it was
dumped from (issue 12): the State writes a snapshot's orders compact, and makes that form
from the objects instead of validating each dumped order again."""


def orders_behind(dump: Any) -> tuple[Order, ...] | None:
    """The orders a recent :meth:`Battle.snapshot` dumped as the very list ``dump``, or
    ``None`` (another list, even an equal one)."""
    for held, orders in _SNAPSHOT_ORDERS:
        if held is dump:
            return orders
    return None


@model
class Battle(Memo):
    """Everything a phase needs, and everything undo restores."""

    house_rules: HouseRules = _DEFAULT_RULES
    seed: int | str | None = None
    phase: Annotated[int, Range(ge=1)] = 1
    """The number of the next phase to resolve."""
    cohorts: tuple[CohortSpec, ...]
    state: dict[str, CohortState]
    ranges: tuple[RangeEntry, ...] = ()
    orders: tuple[Order, ...] = ()
    history: tuple[dict[str, Any], ...] = ()
    """Snapshots (:meth:`snapshot`) of the battle before each resolved phase, oldest first."""
    log: tuple[dict[str, Any], ...] = ()
    """Every event of the battle so far, as dicts, each with its ``phase``."""
    catalog_extra: dict[str, Any] | None = None

    @remembered
    def catalog(self) -> Catalog:
        base = default_catalog()
        return base.extend(self.catalog_extra) if self.catalog_extra else base

    @remembered
    def pools(self) -> dict[str, CohortPools]:
        """Cohort Sheet 1.1-1.7: the pools each cohort was built with."""
        rules = self.house_rules.model_dump_json()
        catalog = repr(self.catalog_extra)
        return {c.name: _pools_of(rules, catalog, c, self) for c in self.cohorts}

    @remembered
    def spec(self) -> dict[str, CohortSpec]:
        return {c.name: c for c in self.cohorts}

    @remembered
    def bands(self) -> dict[tuple[str, str], Band]:
        """R24: every band the Storyteller set, by ``(a, b)`` and ``(b, a)``; where a pair
        is listed twice the first entry counts.  Built once a battle (a phase looks a band
        up for each order) and, like :attr:`pools` and :attr:`spec`, carried over by
        ``model_copy``: a battle with other ranges is a new battle (``model_validate``)."""
        out: dict[tuple[str, str], Band] = {}
        for r in self.ranges:
            out.setdefault((r.a, r.b), r.band)
            out.setdefault((r.b, r.a), r.band)
        return out

    def band(self, a: str, b: str) -> Band | None:
        """R24: the band between two cohorts, or ``None`` when the Storyteller set none."""
        return self.bands.get((a, b))

    def enemies(self, a: str, b: str) -> bool:
        """Cohorts on different sides are enemies."""
        return self.spec[a].side != self.spec[b].side

    def snapshot(self) -> dict[str, Any]:
        """The battle without its history and log, plus the log's length: what undo needs
        (R25).  The cohorts' dump is the one made for the same cohort objects last time, if
        it was (:func:`_shared_dump`), and so is the ranges' (a phase never changes them), and
        each standing's dump is the one made for the same object (:func:`state_dump`)."""
        data = self.model_dump(mode="json", exclude={"history", "log", "cohorts", "ranges", "state"})
        data["state"] = state_dump(self.state)
        data["cohorts"] = _shared_dump(self.cohorts)
        data["ranges"] = _shared_dump(self.ranges)
        data = {k: data[k] for k in _SNAPSHOT_KEYS}
        data["log_length"] = len(self.log)
        _SNAPSHOT_ORDERS.insert(0, (data["orders"], self.orders))
        del _SNAPSHOT_ORDERS[4:]
        return data

    def to_data(self) -> dict[str, Any]:
        """A plain, JSON-safe dict that :meth:`from_data` turns back into this battle."""
        return self.model_dump(mode="json")

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Battle:
        return cls.model_validate(data)


_SNAPSHOT_KEYS = tuple(k for k in Battle.model_fields if k not in ("history", "log"))
"""A snapshot's keys, in the order of the battle's fields (the State writes them so)."""
