"""The battle forecast (issue 11, part 1): how the next step and the battle are likely to go.

``sheetsync forecast FILE`` simulates from the battle as it stands, with the system's own
engine and seeded dice, and reports:

1. **the next step, exactly as declared**: each order's chance to succeed (exact where the
   rules make it cheap, simulated always), each cohort's or unit's level after the step
   (Health, casualties) as a distribution, and each member's chance of each step flag
   (Knocked Out, Dead; destroyed);
2. **the battle to its end under standing orders**: each side repeats its declared orders
   every step, dropping those that have become impossible, until one side is out of the
   fight or ``phases`` steps have passed: each side's chance to win, the number of steps,
   the expected losses per cohort or unit, and each member's chance of each end flag
   (Dead, Torpor; destroyed).

Every simulated figure has a 95% confidence interval: Wilson's for a proportion, the
normal one for a mean, clipped to the values the figure can take (issue 22: a count of
steps is at least 1, a loss no less than the most the entity could regain), so no
interval reaches below zero for a figure that cannot.  Exact chances are given as
computed, unrounded.  Run ``i`` rolls its dice from ``f"{seed}:forecast:{i}"``, and runs
are tallied in fixed chunks with integer sums, so the same seed gives the same forecast
whatever the number of worker processes.  Nothing here writes: the battle is never
changed (see :mod:`sheetsync.app.forecast_io` for the surfaces).

The rule-system parts are adapters (:mod:`sheetsync.app.forecast_systems`).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sheetsync.app.forecast_systems import ForecastAdapter, adapter_for
from sheetsync.core.dice import RandomRoller

__all__ = ["CHUNK", "Tally", "forecast", "mean_interval", "processes_available", "run_chunk", "wilson"]

CHUNK = 250
"""Runs per chunk: the unit of work a worker process takes, and of the progress bar."""

Z95 = 1.959963984540054
DRAW = "(draw)"
"""Every side out of the fight in the same step."""
UNDECIDED = "(undecided)"
"""Both sides still in the fight after the last step (``phases``), or no order left
(the two are told apart in the report's ``undecided``)."""


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for ``k`` successes in ``n`` trials (95% by default)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # none (all) of the trials: the bound is exactly 0 (1), not a rounding error away
    return (0.0 if k <= 0 else max(0.0, centre - half)), (1.0 if k >= n else min(1.0, centre + half))


def mean_interval(total: int, squares: int, n: int, z: float = Z95, *, floor: float | None = None,
                  ceiling: float | None = None) -> tuple[float, float, float]:
    """The mean of ``n`` whole numbers given their sum and sum of squares, and its normal
    95% interval (the sample standard deviation over √n), clipped to ``floor`` and
    ``ceiling``, the least and most each number can be: the mean of such numbers is never
    outside them, so neither is its interval (issue 22)."""
    if n <= 0:
        return 0.0, 0.0, 0.0
    mean = total / n
    var = max(0.0, (squares - total * total / n) / (n - 1)) if n > 1 else 0.0
    half = z * math.sqrt(var / n)
    low, high = mean - half, mean + half
    if floor is not None:
        low = max(low, floor)
    if ceiling is not None:
        high = min(high, ceiling)
    return mean, low, high


def _r(x: float) -> float:
    return round(x, 4)


def _prop(k: int, n: int) -> dict[str, Any]:
    low, high = wilson(k, n)
    return {"p": _r(k / n if n else 0.0), "low": _r(low), "high": _r(high), "count": k}


def _mean(total: int, squares: int, n: int, floor: float | None = None, ceiling: float | None = None
          ) -> dict[str, Any]:
    mean, low, high = mean_interval(total, squares, n, floor=floor, ceiling=ceiling)
    return {"mean": _r(mean), "low": _r(low), "high": _r(high)}


@dataclass
class Tally:
    """The integer counts of some runs; two tallies add up (:meth:`add`)."""

    runs: int = 0
    ok: list[int] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)
    levels: list[Counter[int]] = field(default_factory=list)
    step_flags: list[int] = field(default_factory=list)
    winners: Counter[str] = field(default_factory=Counter)
    steps: Counter[int] = field(default_factory=Counter)
    stalled: Counter[int] = field(default_factory=Counter)
    """The undecided runs that stopped before the last step because no order was left,
    by the steps they fought (the rest of the undecided ones fought every step)."""
    loss: list[int] = field(default_factory=list)
    loss_sq: list[int] = field(default_factory=list)
    end_flags: list[int] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        if not self.runs:
            self.ok, self.refused = [0] * len(other.ok), [0] * len(other.refused)
            self.levels = [Counter() for _ in other.levels]
            self.step_flags, self.end_flags = [0] * len(other.step_flags), [0] * len(other.end_flags)
            self.loss, self.loss_sq = [0] * len(other.loss), [0] * len(other.loss_sq)
        self.runs += other.runs
        for mine, theirs in ((self.ok, other.ok), (self.refused, other.refused), (self.step_flags, other.step_flags),
                             (self.end_flags, other.end_flags), (self.loss, other.loss), (self.loss_sq, other.loss_sq)):
            for i, v in enumerate(theirs):
                mine[i] += v
        for c, oc in zip(self.levels, other.levels, strict=True):
            c.update(oc)
        self.winners.update(other.winners)
        self.steps.update(other.steps)
        self.stalled.update(other.stalled)


def run_chunk(system_id: str, data: dict[str, Any], seed: int | str, start: int, count: int, phases: int) -> Tally:
    """Simulate runs ``start`` … ``start + count − 1`` of the battle ``data`` (the adapter's
    dump) and tally them.  A top-level function, so a worker process can run it."""
    adapter = adapter_for(system_id)
    battle = adapter.load(data)
    return _run(adapter, battle, seed, start, count, phases)


_WORKER: tuple[ForecastAdapter, Any] | None = None
"""In a worker process: its adapter and the battle, loaded once (:func:`_init_worker`)."""


def _init_worker(system_id: str, data: dict[str, Any]) -> None:
    """A worker process's start: load the battle once, so each chunk ships only its
    numbers (seed, first run, count, phases) and not the battle."""
    global _WORKER
    adapter = adapter_for(system_id)
    _WORKER = (adapter, adapter.load(data))


def _worker_chunk(seed: int | str, start: int, count: int, phases: int) -> Tally:
    """Runs ``start`` … ``start + count − 1`` of the worker's battle (:func:`_init_worker`)."""
    if _WORKER is None:
        raise RuntimeError("the forecast worker was started without its battle")
    adapter, battle = _WORKER
    return _run(adapter, battle, seed, start, count, phases)


def _run(adapter: ForecastAdapter, battle: Any, seed: int | str, start: int, count: int, phases: int) -> Tally:
    n_orders = len(adapter.orders(battle))
    start_levels = adapter.levels(battle)
    t = Tally(runs=count, ok=[0] * n_orders, refused=[0] * n_orders, levels=[Counter() for _ in start_levels],
              loss=[0] * len(start_levels), loss_sq=[0] * len(start_levels))
    sign = adapter.level_loss
    for i in range(start, start + count):
        roller = RandomRoller(f"{seed}:forecast:{i}")
        now, ok = adapter.step(battle, roller)
        for j, x in enumerate(ok):
            if x is None:
                t.refused[j] += 1
            elif x:
                t.ok[j] += 1
        for c, v in zip(t.levels, adapter.levels(now), strict=True):
            c[v] += 1
        flags = adapter.flags(now, "step")
        if not t.step_flags:
            t.step_flags = [0] * len(flags)
        for j, f in enumerate(flags):
            t.step_flags[j] += f
        steps = 1
        sides = adapter.sides_in(now)
        stalled = False
        while len(sides) >= 2 and steps < phases:
            nxt = adapter.standing(battle, now)
            if nxt is None:
                stalled = True
                break
            now, _ = adapter.step(nxt, roller)
            steps += 1
            sides = adapter.sides_in(now)
        t.winners[sides[0] if len(sides) == 1 else DRAW if not sides else UNDECIDED] += 1
        t.steps[steps] += 1
        if stalled:
            t.stalled[steps] += 1
        for j, (a, b) in enumerate(zip(start_levels, adapter.levels(now), strict=True)):
            lost = sign * (a - b)
            t.loss[j] += lost
            t.loss_sq[j] += lost * lost
        flags = adapter.flags(now, "end")
        if not t.end_flags:
            t.end_flags = [0] * len(flags)
        for j, f in enumerate(flags):
            t.end_flags[j] += f
    return t


def _chunks(runs: int) -> list[tuple[int, int]]:
    return [(s, min(CHUNK, runs - s)) for s in range(0, runs, CHUNK)]


def _default_workers(runs: int) -> int:
    return max(1, min(os.cpu_count() or 1, (runs + CHUNK - 1) // CHUNK))


def processes_available() -> bool:
    """Whether worker processes can be started here: not under Pyodide (``emscripten``), nor
    where ``multiprocessing`` can't be imported (issue 25).  Where they can't, the forecast
    runs every chunk in this process: the same chunks, tallied in the same order, so the
    same numbers for the same seed."""
    import sys

    if sys.platform in ("emscripten", "wasi"):
        return False
    try:
        import multiprocessing  # noqa: F401 - only whether it imports
    except ImportError:
        return False
    return True


def simulate(adapter: ForecastAdapter, battle: Any, *, runs: int, phases: int, seed: int | str,
             workers: int | None = None, progress: Callable[[int], None] | None = None) -> Tally:
    """Run ``runs`` simulations in chunks of :data:`CHUNK`, on ``workers`` processes (all
    cores by default; 1 runs here, as does any number where no process can be started:
    :func:`processes_available`), and return their tally.  ``progress`` is told the
    number of runs each finished chunk adds.

    Each worker gets the battle once, when it starts (:func:`_init_worker`); a chunk is
    then four numbers out and one :class:`Tally` back.  Run ``i`` rolls its own seeded
    dice, so which worker runs which chunk changes nothing."""
    chunks = _chunks(runs)
    workers = _default_workers(runs) if workers is None else max(1, workers)
    if workers > 1 and not processes_available():
        workers = 1
    total = Tally()
    if workers == 1 or len(chunks) == 1:
        for start, count in chunks:
            total.add(_run(adapter, battle, seed, start, count, phases))
            if progress:
                progress(count)
        return total
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    data = adapter.dump(battle)
    parts: dict[int, Tally] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_init_worker, initargs=(adapter.system, data)) as pool:
        futures = {pool.submit(_worker_chunk, seed, start, count, phases): start for start, count in chunks}
        for fut in as_completed(futures):
            parts[futures[fut]] = fut.result()
            if progress:
                progress(parts[futures[fut]].runs)
    for start, _ in chunks:  # the same sums in the same order, whatever finished first
        total.add(parts[start])
    return total


def _check_args(runs: int, phases: int) -> None:
    from sheetsync.core.errors import InputError, Problem

    problems = []
    if runs < 1:
        problems.append(Problem("", f"--runs {runs}: the forecast needs at least 1 run (10000 is usual)"))
    if phases < 1:
        problems.append(Problem("", f"--phases {phases}: the battle needs at least 1 step to be forecast"))
    if problems:
        raise InputError(problems)


def forecast(battle: Any, system_id: str, *, runs: int = 10000, phases: int = 12, seed: int | str | None = None,
             workers: int | None = None, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The forecast of ``battle`` (a battle of rule system ``system_id``) as JSON data:
    ``next_step`` (orders, entities, members) and ``to_the_end`` (sides, steps, entities,
    members).  ``seed`` defaults to the battle's own seed (R25, H8), else 0."""
    _check_args(runs, phases)
    adapter = adapter_for(system_id)
    battle = adapter.prepare(battle)
    seed = seed if seed is not None else battle.seed
    tally = simulate(adapter, battle, runs=runs, phases=phases, seed=seed, workers=workers, progress=progress)
    return _report(adapter, battle, tally, runs=runs, phases=phases, seed=seed)


Bounds = tuple[float | None, float | None]


def _level_bounds(adapter: ForecastAdapter, battle: Any, count: int) -> list[Bounds]:
    """Each entity's least and most level (``None``: no bound), from the adapter's
    ``level_bounds`` where it has one (issue 22)."""
    fn = getattr(adapter, "level_bounds", None)
    return list(fn(battle)) if fn is not None else [(None, None)] * count


def _loss_bounds(adapter: ForecastAdapter, now: int, bounds: Bounds) -> Bounds:
    """The least and most an entity can lose from level ``now`` (a loss is ``now`` less the
    level, or the reverse where a higher level is the loss)."""
    low, high = bounds
    if adapter.level_loss > 0:
        return (None if high is None else now - high), (None if low is None else now - low)
    return (None if low is None else low - now), (None if high is None else high - now)


def _report(adapter: ForecastAdapter, battle: Any, t: Tally, *, runs: int, phases: int,
            seed: int | str) -> dict[str, Any]:
    n = t.runs
    exact = adapter.exact(battle)
    exact_levels = adapter.exact_levels(battle)
    orders = []
    for info, ex, ok, refused in zip(adapter.orders(battle), exact, t.ok, t.refused, strict=True):
        row: dict[str, Any] = {"order": info.index, "actor": info.actor, "task": info.task, "target": info.target,
                               "success": _prop(ok, n), "refused": _prop(refused, n), "exact": None}
        if ex is not None:  # issue 22: exact figures as computed, unrounded
            row["exact"] = {"p": ex.p, "basis": ex.basis,
                            **({"expected": ex.expected} if ex.expected is not None else {}),
                            **({"fraction": ex.fraction} if ex.fraction is not None else {})}
        orders.append(row)
    start_levels = adapter.levels(battle)
    bounds = _level_bounds(adapter, battle, len(start_levels))
    members = adapter.members(battle)
    entities = []
    for j, ((name, side), counts) in enumerate(zip(adapter.entities(battle), t.levels, strict=True)):
        total = sum(v * c for v, c in counts.items())
        squares = sum(v * v * c for v, c in counts.items())
        row = {"name": name, "side": side, "now": start_levels[j],
               "after": _mean(total, squares, n, *bounds[j]),
               "distribution": [[v, _r(c / n)] for v, c in sorted(counts.items())]}
        ex = exact_levels.get(name)
        if ex is not None and ex.expected is not None:
            row["exact"] = {"mean": ex.expected, "destroyed": ex.p, "basis": ex.basis}
        entities.append(row)
    k = len(adapter.step_flags)
    step_members = [{"entity": e, "name": m,
                     **{flag: _prop(t.step_flags[i * k + f], n) for f, flag in enumerate(adapter.step_flags)}}
                    for i, (e, m) in enumerate(members)]
    k = len(adapter.end_flags)
    end_members = [{"entity": e, "name": m,
                    **{flag: _prop(t.end_flags[i * k + f], n) for f, flag in enumerate(adapter.end_flags)}}
                   for i, (e, m) in enumerate(members)]
    steps_total = sum(s * c for s, c in t.steps.items())
    steps_sq = sum(s * s * c for s, c in t.steps.items())
    outcomes = [*adapter.sides(battle), DRAW, UNDECIDED]
    stalled = sum(t.stalled.values())
    undecided = t.winners.get(UNDECIDED, 0)
    decided = t.steps - t.stalled
    decided.subtract({phases: undecided - stalled})
    decided = +decided
    n_decided = sum(decided.values())
    return {
        "system": adapter.system,
        "step": next((v for v in (getattr(battle, a, None) for a in ("phase", "turn", "tick")) if v is not None), None),
        "runs": n, "phases": phases, "seed": seed,
        "entity": adapter.entity_word, "level": adapter.level_name,
        "next_step": {"orders": orders, "entities": entities, "members": step_members},
        "to_the_end": {
            "sides": [{"side": s, "win": _prop(t.winners.get(s, 0), n)} for s in outcomes],
            "undecided": {"at_last_step": _prop(undecided - stalled, n), "no_order_left": _prop(stalled, n),
                          "no_order_left_steps": ({**_mean(sum(s * c for s, c in t.stalled.items()),
                                                           sum(s * s * c for s, c in t.stalled.items()), stalled,
                                                           1, phases)} if stalled else None)},
            "steps": {**_mean(steps_total, steps_sq, n, 1, phases),
                      "counts": "every battle, decided or not",
                      "distribution": [[s, _r(c / n)] for s, c in sorted(t.steps.items())],
                      "decided": ({**_mean(sum(s * c for s, c in decided.items()),
                                           sum(s * s * c for s, c in decided.items()), n_decided, 1, phases),
                                   "runs": n_decided} if n_decided else None)},
            "entities": [{"name": name, "side": side,
                          "loss": _mean(t.loss[j], t.loss_sq[j], n, *_loss_bounds(adapter, start_levels[j], bounds[j]))}
                         for j, (name, side) in enumerate(adapter.entities(battle))],
            "members": end_members,
        },
    }
