"""Resolve Phase through the HTTP endpoint, against the same endpoint doing no work.

    python benchmarks/bench_endpoint.py [--repeat 30] [--cohorts 12] [--client VBA]
                                        [--engine payload|xlwings|both] [--in-process]
                                        [--system bbn|hexwar|exalted|all] [--units N]

Starts ``sheetsync serve``'s app under uvicorn in a process of its own, on a 127.0.0.1
socket bound here (``--in-process``: on a thread of this process, beside the client),
builds a tracker for a battle of ``--cohorts`` cohorts, and builds the payload an xlwings
client would post for it once.  Then, ``--repeat`` times, it posts that same payload to
``/api/resolve`` (each one a fresh resolve of phase 1: nothing is applied back; from the
second on, the server has read that State before, as a server's next click reads back the
State its last click wrote) and to ``/api/noop`` (the same parsing and answer, with no
step).  Reported: the server's own time per request (the ``Server-Timing`` header of each
answer, or ``app.state.timings`` in process: reading the payload, the step, the encoded
answer) and the client's round trip, as median and p90, and the ratio resolve/noop; from a server
in its own process also the CPU time the step took on the server's thread (the header's
``cpu`` metric), which leaves out the moments a shared machine gave the core to another
tenant.  With ``--engine both`` (the default)
it does this for each engine of the server (:data:`sheetsync.app.server.ENGINES`: the
payload read straight from its JSON, and ``xw.Book(json=...)``) and prints the ratio of
their Resolve medians.

Floors measured in the same run, in this process: ``/api/noop`` (the endpoint with no step)
and the step alone (the tracker's pure step on grids already read, no backend at all, the
collector paused as the server pauses it):
what the server spends beyond them is reading the payload and queueing the answer.  And the
server's whole step in this process, run back to back ("back to back": the third of three
in a row, the caches warm) and once more after 10 ms idle ("after idle": as each request
reaches the server, after a gap in which other work had the core and its caches).

``--system`` picks the tracker: ``bbn`` (the default) a battalion of ``--cohorts`` cohorts,
``hexwar`` a hex battle of ``--units`` units (default 40, ``tests/hex_battles.py``),
``exalted`` an Exalted battle of ``--units`` units (default 10, ``tests/exalted_battles.py``),
each a tracker built (``system_tracker_from``) and its payload made as a remote client
sends it; ``all`` measures the three in turn, one after the other, and ends with a line
per system: its server Resolve (wall and CPU) median, its ratio to the same run's
``/api/noop`` and "met" or "NOT met" against the 6 ms goal.

The bar (issue 12): Resolve's server-side median at most 6 ms for 12 cohorts; issue 23:
the same 6 ms for a 40-unit hex battle and a 10-unit Exalted one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("XLWINGS_LICENSE_KEY", "noncommercial")  # xlwings' remote engine

import httpx  # noqa: E402
import openpyxl  # noqa: E402
import yaml  # noqa: E402
from battles import make_battle  # noqa: E402
from test_server import serving  # noqa: E402

from sheetsync.app.server import ENGINES, create_app  # noqa: E402
from sheetsync.app.workbook_cli import new_workbook  # noqa: E402
from sheetsync.backends.xlwings_remote import CLIENTS, payload_from_openpyxl  # noqa: E402

KEY = "bench-key"
GOAL_MS = 6.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


SYSTEMS = ("bbn", "hexwar", "exalted")
UNITS = {"hexwar": 40, "exalted": 10}
"""The default size of each system's battle (``--units``)."""


def payload_for(cohorts: int, client: str, tmp: Path, system: str = "bbn",
                units: int | None = None) -> tuple[dict[str, Any], int]:
    """The payload ``client`` posts for a tracker of ``system``: a battalion of ``cohorts``
    cohorts, or a hex / Exalted battle of ``units`` units, built ready for its first step."""
    tracker = tmp / f"{system}.xlsx"
    if system == "bbn":
        battle = tmp / f"battle{cohorts}.yaml"
        battle.write_text(yaml.safe_dump(make_battle(cohorts), sort_keys=False), encoding="utf-8")
        new_workbook(tracker, battle)
    else:
        from exalted_battles import make_exalted_battle
        from hex_battles import make_hex_battle

        from sheetsync.app.workbook_cli import system_tracker_from
        from sheetsync.core.registry import find_system

        rules = find_system(system)
        n = units or UNITS[system]
        data = make_hex_battle(n) if system == "hexwar" else make_exalted_battle(n)
        system_tracker_from(tracker, rules, rules.load(data))
    payload = payload_from_openpyxl(openpyxl.load_workbook(tracker), client)
    size = len(httpx.Request("POST", "http://x", json=payload).content)
    return payload, size


def step_alone(payload: dict[str, Any]) -> Callable[[], float]:
    """A timer of the tracker's pure resolve step on grids read once (no backend): each
    call runs it once, with the cyclic collector paused as the server pauses it for a step,
    and returns its seconds."""
    from sheetsync.app.server import collector_paused
    from sheetsync.app.usecases import tracker_steps
    from sheetsync.backends.payload import PayloadBackend

    steps = tracker_steps(PayloadBackend(payload))
    grids = PayloadBackend(payload).read_ranges(steps.read_plan("resolve"))

    def once() -> float:
        with collector_paused():
            t = time.perf_counter()
            steps.step("resolve", grids)
            return time.perf_counter() - t

    return once


IDLE_S = 0.010
"""The idle gap before the "after idle" step: about what a server waits between clicks and more."""


def step_back_to_back(payload: dict[str, Any], engine: str) -> Callable[[], tuple[float, float]]:
    """A timer of the server's whole step (:func:`sheetsync.app.server._step`: the backend on
    the payload, the step, the answer) in this process, with the collector paused as the
    server pauses it: the third of three run back to back, then one more after sleeping
    :data:`IDLE_S`; it returns both their seconds.  Back to back is the floor of the
    server's own figure, the same work with the processor's caches still holding it; after
    idle is that work meeting caches that other work had in the gap, as each request does."""
    from sheetsync.app.server import _step, collector_paused

    def once() -> tuple[float, float]:
        with collector_paused():
            for _ in range(2):
                _step("resolve", payload, engine)
            t = time.perf_counter()
            _step("resolve", payload, engine)
            warm = time.perf_counter() - t
            time.sleep(IDLE_S)
            t = time.perf_counter()
            _step("resolve", payload, engine)
            return warm, time.perf_counter() - t

    return once


SERVER = """
import socket, sys, uvicorn
from sheetsync.app.server import create_app
sock = socket.socket(fileno=int(sys.argv[1]))
uvicorn.Server(uvicorn.Config(create_app(api_key=sys.argv[2], engine=sys.argv[3]), log_level="warning")).run(
    sockets=[sock])
"""


@contextlib.contextmanager
def server_process(engine: str) -> Iterator[str]:
    """``sheetsync serve``'s app under uvicorn in a process of its own (as it runs for real:
    no client in its interpreter), on a socket bound here and handed over; yields its URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(sock.fileno()), KEY, engine],
                            pass_fds=[sock.fileno()], env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server process did not start")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
        sock.close()


def server_times(response: httpx.Response) -> dict[str, float]:
    """The server's own seconds for a step and the CPU seconds of its thread, from its
    ``Server-Timing: step;dur=MS, cpu;dur=MS`` header."""
    metrics = dict(m.strip().split(";dur=") for m in response.headers["server-timing"].split(","))
    return {name: float(ms) / 1000 for name, ms in metrics.items()}


def measure(engines: tuple[str, ...], payload: dict[str, Any], repeat: int, warmup: int,
            in_process: bool = False) -> dict[str, list[float]]:
    """Server-side and round-trip seconds of resolve and noop on a server of each engine,
    and the step alone, taken in turn within each round so that a busy machine weighs on
    all of them alike.  The server runs in a process of its own and says its time in each
    answer's Server-Timing header; ``in_process`` runs it on a thread of this process
    instead (its time then from ``app.state.timings``)."""
    apps = {engine: create_app(api_key=KEY, engine=engine) for engine in engines} if in_process else {}
    out: dict[str, list[float]] = {"step alone": []}
    answers: dict[str, Any] = {}
    alone = step_alone(payload)
    back_to_back = {engine: step_back_to_back(payload, engine) for engine in engines}
    with contextlib.ExitStack() as stack:
        clients = {
            engine: stack.enter_context(httpx.Client(
                base_url=stack.enter_context(serving(apps[engine]) if in_process else server_process(engine)),
                headers={"Authorization": KEY}, timeout=120))
            for engine in engines
        }
        for i in range(warmup + repeat):
            for engine, http in clients.items():
                for action in ("resolve", "noop"):
                    t = time.perf_counter()
                    response = http.post(f"/api/{action}", json=payload)
                    elapsed = time.perf_counter() - t
                    response.raise_for_status()
                    if action == "resolve" and not any(
                        a["func"] == "setValues" for a in response.json()["actions"]
                    ):
                        raise SystemExit(f"resolve did not resolve: {response.text[:300]}")
                    if action == "resolve" and i == 0:
                        answers[engine] = response.json()
                    if i >= warmup:
                        out.setdefault(f"{engine}|client {action}", []).append(elapsed)
                        if not in_process:
                            times = server_times(response)
                            out.setdefault(f"{engine}|server {action}", []).append(times["step"])
                            out.setdefault(f"{engine}|server {action} CPU", []).append(times["cpu"])
            seconds = alone()
            if i >= warmup:
                out["step alone"].append(seconds)
            for engine, timer in back_to_back.items():
                warm, idle = timer()
                if i >= warmup:
                    out.setdefault(f"{engine}|back to back", []).append(warm)
                    out.setdefault(f"{engine}|after idle", []).append(idle)
    if any(answer != answers[engines[0]] for answer in answers.values()):
        raise SystemExit("the engines answered the same Resolve differently")
    for engine, app in apps.items():  # in process: the app's own record of its times
        timed = list(app.state.timings)
        for action in ("resolve", "noop"):
            out[f"{engine}|server {action}"] = [s for name, s in timed if name == action][warmup:]
    return out


def report(label: str, engines: tuple[str, ...], data: dict[str, list[float]]) -> dict[str, float]:
    """Print one system's table and figures (as the battalion's always were); its medians."""
    print(f"{'engine':8} | {'':18} | {'median (ms)':>11} | {'p90 (ms)':>8} | {'min (ms)':>8}")
    print("-" * 8 + "-+-" + "-" * 18 + "-+-" + "-+-".join("-" * w for w in (11, 8, 8)))
    medians: dict[str, float] = {}
    rows = [f"{engine}|{kind}" for engine in engines
            for kind in ("server resolve", "server resolve CPU", "back to back", "after idle", "server noop",
                         "client resolve", "client noop")
            if f"{engine}|{kind}" in data] + ["step alone"]
    for key in rows:
        ms = [x * 1000 for x in data[key]]
        medians[key] = statistics.median(ms)
        engine, _, name = key.rpartition("|")
        print(f"{engine:8} | {name:18} | {medians[key]:11.1f} | {percentile(ms, 0.9):8.1f} | {min(ms):8.1f}")
    alone = medians["step alone"]
    print()
    for engine in engines:
        resolve_ms, noop_ms = medians[f"{engine}|server resolve"], medians[f"{engine}|server noop"]
        print(f"{label} {engine}: Resolve server-side median {resolve_ms:.1f} ms = {resolve_ms / noop_ms:.0f}x noop "
              f"({noop_ms:.2f} ms), {resolve_ms / alone:.2f}x the step alone ({alone:.1f} ms), "
              f"{resolve_ms - alone:+.1f} ms beyond it; "
              + ("within" if resolve_ms <= GOAL_MS else "OVER") + f" the {GOAL_MS:.0f} ms bar")
        warm, idle = medians[f"{engine}|back to back"], medians[f"{engine}|after idle"]
        print(f"{label} {engine}: the same step in this process, median {warm:.1f} ms back to back ("
              + ("within" if warm <= GOAL_MS else "OVER") + f" the {GOAL_MS:.0f} ms bar) and {idle:.1f} ms after "
              f"{IDLE_S * 1000:.0f} ms idle ({idle - warm:+.1f} ms: caches the gap left cold); the server's Resolve "
              f"is {resolve_ms / warm:.2f}x back to back, {resolve_ms / idle:.2f}x after idle")
        cpu = f"{engine}|server resolve CPU"
        if cpu in medians:
            print(f"{label} {engine}: the step's CPU time on the server, median {medians[cpu]:.1f} ms "
                  f"({medians[cpu] / resolve_ms:.0%} of its wall time; below 100%, the core was busy with another "
                  "tenant): " + ("within" if medians[cpu] <= GOAL_MS else "OVER") + f" the {GOAL_MS:.0f} ms bar")
    if len(engines) == 2:
        fast, slow = medians["payload|server resolve"], medians["xlwings|server resolve"]
        print(f"{label} xlwings/payload (server Resolve medians): {slow / fast:.1f}x")
    print()
    return medians


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cohorts", type=int, default=12)
    ap.add_argument("--system", choices=(*SYSTEMS, "all"), default="bbn",
                    help="the tracker: a battalion (the default), a hex battle, an Exalted one, or each in turn")
    ap.add_argument("--units", type=int, default=None,
                    help="units of the hex / Exalted battle (default: 40 hex, 10 Exalted)")
    ap.add_argument("--client", choices=CLIENTS, default="VBA")
    ap.add_argument("--engine", choices=(*ENGINES, "both"), default="both")
    ap.add_argument("--warmup", type=int, default=2, help="untimed requests of each kind first")
    ap.add_argument("--in-process", action="store_true",
                    help="run the server on a thread of this process (beside the client) instead of its own process")
    args = ap.parse_args()

    systems = SYSTEMS if args.system == "all" else (args.system,)
    engines = ENGINES if args.engine == "both" else (args.engine,)
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    summary: list[tuple[str, str, dict[str, float]]] = []
    for system in systems:
        with tempfile.TemporaryDirectory() as tmp:
            payload, size = payload_for(args.cohorts, args.client, Path(tmp), system, args.units)
        data = measure(engines, payload, args.repeat, args.warmup, args.in_process)
        label = (f"bbn ({args.cohorts} cohorts)" if system == "bbn"
                 else f"{system} ({args.units or UNITS[system]} units)")
        print(f"{label}, {args.client} payload of {size / 1024:.0f} KiB, "
              f"{args.repeat} requests each (after {args.warmup} warm-up), server "
              + ("on a thread beside the client" if args.in_process else "in its own process (Server-Timing)") + "\n")
        summary.append((system, label, report(system, engines, data)))
    print(f"Against the {GOAL_MS:.0f} ms goal (server-side Resolve medians; ratio to the same run's /api/noop):")
    for _system, label, medians in summary:
        for engine in engines:
            resolve_ms, noop_ms = medians[f"{engine}|server resolve"], medians[f"{engine}|server noop"]
            cpu = medians.get(f"{engine}|server resolve CPU")
            shown = cpu if cpu is not None else resolve_ms
            print(f"  {label:20} {engine:8} wall {resolve_ms:6.1f} ms"
                  + (f", CPU {cpu:6.1f} ms" if cpu is not None else "")
                  + f" = {resolve_ms / noop_ms:5.1f}x noop ({noop_ms:.2f} ms): "
                  + ("met" if shown <= GOAL_MS else "NOT met") + (" (CPU)" if cpu is not None else " (wall)"))


if __name__ == "__main__":
    main()
