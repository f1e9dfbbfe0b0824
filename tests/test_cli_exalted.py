"""The CLI on Exalted battle files: resolve (--json, --out), undo, pools, aftermath, check,
status, demo; the log shows typed and rolled dice; a system without a tracker says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.system import SYSTEM

runner = CliRunner()

VOLLEY = {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Ranged",
          "dice": "10 10 8 7 1 1 2 3", "damage_dice": "7 7 7 7 7 7 7", "rout_dice": "1 2"}

UNIT_KEYS = {"name", "magnitude", "levels_marked", "endurance", "formation", "next_tick", "hesitating", "engaged",
             "special_characters"}
ATTACK_KEYS = ("pool", "successes", "bonus_successes", "external_penalty", "dv", "threshold", "raw_damage", "soak",
               "damage_dice", "levels", "magnitude_lost")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sheetsync", *args], capture_output=True, text=True)


def _json(args: list[str]) -> Any:
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.fixture
def battle_file(tmp_path: Path) -> Path:
    data = yaml.safe_load(SYSTEM.example_data())
    data["orders"] = [VOLLEY, *data["orders"][1:]]
    path = tmp_path / "battle.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_resolve_json_has_the_contract_keys(battle_file: Path) -> None:
    data = _json(["resolve", str(battle_file), "--json"])
    assert {"system", "tick", "events", "units"} <= set(data)
    assert data["system"] == "exalted" and data["tick"] == 0
    assert all(UNIT_KEYS <= set(u) for u in data["units"])
    attack = next(e for e in data["events"] if e["kind"] == "Attack")
    for key in ATTACK_KEYS:
        assert "value" in attack[key] and attack[key]["rule_ref"], key
    assert attack["successes"]["roll"]["faces"] == [10, 10, 8, 7, 1, 1, 2, 3]
    assert attack["damage_dice"]["roll"]["source"] == "typed faces"
    assert attack["rout"]["rule_ref"] and attack["rout"]["roll"]["faces"] == [1, 2]
    assert all(x["rule_ref"].startswith("X37") and x["roll"] for x in attack["exhaustion"])
    assert {"pool", "successes_added", "external_penalty", "dv", "p_hit", "expected_levels"} <= set(attack["odds"])


def test_resolve_out_round_trip_and_undo_restores_the_file(battle_file: Path, tmp_path: Path) -> None:
    nxt = tmp_path / "next.yaml"
    first = _json(["resolve", str(battle_file), "--json", "--out", str(nxt)])
    after = load_battle(yaml.safe_load(nxt.read_text(encoding="utf-8")))
    assert after.started and after.tick == first["tick"] and len(after.history) == 1
    second = _json(["resolve", str(nxt), "--json"])
    assert second["tick"] > first["tick"]
    out = runner.invoke(app, ["undo", str(nxt), "--out", str(tmp_path / "undone.yaml")])
    assert out.exit_code == 0 and "Long tick undone" in out.output
    undone = load_battle(yaml.safe_load((tmp_path / "undone.yaml").read_text(encoding="utf-8")))
    original = load_battle(yaml.safe_load(battle_file.read_text(encoding="utf-8")))
    assert undone.model_copy(update={"seed": original.seed}) == original


def test_pools_json_gives_the_traits_with_breakdowns_and_the_odds(battle_file: Path) -> None:
    data = _json(["pools", str(battle_file), "--json"])
    talon = data["units"][0]
    assert talon["traits"]["magnitude"]["value"] == 2 and talon["traits"]["endurance"]["value"] == 7
    assert [b["amount"] for b in talon["traits"]["endurance"]["breakdown"]] == [4, 3]  # X4: Drill 4 + Stamina 3
    assert talon["essence_against_magic"]["value"] == 3  # X5: Essence 2 + Might 1
    volley = data["orders"][0]
    assert volley["odds"]["pool"] == 8 and volley["odds"]["successes_needed"] == 2


def test_aftermath_json_gives_casualties_per_named_member_and_healing_days(battle_file: Path,
                                                                           tmp_path: Path) -> None:
    nxt = tmp_path / "next.yaml"
    assert runner.invoke(app, ["resolve", str(battle_file), "--out", str(nxt)]).exit_code == 0
    data = _json(["aftermath", str(nxt), "--json"])
    mob = next(u for u in data["units"] if u["name"] == "Bandit Mob")
    assert (mob["magnitude"], mob["dots_lost"], mob["largest_loss"]) == (1, 2, 1)
    (fate,) = mob["casualties"]
    assert fate["character"] == "Mara the Thatcher" and fate["rule_ref"] == "X40" and fate["first_roll"]
    # X41: Magnitude 1 -> 2 takes 2 days, 2 -> 3 takes 3.
    assert mob["healing_days"]["value"] == 5
    talon = next(u for u in data["units"] if u["name"] == "Cathak Talon")
    assert talon["casualties"] == [] and talon["healing_days"]["value"] == 0


def test_the_log_shows_typed_and_rolled_dice(battle_file: Path) -> None:
    out = runner.invoke(app, ["resolve", str(battle_file)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "9 7 10 2 4 (typed faces): 4" in out.output  # Join War, typed
    assert "(rolled)" in out.output  # the mob's Join War and the exhaustion rolls
    assert "Long tick 0" in out.output and "X35" in out.output


def test_demo_runs_the_embedded_battle_and_writes_its_files(tmp_path: Path) -> None:
    out = runner.invoke(app, ["demo", "--system", "exalted", "--out-dir", str(tmp_path)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "Join War (E4)" in out.output and "Odds before rolling" in out.output
    assert (tmp_path / "exalted-example.yaml").exists()
    data = _json(["demo", "--system", "ex2e", "--out-dir", str(tmp_path), "--json"])
    assert data["system"] == "exalted" and len(data["ticks"]) == 3
    last = load_battle(yaml.safe_load(Path(data["files"]["after"][-1]).read_text(encoding="utf-8")))
    assert len(last.history) == 3
    # the same battle as a tracker workbook, built and its first long tick resolved
    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.systems.exalted.tracker.steps import export

    workbook = Path(data["files"]["workbook"])
    assert workbook.name == "exalted-tracker.xlsx"
    assert export(excel_backend(workbook))["battle"]["started"] is True


def test_a_bad_die_is_an_error_naming_its_path_and_nothing_is_written(battle_file: Path, tmp_path: Path) -> None:
    data = yaml.safe_load(battle_file.read_text(encoding="utf-8"))
    data["orders"][0]["dice"] = "17s"  # more successes than 8 dice can roll
    battle_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    nxt = tmp_path / "next.yaml"
    out = _cli("resolve", str(battle_file), "--out", str(nxt))
    assert out.returncode == 1 and "orders[0].dice: 17 successes is more than a 8-die pool" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout and not nxt.exists()


@pytest.mark.parametrize("args", [["template", "{tmp}/t.xlsx", "--system", "exalted"],
                                  ["gsheet", "init", "some-key", "--system", "exalted"]])
def test_x1_the_exalted_tracker_is_made_by_template_and_gsheet_init(args: list[str], tmp_path: Path) -> None:
    """Issue 10: the Exalted tracker exists now; a template is written, and a Google Sheet
    that can't be reached is one clear error line, never the old "not built yet"."""
    out = _cli(*[a.format(tmp=tmp_path) for a in args])
    assert "Traceback" not in out.stderr + out.stdout and "not built yet" not in out.stderr
    if args[0] == "template":
        assert out.returncode == 0 and (tmp_path / "t.xlsx").exists()
    else:
        assert out.returncode != 0 and out.stderr.startswith("error: ")


def test_systems_lists_exalted_with_its_steps() -> None:
    data = _json(["systems", "--json"])
    ex = next(s for s in data["systems"] if s["id"] == "exalted")
    assert [st["caption"] for st in ex["steps"]] == ["Build Units", "Next Tick", "Undo Tick", "End Battle"]
    assert ex["aliases"] == ["ex2e", "exalted2e", "mass-combat"]


def test_check_and_status_on_a_battle_file(battle_file: Path) -> None:
    data = yaml.safe_load(battle_file.read_text(encoding="utf-8"))
    data["orders"].append({"tick": 0, "unit": "Bandit Mob", "action": "Guard"})
    battle_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = runner.invoke(app, ["check", str(battle_file), "--json"])
    assert out.exit_code == 1
    report = json.loads(out.stdout)
    (refusal,) = report["refusals"]
    assert refusal["where"] == "orders[3]"
    assert "acts only on its tick; type 4 in orders[3].tick (E5)" in refusal["reason"]
    status = runner.invoke(app, ["status", str(battle_file)], env={"COLUMNS": "200"})
    assert status.exit_code == 0 and "Join War not rolled yet" in status.output
