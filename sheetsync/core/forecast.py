"""What a rule system's forecast adapter is (issue 11, part 1): the small part of the
forecast (:mod:`sheetsync.app.forecast`) that knows a rule system.  It says what an order,
a side and a member are, resolves one step from a battle with a given roller, repeats the
declared orders for the next step ("standing orders"), measures the battle, and gives the
exact chances where they are cheap.  Each system's ``forecast`` room holds its adapter;
the simulation, the statistics and every surface are the forecast's, written once.
Standard library only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sheetsync.core.dice import Roller

__all__ = ["Exact", "ForecastAdapter", "OrderInfo", "no_orders"]


@dataclass(frozen=True)
class OrderInfo:
    """One declared order as the forecast shows it: its place (``orders[2]`` or the cell),
    who acts, what it does and against whom."""

    index: int
    actor: str
    task: str
    target: str


@dataclass(frozen=True)
class Exact:
    """An exact chance, computed from the rules rather than simulated, and what it
    assumes (``basis``).  ``expected`` is an exact expectation where the rules give one
    (H11's expected casualties)."""

    p: float
    basis: str
    expected: float | None = None
    fraction: str | None = None
    """``p`` as an exact fraction (``"3/5"``), where the rules give one."""


class ForecastAdapter(Protocol):
    """What the forecast needs of a rule system (one object per system).

    * :meth:`prepare` checks the battle can be forecast (there are declared orders, the
      battle is not over) and returns it without its undo history;
    * :meth:`step` resolves one step (a phase, a turn, a tick) with ``roller`` and returns
      the next battle and, per declared order, ``True`` (it succeeded), ``False`` (it was
      taken and failed) or ``None`` (it was refused);
    * :meth:`standing` gives the next step's orders: the declared ones again, typed dice
      cleared, those that have become impossible dropped;
    * :meth:`levels` measures each entity (cohort, unit) for :attr:`level_name`;
    * :meth:`flags` says, for each member and each of :attr:`step_flags` (after one step)
      or :attr:`end_flags` (at the end), whether it holds;
    * :meth:`sides_in` lists the sides still in the fight.
    """

    system: str
    entity_word: str
    level_name: str
    level_loss: int
    """+1 when a lower level is a loss (Health), -1 when a higher one is (casualties)."""
    step_flags: tuple[str, ...]
    end_flags: tuple[str, ...]

    def prepare(self, battle: Any) -> Any: ...

    def sides(self, battle: Any) -> list[str]: ...

    def entities(self, battle: Any) -> list[tuple[str, str]]: ...

    def members(self, battle: Any) -> list[tuple[str, str]]: ...

    def orders(self, battle: Any) -> list[OrderInfo]: ...

    def exact(self, battle: Any) -> list[Exact | None]: ...

    def exact_levels(self, battle: Any) -> dict[str, Exact]: ...

    def step(self, battle: Any, roller: Roller) -> tuple[Any, list[bool | None]]: ...

    def standing(self, declared: Any, now: Any) -> Any | None: ...

    def levels(self, battle: Any) -> tuple[int, ...]: ...

    def flags(self, battle: Any, which: str) -> tuple[bool, ...]: ...

    def sides_in(self, battle: Any) -> list[str]: ...

    def dump(self, battle: Any) -> dict[str, Any]: ...

    def load(self, data: dict[str, Any]) -> Any: ...


def no_orders(word: str, step: int, hint: str) -> Exception:
    """The refusal of a forecast from a step with no declared orders."""
    from sheetsync.core.errors import BattleStateError

    return BattleStateError(f"there is nothing to forecast: {word} {step} has no declared orders. {hint}")
