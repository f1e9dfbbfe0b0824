"""The ``sheetsync`` command line over the battalion engine: pools, resolve, undo, aftermath, demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app, main
from sheetsync.systems.bbn.files.loader import load_battle

runner = CliRunner()
POOL_KEYS = {"health", "melee", "ranged", "mystical", "defense", "temper", "movement", "resolve", "control"}


@pytest.fixture
def battle_file(tmp_path: Path, make_cohort: Any) -> Path:
    data = {
        "seed": 11,
        "cohorts": [
            make_cohort("A", 4, members=[{"name": "A1", "disciplines": {"Fortitude": 2}, "temper": 10},
                                         {"name": "A2", "abilities": {"Brawl": 5}}, "A3", "A4"]),
            make_cohort("E", 3, side="enemy", pools={"health": 12, "defense": 10, "melee": 9, "temper": 3}),
        ],
        "ranges": [["A", "E", "Personal"]],
        "orders": [
            {"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 4, "picks": [1]},
            {"cohort": "E", "task": "Melee Attack", "target": "A", "roll": 1},
            {"cohort": "A", "task": "Ranged Attack", "target": "E", "roll": 9},
        ],
    }
    path = tmp_path / "battle.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def invoke(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def invoke_json(*args: str) -> Any:
    return json.loads(invoke(*args).stdout)


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sheetsync", *args])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, " ".join(err.split())


def test_cli_pools_json_shape(battle_file: Path) -> None:
    data = invoke_json("pools", str(battle_file), "--json")
    assert list(data) == ["cohorts"]
    a, e = data["cohorts"]
    assert {"name", "actions", "pools", "breakdown"} <= set(a)
    assert set(a["pools"]) == POOL_KEYS == set(a["breakdown"])
    # A: 4 members, Fortitude 2; Brawl 5 -> +1 Melee; temper 10
    assert (a["name"], a["actions"]) == ("A", 4)
    assert (a["pools"]["health"], a["pools"]["melee"], a["pools"]["temper"]) == (22, 9, 10)
    assert {"member": "A1", "trait": "Fortitude 2", "amount": 2} .items() <= next(
        line for line in a["breakdown"]["health"] if line["member"] == "A1").items()
    assert e["pools"]["health"] == 12 and e["breakdown"]["health"][0]["kind"] == "manual"


def test_cli_pools_table_names_every_cohort(battle_file: Path) -> None:
    out = invoke("pools", str(battle_file)).stdout
    assert "Cohort pools" in out and "A" in out and "E" in out


def test_cli_resolve_json_shape(battle_file: Path) -> None:
    data = invoke_json("resolve", str(battle_file), "--json")
    assert data["phase"] == 1
    events = data["events"]
    assert [e["order"] for e in events] == [0, 1, 2]
    for e in events:
        assert {"order", "cohort", "task", "target", "outcome", "rolls", "damage", "rule_ref"} <= set(e)
        assert e["outcome"] in {"hit", "miss", "refused", "done"}
    # A: 9 + 4 = 13 >= 10, 4 x 2 + 5 = 13: E from 12 to -1
    assert (events[0]["outcome"], events[0]["damage"], events[0]["rolls"][0]["value"]) == ("hit", 13, 4)
    # E: 9 + 1 = 10 against A's Defense 20
    assert events[1]["outcome"] == "miss"
    assert events[2]["outcome"] == "refused" and "Distanced" in events[2]["reason"]
    cohorts = {c["name"]: c for c in data["cohorts"]}
    assert {"name", "health", "temper", "control", "actions_left", "members"} <= set(cohorts["A"])
    assert (cohorts["A"]["health"], cohorts["A"]["temper"], cohorts["A"]["actions_left"]) == (22, 9, 3)
    assert (cohorts["E"]["health"], cohorts["E"]["temper"]) == (-1, 2)
    assert cohorts["E"]["members"] == [{"name": n, "state": "Active", "hero_moment_used": False, "sergeant": n == "E1"}
                                       for n in ("E1", "E2", "E3")]


def test_cli_resolve_out_then_resolve_the_next_phase(battle_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "after.yaml"
    invoke("resolve", str(battle_file), "--out", str(out))
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert data["phase"] == 2 and data["orders"] == [] and len(data["log"]) == 3
    data["orders"] = [{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 1, "picks": [2]}]
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    second = invoke_json("resolve", str(out), "--json", "--out", str(tmp_path / "after2.json"))
    assert second["phase"] == 2
    # 9 + 1 = 10 ties E's Defense 10: 13 damage from -1 to -14, one casualty step (2nd of E2, E3)
    assert (second["events"][0]["outcome"], second["events"][0]["damage"]) == ("hit", 13)
    e = next(c for c in second["cohorts"] if c["name"] == "E")
    assert e["health"] == -14
    assert [m["state"] for m in e["members"]] == ["Active", "Active", "Knocked Out"]
    after2 = json.loads((tmp_path / "after2.json").read_text(encoding="utf-8"))
    assert after2["phase"] == 3 and len(after2["history"]) == 2


def test_cli_undo_restores_the_battle(battle_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "after.yaml"
    invoke("resolve", str(battle_file), "--out", str(out))
    result = invoke("undo", str(out))
    assert "Phase 1 undone" in result.stdout
    restored = load_battle(yaml.safe_load(out.read_text(encoding="utf-8")))
    assert restored == load_battle(yaml.safe_load(battle_file.read_text(encoding="utf-8")))
    # resolving the restored file gives the same phase again
    assert invoke_json("resolve", str(out), "--json") == invoke_json("resolve", str(battle_file), "--json")


def test_cli_undo_with_nothing_to_undo_is_an_error(battle_file: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(monkeypatch, capsys, "undo", str(battle_file))
    assert code == 1
    assert err.startswith("error: there is no resolved phase to undo") and "BattleStateError" not in err


def test_cli_aftermath_json_shape(battle_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "after.yaml"
    invoke("resolve", str(battle_file), "--out", str(out))
    data = invoke_json("aftermath", str(out), "--json")
    keys = {"cohort", "name", "dead", "damage", "aggravated", "lethal", "aegis", "torpor", "lasting_effect", "temper_returned"}
    assert [c["name"] for c in data["characters"]] == ["A1", "A2", "A3", "A4", "E1", "E2", "E3"]
    assert all(keys <= set(c) for c in data["characters"])
    e1 = data["characters"][4]
    # E: 12 - (-1) = 13 over 3 = 5 each: 1 Aggravated 2 Lethal; temper 2 // 3 = 0
    assert (e1["damage"], e1["aggravated"], e1["lethal"], e1["temper_returned"]) == (5, 1, 2, 0)
    a1 = data["characters"][0]
    assert (a1["damage"], a1["temper_returned"], a1["dead"]) == (0, 2, False)


def test_cli_aftermath_table(battle_file: Path) -> None:
    out = invoke("aftermath", str(battle_file)).stdout
    assert "A1" in out and "E3" in out


def test_cli_demo_writes_the_next_phase(tmp_path: Path) -> None:
    data = invoke_json("demo", "--out-dir", str(tmp_path / "demo"), "--json")
    assert {"pools", "resolve", "workbook"} <= set(data)
    assert len(data["resolve"]["events"]) == 10
    after = load_battle(yaml.safe_load((tmp_path / "demo" / "after-phase-1.yaml").read_text(encoding="utf-8")))
    assert after.phase == 2 and len(after.log) == 10


def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({
        "cohorts": [{"name": "A", "members": ["A1", "A2", {"name": "A3", "temper": "lots"}]},
                    {"name": "E", "side": "enemy", "members": ["E1", "E2", "E3"]}],
        "orders": [{"cohort": "A", "task": "Move"}, {"cohort": "A", "task": "Melee", "target": "E"}],
    }), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["pools", "resolve", "aftermath"])
def test_cli_bad_input_lists_every_problem_without_a_traceback(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(monkeypatch, capsys, command, str(bad_file(tmp_path)))
    assert code == 1
    assert "Traceback" not in out + err
    assert err.startswith("error: 2 problems in") and "InputError" not in err
    assert "cohorts[0].members[2].temper: 'lots' is not a whole number" in err
    assert "orders[1].task: 'Melee' is not a task (expected one of Move, Melee Attack," in err


def test_cli_missing_file_and_bad_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(monkeypatch, capsys, "pools", str(tmp_path / "nope.yaml"))
    assert code == 1 and "no such file" in err
    broken = tmp_path / "broken.yaml"
    broken.write_text("cohorts: [\n  - {name: A\n", encoding="utf-8")
    code, _, err = run_main(monkeypatch, capsys, "pools", str(broken))
    assert code == 1 and err.startswith("error: line 2, column ") and "InputError" not in err and "Traceback" not in err


def test_cli_resolve_with_the_same_seed_is_repeatable(tmp_path: Path, make_cohort: Any) -> None:
    path = tmp_path / "untyped.json"
    path.write_text(json.dumps({
        "cohorts": [make_cohort("A", 3, pools={"melee": 8, "temper": 3}), make_cohort("E", 3, side="enemy")],
        "ranges": [["A", "E", "Personal"]],
        "orders": [{"cohort": "A", "task": "Melee Attack", "target": "E"}] * 3,
    }), encoding="utf-8")
    first = invoke_json("resolve", str(path), "--json", "--seed", "99")
    assert first == invoke_json("resolve", str(path), "--json", "--seed", "99")
    assert all(r["source"] == "rolled" for e in first["events"] for r in e["rolls"])


def python_m(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "sheetsync.app.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120, check=False)


def test_cli_main_exit_codes_as_a_process(battle_file: Path, tmp_path: Path) -> None:
    ok = python_m("pools", str(battle_file), "--json", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["cohorts"][0]["name"] == "A"
    bad = python_m("resolve", str(bad_file(tmp_path)), "--json", cwd=tmp_path)
    assert bad.returncode == 1
    assert bad.stdout == ""
    assert "Traceback" not in bad.stderr
    assert "cohorts[0].members[2].temper: 'lots' is not a whole number" in bad.stderr
    assert "orders[1].task: 'Melee' is not a task" in bad.stderr


def test_cli_usage_error_exits_2_without_a_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["sheetsync", "resolve"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    assert "Missing" in capsys.readouterr().err
