"""The endpoint's memory over many requests: it must stay flat (issue 8, item 18).

    python benchmarks/bench_endpoint_memory.py [--requests 2000] [--every 200] [--cohorts 12]
                                               [--engine payload|xlwings]

Starts ``sheetsync serve``'s app under uvicorn on a free 127.0.0.1 port (in this process,
so its resident set is this process's), builds one tracker payload, and posts it
``--requests`` times, cycling through /api/resolve (a real resolve of phase 1, answered
with its actions), /api/undo (refused: an alert) and /api/noop.  Every request sends a
workbook that differs from the last one in one cell (a counter in an empty cell of the
Battle sheet, which no step reads), as a real spreadsheet's content changes between
clicks: a cache keyed by what a client sent then grows, where an identical payload would
hit it every time and hide it (issue 12).  It prints the resident set size (RSS, from
/proc/self/status) at the start, every ``--every`` requests, and the growth from the
first report after warm-up to the end, against a 10 MB bar.  The xlwings books still open
in the remote engine are printed alongside: they must not grow.  ``--engine`` is the
server's (see :data:`sheetsync.app.server.ENGINES`).
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.setdefault("XLWINGS_LICENSE_KEY", "noncommercial")  # xlwings' remote engine

import httpx  # noqa: E402
from bench_endpoint import payload_for  # noqa: E402
from test_server import serving  # noqa: E402

from sheetsync.app.server import ENGINES, create_app  # noqa: E402
from sheetsync.backends.xlwings_remote import CLIENTS, open_remote_books  # noqa: E402

KEY = "bench-key"
GOAL_MB = 10.0
ACTIONS = ("resolve", "undo", "noop")


def rss_mb() -> float:
    """This process's resident set size in MB (VmRSS)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--every", type=int, default=200)
    ap.add_argument("--cohorts", type=int, default=12)
    ap.add_argument("--client", choices=CLIENTS, default="Google Apps Script")
    ap.add_argument("--warmup", type=int, default=30, help="requests before the baseline")
    ap.add_argument("--engine", choices=ENGINES, default="payload")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        payload, size = payload_for(args.cohorts, args.client, Path(tmp))
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    battle = next(s for s in payload["sheets"] if s["name"] == "Battle")
    spare_row, spare_col = len(battle["values"]) - 1, len(battle["values"][-1]) - 1
    if battle["values"][spare_row][spare_col] not in (None, ""):
        raise SystemExit("the Battle sheet's last cell is not empty: pick another cell to vary")
    print(f"{args.cohorts} cohorts, {args.client} payload of {size / 1024:.0f} KiB; "
          f"{args.requests} requests cycling {', '.join(ACTIONS)}, each payload different; "
          f"engine {args.engine}\n")
    app = create_app(api_key=KEY, engine=args.engine)
    start_mb = rss_mb()
    print(f"{'requests':>8} | {'RSS (MB)':>8} | {'open books':>10} | {f's/{args.every} req':>9}")
    print(f"{'start':>8} | {start_mb:8.1f} | {open_remote_books():>10} | {'':>9}")
    baseline = None
    with serving(app) as url, httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=120) as http:
        t = time.perf_counter()
        for i in range(1, args.warmup + args.requests + 1):
            action = ACTIONS[i % len(ACTIONS)]
            sent = copy.copy(payload)
            sent["sheets"] = [dict(s) for s in payload["sheets"]]
            varied = next(s for s in sent["sheets"] if s["name"] == "Battle")
            varied["values"] = [*battle["values"][:spare_row],
                                [*battle["values"][spare_row][:spare_col], f"click {i}"]]
            response = http.post(f"/api/{action}", json=sent)
            if response.status_code != 200:
                raise SystemExit(f"/api/{action} answered {response.status_code}: {response.text[:300]}")
            if i == args.warmup:
                gc.collect()
                baseline = rss_mb()
                print(f"{'warm-up':>8} | {baseline:8.1f} | {open_remote_books():>10} | {'':>9}")
                t = time.perf_counter()
            elif i > args.warmup and (i - args.warmup) % args.every == 0:
                now = time.perf_counter()
                print(f"{i - args.warmup:>8} | {rss_mb():8.1f} | {open_remote_books():>10} | {now - t:9.1f}")
                t = now
    gc.collect()
    end_mb = rss_mb()
    assert baseline is not None
    growth = end_mb - baseline
    print(f"\ngrowth over {args.requests} requests after warm-up: {growth:+.1f} MB "
          f"({growth * 1024 / args.requests:+.1f} KB per request; from the start: {end_mb - start_mb:+.1f} MB)")
    print(("within" if growth <= GOAL_MB else "OVER") + f" the {GOAL_MB:.0f} MB bar")


if __name__ == "__main__":
    main()
