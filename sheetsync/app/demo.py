"""``sheetsync demo --system exalted``: the embedded example battle, its first long ticks
resolved and written out, and the same battle as a tracker workbook.  A shell over the
system's own rooms: its battle files, its views and its tracker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

__all__ = ["demo"]


def demo(console: Console, system: Any, out_dir: Path, as_json: bool,
         print_json: Callable[[Any], None], ticks: int = 3) -> None:
    """``sheetsync demo --system exalted``: the embedded battle (a Dragon-Blooded-led talon
    against a bandit mob), its derived traits and odds, its first long ticks resolved, and
    the battle file after each written to ``out_dir``, and the same battle as a tracker
    workbook with its first long tick resolved (Build Units, then Next Tick)."""
    import yaml

    from sheetsync.core.registry import room
    from sheetsync.sheets.disk import dump_battle_file

    views = room(system, "views")

    text = system.example_data()
    battle = system.load(yaml.safe_load(text), f"the embedded {system.id} example")
    out_dir.mkdir(parents=True, exist_ok=True)
    example = out_dir / f"{system.id}-example.yaml"
    example.write_text(text, encoding="utf-8")
    values = system.pools_json(battle)
    steps: list[dict[str, Any]] = []
    files: list[str] = []
    for _ in range(ticks):
        step = system.resolve_file(battle)
        battle = step.battle
        path = out_dir / f"{system.id}-after-tick-{step.json['tick']}.yaml"
        dump_battle_file(system.dump(battle), path)
        steps.append(step.json)
        files.append(str(path))
    from sheetsync.app.workbook_cli import demo_system_workbook

    start = system.load(yaml.safe_load(text), f"the embedded {system.id} example")
    workbook = demo_system_workbook(system, start, out_dir / f"{system.id}-tracker.xlsx")
    if as_json:
        print_json({"system": system.id, "values": values, "ticks": steps,
                    "files": {"example": str(example), "after": files, "workbook": str(workbook)}})
        return
    console.rule(f"sheetsync demo: the example {system.title} battle")
    views.print_values(console, values)
    for data in steps:
        views.print_tick(console, data)
    console.print(f"The example battle file: {example}")
    console.print(f"The battle after each long tick: {', '.join(files)}")
    console.print(f"The same battle as a tracker workbook, long tick 0 resolved: {workbook}")
