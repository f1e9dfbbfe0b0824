"""Render the README's picture of the hex map: the embedded example battle
(``sheetsync/systems/hexwar/example.yaml``) after its first turn, resolved with the battle's
own seeded dice, as ``sheetsync map`` draws it.

    python scripts/hexmap.py            # writes docs/img/hexmap.png
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's sheetsync, whichever one is installed

from sheetsync.systems.hexwar.files.loader import load_battle  # noqa: E402
from sheetsync.systems.hexwar.picture import font_note, save_map_png  # noqa: E402
from sheetsync.systems.hexwar.rules import example_battle_data, resolve_turn  # noqa: E402


def main() -> None:
    battle = load_battle(yaml.safe_load(example_battle_data()), "sheetsync/systems/hexwar/example.yaml")
    after = resolve_turn(battle).battle
    note = font_note()
    if note:
        print(f"note: {note}")
    out = save_map_png(after, ROOT / "docs" / "img" / "hexmap.png")
    print(out.relative_to(ROOT))


if __name__ == "__main__":
    main()
