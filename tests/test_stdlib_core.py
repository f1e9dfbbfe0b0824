"""Issue 24: each system's rules run on the standard library alone.  In a fresh interpreter
where pydantic, PyYAML, orjson, openpyxl, rich and typer can't be imported, the engine
rebuilds the embedded example battle from its JSON dump (``Battle.model_validate``),
resolves one step with the battle's seeded dice, and gives what the ordinary process
gives for the same step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sheetsync.core.registry import find_system

ROOT = Path(__file__).resolve().parents[1]
REFUSED = ("pydantic", "pydantic_core", "yaml", "orjson", "openpyxl", "rich", "typer")
BATTLE = {"hexwar": "sheetsync.systems.hexwar.rules.models", "bbn": "sheetsync.systems.bbn.rules.battle",
          "exalted": "sheetsync.systems.exalted.rules.state"}
SEED = 11

CHILD = """
import importlib, json, sys
REFUSED = set(sys.argv[1].split(","))

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in REFUSED:
            raise ImportError(f"{name} is refused: the rules core runs on the standard library alone")
        return None

sys.meta_path.insert(0, Refuse())
system_id, module = sys.argv[2], sys.argv[3]
Battle = importlib.import_module(module).Battle
from sheetsync.core.registry import find_system

battle = Battle.model_validate(json.loads(sys.stdin.read()))
step = find_system(system_id).resolve_file(battle)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in REFUSED)
print(json.dumps({"json": step.json, "battle": step.battle.model_dump(mode="json"), "loaded": loaded},
                 sort_keys=True))
"""



def _example(system_id: str) -> Any:
    system = find_system(system_id)
    battle = system.load(yaml.safe_load(system.example_data()), f"the embedded {system_id} example")
    return battle.model_copy(update={"seed": SEED})


@pytest.mark.parametrize("system_id", ["hexwar", "bbn",
                                       "exalted"])
def test_issue24_rules_resolve_the_example_with_the_standard_library_alone(system_id: str) -> None:
    battle = _example(system_id)
    data = battle.model_dump(mode="json")
    assert type(battle).model_validate(data) == battle, "the dump rebuilds the same battle"
    step = find_system(system_id).resolve_file(battle)
    want = json.loads(json.dumps({"json": step.json, "battle": step.battle.model_dump(mode="json"), "loaded": []},
                                 sort_keys=True))
    run = subprocess.run([sys.executable, "-c", CHILD, ",".join(REFUSED), system_id, BATTLE[system_id]],
                         input=json.dumps(data), capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["loaded"] == [], "no refused module was imported"
    assert got == want
    assert got["battle"] != data, "the step resolved something"


def test_issue24_the_child_refuses_what_it_should() -> None:
    """The refusal is real: the same child can't import the battle file's JSON Schema, which
    needs pydantic (the loader no longer does, issue 25: it validates without it)."""
    run = subprocess.run([sys.executable, "-c", CHILD, ",".join(REFUSED), "hexwar", "sheetsync.systems.hexwar.files.schema"],
                         input="{}", capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode != 0
    assert "pydantic is refused" in run.stderr
