"""Issue 22: the rulings ship with the project for every system.  The hex wargame's (H1-H12)
and Exalted's (E1-E11, X1-X52) references: docs/rules/hexwar.md and docs/rules/exalted.md
agree with the reference data, ``sheetsync rules --system hexwar|exalted [KEY]`` prints them,
the --help texts know all three systems, and the README's opening says what runs."""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.rules_doc import SYSTEMS, print_rules, reference
from sheetsync.core.reference import Reference
from sheetsync.systems.exalted.rules.models import HouseRules as ExaltedHouseRules
from sheetsync.systems.exalted.tracker.layout import HOUSE_RULE_NOTES
from sheetsync.systems.hexwar.rules.models import HouseRules as HexwarHouseRules

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

EXPECTED_KEYS = {
    "hexwar": [f"H{n}" for n in range(1, 13)],
    "exalted": [f"E{n}" for n in range(1, 12)] + [f"X{n}" for n in range(1, 53)],
}
MODELS: dict[str, Any] = {"hexwar": HexwarHouseRules, "exalted": ExaltedHouseRules}
NEW = ["hexwar", "exalted"]


def _ref(system: str) -> Reference:
    return reference(system)


def _flat(text: str) -> str:
    return " ".join(text.split())


# -- the reference data and docs/rules/<system>.md ------------------------------------------


@pytest.mark.parametrize("system", NEW)
def test_issue22_rules_doc_matches_the_reference_data(system: str) -> None:
    """The house-rule table, the rulings and the sections of docs/rules/<system>.md are what
    ``python -m sheetsync.systems.<system>.reference`` writes now."""
    doc = (ROOT / "docs" / "rules" / f"{system}.md").read_text(encoding="utf-8")
    assert doc == _ref(system).render_document(doc), (
        f"run: python -m sheetsync.systems.{system}.reference docs/rules/{system}.md")


@pytest.mark.parametrize("system", NEW)
def test_issue22_every_ruling_once_in_order_in_data_and_doc(system: str) -> None:
    ref = _ref(system)
    assert [r.ref for r in ref.rulings] == EXPECTED_KEYS[system]
    doc = (ROOT / "docs" / "rules" / f"{system}.md").read_text(encoding="utf-8")
    places = [doc.index(f"- **{key} ") for key in EXPECTED_KEYS[system]]
    assert places == sorted(places)
    for key in EXPECTED_KEYS[system]:
        assert doc.count(f"- **{key} ") == 1, key
    assert f"RULINGS-{system}.md" not in doc
    for r in ref.rulings:
        assert r.title and r.sections and len(r.text) > 40, r.ref


@pytest.mark.parametrize("system", NEW)
def test_issue22_every_ruling_cites_sections_of_the_reference(system: str) -> None:
    ref = _ref(system)
    sections = [s.ref for s in ref.sections]
    assert len(sections) == len(set(sections))
    for r in ref.rulings:
        for cited in r.sections:
            assert cited in sections, f"{r.ref}: {cited!r} is not a section"


def test_h7_h8_sections_take_in_their_subsections() -> None:
    ref = _ref("hexwar")
    assert [r.ref for r in ref.rulings_for("6.2.2")] == ["H10"]
    assert {"H8", "H9", "H10", "H11"} <= {r.ref for r in ref.rulings_for("6.2")}  # 6.2.1 and 6.2.2
    assert "H5" not in [r.ref for r in ref.rulings_for("6.2")]


@pytest.mark.parametrize(("system", "pattern", "folders"), [
    ("hexwar", r"\b(H\d+)\b", ["sheetsync/systems/hexwar", "sheetsync/systems/hexwar/tracker/steps.py"]),
    ("exalted", r"\b([EX]\d+)\b", ["sheetsync/systems/exalted", "sheetsync/systems/exalted/tracker/steps.py"]),
])
def test_issue22_every_ruling_the_engine_cites_is_in_the_reference(system: str, pattern: str,
                                                                   folders: list[str]) -> None:
    """Results cite these keys; each one they can cite must be explained."""
    cited: set[str] = set()
    for folder in folders:
        path = ROOT / folder
        for file in ([path] if path.is_file() else sorted(path.glob("*.py"))):
            if file.name != "reference.py":
                cited |= set(re.findall(pattern, file.read_text(encoding="utf-8")))
    known = {r.ref for r in _ref(system).rulings}
    assert cited, "the engine cites its rulings"
    assert cited - known == set()


@pytest.mark.parametrize("system", NEW)
def test_issue22_reference_modules_use_the_standard_library_only(system: str) -> None:
    """The reference rides with the rules core: no pydantic, rich or anything else."""
    for path in (ROOT / "sheetsync" / "systems" / system / "reference.py", ROOT / "sheetsync" / "core" / "reference.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        for name in names:
            top = name.split(".")[0]
            assert top in sys.stdlib_module_names or name == "sheetsync.core.reference", f"{path.name}: {name}"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


@pytest.mark.parametrize("system", NEW)
def test_issue22_house_rule_keys_and_defaults_match_the_model(system: str) -> None:
    model = MODELS[system]
    ref = _ref(system)
    assert [h.key for h in ref.house_rules] == list(model.model_fields), "every key, in the model's order"
    for h in ref.house_rules:
        field = model.model_fields[h.key]
        default = field.get_default(call_default_factory=True)
        assert h.default == _shown(default), h.key
        choices = typing.get_args(field.annotation)
        if field.annotation is bool:
            assert h.allowed == "true, false", h.key
        elif choices and all(isinstance(c, str) for c in choices):
            assert h.allowed == ", ".join(f'"{c}"' for c in choices), h.key


@pytest.mark.parametrize("system", NEW)
def test_issue22_each_house_rule_belongs_to_the_ruling_that_names_it(system: str) -> None:
    ref = _ref(system)
    owners: dict[str, list[str]] = {}
    for r in ref.rulings:
        for key in r.keys:
            owners.setdefault(key, []).append(r.ref)
    assert {h.key: [h.ruling] for h in ref.house_rules} == owners
    # the sheet's own text for each key leads with the same ruling
    notes = ({k: v[0] for k, v in HexwarHouseRules.describe().items()} if system == "hexwar"
             else dict(HOUSE_RULE_NOTES))
    for h in ref.house_rules:
        if h.key in notes:
            assert re.match(rf"{h.ruling}[:,]", notes[h.key]), (h.key, notes[h.key])


def test_x35_find_takes_any_case_and_spacing() -> None:
    ex, hx = _ref("exalted"), _ref("hexwar")
    assert ex.find("X35") is ex.find(" x35 ") is ex.find("X035") is not None
    assert ex.find("E3") is not None and ex.find("X53") is None and ex.find("35") is None  # two letters
    assert hx.find("7") is hx.find("h7") is not None
    assert ex.keys_listed() == "E1 to E11, X1 to X52" and hx.keys_listed() == "H1 to H12"


# -- sheetsync rules --system ------------------------------------------------------------------


def _printed(system: str, ruling: Any = None) -> str:
    out = io.StringIO()
    print_rules(Console(file=out, width=80, color_system=None), ruling, system)
    return out.getvalue()


@pytest.mark.parametrize("system", NEW)
def test_issue22_rules_reference_readable_at_80_columns(system: str) -> None:
    text = _printed(system)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" not in text  # nothing truncated
    for r in _ref(system).rulings:
        assert f"{r.ref} {r.title}" in text, r.ref
    for key in MODELS[system].model_fields:
        assert key in text
    for s in _ref(system).sections:
        assert s.about.split()[0] in text, s.ref


def test_issue22_cli_rules_system_hexwar_prints_every_ruling() -> None:
    res = runner.invoke(app, ["rules", "--system", "hexwar"])
    assert res.exit_code == 0, res.output
    assert "not built yet" not in res.output
    for r in _ref("hexwar").rulings:
        assert f"{r.ref} {r.title}" in res.output
    assert "proportional_reduction" in res.output and "docs/rules/hexwar.md" in res.output
    assert "6.2.1" in res.output


def test_issue22_cli_rules_system_exalted_prints_every_ruling() -> None:
    res = runner.invoke(app, ["rules", "--system", "exalted"])
    assert res.exit_code == 0, res.output
    for r in _ref("exalted").rulings:
        assert f"{r.ref} {r.title}" in res.output
    assert "rout_dice" in res.output and "docs/rules/exalted.md" in res.output
    assert "Hesitation and Rout" in res.output


def test_h7_cli_rules_hexwar_one_ruling() -> None:
    res = runner.invoke(app, ["rules", "H7", "--system", "hexwar"])
    assert res.exit_code == 0, res.output
    assert "H7 Engagements" in res.output and "stack_defense" in res.output
    assert "H8" not in res.output and "H1 " not in res.output and "Rule sections" not in res.output


@pytest.mark.parametrize(("key", "title", "house_rule"), [
    ("x35", "X35 Rout check", "rout_dice"),
    ("E3", "E3 Penalties", None),
    ("X7", "X7 Damage Ratings", "ranged_strength_thrown"),
])
def test_x35_e3_cli_rules_exalted_one_ruling(key: str, title: str, house_rule: str | None) -> None:
    res = runner.invoke(app, ["rules", "--system", "exalted", key])
    assert res.exit_code == 0, res.output
    assert title in res.output
    assert "X36" not in res.output and "Rule sections" not in res.output
    if house_rule:
        assert house_rule in res.output


def test_issue22_cli_rules_system_alias_is_understood() -> None:
    res = runner.invoke(app, ["rules", "--system", "ex2e", "X2"])
    assert res.exit_code == 0, res.output
    assert "X2 Magnitude" in res.output


@pytest.mark.parametrize(("system", "key", "listed"), [
    ("hexwar", "H13", "H1 to H12"),
    ("hexwar", "charge", "H1 to H12"),
    ("exalted", "X53", "E1 to E11, X1 to X52"),
    ("exalted", "E0", "E1 to E11, X1 to X52"),
])
def test_issue22_cli_rules_unknown_key_lists_the_keys(system: str, key: str, listed: str) -> None:
    res = runner.invoke(app, ["rules", "--system", system, key])
    assert res.exit_code == 2
    text = _flat(res.output)
    assert f"'{key}' is not a ruling" in text and listed in text
    assert "Traceback" not in res.output


def test_issue22_cli_rules_key_of_another_system_says_which() -> None:
    res = runner.invoke(app, ["rules", "X35"])  # --system bbn by default
    assert res.exit_code == 2
    text = _flat(res.output)
    assert "R1 to R37" in text and "sheetsync rules --system exalted X35" in text


# -- --help texts and the README ----------------------------------------------------------------


@pytest.mark.parametrize("command", ["template", "build", "rules", "schema"])
def test_issue22_help_names_all_three_systems(command: str) -> None:
    res = runner.invoke(app, [command, "--help"])
    assert res.exit_code == 0, res.output
    text = _flat(res.output)
    for system in SYSTEMS:
        assert system in text, (command, system)
    assert "battalion" in text and "hex wargame" in text and "Exalted 2e mass combat" in text
    assert "only bbn" not in text


def test_issue22_readme_opening_names_every_system_truthfully() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    opening = _flat(readme.split("```", 1)[0])
    assert "for now" not in opening
    assert "--system hexwar" in opening and "--system exalted" in opening and "Baltimore by Night" in opening
    assert "tracker workbook or Google Sheet" in opening and "docs/rules/" in opening
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block[0].startswith("pip install -e . && sheetsync demo ")
    assert first_block[1].startswith("bash scripts/test.sh ")
    for system in NEW:
        assert (ROOT / "docs" / "rules" / f"{system}.md").exists()


@pytest.mark.parametrize("system", NEW)
def test_issue22_docs_house_rules_example_loads(system: str) -> None:
    """The ``house_rules:`` example on each page is one the battle-file loader takes."""
    import yaml

    from sheetsync.core.registry import find_system

    doc = (ROOT / "docs" / "rules" / f"{system}.md").read_text(encoding="utf-8")
    example = yaml.safe_load(doc.split("```yaml\n", 1)[1].split("```", 1)[0])
    assert example["system"] == system and example["house_rules"]
    rule_system = find_system(system)
    data = yaml.safe_load(rule_system.example_data())
    data["house_rules"] = example["house_rules"]
    battle = rule_system.load(data, f"docs/rules/{system}.md")
    for key, value in example["house_rules"].items():
        assert getattr(battle.house_rules, key) == value, key


# -- sheetsync schema --system -------------------------------------------------------------------


def _schema(system: str) -> dict[str, Any]:
    from importlib import import_module

    schema: dict[str, Any] = import_module(f"sheetsync.systems.{system}.files.schema").battle_file_schema()
    return schema


def _example(system: str) -> dict[str, Any]:
    import yaml

    from sheetsync.core.registry import find_system

    data = yaml.safe_load(find_system(system).example_data())
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("system", NEW)
def test_issue22_cli_schema_system_prints_the_battle_file_schema(system: str) -> None:
    res = runner.invoke(app, ["schema", "--system", system])
    assert res.exit_code == 0, res.output
    schema = json.loads(res.output)
    assert schema == _schema(system)
    assert schema["$schema"].endswith("2020-12/schema") and schema["additionalProperties"] is False
    assert schema["properties"]["system"]["const"] == system
    assert schema["properties"]["house_rules"]["$ref"].endswith("/HouseRules")


def test_issue22_cli_schema_unknown_system_is_refused_plainly(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from sheetsync.app.cli import main

    monkeypatch.setattr(sys, "argv", ["sheetsync", "schema", "--system", "chess"])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    assert exit_.value.code == 1 and out == ""
    assert "there is no rule system 'chess'" in err and "bbn, hexwar, exalted" in err
    assert "Traceback" not in err


def test_h1_h4_hexwar_schema_covers_every_key_the_loader_reads() -> None:
    from sheetsync.systems.hexwar.files.loader import TOP_KEYS, TURN_KEYS, UNIT_KEYS

    schema = _schema("hexwar")
    assert set(schema["properties"]) == TOP_KEYS
    assert set(schema["$defs"]["FileUnit"]["properties"]) == UNIT_KEYS
    assert set(schema["$defs"]["FileTurn"]["properties"]) == TURN_KEYS
    assert schema["required"] == ["map", "units"]


def test_x1_x11_exalted_schema_covers_every_key_the_loader_reads() -> None:
    from sheetsync.systems.exalted.files.loader import (
        DICE_KEYS,
        SPECIAL_KEYS,
        TOP_KEYS,
        UNIT_EXTRA_KEYS,
    )
    from sheetsync.systems.exalted.rules.models import UnitSpec

    schema = _schema("exalted")
    assert set(schema["properties"]) == TOP_KEYS
    assert set(schema["$defs"]["FileUnit"]["properties"]) == set(UnitSpec.model_fields) | UNIT_EXTRA_KEYS
    assert set(schema["$defs"]["SpecialCharacters"]["properties"]) == SPECIAL_KEYS
    assert set(DICE_KEYS) <= set(schema["$defs"]["Order"]["properties"])
    assert set(schema["required"]) == {"system", "units"}


@pytest.mark.parametrize("system", NEW)
def test_issue22_schema_is_valid_and_the_example_and_a_resolved_battle_validate(system: str) -> None:
    import jsonschema

    from sheetsync.core.registry import find_system

    schema = _schema(system)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    example = _example(system)
    assert list(validator.iter_errors(example)) == []
    rule_system = find_system(system)
    step = rule_system.resolve_file(rule_system.load(example, "the example"))
    resolved = json.loads(json.dumps(rule_system.dump(step.battle)))
    assert [e.message for e in validator.iter_errors(resolved)] == []


@pytest.mark.parametrize(("system", "change", "where"), [
    ("hexwar", lambda d: d.update(terrain="desert"), "terrain"),
    ("hexwar", lambda d: d["units"][0].pop("hex"), "hex"),
    ("hexwar", lambda d: d["units"][0].update(size="platoon"), "platoon"),
    ("hexwar", lambda d: d.update(house_rules={"charge_by": "speed"}), "speed"),
    ("exalted", lambda d: d.update(weather="hot"), "weather"),
    ("exalted", lambda d: d["orders"][0].update(action="Dance"), "Dance"),
    ("exalted", lambda d: d["units"][0].update(special_characters={"wizards": []}), "wizards"),
    ("exalted", lambda d: d.update(house_rules={"rout_dice": "never"}), "never"),
])
def test_issue22_schema_refuses_what_the_loader_refuses(system: str, change: Any, where: str) -> None:
    import jsonschema

    from sheetsync.core.errors import InputError
    from sheetsync.core.registry import find_system

    data = _example(system)
    change(data)
    errors = list(jsonschema.Draft202012Validator(_schema(system)).iter_errors(data))
    assert errors and any(where in e.message for e in errors), [e.message for e in errors]
    with pytest.raises(InputError):
        find_system(system).load(data, "the changed example")
