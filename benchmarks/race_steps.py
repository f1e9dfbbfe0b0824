"""Two Trackers press a button at the same moment on one Google Sheet: how often is the
State left readable, and is the step that was overwritten reported by the next one?

    python benchmarks/race_steps.py [--runs 3]

Each pair runs against the fake Sheets API (tests/fake_sheets_api.py) with the real
gspread client: both steps read before either writes, then the two writes race freely.
A third step follows; it must either report the lost step ("ran at the same moment") or,
for the same step twice, go ahead because it was applied once.
"""

from __future__ import annotations

import argparse
import collections
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_state_collisions as collisions  # noqa: E402
from fake_sheets_api import FakeSheetsServer  # noqa: E402

from sheetsync.app import usecases  # noqa: E402
from sheetsync.core.errors import BattleStateError, SheetSyncError  # noqa: E402

PAIRS = [("resolve", "undo"), ("resolve", "end"), ("undo", "undo"), ("resolve", "resolve")]


class _Racing(collisions._Together):
    """Reads together with the other laptop, then writes as soon as it can."""

    def write_ranges(self, updates: Any) -> None:
        self.inner.write_ranges(updates)


def race(server: FakeSheetsServer, pair: tuple[str, str]) -> tuple[bool, str]:
    backend = collisions._battle_at_phase_2(server)
    barrier = threading.Barrier(2)
    laptops = [_Racing(collisions._backend(server, backend.key), barrier, None, None)  # type: ignore[arg-type]
               for _ in range(2)]
    threads = [threading.Thread(target=usecases.run, args=(action, laptop)) for action, laptop in zip(pair, laptops, strict=True)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    try:
        usecases.export(backend)
        readable = True
    except SheetSyncError:
        readable = False
    try:
        usecases.run("resolve" if pair == ("undo", "undo") else "undo", backend)
        outcome = "applied once"
    except BattleStateError as exc:
        outcome = "reported by the next step" if "ran at the same moment" in str(exc) else f"refused: {exc}"
    return readable, outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs of each pair")
    args = ap.parse_args()
    rows: dict[tuple[str, str], collections.Counter[str]] = {}
    readable: collections.Counter[tuple[str, str]] = collections.Counter()
    with FakeSheetsServer() as server:
        for pair in PAIRS:
            rows[pair] = collections.Counter()
            for _ in range(args.runs):
                ok, outcome = race(server, pair)
                readable[pair] += ok
                rows[pair][outcome] += 1
    print(f"{'pair':<18} {'runs':>4} {'State readable':>15}  outcome")
    for pair in PAIRS:
        outcomes = ", ".join(f"{n} {what}" for what, n in rows[pair].items())
        print(f"{' + '.join(pair):<18} {args.runs:>4} {readable[pair]:>15}  {outcomes}")


if __name__ == "__main__":
    main()
