"""``sheetsync``: the command line.  A thin shell over the use cases: it catches
:class:`SheetSyncError` only, and prints ``ClassName: message`` without a traceback."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from sheetsync.errors import SheetSyncError

__all__ = ["app", "main"]

app = typer.Typer(
    name="sheetsync",
    help="Run battalion-scale mass combat from a spreadsheet: cohort pools, phases, aftermath.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _is_workbook(path: Path) -> bool:
    return path.suffix.lower() in (".xlsx", ".xlsm")


def _load(path: Path, seed: int | None = None) -> Any:
    from sheetsync.app.files import read_data_file
    from sheetsync.rules.bbn import load_battle

    data = read_data_file(path)
    if seed is not None and isinstance(data, dict):
        data["seed"] = seed
    return load_battle(data, str(path))


def _ensure_seed(battle: Any) -> Any:
    """A battle with no seed gets a fresh one, recorded in its output so it can be replayed (R25)."""
    if battle.seed is None:
        return battle.model_copy(update={"seed": secrets.randbelow(10**9)})
    return battle


@app.command()
def pools(file: Path, as_json: JsonOpt = False) -> None:
    """Compute every cohort's pools from the members' sheets, with who gave what."""
    battle = _load(file)
    if as_json:
        _print_json({"cohorts": [pools_json(p) for p in battle.pools.values()]})
        return
    from sheetsync.app.render import print_pools

    print_pools(console, battle.pools.values())


def pools_json(p: Any) -> dict[str, Any]:
    return {
        "name": p.name,
        "actions": p.actions,
        "pools": p.pools,
        "breakdown": {k: [c.model_dump(mode="json") for c in v] for k, v in p.breakdown.items()},
        "not_counted": [n.model_dump(mode="json") for n in p.not_counted],
    }


@app.command()
def resolve(
    file: Path,
    as_json: JsonOpt = False,
    out: Annotated[Path | None, typer.Option(help="Write the new battle state here (a battle file).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed for dice not typed in.")] = None,
) -> None:
    """Resolve the declared orders of the next phase (a battle file, or a workbook)."""
    if _is_workbook(file):
        from sheetsync.app.workbook_cli import resolve_workbook

        resolve_workbook(file, as_json=as_json, console=console)
        return
    from sheetsync.rules.bbn import battle_to_file, resolve_phase

    battle = _ensure_seed(_load(file, seed))
    result = resolve_phase(battle)
    if out is not None:
        from sheetsync.app.files import dump_battle_file

        dump_battle_file(battle_to_file(result.battle), out)
    if as_json:
        _print_json(result.to_json())
        return
    from sheetsync.app.render import print_phase

    print_phase(console, result)
    if out is not None:
        console.print(f"New battle state written to {out}; resolve it for phase {result.phase + 1}.")


@app.command()
def undo(
    file: Path,
    out: Annotated[Path | None, typer.Option(help="Where to write the restored battle (default: in place).")] = None,
) -> None:
    """Undo the last resolved phase: the battle exactly as it was before it."""
    if _is_workbook(file):
        from sheetsync.app.workbook_cli import undo_workbook

        undo_workbook(file, console=console)
        return
    from sheetsync.app.files import dump_battle_file
    from sheetsync.rules.bbn import battle_to_file
    from sheetsync.rules.bbn import undo as undo_phase

    battle = undo_phase(_load(file))
    dump_battle_file(battle_to_file(battle), out or file)
    console.print(f"Phase {battle.phase} undone; {len(battle.orders)} orders are pending again ({out or file}).")


@app.command()
def aftermath(file: Path, as_json: JsonOpt = False) -> None:
    """Battle Aftermath (R26-R30): each character's damage, Aegis, Torpor, lasting effects."""
    from sheetsync.dice import RandomRoller
    from sheetsync.rules.bbn import aftermath as run_aftermath
    from sheetsync.rules.bbn import aftermath_json

    battle = _ensure_seed(_load(file))
    entries = run_aftermath(battle, RandomRoller(f"{battle.seed}:aftermath"))
    if as_json:
        _print_json(aftermath_json(entries))
        return
    from sheetsync.app.render import print_aftermath

    print_aftermath(console, entries)


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the demo writes its files.")] = Path("sheetsync-demo"),
    as_json: JsonOpt = False,
) -> None:
    """Build the embedded example cohorts, resolve one phase, and show the result."""
    from sheetsync.app.files import dump_battle_file, example_path
    from sheetsync.rules.bbn import battle_to_file, resolve_phase

    battle = _load(example_path())
    result = resolve_phase(battle)
    out_dir.mkdir(parents=True, exist_ok=True)
    dump_battle_file(battle_to_file(result.battle), out_dir / "after-phase-1.yaml")
    from sheetsync.app.workbook_cli import demo_workbook

    workbook = demo_workbook(example_path(), out_dir / "demo-tracker.xlsx")
    if as_json:
        _print_json({"pools": [pools_json(p) for p in battle.pools.values()], "resolve": result.to_json(),
                     "workbook": str(workbook) if workbook else None})
        return
    from sheetsync.app.render import print_phase, print_pools

    console.rule("sheetsync demo: the example battle")
    print_pools(console, battle.pools.values(), breakdown=False)
    print_phase(console, result)
    console.print(f"Battle state after phase 1: {out_dir / 'after-phase-1.yaml'}")
    if workbook:
        console.print(f"The same battle as a tracker workbook, phase 1 resolved: {workbook}")


@app.command()
def template(
    out: Path,
    macros: Annotated[bool, typer.Option("--macros", help="A macro-enabled .xlsm with the four buttons.")] = False,
) -> None:
    """Write a blank tracker workbook."""
    if macros or out.suffix.lower() == ".xlsm":
        from sheetsync.app.workbook_cli import write_macro_template

        write_macro_template(out)
    else:
        from sheetsync.app.workbook_cli import write_template

        write_template(out)
    console.print(f"Blank tracker written to {out}. Fill in Cohorts and Characters, then: sheetsync build {out}")


@app.command()
def new(
    workbook: Path,
    from_file: Annotated[Path, typer.Option("--from", help="A battle file (YAML or JSON) to load into the tracker.")],
) -> None:
    """Create a tracker workbook from a battle file: characters, state, ranges and orders."""
    from sheetsync.app.workbook_cli import new_workbook

    report = new_workbook(workbook, from_file)
    console.print(f"{workbook}: {report.message}")


@app.command()
def build(workbook: Path) -> None:
    """Build Cohorts: Characters → pools on the Cohorts sheet (a workbook)."""
    from sheetsync.app.workbook_cli import run_workbook

    report = run_workbook("build", workbook)
    console.print(f"{workbook}: {report.message}")


@app.command()
def end(workbook: Path, as_json: JsonOpt = False) -> None:
    """End Battle: fill in the Aftermath sheet (a workbook)."""
    from sheetsync.app.workbook_cli import run_workbook

    report = run_workbook("end", workbook)
    if as_json:
        _print_json(report.to_json())
        return
    console.print(f"{workbook}: {report.message}")


@app.command()
def export(workbook: Path, as_json: JsonOpt = True) -> None:
    """Print a tracker's battle state and its last resolve's events as JSON."""
    from sheetsync.app.usecases import export as export_state
    from sheetsync.app.workbook_cli import excel_backend

    _print_json(export_state(excel_backend(workbook)))


gsheet_app = typer.Typer(help="A shared Google Sheet as the tracker (through gspread, no server needed).",
                         no_args_is_help=True)
app.add_typer(gsheet_app, name="gsheet")
ServiceAccount = Annotated[Path | None, typer.Option(
    "--service-account", help="Service-account JSON key (or set SHEETSYNC_SERVICE_ACCOUNT).")]
OAuth = Annotated[bool, typer.Option("--oauth", help="Sign in with gspread's OAuth flow instead.")]


def _gsheet(spreadsheet: str, service_account: Path | None, oauth: bool) -> Any:
    from sheetsync.app.gsheet_cli import gsheet_backend, gspread_client

    return gsheet_backend(spreadsheet, gspread_client(service_account, oauth=oauth))


@gsheet_app.command("init")
def gsheet_init(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False) -> None:
    """Lay out a blank tracker in an existing spreadsheet (its key or URL)."""
    from sheetsync.app.gsheet_cli import init_spreadsheet

    backend = _gsheet(spreadsheet, service_account, oauth)
    n = init_spreadsheet(backend)
    console.print(f"Tracker laid out ({n} changes in one request, {backend.request_count} requests in all). "
                  "Fill in Cohorts and Characters, then: sheetsync gsheet build " + spreadsheet)


def _gsheet_step(action: str, spreadsheet: str, service_account: Path | None, oauth: bool, as_json: bool) -> None:
    from sheetsync.app.usecases import run

    backend = _gsheet(spreadsheet, service_account, oauth)
    report = run(action, backend)
    if as_json:
        _print_json(report.to_json())
        return
    if report.result is not None:
        from sheetsync.app.render import print_phase

        print_phase(console, report.result)
    console.print(f"{report.message} ({backend.request_count} requests)")


@gsheet_app.command("build")
def gsheet_build(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """Build Cohorts in the Google Sheet."""
    _gsheet_step("build", spreadsheet, service_account, oauth, as_json)


@gsheet_app.command("resolve")
def gsheet_resolve(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """Resolve Phase in the Google Sheet: one read, one write."""
    _gsheet_step("resolve", spreadsheet, service_account, oauth, as_json)


@gsheet_app.command("undo")
def gsheet_undo(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """Undo the last phase in the Google Sheet."""
    _gsheet_step("undo", spreadsheet, service_account, oauth, as_json)


@gsheet_app.command("end")
def gsheet_end(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """End Battle in the Google Sheet (the Aftermath sheet)."""
    _gsheet_step("end", spreadsheet, service_account, oauth, as_json)


@app.command()
def upload(workbook: Path, spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False,
           init: Annotated[bool, typer.Option(help="Lay out the tracker first (a spreadsheet without one).")] = True) -> None:
    """Move a battle from a workbook into a Google Sheet (undo history included)."""
    from sheetsync.app.gsheet_cli import copy_tracker, init_spreadsheet
    from sheetsync.app.workbook_cli import excel_backend

    backend = _gsheet(spreadsheet, service_account, oauth)
    if init and "State" not in backend.metadata():
        init_spreadsheet(backend)
    n = copy_tracker(excel_backend(workbook), backend)
    console.print(f"Uploaded {n} cells from {workbook} ({backend.request_count} requests).")


@app.command()
def download(spreadsheet: str, workbook: Path, service_account: ServiceAccount = None, oauth: OAuth = False) -> None:
    """Move a battle from a Google Sheet into a tracker workbook."""
    from sheetsync.app.gsheet_cli import copy_tracker
    from sheetsync.app.workbook_cli import excel_backend, write_template

    backend = _gsheet(spreadsheet, service_account, oauth)
    if not workbook.exists():
        write_template(workbook)
    n = copy_tracker(backend, excel_backend(workbook))
    console.print(f"Downloaded {n} cells into {workbook} ({backend.request_count} requests).")


@app.command()
def watch(
    spreadsheet: str,
    service_account: ServiceAccount = None,
    oauth: OAuth = False,
    interval: Annotated[float, typer.Option(help="Seconds between reads (Google allows 60 reads a minute).")] = 3.0,
) -> None:
    """Watch the Battle sheet's checkboxes and run Build/Resolve/Undo/End when one is ticked."""
    from sheetsync.app.watch import live_watch

    live_watch(_gsheet(spreadsheet, service_account, oauth), interval=interval, console=console)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
) -> None:
    """The four buttons over HTTP for xlwings' remote clients (needs SHEETSYNC_API_KEY)."""
    import uvicorn

    from sheetsync.app.server import create_app

    uvicorn.run(create_app(), host=host, port=port, log_level="info")


def main() -> None:
    """Entry point: usage errors are typer's (exit 2); a :class:`SheetSyncError` becomes one
    clear line (exit 1), never a traceback."""
    try:
        app()
    except SheetSyncError as exc:
        from rich.text import Text

        err_console.print(Text.assemble((type(exc).__name__, "bold red"), ": ", str(exc)), highlight=False)
        sys.exit(1)


if __name__ == "__main__":
    main()
