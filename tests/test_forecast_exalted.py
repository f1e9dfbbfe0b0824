"""The forecast of an Exalted battle file (issue 11, part 1; E1, E4, E5, X28-X39): the next
long tick as declared, with each attack's exact chance from the engine's success
distribution, and the battle to its end under standing orders."""

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
from sheetsync.app.forecast import forecast
from sheetsync.app.forecast_systems import ADAPTERS, adapter_for
from sheetsync.core.errors import BattleStateError
from sheetsync.systems.exalted.forecast import ExaltedForecast, Sim
from sheetsync.systems.exalted.rules.battle import odds_json, resolve
from sheetsync.systems.exalted.rules.state import Battle
from sheetsync.systems.exalted.system import SYSTEM

runner = CliRunner()


def _example() -> Battle:
    battle: Battle = SYSTEM.load(yaml.safe_load(SYSTEM.example_data()), "example.yaml")
    return battle


@pytest.fixture(scope="module")
def after_tick_0() -> Battle:
    """The example after Join War and long tick 0: the mob's Close attack on long tick 4 is next."""
    return resolve(_example()).battle


class _Ones:
    """Every die shows 1 (every check fails)."""

    def roll(self, sides: int) -> int:
        return 1


def test_issue11_exalted_adapter_is_registered() -> None:
    assert ADAPTERS["exalted"] is ExaltedForecast
    assert isinstance(adapter_for("exalted"), ExaltedForecast)


def test_issue11_exalted_simulated_hit_chance_agrees_with_the_exact_one_E1_X28(after_tick_0: Battle) -> None:
    data = forecast(after_tick_0, "exalted", runs=400, phases=3, seed=11, workers=1)
    assert data["system"] == "exalted" and data["step"] == 4 and data["level"] == "Magnitude"
    (order,) = data["next_step"]["orders"]
    odds = next(r for r in odds_json(after_tick_0) if r["order"] == order["order"])
    assert (order["actor"], order["target"]) == ("Bandit Mob", "Cathak Talon")
    assert order["exact"]["p"] == odds["odds"]["p_hit_float"]  # issue 22: unrounded
    assert order["exact"]["expected"] == odds["odds"]["expected_levels_float"]
    assert order["success"]["low"] <= order["exact"]["p"] <= order["success"]["high"]
    assert order["success"]["count"] > 0 and order["refused"]["count"] == 0


def test_issue11_exalted_same_seed_gives_the_same_json_E1(after_tick_0: Battle) -> None:
    a = forecast(after_tick_0, "exalted", runs=60, phases=4, seed=5, workers=1)
    b = forecast(after_tick_0, "exalted", runs=60, phases=4, seed=5, workers=1)
    c = forecast(after_tick_0, "exalted", runs=60, phases=4, seed=6, workers=1)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert json.dumps(a, sort_keys=True) != json.dumps(c, sort_keys=True)


def test_issue11_exalted_battle_to_its_end_reports_wins_routs_and_destruction_X34_X36(after_tick_0: Battle) -> None:
    data = forecast(after_tick_0, "exalted", runs=80, phases=20, seed=2, workers=1)
    end = data["to_the_end"]
    assert sum(s["win"]["count"] for s in end["sides"]) == 80
    assert [s["side"] for s in end["sides"]][:2] == ["Realm", "Bandits"]
    realm = end["sides"][0]["win"]
    assert realm["low"] <= realm["p"] <= realm["high"] and realm["p"] > 0.5
    members = {m["name"]: m for m in end["members"]}
    assert set(members) == {"Cathak Talon", "Bandit Mob"}
    assert set(members["Bandit Mob"]) == {"entity", "name", "Routed", "Destroyed"}
    # the Realm wins only when the mob is out: Magnitude 0 (X34)
    assert members["Bandit Mob"]["Destroyed"]["count"] >= end["sides"][0]["win"]["count"]
    loss = {e["name"]: e["loss"] for e in end["entities"]}
    assert loss["Bandit Mob"]["mean"] > loss["Cathak Talon"]["mean"]


def test_issue11_exalted_standing_orders_repeat_each_units_last_order_on_its_tick_E5(after_tick_0: Battle) -> None:
    ad = ExaltedForecast()
    declared = ad.prepare(after_tick_0)
    now, ok = ad.step(declared, _Ones())
    assert ok == [False]  # all ones: the mob's attack misses
    nxt = ad.standing(declared, now)
    assert nxt is not None
    # long tick 5: the talon's typed order comes first, as typed
    assert [(o.tick, o.unit, o.option) for o in nxt.battle.orders] == [(5, "Cathak Talon", "Close")]
    later = ad.standing(declared, ad.step(nxt, _Ones())[0])
    assert later is not None
    # the mob acts again on long tick 9 and repeats its Close attack, its dice cleared
    ticks = {s.name: s.next_tick for s in later.battle.state}
    mob = [o for o in later.battle.orders if o.unit == "Bandit Mob"]
    assert mob and mob[0].tick == ticks["Bandit Mob"] and mob[0].option == "Close" and mob[0].dice is None


def test_issue11_exalted_a_failed_mob_rule_check_counts_as_routed_X39(after_tick_0: Battle) -> None:
    ad = ExaltedForecast()
    state = tuple(s.model_copy(update={"mob_rule": True}) if s.name == "Cathak Talon" else s
                  for s in after_tick_0.state)
    sim = ad.prepare(after_tick_0.model_copy(update={"state": state}))
    assert ad.flags(sim, "step") == (False, False, False, False)
    now, _ = ad.step(sim, _Ones())
    assert "Cathak Talon" in now.routed
    assert ad.flags(now, "step")[0] is True


def test_issue11_exalted_a_battle_with_no_orders_is_a_clear_error_E5(tmp_path: Path) -> None:
    data = yaml.safe_load(SYSTEM.example_data())
    data["orders"] = []
    with pytest.raises(BattleStateError, match="nothing to forecast: long tick 0 has no declared orders"):
        forecast(SYSTEM.load(data, "x.yaml"), "exalted", runs=10, workers=1)
    path = tmp_path / "no-orders.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    before = path.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "sheetsync", "forecast", str(path), "--runs", "10", "--workers", "1"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("error: there is nothing to forecast: long tick 0 has no declared orders")
    assert path.read_bytes() == before


def test_issue11_exalted_an_ended_or_decided_battle_is_a_clear_error_X34(after_tick_0: Battle) -> None:
    with pytest.raises(BattleStateError, match="the battle has ended"):
        forecast(after_tick_0.model_copy(update={"ended": True}), "exalted", runs=10, workers=1)
    # X32, X34: a unit out of the fight is one whose lone commander fell (disbanded); at
    # Magnitude 0 alone it would still be in it (test_x34_...)
    state = tuple(s.model_copy(update={"magnitude": 0, "solo": True, "disbanded": True}) if s.name == "Bandit Mob"
                  else s for s in after_tick_0.state)
    with pytest.raises(BattleStateError, match="only Realm has a unit left in the fight"):
        forecast(after_tick_0.model_copy(update={"state": state}), "exalted", runs=10, workers=1)


def test_issue11_exalted_dump_and_load_keep_the_battle_and_its_routs(after_tick_0: Battle) -> None:
    ad = ExaltedForecast()
    sim = Sim(ad.prepare(after_tick_0).battle, frozenset({"Bandit Mob"}))
    back = ad.load(ad.dump(sim))
    assert back.routed == sim.routed
    assert back.battle.state == sim.battle.state and back.battle.orders == sim.battle.orders


def test_issue11_exalted_forecast_cli_json(after_tick_0: Battle, tmp_path: Path) -> None:
    path = tmp_path / "after0.yaml"
    from sheetsync.sheets.disk import dump_battle_file

    dump_battle_file(SYSTEM.dump(after_tick_0), path)
    res = runner.invoke(app, ["forecast", str(path), "--runs", "40", "--workers", "1", "--json", "--seed", "1"])
    assert res.exit_code == 0, res.output
    data: dict[str, Any] = json.loads(res.stdout)
    assert data["next_step"]["orders"][0]["where"] == "orders[0]"
    res = runner.invoke(app, ["forecast", str(path), "--runs", "40", "--workers", "1", "--seed", "1"])
    assert res.exit_code == 0, res.output
    assert "long tick 4" in res.output and "Magnitude lost" in res.output


def _outcomes(events: tuple[dict[str, Any], ...]) -> list[tuple[Any, ...]]:
    """What a simulation reads of each event: its order, kind, hit, successes, levels,
    losses, and its rout and exhaustion outcomes (X33-X37)."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        routs = [(c.get("unit"), c.get("checked"), c.get("passed"), c.get("magnitude_lost"))
                 for c in (e.get("rout"), e.get("attacker_rout")) if isinstance(c, dict)]
        tired = [(x["unit"], x["successes"], x["endurance"]) for x in e.get("exhaustion") or ()]
        out.append((e.get("order"), e.get("kind"), e.get("hit"), (e.get("successes") or {}).get("value"),
                    (e.get("levels") or {}).get("value"), e.get("magnitude_lost"), routs, tired, e.get("notes")))
    return out


@pytest.mark.parametrize("seed", [1, 7, 23])
def test_x33_x37_detail_false_gives_the_full_paths_numbers(seed: int) -> None:
    """Issue 23: ``resolve(detail=False)`` rolls the same dice as the full path and leaves
    the same battle and the same outcomes (hits, levels, X34 losses, X35 rout checks, X37
    exhaustion), tick after tick, only without the breakdowns and rolls the tracker shows."""
    from exalted_battles import make_exalted_battle

    from sheetsync.core.dice import RandomRoller

    full = lean = SYSTEM.load(make_exalted_battle(8, seed=seed), "b.yaml")
    attacks = 0
    for i in range(6):
        a = resolve(full, None, RandomRoller(f"{seed}:{i}"))
        b = resolve(lean, None, RandomRoller(f"{seed}:{i}"), detail=False)
        assert b.battle.state == a.battle.state
        assert b.battle.tick == a.battle.tick and b.battle.orders == a.battle.orders
        assert _outcomes(b.events) == _outcomes(a.events)
        for e in b.events:
            if e.get("kind") == "Attack" and "pool" in e:
                raise AssertionError("the lean path printed an attack's breakdown")
        attacks += sum(1 for e in a.events if e.get("kind") == "Attack")
        full, lean = a.battle, b.battle.model_copy(update={"history": a.battle.history})
        if not a.battle.orders:
            break
    assert attacks > 0
