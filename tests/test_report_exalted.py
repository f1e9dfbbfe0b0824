"""The after-action report of an Exalted battle file (issue 11, part 3; E4, X28-X41):
``sheetsync report FILE --html/--md`` on a file written by ``resolve --out``.  Every line is
checked against the engine's own events, as ``resolve --json`` printed them when each long
tick was resolved."""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.report import REPORTERS, Account, build_account, to_html, to_markdown
from sheetsync.systems.exalted.report import account
from sheetsync.systems.exalted.rules.battle import resolve, rout_checks
from sheetsync.systems.exalted.rules.breakdowns import aftermath_json
from sheetsync.systems.exalted.system import SYSTEM

runner = CliRunner()


def _ok(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, (res.output, res.exception)
    return res


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """The embedded example resolved tick by tick (Join War and long tick 0, then 4, then 5)
    with ``resolve --json --out``: the last file and each tick's printed JSON."""
    tmp = tmp_path_factory.mktemp("exalted-report")
    current = tmp / "exalted-start.yaml"
    current.write_text(SYSTEM.example_data(), encoding="utf-8")
    outputs = []
    for i in range(3):
        nxt = tmp / f"exalted-after-{i}.yaml"
        outputs.append(json.loads(_ok(["resolve", str(current), "--json", "--out", str(nxt)]).stdout))
        current = nxt
    return current, outputs


@pytest.fixture(scope="module")
def acc(played: tuple[Path, list[dict[str, Any]]]) -> Account:
    return build_account(str(played[0]))


def test_issue11_exalted_is_registered_and_the_refusal_is_gone(played: tuple[Path, list[dict[str, Any]]]) -> None:
    assert REPORTERS["exalted"] == "sheetsync.systems.exalted.report:account"
    res = _ok(["report", str(played[0])])
    assert "no after-action report" not in res.output and "Long tick 5" in res.output


def test_issue11_exalted_report_names_every_unit_commander_special_character_and_member_X11_X40(
        acc: Account, played: tuple[Path, list[dict[str, Any]]]) -> None:
    battle = SYSTEM.load(yaml.safe_load(played[0].read_text(encoding="utf-8")), "x")
    md, page = to_markdown(acc, images=False), to_html(acc)
    assert [g.name for g in acc.groups] == ["Cathak Talon", "Bandit Mob"]
    assert acc.sides == ["Realm", "Bandits"]
    for u in battle.units:
        names = [u.spec.commander.name, *u.heroes, *u.sorcerers, *u.relays, *u.named_members]
        assert len(names) >= 3
        group = next(g for g in acc.groups if g.name == u.name)
        for n in names:
            assert any(n in m for m in group.members), (u.name, n)
            assert n in md and html.escape(n) in page
    talon = next(g for g in acc.groups if g.name == "Cathak Talon")
    assert talon.members[:2] == ["commander Cathak Reyen", "hero Peleps Ama"]
    assert "24 Extras" in talon.members


def test_issue11_exalted_report_has_one_event_line_per_engine_event_with_its_rule_E4_E5_X28(
        acc: Account, played: tuple[Path, list[dict[str, Any]]]) -> None:
    outputs = played[1]
    assert [s.title for s in acc.steps] == [f"Long tick {o['tick']}" for o in outputs] == \
        ["Long tick 0", "Long tick 4", "Long tick 5"]
    for step, out in zip(acc.steps, outputs, strict=True):
        assert step.problem is None
        events = [ln for ln in step.lines if ln.kind == "event"]
        assert len(events) == len(out["events"])
        for ln, e in zip(events, out["events"], strict=True):
            assert ln.rule_ref == e["rule_ref"] and ln.text.endswith(f"({e['rule_ref']})")
    join = acc.steps[0].lines[0]
    assert join.rule_ref == "E4" and join.text.startswith("Join War:")
    assert join.numbers["Cathak Talon"] == {"pool": 5, "successes": 4, "tick": 0}


def test_issue11_exalted_attack_lines_carry_the_engines_numbers_X28_X34(
        acc: Account, played: tuple[Path, list[dict[str, Any]]]) -> None:
    attacks = [e for o in played[1] for e in o["events"] if e["kind"] == "Attack"]
    lines = [ln for ln in acc.event_lines() if "attacked" in ln.text]
    assert len(lines) == len(attacks) == 3
    for ln, e in zip(lines, attacks, strict=True):
        n = ln.numbers
        assert (n["pool"], n["successes"], n["bonus_successes"], n["external_penalty"], n["dv"]) == (
            e["pool"]["value"], e["successes"]["value"], e["bonus_successes"]["value"],
            e["external_penalty"]["value"], e["dv"]["value"])
        assert (n["hit"], n["levels"], n["magnitude_lost"], n["damage_dice"]) == (
            e["hit"], e["levels"]["value"], e["magnitude_lost"]["value"], e["damage_dice"]["value"])
        assert n["p_hit"] == e["odds"]["p_hit_float"]
        assert f"{n['pool']} dice" in ln.text and f"DV {n['dv']}" in ln.text
    hit = lines[-1]
    # X43: the mob routed to Magnitude 0 when it closed on long tick 4, so the talon's hit on
    # long tick 5 lands on Red Harrow alone (X34, X48): his own track, no Magnitude to lose
    assert hit.numbers["hit"] and hit.numbers["magnitude_lost"] == 0
    assert f"{hit.numbers['levels']} levels on Bandit Mob's own track" in hit.text
    assert "Red Harrow falls; Bandit Mob leaves the battle" in hit.text
    assert "a miss" in lines[0].text


def test_issue11_exalted_rout_and_exhaustion_follow_each_attack_X35_X37_X43(
        acc: Account, played: tuple[Path, list[dict[str, Any]]]) -> None:
    for step, out in zip(acc.steps, played[1], strict=True):
        ends = [ln for ln in step.lines if ln.kind == "end"]
        routs = [r for e in out["events"] for r in rout_checks(e)]  # X43: both sides of an engagement
        tired = [x for e in out["events"] for x in e.get("exhaustion", ())]
        assert len(ends) == len(routs) + len(tired)
        assert [ln.numbers["passed"] for ln in ends if ln.rule_ref.startswith("X35")] == [r["passed"] for r in routs]
        assert [ln.numbers["endurance"] for ln in ends if ln.rule_ref == "X37"] == [x["endurance"] for x in tired]
        assert all("rout check" in ln.text for ln in ends if ln.rule_ref.startswith("X35"))


def test_issue11_exalted_mob_rule_check_is_a_line_of_its_own_X39(
        played: tuple[Path, list[dict[str, Any]]]) -> None:
    after0 = played[0].parent / "exalted-after-0.yaml"
    battle = SYSTEM.load(yaml.safe_load(after0.read_text(encoding="utf-8")), str(after0))
    # the talon, idle on long tick 4, has lost its leaders: it checks under Mob Rule
    state = tuple(s.model_copy(update={"mob_rule": True}) if s.name == "Cathak Talon" else s for s in battle.state)
    leaderless = battle.model_copy(update={"state": state})
    result = resolve(leaderless)
    (check,) = [e for e in result.events if e["kind"] == "Mob Rule check"]
    from sheetsync.app.report import ReportSource

    got = account(ReportSource(SYSTEM, result.battle, "mob.yaml", "file"))
    lines = [ln for ln in got.steps[-1].lines if ln.kind == "event"]
    assert len(lines) == len(result.events)
    (mob,) = [ln for ln in lines if "Mob Rule check" in ln.text]
    assert mob.rule_ref == check["rule_ref"] and "X39" in mob.rule_ref
    assert mob.numbers["pool"] == check["pool"]["value"] and mob.numbers["passed"] == check["passed"]


def test_issue11_exalted_casualties_and_aftermath_match_the_engine_X34_X40_X41(
        acc: Account, played: tuple[Path, list[dict[str, Any]]]) -> None:
    # X43: closing on the talon (Might 1: +2), the mob's one rout die (Morale 3 - (3 - 1)) at
    # difficulty 3 cannot succeed; it rolled 0 successes and lost 3 dots (X36), so Red Harrow
    # stood alone (X48) and fell to the talon's attack on long tick 5 (X32, X34)
    assert [ln.text for ln in acc.casualties] == [
        "Long tick 4: Bandit Mob lost 3 Magnitude in a failed rout check (X35, X36)",
        "Bandit Mob lost Red Harrow in the battle (X32, X34)"]
    battle = SYSTEM.load(yaml.safe_load(played[0].read_text(encoding="utf-8")), "x")
    want = aftermath_json(battle)
    units = [ln for ln in acc.aftermath if ln.rule_ref == "X41"]
    assert [ln.numbers for ln in units] == [{"dots_lost": u["dots_lost"], "healing_days": u["healing_days"]["value"]}
                                            for u in want["units"]]
    fates = [ln.text for ln in acc.aftermath if ln.rule_ref == "X40" and ln.kind == "event"]
    expected = [f"{c['character']} of {u['name']}: {c['fate']}" for u in want["units"] for c in u["casualties"]]
    assert len(fates) == len(expected) == 1
    assert all(f.startswith(x) for f, x in zip(fates, expected, strict=True))
    assert "End Battle has not been run" in acc.aftermath[-1].text


def test_issue11_exalted_magnitude_chart_follows_each_tick_X34(
        acc: Account, played: tuple[Path, list[dict[str, Any]]]) -> None:
    (chart,) = acc.charts
    assert chart.title == "Magnitude by long tick" and chart.kind == "line"
    assert chart.x_labels == ("start", "tick 0", "tick 4", "tick 5")
    for name, values in chart.series.items():
        after = [next(u["magnitude"] for u in o["units"] if u["name"] == name) for o in played[1]]
        assert list(values[1:]) == after
    assert chart.series["Bandit Mob"] == (3, 3, 0, 0)  # X43: routed to 0 when it closed on long tick 4


def test_issue11_exalted_html_is_one_offline_file_and_the_battle_file_is_unchanged(
        played: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    src = played[0]
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    out_html, out_md = tmp_path / "report.html", tmp_path / "report.md"
    _ok(["report", str(src), "--html", str(out_html), "--md", str(out_md)])
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    page = out_html.read_text(encoding="utf-8")
    assert "<svg" in page and "Magnitude by long tick" in page
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"(https?:)?//", page)
    assert "<script" not in page and "<link" not in page
    assert "Long tick 5" in out_md.read_text(encoding="utf-8")


def test_issue11_exalted_report_of_an_unresolved_battle_says_so_E4(tmp_path: Path) -> None:
    start = tmp_path / "fresh.yaml"
    start.write_text(SYSTEM.example_data(), encoding="utf-8")
    got = build_account(str(start))
    assert got.steps == [] and got.charts == [] and got.aftermath == []
    assert "No long tick has been resolved yet" in got.notes[0] and "3 orders" in got.notes[0]


def test_issue11_exalted_a_record_that_does_not_replay_is_flagged_E1(
        played: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    data = yaml.safe_load(played[0].read_text(encoding="utf-8"))
    data["seed"] = 7  # other dice than those the record was resolved with
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    got = build_account(str(changed))
    assert any(s.problem and "does not replay" in s.problem for s in got.steps)
