"""Resolve Phase through the HTTP endpoint, against the same endpoint doing no work.

    python benchmarks/bench_endpoint.py [--repeat 30] [--cohorts 12] [--client VBA]

Starts ``sheetsync serve``'s app under uvicorn on a free 127.0.0.1 port, builds a tracker
for a battle of ``--cohorts`` cohorts, and builds the payload an xlwings client would post
for it once.  Then, ``--repeat`` times, it posts that same payload to ``/api/resolve``
(each one a fresh resolve of phase 1: nothing is applied back) and to ``/api/noop`` (the
same parsing, ``xw.Book(json=...)`` and answer, with no use case).  Reported: the server's
own time per request (``app.state.timings``: opening the payload, the step, the answer)
and the client's round trip, as median and p90, and the ratio resolve/noop.

The bar: Resolve's server-side median under 50 ms for 12 cohorts.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.setdefault("XLWINGS_LICENSE_KEY", "noncommercial")  # xlwings' remote engine

import httpx  # noqa: E402
import openpyxl  # noqa: E402
import yaml  # noqa: E402
from battles import make_battle  # noqa: E402
from test_server import serving  # noqa: E402

from sheetsync.app.server import create_app  # noqa: E402
from sheetsync.app.workbook_cli import new_workbook  # noqa: E402
from sheetsync.backends.xlwings_remote import CLIENTS, payload_from_openpyxl  # noqa: E402

KEY = "bench-key"
GOAL_MS = 50.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def payload_for(cohorts: int, client: str, tmp: Path) -> tuple[dict[str, Any], int]:
    battle = tmp / f"battle{cohorts}.yaml"
    battle.write_text(yaml.safe_dump(make_battle(cohorts), sort_keys=False), encoding="utf-8")
    tracker = tmp / "tracker.xlsx"
    new_workbook(tracker, battle)
    payload = payload_from_openpyxl(openpyxl.load_workbook(tracker), client)
    size = len(httpx.Request("POST", "http://x", json=payload).content)
    return payload, size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cohorts", type=int, default=12)
    ap.add_argument("--client", choices=CLIENTS, default="VBA")
    ap.add_argument("--warmup", type=int, default=2, help="untimed requests of each kind first")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        payload, size = payload_for(args.cohorts, args.client, Path(tmp))
    app = create_app(api_key=KEY)
    round_trip: dict[str, list[float]] = {"resolve": [], "noop": []}
    with serving(app) as url:
        with httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=120) as http:
            for i in range(args.warmup + args.repeat):
                for action in ("resolve", "noop"):
                    t = time.perf_counter()
                    response = http.post(f"/api/{action}", json=payload)
                    elapsed = time.perf_counter() - t
                    response.raise_for_status()
                    if action == "resolve" and not any(
                        a["func"] == "setValues" for a in response.json()["actions"]
                    ):
                        raise SystemExit(f"resolve did not resolve: {response.text[:300]}")
                    if i >= args.warmup:
                        round_trip[action].append(elapsed)

    timed = app.state.timings
    server_side = {
        action: [s for name, s in timed if name == action][args.warmup:] for action in ("resolve", "noop")
    }
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"{args.cohorts} cohorts, {args.client} payload of {size / 1024:.0f} KiB, "
          f"{args.repeat} requests each (after {args.warmup} warm-up)\n")
    print(f"{'':24} | {'median (ms)':>11} | {'p90 (ms)':>8} | {'min (ms)':>8}")
    print("-" * 24 + "-+-" + "-+-".join("-" * w for w in (11, 8, 8)))
    for label, data in (("server  /api/resolve", server_side["resolve"]), ("server  /api/noop", server_side["noop"]),
                        ("client  /api/resolve", round_trip["resolve"]), ("client  /api/noop", round_trip["noop"])):
        ms = [x * 1000 for x in data]
        print(f"{label:24} | {statistics.median(ms):11.1f} | {percentile(ms, 0.9):8.1f} | {min(ms):8.1f}")
    resolve_ms = statistics.median(server_side["resolve"]) * 1000
    noop_ms = statistics.median(server_side["noop"]) * 1000
    print(f"\nratio resolve/noop (server medians): {resolve_ms / noop_ms:.1f}x")
    print(f"Resolve server-side median {resolve_ms:.1f} ms: "
          + ("within" if resolve_ms < GOAL_MS else "OVER") + f" the {GOAL_MS:.0f} ms goal")


if __name__ == "__main__":
    main()
