"""The rule-system seam: the registry, the tracker's mark, and the battle-file commands
over every registered system (issue 9, part 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.core.errors import InputError, SheetFormatError
from sheetsync.core.registry import (
    Mark,
    find_system,
    parse_mark,
    room,
    system_ids,
    system_of_data,
    tracker_system_ids,
)
from sheetsync.core.system import ACTIONS, RuleSystem, step_of
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import MemoryBackend

runner = CliRunner()
SYSTEMS = system_ids()


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("system_id", tracker_system_ids())
def test_every_system_is_a_rule_system_with_the_four_steps(system_id: str) -> None:
    system = find_system(system_id)
    assert isinstance(system, RuleSystem)
    assert system.id == system_id and system.version >= 1
    assert tuple(s.action for s in system.steps) == ACTIONS
    assert len({s.caption for s in system.steps}) == 4 and all(s.sub.isidentifier() for s in system.steps)
    assert step_of(system, "resolve").caption in ("Resolve Phase", "Resolve Turn", "Next Tick")


def test_aliases_find_their_system_and_a_typo_gets_a_suggestion() -> None:
    assert find_system("battalion").id == "bbn" and find_system("HEX").id == "hexwar"
    assert find_system(None).id == "bbn"
    with pytest.raises(InputError, match=r"no rule system 'hexwr' \(did you mean 'hexwar'\?\)"):
        find_system("hexwr")


def test_a_room_is_found_by_id_alias_or_system_and_an_unknown_system_is_refused() -> None:
    """The shells reach a system's rooms through the registry (issue 24)."""
    assert room("bbn", "views").__name__ == "sheetsync.systems.bbn.views"
    assert room("hex", "tracker.layout").__name__ == "sheetsync.systems.hexwar.tracker.layout"
    assert room(find_system("exalted"), "files.schema").__name__ == "sheetsync.systems.exalted.files.schema"
    with pytest.raises(InputError, match=r"no rule system 'hexwr' \(did you mean 'hexwar'\?\)"):
        room("hexwr", "views")


@pytest.mark.parametrize("system_id", system_ids())
def test_every_system_views_print_a_step_under_one_name(system_id: str) -> None:
    """Same rooms, same names: a shell prints any system's step without asking which it is."""
    views = room(system_id, "views")
    assert callable(views.print_step) and "print_step" in views.__all__


@pytest.mark.parametrize("system_id", system_ids())
def test_every_system_has_an_importing_room_under_the_same_names(system_id: str) -> None:
    """Issue 24: what a CSV row becomes is each system's ``importing`` room's to say, under
    one name in every system; the import shells only dispatch to it."""
    importing = room(system_id, "importing")
    assert importing.__name__ == f"sheetsync.systems.{system_id}.importing"
    for name in ("CSV_SHEETS", "csv_columns", "battle_from_csv"):
        assert name in importing.__all__
    for sheet in importing.CSV_SHEETS:
        block, columns = importing.csv_columns(sheet)
        assert columns and all(c in block.columns for c in columns)


def test_registry_imports_a_system_only_when_asked() -> None:
    """A button click imports only its tracker's system."""
    loaded = _modules_after("import sheetsync.core.registry as r; r.find_system('bbn')")
    assert "sheetsync.systems.bbn.system" in loaded and not any(m.startswith("sheetsync.systems.hexwar.rules") for m in loaded)


def test_sheets_and_core_import_no_rule_system() -> None:
    """The generic middle (``core``, ``sheets``: the seam, the block reader and writer, the
    drawer) knows no rule system, as the engines know no spreadsheet."""
    import ast

    root = Path(__file__).resolve().parent.parent / "sheetsync"
    modules = sorted((root / "sheets").glob("*.py")) + sorted((root / "core").glob("*.py"))
    found = []
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {n}" for n in names if n.startswith(("sheetsync.systems", "sheetsync.app"))]
    assert found == []
    loaded = _modules_after("import " + ", ".join(f"sheetsync.{p.parent.name}.{p.stem}" for p in modules
                                                    if p.stem != "__init__") + ", sheetsync.sheets.marks")
    assert not any(m.startswith("sheetsync.systems") for m in loaded)


def test_a_battle_file_without_system_is_battalion() -> None:
    assert system_of_data({"cohorts": []}).id == "bbn"
    assert system_of_data({"system": "hexwar"}).id == "hexwar"
    with pytest.raises(InputError, match="system"):
        system_of_data({"system": 3})


def test_the_mark_reads_old_trackers_as_bbn_version_0() -> None:
    assert parse_mark(None) == Mark("bbn", 0) and parse_mark("  ") == Mark("bbn", 0)
    assert parse_mark("hexwar@1") == Mark("hexwar", 1) and str(parse_mark("bbn@1")) == "bbn@1"
    with pytest.raises(SheetFormatError, match=r"State!B1: holds 'chess@2'"):
        parse_mark("chess@2")


def test_detect_reads_the_mark_and_capacity_from_the_state_sheet() -> None:
    backend = MemoryBackend({"State": {}})
    assert steps.detect(backend).mark == Mark("bbn", 0)
    backend.write_ranges(steps.mark_updates(find_system("hexwar"), {"units": 100}))
    tracker = steps.detect(backend)
    assert tracker.system.id == "hexwar" and tracker.mark == Mark("hexwar", 1) and tracker.capacity == {"units": 100}


def test_detect_refuses_a_newer_tracker_and_a_damaged_capacity() -> None:
    backend = MemoryBackend({"State": {(1, 2): "hexwar@9"}})
    with pytest.raises(SheetFormatError, match="newer tracker"):
        steps.detect(backend)
    backend = MemoryBackend({"State": {(1, 2): "hexwar@1", (2, 2): "lots"}})
    with pytest.raises(SheetFormatError, match=r"State!B2"):
        steps.detect(backend)


# -- the battle-file commands over the hex wargame (issue 9, part 2) -----------------------------

@pytest.fixture
def hex_file(tmp_path: Path) -> Path:
    path = tmp_path / "hex.yaml"
    path.write_text(find_system("hexwar").example_data(), encoding="utf-8")
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sheetsync", *args], capture_output=True, text=True)


def _json(args: list[str]) -> dict:
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_h8_resolve_json_has_the_contract_keys(hex_file: Path) -> None:
    data = _json(["resolve", str(hex_file), "--json"])
    assert data["system"] == "hexwar" and data["turn"] == 1
    move = next(e for e in data["events"] if e["kind"] == "move")
    assert {"unit", "from", "to", "outcome", "reason", "charge"} <= set(move)
    attack = next(e for e in data["events"] if e["kind"] == "attack")
    assert {"defender", "attackers", "strength", "defense", "chance", "roll", "roll_source", "casualties", "outcome",
            "rule_ref"} <= set(attack)
    assert attack["roll_source"] == "rolled" and 1 <= attack["roll"] <= 100
    assert all({"name", "side", "hex", "casualties", "destroyed"} <= set(u) for u in data["units"])


def test_h8_the_same_seed_gives_the_same_turn_and_out_writes_the_next_turn(hex_file: Path, tmp_path: Path) -> None:
    nxt = tmp_path / "next.yaml"
    first = _json(["resolve", str(hex_file), "--json", "--out", str(nxt)])
    assert first == _json(["resolve", str(hex_file), "--json"])
    after = yaml.safe_load(nxt.read_text(encoding="utf-8"))
    assert after["system"] == "hexwar" and after["turn"] == {"number": 2, "moves": [], "attacks": []}
    assert len(after["history"]) == 1
    undone = tmp_path / "undone.yaml"
    out = runner.invoke(app, ["undo", str(nxt), "--out", str(undone)])
    assert out.exit_code == 0 and "Turn 1 undone" in out.output
    assert _json(["resolve", str(undone), "--json"]) == first


def test_h10_pools_json_gives_each_units_effective_values(hex_file: Path) -> None:
    data = _json(["pools", str(hex_file), "--json"])
    knights = next(u for u in data["units"] if u["name"] == "Church Knights")
    assert (knights["attack"], knights["charge"], knights["defense"]) == (4, "++", 4)


def test_h12_aftermath_json_gives_the_report(hex_file: Path) -> None:
    data = _json(["aftermath", str(hex_file), "--json"])
    assert data["system"] == "hexwar" and {s["side"] for s in data["sides"]} == {"Party", "Enemy"}
    assert all("losses" in u for u in data["units"])


def test_h4_check_lists_a_refused_move_and_exits_1(tmp_path: Path) -> None:
    data = yaml.safe_load(find_system("hexwar").example_data())
    data["turn"]["moves"].append({"unit": "Sun Knights", "to": "0601"})
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = runner.invoke(app, ["check", str(path)])
    assert out.exit_code == 1 and "turn.moves[4]" in out.output and "Sun Knights" in out.output


def test_h1_a_malformed_counter_names_its_path(tmp_path: Path) -> None:
    data = yaml.safe_load(find_system("hexwar").example_data())
    data["units"][2]["counter"] = "3+ - x - 4"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = _cli("resolve", str(path))
    assert out.returncode == 1 and "units[2].counter" in out.stderr and "Traceback" not in out.stderr + out.stdout


def test_systems_lists_every_system_with_its_buttons() -> None:
    data = _json(["systems", "--json"])
    assert [s["id"] for s in data["systems"]] == list(SYSTEMS)
    hexwar = next(s for s in data["systems"] if s["id"] == "hexwar")
    assert [st["caption"] for st in hexwar["steps"]] == ["Build Units", "Resolve Turn", "Undo Turn", "End Battle"]
    assert {s["id"]: s["tracker"] for s in data["systems"]} == {sid: sid in tracker_system_ids() for sid in SYSTEMS}


def test_systems_offers_buttons_for_every_system_with_a_tracker() -> None:
    """A system without a tracker would be listed as running on battle files only; every
    registered system has one now (issue 10), so every row lists its buttons."""
    out = _cli("systems")
    assert out.returncode == 0 and "battle files only" not in out.stdout
    assert all(s["tracker"] for s in _json(["systems", "--json"])["systems"])


def test_an_unknown_system_is_one_clear_line() -> None:
    out = _cli("demo", "--system", "hexwr")
    assert out.returncode == 1 and out.stderr.startswith("error: ") and "did you mean 'hexwar'" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout


def test_a_hex_step_imports_no_battalion_code() -> None:
    """A click on a hex tracker loads the hex system only (the registry's lazy import)."""
    loaded = _modules_after(
        "import yaml; from sheetsync.sheets import marks as steps; from sheetsync.systems.hexwar.tracker import steps as ht; "
        "from sheetsync.core.registry import find_system; from sheetsync.sheets.backend import MemoryBackend; "
        "s = find_system('hexwar'); lay = s.layout(); b = MemoryBackend({n: {} for n in lay.sheets}); "
        "b.write_ranges(steps.mark_updates(s, lay.capacity)); "
        "ht.load_into(b, s.load(yaml.safe_load(s.example_data())), lay.capacity); steps.run('resolve', b)")
    assert "sheetsync.systems.hexwar.rules.turn" in loaded
    assert not any(m.startswith("sheetsync.systems.bbn.rules") for m in loaded), sorted(m for m in loaded if "bbn" in m)
