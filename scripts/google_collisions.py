"""Issue 26, item 2: a resolve and an undo released at the same moment on one Google Sheet,
PAIRS times in each rule system (fake Sheets API, real gspread client, free-racing writes):
how many of the steps lost were reported by the next step, and how many were not.

    PYTHONPATH=. python scripts/google_collisions.py [--pairs 15]
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_issue26_google_collisions as t26  # noqa: E402
import test_state_collisions as t8  # noqa: E402
from fake_sheets_api import FakeSheetsServer  # noqa: E402

from sheetsync.core.errors import BattleStateError  # noqa: E402
from sheetsync.sheets import marks as steps  # noqa: E402


class _Racing(t8._Together):
    def write_ranges(self, updates: Any) -> None:
        self.inner.write_ranges(updates)


def _bbn(server: FakeSheetsServer) -> str:
    return t8._battle_at_phase_2(server).key


MAKERS = {"bbn": _bbn, "hexwar": t26._hexwar, "exalted": t26._exalted}


def pair(server: FakeSheetsServer, system: str) -> str:
    key = MAKERS[system](server)
    barrier = threading.Barrier(2)
    laptops = [_Racing(t26._fresh(server, key), barrier, None, None) for _ in range(2)]  # type: ignore[arg-type]
    errors: list[Exception] = []

    def run(action: str, laptop: Any) -> None:
        try:
            steps.run(action, laptop)
        except Exception as exc:  # noqa: BLE001 - counted below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(a, lap)) for a, lap in zip(("resolve", "undo"), laptops, strict=True)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        return "a step refused at once"
    try:
        steps.run("resolve", t26._fresh(server, key))
    except BattleStateError as exc:
        if "ran at the same moment" in str(exc):
            return "lost, reported"
    return "lost, unreported"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--systems", default="bbn,hexwar,exalted")
    args = ap.parse_args()
    with FakeSheetsServer() as server:
        for system in args.systems.split(","):
            counts: dict[str, int] = {}
            for _ in range(args.pairs):
                outcome = pair(server, system)
                counts[outcome] = counts.get(outcome, 0) + 1
            print(f"{system:<8} {args.pairs} pairs: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())),
                  flush=True)


if __name__ == "__main__":
    main()
