"""What the command line costs to start, to import and to print (issue 12, rows 6-8).

    python benchmarks/bench_cli.py [--repeat 11] [--cohorts 100] [--no-bytecode-cache]

Every sample is a fresh interpreter, and the variants are run alternately, so that drift
(other work on the machine) hits them alike.  CPU time (user + system) of the child.

* ``python -c pass``: the floor, what any Python start costs here;
* ``sheetsync --help`` (``python -m sheetsync --help``), and a bare typer app with the
  same command names and nothing else (what typer alone costs);
* ``sheetsync resolve`` of an ``--cohorts``-cohort battalion battle file, and a
  ``python -c "import ..."`` of exactly the modules that resolve loaded: the time spent
  importing is that minus the floor, its share is of the whole resolve; the same without
  sheetsync's own modules is what the libraries alone cost;
* where the floor of that share lies, the libraries sheetsync cannot do without, each over
  ``python -c pass``: the bare typer app *running* a ``resolve`` command with the same
  parameters as sheetsync's (annotations and defaults copied, an empty body) on the same
  battle file, which is what typer costs a command that is run (typer 0.29 coerces each
  parameter through a pydantic ``TypeAdapter``: ``typer._adapters`` and pydantic's model
  machinery are imported at run time, not by ``--help``); ``from pydantic import BaseModel``
  with one small model validated once; ``import yaml`` and ``yaml.CSafeLoader``;
  ``import rich.console, rich.text``; all four in one script running that ``resolve``, the
  *library floor*; and, like the resolve's own, a ``python -c "import ..."`` of exactly the
  modules that script loaded.  That import-only part's share of the whole resolve is the
  lowest importing share sheetsync could reach with these libraries: the 15% target is
  reachable only if it is below 15%.  The rest of the floor (typer building the command and
  its adapters, pydantic a model's schema) is run-time work, not importing.  The other
  commands of the bare app have no parameters (building sheetsync's is not in the floor);
* the tables ``sheetsync resolve`` and ``sheetsync pools`` print for that battle, timed
  inside a fresh interpreter (no warm caches), at 80 and 200 columns; and, as the floor
  of what they replaced, the same who-gave-what tables drawn by rich's ``Table``.

``--steps`` (issue 23, a lean step process) measures instead, for each system's tracker
made by this tree: a workbook ``resolve`` as a whole process (``python -m sheetsync resolve
T.xlsx``, with its tables and with ``--json``) over the floor, a process that unzips,
rezips and atomically saves the same workbook (``zip_rewrite`` and ``atomic_write_bytes``,
bench_workbook.py's floor, in a process of its own); the same resolve through the lean
entry ending the ordinary way (the entry itself ends a step with ``os._exit`` after its
exit handlers and a flush), to see what the interpreter's teardown costs; and ``sheetsync --help`` over ``python -c pass``.  ``--base DIR`` (a checkout of an
older sheetsync, e.g. ``git worktree add /tmp/lean-base main``) adds the same resolves and
help run from that tree, alternating with this one's, for before/after in one run.

Bytecode: by default the children write and reuse ``.pyc`` files (in a temporary
``PYTHONPYCACHEPREFIX``, so the tree stays clean), as an installed sheetsync does.
``--no-bytecode-cache`` sets ``PYTHONDONTWRITEBYTECODE=1`` instead: every sheetsync module
is then compiled at every start (a read-only checkout, some sandboxes).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from battles import make_battle  # noqa: E402

HELP_RATIO = 3.0
STEP_RATIO = 3.0
SYSTEMS = ("bbn", "hexwar", "exalted")

FLOOR = """
import sys
from pathlib import Path
from sheetsync.backends.xlsx_package import zip_rewrite
from sheetsync.sheets.disk import atomic_write_bytes
path = Path(sys.argv[1])
atomic_write_bytes(path, zip_rewrite(path.read_bytes()), backup=True)
"""
ORDINARY_EXIT = """
import sys
from sheetsync.app.entry import run
sys.exit(run(sys.argv[1:]))
"""
IMPORT_SHARE = 0.15
RENDER_MS = 30.0

RENDER = """
import io, json, sys, time
sys.path.insert(0, {tests!r})
from battles import make_battle
from rich.console import Console
from sheetsync.systems.bbn.views import print_phase, print_pools
from sheetsync.systems.bbn.rules import resolve_phase
from sheetsync.systems.bbn.files.loader import load_battle
battle = load_battle(make_battle({n}))
result = resolve_phase(battle)
out = {{}}
for width in (80, 200):
    console = Console(file=io.StringIO(), width=width)
    t = time.process_time()
    print_phase(console, result)
    out[f"resolve@{{width}}"] = time.process_time() - t
    t = time.process_time()
    print_pools(console, battle.pools.values())
    out[f"pools@{{width}}"] = time.process_time() - t
if {reference}:  # the same who-gave-what tables drawn by rich's Table, as sheetsync did before
    from rich import box
    from rich.table import Table
    console = Console(file=io.StringIO(), width=80)
    t = time.process_time()
    for p in battle.pools.values():
        table = Table(title=f"{{p.name}}: who gave what", header_style="bold", box=box.SIMPLE_HEAD,
                      padding=(0, 1), pad_edge=False)
        for col in ("Pool", "From", "Trait", "+", "Rule", "Detail"):
            table.add_column(col, no_wrap=col in ("Pool", "From"), justify="right" if col == "+" else "left",
                             overflow="fold")
        for pool, lines in p.breakdown.items():
            for c in lines:
                if not (c.amount == 0 and c.kind == "base"):
                    table.add_row(pool, c.member or "cohort", c.trait, str(c.amount), c.rule_ref, c.detail)
        console.print(table)
    out["rich Table: pools@80"] = time.process_time() - t
print(json.dumps(out))
"""

MODULES = """
import atexit, json, sys
atexit.register(lambda: open({dump!r}, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["sheetsync", "resolve", {battle!r}]
from sheetsync.app.cli import main
main()
"""


def cpu(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> float:
    """CPU seconds (user + system) of one child process (``python -m`` imports from ``cwd`` first)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# sheetsync's ``resolve`` parameters (sheetsync/app/cli.py), copied; ``check_resolve_params`` checks they still match.
RESOLVE_PARAMS = """file: Path,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    out: Annotated[Path | None, typer.Option(
        help="Write the new battle state here (a battle file; for a workbook, a copy of it, the original untouched).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed for dice not typed in (battle files only).")] = None,
"""

PYDANTIC = """
from pydantic import BaseModel
class Cohort(BaseModel):
    name: str
    size: int = 0
    traits: list[str] = []
Cohort.model_validate({"name": "1st", "size": 480, "traits": ["drilled"]})
"""
YAML = "import yaml\nyaml.CSafeLoader\n"
RICH = "import rich.console, rich.text\n"


def check_resolve_params() -> None:
    """Stop if sheetsync's ``resolve`` no longer has the parameters ``RESOLVE_PARAMS`` copies."""
    import inspect
    import typing

    from sheetsync.app.cli import resolve

    ns: dict = {}
    exec("from __future__ import annotations\nfrom pathlib import Path\nfrom typing import Annotated\nimport typer\n"
         f"def resolve(\n    {RESOLVE_PARAMS}) -> None:\n    pass\n", ns)

    def shape(fn):  # name, default, type, and each typer.Option's settings (the objects compare by identity)
        hints = typing.get_type_hints(fn, include_extras=True)
        out = []
        for p in inspect.signature(fn).parameters.values():
            hint = hints[p.name]
            extras = [vars(m) for m in getattr(hint, "__metadata__", ())]
            out.append((p.name, p.default, typing.get_args(hint)[0] if extras else hint, extras))
        return out

    real, copy = shape(resolve), shape(ns["resolve"])
    if real != copy:
        sys.exit(f"bench_cli.py: sheetsync's resolve is now {real}; update RESOLVE_PARAMS (was {copy})")


def bare_typer_app(resolve_params: bool = False) -> str:
    """A typer app with sheetsync's command names and short helps, and no code behind them;
    with ``resolve_params``, its ``resolve`` takes sheetsync's resolve parameters (``RESOLVE_PARAMS``)."""
    from sheetsync.app.cli import app

    if resolve_params:
        check_resolve_params()
    lines = ["from __future__ import annotations\nfrom pathlib import Path\nfrom typing import Annotated"] if resolve_params \
        else []
    lines += ["import typer", "app = typer.Typer(name='sheetsync', no_args_is_help=True, add_completion=False, "
             "rich_markup_mode=None, pretty_exceptions_enable=False)"]
    for i, info in enumerate(app.registered_commands):
        name = info.name or (info.callback.__name__ if info.callback else f"c{i}")
        params = f"\n    {RESOLVE_PARAMS}" if resolve_params and name == "resolve" else ""
        lines.append(f"@app.command({name!r}, short_help={info.short_help!r})\ndef c{i}({params}) -> None:\n    pass")
    for group in app.registered_groups:
        text = group.help if isinstance(group.help, str) else group.typer_instance.info.help
        text = text if isinstance(text, str) else ""
        lines.append(f"app.add_typer(typer.Typer(), name={group.name!r}, help={text!r})")
    lines.append("app()")
    return "\n".join(lines)


def imported_modules(battle: Path, env: dict[str, str], work: Path, code: str | None = None) -> list[str]:
    """The modules ``sheetsync resolve`` loads beyond a bare interpreter's (with ``code``: those that
    script loads, run as ``... resolve BATTLE``)."""
    dump = work / "modules.json"
    script = MODULES.format(dump=str(dump), battle=str(battle))
    if code is not None:
        script = script.replace("from sheetsync.app.cli import main\nmain()",
                                f"exec(compile({code!r}, '<script>', 'exec'), {{'__name__': '__main__'}})")
    subprocess.run([sys.executable, "-c", script], check=True, env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    loaded = json.loads(dump.read_text(encoding="utf-8"))
    bare = json.loads(subprocess.run([sys.executable, "-c", "import sys, json; print(json.dumps(sorted(sys.modules)))"],
                                     check=True, env=env, capture_output=True, text=True).stdout)
    return [m for m in loaded if m not in set(bare) and m != "__main__"]


def import_code(modules: list[str]) -> str:
    """A script importing ``modules`` in order (those that fail alone are skipped)."""
    return (f"import importlib\nfor name in {modules!r}:\n    try:\n        importlib.import_module(name)\n"
            "    except Exception:\n        pass\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--cohorts", type=int, default=100)
    ap.add_argument("--no-bytecode-cache", action="store_true")
    ap.add_argument("--steps", action="store_true", help="issue 23: workbook resolves and --help over their floors")
    ap.add_argument("--base", type=Path, help="with --steps: an older checkout to measure alongside")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        if args.steps:
            steps(args, Path(tmp))
        else:
            run(args, Path(tmp))


def _trackers(folder: Path) -> dict[str, Path]:
    """A built tracker of each system, its first step's orders typed in (this tree's)."""
    from sheetsync.app.workbook_cli import new_workbook, system_tracker_from
    from sheetsync.core.registry import find_system
    from sheetsync.sheets.disk import example_path

    out = {"bbn": folder / "bbn.xlsx"}
    new_workbook(out["bbn"], example_path())
    for system_id in SYSTEMS[1:]:
        system = find_system(system_id)
        out[system_id] = folder / f"{system_id}.xlsx"
        system_tracker_from(out[system_id], system, system.load(yaml.safe_load(system.example_data())))
    return out


def steps(args: argparse.Namespace, work: Path) -> None:
    """Issue 23's ratios, medians of CPU time in one run (see the module docstring)."""
    import shutil

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["COLUMNS"] = "80"
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    trees = {"now": ROOT} | ({"base": args.base.resolve()} if args.base else {})
    envs = {name: {**env, "PYTHONPATH": str(tree)} for name, tree in trees.items()}
    trackers = _trackers(work)
    py = sys.executable
    variants: dict[str, tuple[str, list[str], str | None]] = {"python -c pass": ("now", [py, "-c", "pass"], None)}
    for name in trees:
        variants[f"sheetsync --help ({name})"] = (name, [py, "-m", "sheetsync", "--help"], None)
    for system_id in SYSTEMS:
        variants[f"{system_id}: floor"] = ("now", [py, "-c", FLOOR, "T"], system_id)
        for name in trees:
            variants[f"{system_id}: resolve ({name})"] = (name, [py, "-m", "sheetsync", "resolve", "T"], system_id)
            variants[f"{system_id}: resolve --json ({name})"] = (
                name, [py, "-m", "sheetsync", "resolve", "T", "--json"], system_id)
        variants[f"{system_id}: resolve, sys.exit (now)"] = ("now", [py, "-c", ORDINARY_EXIT, "resolve", "T"],
                                                            system_id)

    def once(name: str) -> float:
        tree, cmd, system_id = variants[name]
        if system_id is None:
            return cpu(cmd, envs[tree], trees[tree])
        copy = work / f"t-{system_id}.xlsx"
        shutil.copy(trackers[system_id], copy)
        return cpu([str(copy) if a == "T" else a for a in cmd], envs[tree], trees[tree])

    for name in variants:  # warm the file cache and write the .pyc files
        once(name)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeat):
        for name in variants:
            times[name].append(once(name))
    med = {name: statistics.median(data) * 1000 for name, data in times.items()}
    print("$ " + shlex.join([Path(py).name, *sys.argv]))
    print(f"{args.repeat} fresh interpreters per variant, alternating; CPU time (user + system), median and min; "
          f"trees: {', '.join(f'{k} = {v}' for k, v in trees.items())}\n")
    print(f"{'variant':36} | {'median (ms)':>11} | {'min (ms)':>8}")
    print("-" * 36 + "-+-" + "-" * 11 + "-+-" + "-" * 8)
    for name, data in times.items():
        print(f"{name:36} | {med[name]:11.1f} | {min(data) * 1000:8.1f}")
    print(f"\n{'issue 23 ratio':44} | " + " | ".join(f"{name:>6}" for name in trees) + f" | {'target':>7}")
    print("-" * 44 + "-+-" + "-+-".join("-" * 6 for _ in trees) + "-+-" + "-" * 7)
    rows = [("sheetsync --help / python -c pass", [med[f"sheetsync --help ({n})"] / med["python -c pass"]
                                                  for n in trees])]
    for system_id in SYSTEMS:
        floor = med[f"{system_id}: floor"]
        for kind in ("resolve", "resolve --json"):
            rows.append((f"{system_id} {kind} / floor process", [med[f"{system_id}: {kind} ({n})"] / floor
                                                                 for n in trees]))
    for label, ratios in rows:
        print(f"{label:44} | " + " | ".join(f"{r:5.2f}x" for r in ratios) + f" | <= {STEP_RATIO:g}x")
    saved = [med[f"{s}: resolve, sys.exit (now)"] - med[f"{s}: resolve (now)"] for s in SYSTEMS]
    print(f"\nEnding with os._exit (the entry's way) instead of sys.exit saves {', '.join(f'{s} {d:+.1f} ms' for s, d in zip(SYSTEMS, saved, strict=True))}"
          " of CPU per resolve in this run (medians; negative: it cost time).")


def run(args: argparse.Namespace, work: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["COLUMNS"] = "80"
    if args.no_bytecode_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    battle = work / f"battle-{args.cohorts}.yaml"
    battle.write_text(yaml.safe_dump(make_battle(args.cohorts), sort_keys=False), encoding="utf-8")
    modules = imported_modules(battle, env, work)
    libraries = [m for m in modules if m.split(".")[0] != "sheetsync"]
    py = sys.executable
    variants = {
        "python -c pass": [py, "-c", "pass"],
        "sheetsync --help": [py, "-m", "sheetsync", "--help"],
        "bare typer app --help": [py, "-c", bare_typer_app(), "--help"],
        "sheetsync resolve": [py, "-m", "sheetsync", "resolve", str(battle)],
        "import resolve's modules": [py, "-c", import_code(modules)],
        "  of which libraries (no sheetsync)": [py, "-c", import_code(libraries)],
    }
    typer_run = bare_typer_app(resolve_params=True)
    assert typer_run.endswith("\napp()")
    floor_code = typer_run[: -len("app()")] + PYDANTIC + YAML + RICH + "app()"  # app() exits: the rest goes first
    libs = {  # the library floor, each over python -c pass (see the docstring)
        "typer app running resolve (no body)": [py, "-c", typer_run, "resolve", str(battle)],
        "pydantic BaseModel + 1 model": [py, "-c", PYDANTIC],
        "import yaml + CSafeLoader": [py, "-c", YAML],
        "import rich.console, rich.text": [py, "-c", RICH],
        "library floor: the four in one run": [py, "-c", floor_code, "resolve", str(battle)],
        "  its imports alone": [py, "-c", import_code(floor_modules := imported_modules(battle, env, work, floor_code))],
    }
    variants.update(libs)
    render_cmd = [py, "-c", RENDER.format(tests=str(ROOT / "tests"), n=args.cohorts, reference=True)]
    for cmd in variants.values():  # warm the file cache (and write the .pyc files)
        cpu(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in variants}
    renders: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for name, cmd in variants.items():
            times[name].append(cpu(cmd, env))
        sample = json.loads(subprocess.run(render_cmd, check=True, env=env, capture_output=True, text=True,
                                           cwd=ROOT).stdout)
        for key, value in sample.items():
            renders.setdefault(key, []).append(value)

    med = {name: statistics.median(data) * 1000 for name, data in times.items()}
    rmed = {name: statistics.median(data) * 1000 for name, data in renders.items()}
    print("$ " + shlex.join([Path(py).name, *sys.argv]))
    print(f"{args.repeat} fresh interpreters per variant, alternating; CPU time (user + system); "
          f"bytecode cache {'off (PYTHONDONTWRITEBYTECODE=1)' if args.no_bytecode_cache else 'on'}; "
          f"{len(modules)} modules imported by the resolve\n")
    print(f"{'variant':36} | {'median (ms)':>11} | {'min (ms)':>8}")
    print("-" * 36 + "-+-" + "-" * 11 + "-+-" + "-" * 8)
    for name, data in times.items():
        print(f"{name:36} | {med[name]:11.1f} | {min(data) * 1000:8.1f}")
    for name, data in renders.items():
        print(f"{'tables: ' + name:36} | {rmed[name]:11.1f} | {min(data) * 1000:8.1f}")
    reference = rmed.pop("rich Table: pools@80")

    floor = med["python -c pass"]
    help_ratio = med["sheetsync --help"] / floor
    typer_ratio = med["bare typer app --help"] / floor
    share = (med["import resolve's modules"] - floor) / med["sheetsync resolve"]
    rows = [
        ("sheetsync --help / python -c pass", f"{help_ratio:.2f}x", f"<= {HELP_RATIO:.0f}x", help_ratio <= HELP_RATIO),
        (f"importing / whole resolve ({args.cohorts} cohorts)", f"{share:.0%}", f"<= {IMPORT_SHARE:.0%}",
         share <= IMPORT_SHARE),
    ]
    for width in (80, 200):
        total = rmed[f"resolve@{width}"]
        rows.append((f"resolve tables at {width} columns", f"{total:.1f} ms", f"<= {RENDER_MS:.0f} ms",
                     total <= RENDER_MS))
        pools = rmed[f"pools@{width}"]
        rows.append((f"pools tables at {width} columns", f"{pools:.1f} ms", f"<= {RENDER_MS:.0f} ms",
                     pools <= RENDER_MS))
    print()
    print(f"{'issue 12 target':42} | {'measured':>9} | {'target':>8} | result")
    print("-" * 42 + "-+-" + "-" * 9 + "-+-" + "-" * 8 + "-+-------")
    for label, value, target, ok in rows:
        print(f"{label:42} | {value:>9} | {target:>8} | {'met' if ok else 'NOT met'}")
    print(f"\nThe pools tables at 80 columns take {rmed['pools@80']:.1f} ms, rich's Table took {reference:.0f} ms "
          f"for the who-gave-what tables alone in this run ({reference / rmed['pools@80']:.0f}x).")
    importing = med["import resolve's modules"] - floor
    library = med["  of which libraries (no sheetsync)"] - floor
    whole = med["sheetsync resolve"]
    print(f"\nA bare typer app with the same commands takes {typer_ratio:.2f}x the floor.  The resolve spends "
          f"{importing:.0f} ms of {whole:.0f} ms importing; the libraries alone (typer, pydantic, rich, yaml and the "
          f"standard modules they load) take {library:.0f} ms, {library / whole:.0%} of the resolve; sheetsync's own "
          f"modules {importing - library:.0f} ms, {(importing - library) / whole:.0%}.  The libraries' share is the "
          f"floor of the importing share: below {IMPORT_SHARE:.0%} only if it is.")

    over = {name: med[name] - floor for name in libs}
    print(f"\nWhere the floor lies: what the libraries cost a resolve that runs, each over python -c pass "
          f"({floor:.1f} ms), as a share of the whole resolve ({whole:.1f} ms)\n")
    print(f"{'library':42} | {'over floor (ms)':>15} | {'share of resolve':>16}")
    print("-" * 42 + "-+-" + "-" * 15 + "-+-" + "-" * 16)
    parts = [("bare typer app --help", med["bare typer app --help"] - floor), *over.items()]
    parts.insert(5, ("  sum of the four, each run alone", sum(list(over.values())[:4])))
    parts += [("import resolve's libraries (no sheetsync)", library), ("import resolve's modules", importing)]
    for name, ms in parts:
        print(f"{name:42} | {ms:15.1f} | {ms / whole:16.1%}")
    extra = sorted(set(floor_modules) - set(libraries))
    print(f"(The library floor's run loads {len(floor_modules)} modules beyond a bare interpreter's, "
          f"{len(extra)} of them not among the resolve's {len(libraries)} library modules{': ' if extra else ''}"
          f"{', '.join(extra)}; the resolve's library modules it does not load: "
          f"{', '.join(sorted(set(libraries) - set(floor_modules))) or 'none'}.)")
    lib_floor = over["library floor: the four in one run"]
    floor_imports = over["  its imports alone"]
    alone = [over[name] for name in list(libs)[:4]]
    print(f"\nLibrary floor share = {floor_imports / whole:.0%} of the resolve: importing the modules typer, pydantic, "
          f"yaml and rich load when a resolve command runs takes {floor_imports:.0f} ms of {whole:.0f} ms; the "
          f"{IMPORT_SHARE:.0%} target is reachable only if this is below it "
          f"({'it is' if floor_imports / whole < IMPORT_SHARE else 'it is not'}).  Run, the four cost {lib_floor:.0f} ms, "
          f"{lib_floor / whole:.0%}: the {lib_floor - floor_imports:.0f} ms beyond their imports (typer building the "
          f"command and its TypeAdapters, pydantic a model's schema) is not importing and counts on the resolve's "
          f"side of the ratio.  Sheetsync's own modules: {importing - library:.0f} ms, "
          f"{(importing - library) / whole:.0%} (importing minus the libraries' imports); importing beyond the "
          f"floor's imports: {importing - floor_imports:.0f} ms, {(importing - floor_imports) / whole:.0%}.  Besides "
          f"importing, the resolve spends {whole - importing:.0f} ms (whole minus importing): {floor:.0f} ms starting "
          f"Python, {whole - importing - floor:.0f} ms reading, resolving and printing the battle (typer's and "
          f"pydantic's run-time work included).")
    checks = [
        ("typer running resolve >= bare typer --help", over["typer app running resolve (no body)"]
         >= med["bare typer app --help"] - floor),
        ("library floor >= the largest of the four alone", lib_floor >= max(alone)),
        ("library floor <= their sum", lib_floor <= sum(alone)),
        ("floor's imports <= library floor", floor_imports <= lib_floor),
        ("floor's modules among the resolve's library modules", not extra),
        ("resolve's libraries' imports <= importing", library <= importing),
        ("importing <= whole resolve - python start", importing <= whole - floor),
    ]
    print(f"The floor's imports and the resolve's libraries' imports load the same modules but for "
          f"{len(set(libraries) - set(floor_modules))}: their difference, {floor_imports - library:+.0f} ms, is "
          f"this run's noise (repeat it, or use more --repeat, to narrow it).")
    print("Consistency: " + "; ".join(f"{label}: {'yes' if ok else 'NO'}" for label, ok in checks) + ".")


if __name__ == "__main__":
    main()
