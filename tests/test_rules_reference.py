"""The rules reference inside the project: docs/rules/bbn.md, ``sheetsync rules`` and the
battle file's JSON Schema (``sheetsync schema``), all kept in step with the code."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.rules_doc import print_rules
from sheetsync.systems.bbn.files.loader import STATE_KEYS, TOP_KEYS, battle_to_file, load_battle
from sheetsync.systems.bbn.files.schema import BattleFile, FileCohort, battle_file_schema
from sheetsync.systems.bbn.reference import (
    RULINGS,
    SECTIONS,
    find_ruling,
    render_document,
    rulings_for,
)
from sheetsync.systems.bbn.rules import HouseRules, resolve_phase
from sheetsync.systems.bbn.rules.models import CohortSpec

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "rules" / "bbn.md"
EXAMPLE = ROOT / "sheetsync" / "examples" / "battle.yaml"
runner = CliRunner()


# -- docs/rules/bbn.md -----------------------------------------------------------------------


def test_rules_doc_matches_the_generator() -> None:
    """The house-rule table, the rulings and the sections of docs/rules/bbn.md are what
    ``python -m sheetsync.systems.bbn.reference docs/rules/bbn.md`` writes now."""
    doc = DOC.read_text(encoding="utf-8")
    assert doc == render_document(doc), "run: python -m sheetsync.systems.bbn.reference docs/rules/bbn.md"


def test_rules_doc_lists_every_house_rule_key_with_its_default() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for key, field in HouseRules.model_fields.items():
        default = field.default
        shown = ("true" if default else "false") if isinstance(default, bool) else (
            f'"{default}"' if isinstance(default, str) else str(default))
        assert re.search(rf"^\| `{key}` \| `{re.escape(shown)}` \|", doc, re.M), key


def test_r1_to_r37_each_ruling_once_in_order_in_the_doc() -> None:
    assert [r.number for r in RULINGS] == list(range(1, 38))
    doc = DOC.read_text(encoding="utf-8")
    places = [doc.index(f"- **R{n} ") for n in range(1, 38)]
    assert places == sorted(places)
    assert "RULINGS-bbn.md" not in doc


def test_r31_r35_r36_house_rule_keys_each_have_exactly_one_ruling() -> None:
    keyed = [r.key for r in RULINGS if r.key]
    assert sorted(keyed) == sorted(HouseRules.model_fields), "every house rule belongs to one ruling"
    for r in RULINGS:
        if r.key:
            text, _default, _choices = HouseRules.describe()[r.key]
            assert text.startswith(f"{r.ref}:"), f"{r.key}'s House Rules sheet text should lead with {r.ref}"
    assert {r.key: r.number for r in RULINGS if r.number in (31, 35, 36)} == {
        "casualty_count": 31, "torpor_after_aegis": 35, "heal_spends_declared": 36}


def test_every_ruling_cites_sections_of_the_reference() -> None:
    refs = [s.ref for s in SECTIONS]
    for r in RULINGS:
        assert r.sections, r.ref
        for cited in r.sections:
            assert any(cited == s or cited.startswith(s + ".") for s in refs), f"{r.ref}: {cited!r} is not a section"
    assert [r.ref for r in rulings_for("Tasks 5.1")] == ["R24"]  # not Tasks 5.11's rulings
    assert "R16" in [r.ref for r in rulings_for("Tasks 5.11")]


def test_every_ruling_the_engine_cites_is_in_the_reference() -> None:
    """Results cite R-numbers; each one they can cite must be explained."""
    cited: set[int] = set()
    for path in (ROOT / "sheetsync" / "systems" / "bbn").rglob("*.py"):
        cited |= {int(n) for n in re.findall(r"\bR(\d+)\b", path.read_text(encoding="utf-8"))}
    known = {r.number for r in RULINGS}
    assert cited - known == set()
    assert {31, 32, 33, 34, 35, 36, 37} <= cited


def test_find_ruling_accepts_r16_r16_and_16() -> None:
    assert [find_ruling(x) for x in ("R16", "r16", " 16 ")] == [RULINGS[15]] * 3
    assert find_ruling("R38") is None and find_ruling("sixteen") is None


# -- sheetsync rules --------------------------------------------------------------------------


def _printed(ruling: Any = None) -> str:
    out = io.StringIO()
    print_rules(Console(file=out, width=80, color_system=None), ruling)
    return out.getvalue()


def test_cli_rules_prints_every_ruling_readable_at_80_columns() -> None:
    text = _printed()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" not in text  # nothing truncated
    for r in RULINGS:
        assert f"{r.ref} {r.title}" in text, r.ref
    for key in HouseRules.model_fields:
        assert key in text
    assert "Tasks 5.11.2" in text


def test_cli_rules_command_prints_the_reference_and_one_ruling() -> None:
    res = runner.invoke(app, ["rules"])
    assert res.exit_code == 0, res.output
    assert "R37 Out of the fight" in res.output and "heal_spends_declared" in res.output
    res = runner.invoke(app, ["rules", "R36", "--system", "bbn"])
    assert res.exit_code == 0, res.output
    assert "R36 A Heal spends what it needs" in res.output and "R35" not in res.output


@pytest.mark.parametrize("system", ["chess", "bbnx"])
def test_cli_rules_unknown_system_is_refused_plainly(system: str) -> None:
    """Issue 22: hexwar and exalted have their reference now; only a system sheetsync
    doesn't run is refused, with the list of those it does."""
    res = runner.invoke(app, ["rules", "--system", system])
    assert res.exit_code == 2
    assert "the systems are bbn" in res.output and "hexwar" in res.output and "exalted" in res.output
    assert "not built yet" not in res.output
    assert "Traceback" not in res.output


def test_cli_rules_unknown_ruling_names_the_range() -> None:
    res = runner.invoke(app, ["rules", "R99"])
    assert res.exit_code == 2 and "R1 to R37" in res.output


# -- sheetsync schema ---------------------------------------------------------------------------


def _example() -> dict[str, Any]:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_schema_covers_every_key_the_loader_reads() -> None:
    assert set(BattleFile.model_fields) == TOP_KEYS
    assert set(FileCohort.model_fields) - set(CohortSpec.model_fields) == set(STATE_KEYS)


def test_cli_schema_prints_json_schema_of_the_battle_file() -> None:
    res = runner.invoke(app, ["schema"])
    assert res.exit_code == 0, res.output
    schema = json.loads(res.output)
    assert schema == battle_file_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["required"] == ["cohorts"] and schema["additionalProperties"] is False
    example = _example()
    assert set(example) <= set(schema["properties"])
    rules = schema["$defs"]["HouseRules"]["properties"]
    assert rules["heal_spends_declared"]["default"] is False and rules["heal_spends_declared"]["description"].startswith("R36")
    cohort = schema["$defs"]["FileCohort"]["properties"]
    assert "willpower_spent" in schema["$defs"]["FileMember"]["properties"] and "willpower" not in schema["$defs"]["FileMember"]["properties"]
    assert {"health", "temper", "states"} <= set(cohort)


def test_schema_is_valid_and_the_example_and_a_resolved_battle_validate() -> None:
    import jsonschema
    schema = battle_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    example = _example()
    assert list(validator.iter_errors(example)) == []
    resolved = battle_to_file(resolve_phase(load_battle(example)).battle)
    assert list(validator.iter_errors(json.loads(json.dumps(resolved)))) == []


@pytest.mark.parametrize(("change", "where"), [
    (lambda d: d.update(willpower=3), "willpower"),
    (lambda d: d["cohorts"][0]["members"][0].update(willpower=3), "willpower"),
    (lambda d: d.pop("cohorts"), "cohorts"),
    (lambda d: d["orders"][0].update(task="Dance"), "Dance"),
    (lambda d: d.update(house_rules={"casualty_count": "bodies"}), "bodies"),
])
def test_schema_refuses_what_the_loader_refuses(change: Any, where: str) -> None:
    import jsonschema
    data = _example()
    change(data)
    errors = list(jsonschema.Draft202012Validator(battle_file_schema()).iter_errors(data))
    assert errors and any(where in e.message for e in errors), [e.message for e in errors]


def test_readme_names_every_battle_file_key() -> None:
    """The README's battle-file section names each key the schema has (``willpower_spent``,
    not ``willpower``), and sends readers to docs/rules/bbn.md, which is in the repository."""
    from sheetsync.systems.bbn.rules.models import CharacterSheet, Order

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## For Storytellers: battle files", 1)[1].split("\n## ", 1)[0]
    keys = set(TOP_KEYS) | set(FileCohort.model_fields) | set(CharacterSheet.model_fields) | set(Order.model_fields)
    missing = sorted(k for k in keys if not re.search(rf"`[^`]*\b{k}\b[^`]*`", section))
    assert missing == []
    assert not re.search(r"\bwillpower\b(?!_spent)", section)
    assert "docs/rules/bbn.md" in section and "RULINGS-bbn.md" not in section
    assert DOC.exists()
