"""Issue 24: each rule system's engine runs on the standard library alone.  In a fresh
interpreter where pydantic, PyYAML, orjson, openpyxl, rich and typer cannot be imported,
the embedded example battle of each system is rebuilt from its JSON dump and one step of it
is resolved; the step must equal what the full install computes for the same battle."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from sheetsync.core.registry import find_system

BLOCKED = ("pydantic", "pydantic_core", "yaml", "orjson", "openpyxl", "rich", "typer")

CHILD = r"""
import json, sys
BLOCKED = set(sys.argv[1].split(","))


class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ImportError(f"{name} cannot be imported here")
        return None


sys.meta_path.insert(0, Blocked())
from importlib import import_module

from sheetsync.core.registry import find_system

data = json.loads(sys.stdin.read())
cls = getattr(import_module(data["module"]), data["cls"])
battle = cls.model_validate(data["battle"])
step = find_system(data["system"]).resolve_file(battle)
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
print(json.dumps({"step": step.json, "loaded": loaded}, sort_keys=True))
"""

NOT_YET = pytest.mark.xfail(strict=True, reason="this system's models are not on the standard library yet")


@pytest.mark.parametrize("system_id", ["bbn", pytest.param("hexwar", marks=NOT_YET),
                                       pytest.param("exalted", marks=NOT_YET)])
def test_issue24_the_engine_resolves_the_example_on_the_standard_library_alone(system_id: str) -> None:
    system = find_system(system_id)
    battle = system.load(yaml.safe_load(system.example_data()), "the embedded example")
    expected = json.loads(json.dumps(system.resolve_file(battle).json, sort_keys=True))
    payload = {"system": system_id, "module": type(battle).__module__, "cls": type(battle).__qualname__,
               "battle": battle.model_dump(mode="json")}
    proc = subprocess.run([sys.executable, "-c", CHILD, ",".join(BLOCKED)], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["loaded"] == []
    assert out["step"] == expected
