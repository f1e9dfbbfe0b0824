"""The ``sheetsync`` program's entry point: a step on a tracker workbook without the whole
command line (issue 23).

``sheetsync resolve|build|undo|end|check TRACKER.xlsx`` (or ``.xlsm``), with the options
those commands take on a workbook, is recognised here from ``sys.argv`` alone and run
through the functions the typer commands of :mod:`sheetsync.app.cli` call, printing what
they print: the same bytes on stdout and stderr, the same exit code.  The top-level help
(``sheetsync``, ``--help``, ``-h``) is typer's own, copied (:mod:`sheetsync.app.help_text`).
Anything else, and anything this module does not fully understand (an unknown option, an
option given twice, a battle file, ``--seed``), goes to the typer command line unchanged.

Such a process imports no typer, no pydantic (the lax validator makes the same models,
:func:`sheetsync.sheets.validation.prefer_lax`) and no rich unless it prints rich's
output; ``tests/test_lean_step.py`` pins what a step imports.
"""

from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["Invocation", "main", "parse", "run"]

_WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")  # sheetsync.sheets.disk.WORKBOOK_SUFFIXES (the test checks)
_OPTIONS = {  # the options each command takes on a workbook: flags, and options with a value
    "resolve": ({"--json"}, {"--out"}),
    "undo": (set(), {"--out"}),
    "build": (set(), {"--paper"}),
    "end": ({"--json"}, set()),
    "check": ({"--json"}, set()),
}
_PAPERS = ("a4", "letter")


class Invocation:
    """A workbook step the fast path runs: the command, the workbook and its options."""

    __slots__ = ("as_json", "command", "file", "out", "paper")

    def __init__(self, command: str, file: Path, *, as_json: bool = False, out: Path | None = None,
                 paper: str | None = None) -> None:
        self.command, self.file, self.as_json, self.out, self.paper = command, file, as_json, out, paper

    def __repr__(self) -> str:
        return (f"Invocation({self.command!r}, {self.file!r}, as_json={self.as_json}, out={self.out!r}, "
                f"paper={self.paper!r})")


def parse(args: list[str]) -> Invocation | None:
    """The workbook step ``args`` (``sys.argv[1:]``) ask for, or ``None`` for anything the
    typer command line should parse itself."""
    if not args or args[0] not in _OPTIONS:
        return None
    flags, valued = _OPTIONS[args[0]]
    seen: dict[str, str | None] = {}
    files: list[str] = []
    rest = iter(args[1:])
    for arg in rest:
        if not arg.startswith("-"):
            files.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name in seen:
            return None  # given twice: typer's rules
        if name in flags and not eq:
            seen[name] = None
        elif name in valued:
            value = value if eq else next(rest, "")
            if not value or value.startswith("-"):
                return None
            seen[name] = value
        else:
            return None  # an unknown option, --help, --seed, "-", "--": typer says what it does
    if len(files) != 1 or Path(files[0]).suffix.lower() not in _WORKBOOK_SUFFIXES:
        return None
    paper = seen.get("--paper")
    if paper is not None and paper.lower() not in _PAPERS:
        return None
    out = seen.get("--out")
    return Invocation(args[0], Path(files[0]), as_json="--json" in seen, out=Path(out) if out is not None else None,
                      paper=paper.lower() if paper is not None else None)


def main() -> None:
    """The console script: a workbook step or the help here, anything else through typer."""
    code = run(sys.argv[1:])
    if code is None:
        from sheetsync.app.cli import main as typer_main

        typer_main()
        return
    _finish(code)


def run(args: list[str]) -> int | None:
    """Run ``args`` if this module handles them, returning the exit code; ``None``: typer's."""
    if not args or args in (["--help"], ["-h"]):
        from sheetsync.app.help_text import help_text

        text = help_text()
        if text is None:
            return None
        # --help prints to stdout; no arguments at all is a usage error, the help on stderr
        (sys.stdout if args else sys.stderr).write(text)
        return 0 if args else 2
    invocation = parse(args)
    if invocation is None:
        return None
    return _step(invocation)


def _step(inv: Invocation) -> int:
    """Run ``inv`` with the typer command's outcome: its exit code, and ``error: ...`` (the
    problem first, :func:`sheetsync.app.cli.main`) for a refusal."""
    from sheetsync.core.errors import SheetSyncError
    from sheetsync.sheets.validation import prefer_lax

    prefer_lax()
    try:
        return _COMMANDS[inv.command](inv)
    except SheetSyncError as exc:
        _print_error(str(exc))
        return 1
    except KeyboardInterrupt:  # typer ends the command with 130, saying nothing
        return 130
    except OSError as exc:
        import errno

        if exc.errno == errno.EPIPE:  # typer: a closed pipe ends the command quietly
            return 1
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        _print_error(f"{where}{exc.strerror or exc}")
        return 1


class _Console:
    """rich's ``Console`` made on first use, as the typer commands' (``cli.console``)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._real: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._real is None:
            from rich.console import Console

            self._real = Console(**self._options)
        return getattr(self._real, name)


console: Any = _Console()
err_console: Any = _Console(stderr=True)


def _print_error(message: str) -> None:
    """:func:`sheetsync.app.cli._print_error`."""
    from rich.text import Text

    err_console.print(Text.assemble(("error", "bold red"), ": ", message), highlight=False, soft_wrap=True)


def _print_json(data: Any) -> None:
    import json

    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _resolve(inv: Invocation) -> int:
    from sheetsync.app.workbook_cli import resolve_workbook

    resolve_workbook(inv.file, as_json=inv.as_json, console=console, out=inv.out)
    return 0


def _undo(inv: Invocation) -> int:
    from sheetsync.app.workbook_cli import undo_workbook

    undo_workbook(inv.file, console=console, out=inv.out)
    return 0


def _build(inv: Invocation) -> int:
    from sheetsync.app.workbook_cli import run_workbook

    report = run_workbook("build", inv.file, paper=inv.paper)
    console.print(f"{inv.file}: {report.message}")
    for line in report.warnings:
        err_console.print(f"Warning: {line}", style="yellow", highlight=False)
    return 0


def _end(inv: Invocation) -> int:
    from sheetsync.app.workbook_cli import run_workbook

    report = run_workbook("end", inv.file)
    if inv.as_json:
        _print_json(report.to_json())
    else:
        console.print(f"{inv.file}: {report.message}")
    return 0


def _check(inv: Invocation) -> int:
    from sheetsync.app.workbook_cli import check_workbook

    report, word = check_workbook(inv.file)
    if inv.as_json:
        _print_json(report.to_json())
    else:
        from sheetsync.app.check_view import print_check

        print_check(console, report, str(inv.file), word=word)
    return 1 if report.refusals else 0


_COMMANDS = {"resolve": _resolve, "undo": _undo, "build": _build, "end": _end, "check": _check}


def _finish(code: int) -> None:
    """End the process with ``code`` once what it printed is out.

    A step that ran here ends with ``os._exit``: the interpreter's teardown (freeing every
    module and object) costs a step tens of milliseconds of CPU
    (``benchmarks/bench_cli.py --steps``) and does nothing a step needs.  It is safe because
    by now the workbook's save is done (the atomic write renamed its temporary file into
    place before :func:`run` returned), the step's lock was let go and its temporary
    folders removed by their ``with`` blocks; the exit handlers (``atexit``: logging's,
    filelock's, any other) are run here first, then stdout and stderr flushed.  Where
    another thread runs (the ordinary exit would wait for it), or a flush fails, the
    process ends the ordinary way."""
    import threading

    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    if threading.active_count() != 1 or run_handlers is None:
        sys.exit(code)
    run_handlers()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)
