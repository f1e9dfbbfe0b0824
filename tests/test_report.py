"""The after-action report (issue 11, part 3): ``sheetsync report FILE --html/--md`` on a
battle file, a tracker workbook and a Google Sheet (through the fake Sheets API), for the
battalion rules and the hex wargame.  Every line is checked against the engine's own
events, as ``resolve --json`` printed them when the step was resolved."""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_sheets_api import FakeSheetsServer
from test_gsheet_cli import key_file, server  # noqa: F401  (fixtures)
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.report import (
    REPORTERS,
    Account,
    ReportSource,
    account_of,
    build_account,
    to_html,
    to_markdown,
)
from sheetsync.core.errors import BackendError, InputError, SheetSyncError
from sheetsync.sheets.disk import example_path

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
HEX_EXAMPLE = ROOT / "sheetsync" / "systems" / "hexwar" / "example.yaml"

# orders typed for the battalion example's phases 2 and 3, after its declared phase 1
BBN_MORE_ORDERS = [
    {"cohort": "Ghoul Pack", "task": "Melee Attack", "target": "Night Watch"},
    {"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghoul Pack"},
    {"cohort": "Iron Hand", "task": "Ranged Attack", "target": "Ghoul Pack"},
]
# the hex example's turn 2: the knights and the 1st Fist keep fighting in the pass
HEX_TURN_2 = {"initiative": "Party", "moves": [],
              "attacks": [{"defender": "1st Fist", "attackers": ["Church Knights"]},
                          {"defender": "Church Knights", "attackers": ["1st Fist", "Drow Infantry"], "roll": 20}]}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ok(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, (res.output, res.exception)
    return res


def _play_bbn_file(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], list[dict[str, Any]]]:
    """The battalion example played three phases with ``resolve --out``: the last battle
    file, every phase's ``resolve --json`` output, and its events in order."""
    current = tmp_path / "battle.yaml"
    current.write_text(example_path().read_text(encoding="utf-8"), encoding="utf-8")
    outputs = []
    for phase in (1, 2, 3):
        nxt = tmp_path / f"after-{phase}.yaml"
        outputs.append(json.loads(_ok(["resolve", str(current), "--json", "--out", str(nxt)]).stdout))
        if phase < 3:
            data = yaml.safe_load(nxt.read_text(encoding="utf-8"))
            data["orders"] = BBN_MORE_ORDERS
            nxt.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        current = nxt
    return current, outputs, [e for out in outputs for e in out["events"]]


def _play_hex_file(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], list[dict[str, Any]]]:
    """The hex example played two turns with ``resolve --out``."""
    first, second = tmp_path / "hex.yaml", tmp_path / "hex-1.yaml"
    first.write_text(HEX_EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    outputs = [json.loads(_ok(["resolve", str(first), "--json", "--out", str(second)]).stdout)]
    data = yaml.safe_load(second.read_text(encoding="utf-8"))
    data["turn"] = {"number": data["turn"]["number"], **HEX_TURN_2}
    second.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    last = tmp_path / "hex-2.yaml"
    outputs.append(json.loads(_ok(["resolve", str(second), "--json", "--out", str(last)]).stdout))
    return last, outputs, [e for out in outputs for e in out["events"]]


def _account(source: Path | str, **kwargs: Any) -> Account:
    return build_account(str(source), **kwargs)


def _check_bbn_lines(acc: Account, events: list[dict[str, Any]]) -> None:
    """One line per resolved order, in order, citing its rule, with the engine's numbers."""
    lines = acc.event_lines()
    assert len(lines) == len(events)
    for ln, e in zip(lines, events, strict=True):
        assert ln.rule_ref == e["rule_ref"] and f"{e['rule_ref']})" in ln.text
        assert ln.numbers["damage"] == e["damage"]
        assert e["cohort"] in ln.text and (e["target"] is None or e["target"] in ln.text)
        d10 = [r["value"] for r in e["rolls"] if r["sides"] == 10 and r["purpose"].startswith(("d10", "reroll"))]
        if d10 and e["total"] is not None:
            assert (ln.numbers["roll"], ln.numbers["total"]) == (d10[-1], e["total"])
            assert f"{d10[-1]} + {e['total'] - d10[-1]} = {e['total']}" in ln.text
        if e["defense"] is not None and e["task"].endswith("Attack"):
            assert ln.numbers["defense"] == e["defense"] and f"vs Defense {e['defense']}" in ln.text
        if e["outcome"] == "hit" and e["task"].endswith("Attack"):
            assert f"for {e['damage']} (" in ln.text


def _check_hex_lines(acc: Account, events: list[dict[str, Any]]) -> None:
    lines = acc.event_lines()
    assert len(lines) == len(events)
    for ln, e in zip(lines, events, strict=True):
        assert ln.rule_ref == e["rule_ref"] and f"{e['rule_ref']})" in ln.text
        if e["kind"] == "move":
            assert e["unit"] in ln.text and e["to"] in ln.text
            continue
        assert e["defender"] in ln.text and all(a in ln.text for a in e["attackers"])
        want = {k: e[k] for k in ("strength", "defense", "chance", "roll", "casualties")}
        assert ln.numbers == want
        assert f"S {e['strength']} vs D {e['defense']}, chance {e['chance']}%, d100 {e['roll']}" in ln.text
        if e["outcome"] == "hit":
            assert f"for {e['casualties']}% casualties" in ln.text


def _check_offline_html(text: str) -> None:
    """One file that opens offline: no http(s) address in any src or href, no external
    style sheet or script, every image a data: URI, charts as inline SVG; print rules."""
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", text, re.I)
    assert "<link" not in text.lower() and "<script" not in text.lower() and "@import" not in text
    assert "url(" not in text  # no fonts or images pulled in by the style sheet
    for src in re.findall(r"""<img[^>]*\ssrc="([^"]*)\"""", text):
        assert src.startswith("data:image/png;base64,")
    assert "<svg" in text and "@page" in text and "break-inside: avoid" in text


def _names(acc_text: str, names: list[str]) -> None:
    acc_text = html.unescape(acc_text)
    for name in names:
        assert name in acc_text, name


BBN_NAMES = ["Night Watch", "Iron Hand", "Lanterns", "Ghoul Pack", "Marcus", "Isabel", "Theo", "Wren", "Dmitri",
             "Lena", "Oskar", "Eli", "Mara", "June", "G1", "G2", "G3", "G4", "G5"]


def _hex_names() -> list[str]:
    return [u["name"] for u in yaml.safe_load(HEX_EXAMPLE.read_text(encoding="utf-8"))["units"]]


# --------------------------------------------------------------------------- battalion


def test_issue11_tasks_5_2_report_of_a_battle_file_played_three_phases(tmp_path: Path) -> None:
    battle, outputs, events = _play_bbn_file(tmp_path)
    before = _digest(battle)
    out_html, out_md = tmp_path / "report.html", tmp_path / "report.md"
    _ok(["report", str(battle), "--html", str(out_html), "--md", str(out_md)])
    assert _digest(battle) == before
    acc = _account(battle)
    _check_bbn_lines(acc, events)
    assert [s.title for s in acc.steps] == ["Phase 1", "Phase 2", "Phase 3"]
    assert all(s.problem is None for s in acc.steps)
    page, md = out_html.read_text(encoding="utf-8"), out_md.read_text(encoding="utf-8")
    _check_offline_html(page)
    for text in (page, md):
        _names(text, BBN_NAMES)
    plain = html.unescape(page.replace('<span class="rule">', "").replace("</span>", ""))
    for ln in acc.event_lines():
        assert f"<li>{ln.text}</li>" in plain
    # phase 1's second order, in the words of the issue
    assert "Night Watch struck Ghoul Pack for 13 (d10 7 + 18 = 25 vs Defense 16, Tasks 5.2, 5.11)" in md
    # with neither --html nor --md, the same account on the terminal, and no file
    shown = _ok(["report", str(battle)]).stdout
    assert all(w in shown for w in ("What happened", "Phase 3", "Hero Moments", "Casualties", "Aftermath"))
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".html", ".md")) == ["report.html", "report.md"]


def test_issue11_r20_a_reroll_is_told_and_the_second_die_counts(tmp_path: Path) -> None:
    """R20: an Inspire token's reroll replaces the first die; the line shows both dice and
    adds the bonus to the one that counted."""
    data = yaml.safe_load(example_path().read_text(encoding="utf-8"))
    data["cohorts"][0]["reroll_tokens"] = 1
    data["orders"] = [{"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghoul Pack", "roll": 2,
                       "reroll": 9, "use_reroll": True}]
    start, after = tmp_path / "b.yaml", tmp_path / "b1.yaml"
    start.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (event,) = json.loads(_ok(["resolve", str(start), "--json", "--out", str(after)]).stdout)["events"]
    assert [r["value"] for r in event["rolls"]][:2] == [2, 9]
    acc = _account(after)
    _check_bbn_lines(acc, [event])
    (line,) = acc.event_lines()
    assert f"(d10 2, rerolled 9 + {event['total'] - 9} = {event['total']} vs Defense" in line.text


def test_issue11_hero_moments_1_3_and_tasks_5_12_casualties_are_listed(tmp_path: Path) -> None:
    battle, _, events = _play_bbn_file(tmp_path)
    acc = _account(battle)
    assert acc.heroes is not None and len(acc.heroes) == 1
    assert "Isabel" in acc.heroes[0].text and "Kill 'Em All" in acc.heroes[0].text
    assert acc.heroes[0].rule_ref == "Hero Moments 1.3, R21"
    engine = [(e["phase"], f["member"], f["to_state"]) for e in events for f in e["effects"] if f["kind"] == "casualty"]
    assert engine  # the example's ghouls fall
    listed = [(int(m.group(1)), m.group(2), m.group(3)) for ln in acc.casualties
              if (m := re.match(r"Phase (\d+): (\S+) of Ghoul Pack (Knocked Out|Dead)", ln.text))]
    assert listed == engine
    dead = [g for g in acc.groups if g.name == "Ghoul Pack"][0]
    assert "G3 (Dead, phase 3)" in dead.members


def test_issue11_r26_aftermath_matches_sheetsync_aftermath(tmp_path: Path) -> None:
    battle, _, _ = _play_bbn_file(tmp_path)
    acc = _account(battle)
    expected = json.loads(_ok(["aftermath", str(battle), "--json"]).stdout)["characters"]
    assert len(acc.aftermath) == len(expected)
    for ln, c in zip(acc.aftermath, expected, strict=True):
        assert ln.text.startswith(f"{c['name']} ({c['cohort']})")
        if not c["dead"]:
            assert f"{c['damage']} damage, {c['aggravated']} Aggravated and {c['lethal']} Lethal" in ln.text
        else:
            assert "dead" in ln.text


def test_issue11_health_by_phase_chart_is_the_engines_health(tmp_path: Path) -> None:
    battle, outputs, _ = _play_bbn_file(tmp_path)
    acc = _account(battle)
    (chart,) = acc.charts
    assert chart.x_labels == ("before 1", "after 1", "after 2", "after 3")
    for cohort in outputs[0]["cohorts"]:
        after = [next(c["health"] for c in out["cohorts"] if c["name"] == cohort["name"]) for out in outputs]
        assert list(chart.series[cohort["name"]][1:]) == after
    assert chart.series["Ghoul Pack"][0] == 25  # full Health before phase 1 (its hand-set pool)
    svg = to_html(acc)
    assert svg.count("<polyline") == 4


def test_issue11_report_of_a_resolved_workbook(tmp_path: Path) -> None:
    wb = tmp_path / "x.xlsx"
    _ok(["new", str(wb), "--from", str(example_path())])
    events = json.loads(_ok(["resolve", str(wb), "--json"]).stdout)["events"]
    before = _digest(wb)
    out = tmp_path / "wb.html"
    _ok(["report", str(wb), "--html", str(out)])
    assert _digest(wb) == before
    acc = _account(wb)
    _check_bbn_lines(acc, events)
    page = out.read_text(encoding="utf-8")
    _check_offline_html(page)
    _names(page, BBN_NAMES)
    assert "Phase 1" in page and "Health by phase" in page


def test_issue11_report_of_a_google_sheet_through_the_fake_api(server: FakeSheetsServer, key_file: Path,  # noqa: F811
                                                                tmp_path: Path) -> None:
    key = server.create_spreadsheet("Battle night")
    url = f"https://docs.google.com/spreadsheets/d/{key}/edit#gid=0"
    sa = ["--service-account", str(key_file)]
    _ok(["gsheet", "init", url, *sa])
    wb = tmp_path / "battle.xlsx"
    _ok(["new", str(wb), "--from", str(example_path())])
    _ok(["upload", str(wb), key, *sa])
    events = json.loads(_ok(["gsheet", "resolve", key, *sa, "--json"]).stdout)["events"]
    server.clear_requests()
    out = tmp_path / "sheet.md"
    _ok(["report", url, "--md", str(out), *sa])
    assert all(r.method == "GET" for r in server.api_requests())  # read only
    acc = _account(url, service_account=key_file)
    _check_bbn_lines(acc, events)
    text = out.read_text(encoding="utf-8")
    _names(text, BBN_NAMES)
    assert "### Phase 1" in text


def test_issue11_a_battle_with_no_resolved_phase_says_so(tmp_path: Path) -> None:
    res = _ok(["report", str(example_path())])
    assert "No phase has been resolved yet" in res.stdout and "10 declared orders" in res.stdout
    acc = _account(example_path())
    assert acc.steps == [] and acc.charts == [] and acc.aftermath == []
    assert "No phase of this battle has been resolved yet." in to_markdown(acc)


def test_issue11_a_battle_file_holding_only_its_standing_says_what_is_missing(tmp_path: Path) -> None:
    """A battle file written by hand at phase 3, with no history: nothing can be told."""
    data = yaml.safe_load(example_path().read_text(encoding="utf-8"))
    data["phase"] = 3
    data["cohorts"][3]["health"] = 4
    data["cohorts"][3]["states"] = {"G3": "Dead"}
    path = tmp_path / "standing.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    acc = _account(path)
    assert acc.steps == []
    assert any("only its standing before phase 3" in n and "--out" in n for n in acc.notes)
    assert "G3 (Dead)" in [g for g in acc.groups if g.name == "Ghoul Pack"][0].members


def test_issue11_r25_a_history_edited_by_hand_is_flagged(tmp_path: Path) -> None:
    """R25: the report replays each phase from its record; a record that no longer leads to
    the recorded standing is said plainly, not told as if it were exact."""
    battle, _, _ = _play_bbn_file(tmp_path)
    data = yaml.safe_load(battle.read_text(encoding="utf-8"))
    data["history"][0]["orders"][0]["roll"] = 1  # the ghouls' first blow, made a miss
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    acc = _account(edited)
    assert acc.steps[0].problem and "does not replay" in acc.steps[0].problem
    assert acc.steps[1].problem is None
    assert "does not replay" in to_html(acc)
    # a log that no longer matches its record is said too
    data = yaml.safe_load(battle.read_text(encoding="utf-8"))
    data["log"][1]["damage"] = 99
    edited.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    acc = _account(edited)
    assert acc.steps[0].problem and "log differs" in acc.steps[0].problem
    assert acc.event_lines()[1].numbers["damage"] == 13  # the replay, which reaches the recorded standing


# --------------------------------------------------------------------------- hex wargame


def test_issue11_h7_h8_report_of_a_hex_battle_file_played_two_turns(tmp_path: Path) -> None:
    battle, outputs, events = _play_hex_file(tmp_path)
    before = _digest(battle)
    out_html, out_md = tmp_path / "hex.html", tmp_path / "hex.md"
    _ok(["report", str(battle), "--html", str(out_html), "--md", str(out_md)])
    assert _digest(battle) == before
    acc = _account(battle)
    _check_hex_lines(acc, events)
    assert [s.title for s in acc.steps] == ["Turn 1", "Turn 2"]
    assert acc.heroes is None
    page, md = out_html.read_text(encoding="utf-8"), out_md.read_text(encoding="utf-8")
    _check_offline_html(page)
    for text in (page, md):
        _names(text, _hex_names())
    # the map (H2) is embedded as PNG, and the casualties chart as SVG
    assert page.count('<img src="data:image/png;base64,') == 2 and "Casualties by turn" in page
    hits = [e for e in events if e["kind"] == "attack" and e["outcome"] == "hit"]
    assert len(acc.casualties) == len(hits)


def test_issue11_h9_casualties_by_turn_are_the_engines(tmp_path: Path) -> None:
    battle, outputs, _ = _play_hex_file(tmp_path)
    acc = _account(battle)
    (chart,) = acc.charts
    side = {u["name"]: u["side"] for u in yaml.safe_load(HEX_EXAMPLE.read_text(encoding="utf-8"))["units"]}
    for i, out in enumerate(outputs):
        for s in ("Party", "Enemy"):
            want = sum(e["casualties"] for e in out["events"] if e["kind"] == "attack" and side[e["defender"]] == s)
            assert chart.series[s][i] == want


def test_issue11_h12_hex_aftermath_matches_sheetsync_aftermath(tmp_path: Path) -> None:
    battle, _, _ = _play_hex_file(tmp_path)
    acc = _account(battle)
    rep = json.loads(_ok(["aftermath", str(battle), "--json"]).stdout)
    for s in rep["sides"]:
        assert any(ln.text.startswith(f"{s['side']}: {s['losses']} of {s['men']} men lost") for ln in acc.aftermath)


def test_issue11_report_of_a_resolved_hex_workbook(tmp_path: Path) -> None:
    src = tmp_path / "hex.yaml"
    src.write_text(HEX_EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    wb = tmp_path / "hex.xlsx"
    _ok(["new", str(wb), "--from", str(src)])
    events = json.loads(_ok(["resolve", str(wb), "--json"]).stdout)["events"]
    before = _digest(wb)
    out = tmp_path / "hex.html"
    _ok(["report", str(wb), "--html", str(out)])
    assert _digest(wb) == before
    _check_hex_lines(_account(wb), events)
    page = out.read_text(encoding="utf-8")
    _check_offline_html(page)
    _names(page, _hex_names())


def test_issue11_report_of_a_hex_google_sheet(server: FakeSheetsServer, key_file: Path,  # noqa: F811
                                              tmp_path: Path) -> None:
    from sheetsync.app.workbook_cli import system_tracker_from
    from sheetsync.core.registry import find_system

    hexwar = find_system("hexwar")
    key = server.create_spreadsheet("Hex night")
    sa = ["--service-account", str(key_file)]
    _ok(["gsheet", "init", key, "--system", "hexwar", *sa])
    wb = tmp_path / "hex.xlsx"
    system_tracker_from(wb, hexwar, hexwar.load(yaml.safe_load(hexwar.example_data())))
    _ok(["upload", str(wb), key, *sa, "--no-init"])
    events = json.loads(_ok(["gsheet", "resolve", key, *sa, "--json"]).stdout)["events"]
    out = tmp_path / "hex.md"
    _ok(["report", key, "--md", str(out), *sa])
    _check_hex_lines(_account(key, service_account=key_file), events)
    _names(out.read_text(encoding="utf-8"), _hex_names())


def test_issue11_h12_a_hex_battle_with_no_resolved_turn_says_so() -> None:
    acc = _account(HEX_EXAMPLE)
    assert acc.steps == [] and any("No turn has been resolved yet" in n for n in acc.notes)
    assert len(acc.pictures) == 1  # the map as it stands
    assert "No turn of this battle has been resolved yet." in to_html(acc)


# --------------------------------------------------------------------------- errors


def test_issue11_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(tmp_path / "nope.yaml"), "--html", str(tmp_path / "r.html")])
    assert isinstance(res.exception, InputError) and "nope.yaml: does not exist" in str(res.exception)
    assert not (tmp_path / "r.html").exists()


def test_issue11_a_wrong_file_is_a_clear_error(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello", encoding="utf-8")
    res = runner.invoke(app, ["report", str(notes)])
    assert isinstance(res.exception, SheetSyncError) and "notes.txt" in str(res.exception)
    broken = tmp_path / "broken.yaml"
    broken.write_text("cohorts: [name: x", encoding="utf-8")
    res = runner.invoke(app, ["report", str(broken), "--md", str(tmp_path / "r.md")])
    assert isinstance(res.exception, SheetSyncError) and "broken.yaml, line 1" in str(res.exception)
    assert not (tmp_path / "r.md").exists()


def test_issue11_a_bad_report_name_writes_nothing(tmp_path: Path) -> None:
    battle, _, _ = _play_bbn_file(tmp_path)
    good = tmp_path / "ok.md"
    res = runner.invoke(app, ["report", str(battle), "--md", str(good), "--html", str(tmp_path / "r.txt")])
    assert isinstance(res.exception, InputError) and "r.txt" in str(res.exception) and ".html" in str(res.exception)
    assert not good.exists()
    before = _digest(battle)
    res = runner.invoke(app, ["report", str(battle), "--md", str(battle.with_suffix(".md")),
                              "--html", str(tmp_path / "missing-folder" / "r.html")])
    assert isinstance(res.exception, InputError) and "does not exist" in str(res.exception)
    assert _digest(battle) == before and not battle.with_suffix(".md").exists()


def test_issue11_no_traceback_reaches_the_terminal(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "sheetsync", "report", str(tmp_path / "gone.xlsx")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: ") and "gone.xlsx" in proc.stderr


def test_issue11_a_system_without_a_reporter_is_a_clear_error() -> None:
    class Other:
        id, title = "other", "Other mass combat"

    assert "other" not in REPORTERS
    with pytest.raises(BackendError, match="no after-action report for the Other mass combat"):
        account_of(ReportSource(Other(), None, "x.yaml", "file"))
