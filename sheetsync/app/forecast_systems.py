"""The forecast's adapters by rule system (issue 11, part 1).  Each system keeps its
adapter in its own ``forecast`` room; this map names them lazily ("module:class", as the
registry of rule systems does), so the forecast imports a system only when it runs one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any

from sheetsync.core.forecast import Exact, ForecastAdapter, OrderInfo

__all__ = ["ADAPTERS", "Exact", "ForecastAdapter", "OrderInfo", "adapter_for"]

_PATHS: dict[str, str] = {
    "bbn": "sheetsync.systems.bbn.forecast:BbnForecast",
    "hexwar": "sheetsync.systems.hexwar.forecast:HexForecast",
    "exalted": "sheetsync.systems.exalted.forecast:ExaltedForecast",
}


class _Adapters(Mapping[str, type[Any]]):
    """The adapter classes by system id, each imported on first use."""

    def __getitem__(self, system_id: str) -> type[Any]:
        module, _, name = _PATHS[system_id].partition(":")
        cls: type[Any] = getattr(import_module(module), name)
        return cls

    def __iter__(self) -> Iterator[str]:
        return iter(_PATHS)

    def __len__(self) -> int:
        return len(_PATHS)


ADAPTERS: Mapping[str, type[Any]] = _Adapters()
"""The rule systems the forecast runs, by system id.  A system plugs in by adding its
adapter here."""


def adapter_for(system_id: str) -> ForecastAdapter:
    """The forecast adapter of a rule system, or a clear error for one that has none yet."""
    from sheetsync.core.errors import BattleStateError

    try:
        cls = ADAPTERS[system_id]
    except KeyError:
        raise BattleStateError(f"the forecast does not run {system_id} battles yet (it runs: "
                               f"{', '.join(ADAPTERS)})") from None
    adapter: ForecastAdapter = cls()
    return adapter
