"""``sheetsync --help`` without importing typer (issue 23).

``BODY`` is what typer prints below the usage line at a terminal of 80 columns or more
(click's help is then 78 columns wide, whatever the terminal's width), copied from typer's
own output by ``python -m sheetsync.app.help_text --write``.  ``tests/test_lean_step.py``
compares it with typer's output at several widths and fails when a command's help changes
without it being regenerated.  Where the copy would not be exact (a narrower terminal, a
program name too long for the usage line to stay on one line) :func:`help_text` returns
``None`` and typer prints the help itself.
"""

from __future__ import annotations

import os
import sys

__all__ = ["BODY", "USAGE_ARGS", "help_text", "program_name"]

USAGE_ARGS = "[OPTIONS] COMMAND [ARGS]..."
WIDTH = 78
"""click's help width at a terminal of 80 columns or more: ``min(columns, 80) - 2``."""

# BEGIN GENERATED: python -m sheetsync.app.help_text --write
BODY = """
  Run battalion-scale mass combat from a spreadsheet: cohort pools, phases,
  aftermath.

Options:
  --version   Print the version and exit.
  -h, --help  Show this message and exit.

Commands:
  pools      Every cohort's pools, with who gave what.
  resolve    Resolve the next phase's orders (battle file or workbook).
  undo       Undo the last resolved phase.
  aftermath  The aftermath: damage, Aegis, Torpor, lasting effects.
  demo       Run the embedded example battle.
  systems    The rule systems sheetsync runs.
  template   Write a blank tracker workbook.
  new        A tracker (or battle file) from a battle file or Grapevine.
  import     Characters from Grapevine (.gex) or CSV into a tracker or battle
             file.
  build      Build a tracker: pools (or unit values) from its sheets.
  check      Dry run: what the next resolve would refuse, and why.
  end        End Battle: fill in the Aftermath sheet.
  export     A tracker's state and last events as JSON.
  status     The battle at a glance.
  upload     Copy a workbook's battle into a Google Sheet.
  download   Copy a Google Sheet's battle into a workbook.
  watch      Run the step ticked on a Google Sheet's Battle sheet.
  serve      The buttons over HTTP (Google Sheets, Excel without Python).
  web        Write the web page (a static site) that runs the tracker in the
             browser.
  rules      The rulings, house-rule keys and rule sections.
  schema     A rule system's battle file JSON Schema.
  map        Draw a hex battle's map as PNG or SVG (from a battle file or a
             hex tracker).
  report     The after-action report: the battle told step by step (HTML,
             Markdown).
  forecast   Forecast the battle: the next step's chances and who is likely to
             win.
  gsheet     A shared Google Sheet as the tracker.
"""
# END GENERATED


def program_name() -> str:
    """The program name click shows in the usage line (``click.utils._detect_program_name``):
    ``python -m sheetsync`` when run as a module, else the script's file name."""
    main = sys.modules.get("__main__")
    path = sys.argv[0] if sys.argv and sys.argv[0] else ""
    package = getattr(main, "__package__", None)
    if os.name == "nt":  # Windows: click's .exe subtleties are left to typer
        return ""
    if package in (None, ""):
        return os.path.basename(path)
    name = os.path.splitext(os.path.basename(path))[0]
    if name != "__main__":
        package = f"{package}.{name}"
    return f"python -m {package.lstrip('.')}"


def help_text() -> str | None:
    """The top-level help as typer prints it here, or ``None`` where only typer can say it
    exactly (fewer than 80 columns, an unusual program name)."""
    import shutil

    prog = program_name()
    usage = f"Usage: {prog} {USAGE_ARGS}"
    if (not prog or not prog.isprintable() or not prog.isascii() or "\t" in prog or len(usage) > WIDTH
            or shutil.get_terminal_size().columns < WIDTH + 2):
        return None
    return usage + "\n" + BODY


def _typer_help() -> str:
    """The help as typer prints it at 80 columns, for the program ``sheetsync``."""
    import subprocess

    code = "import sys\nsys.argv[0] = 'sheetsync'\nfrom sheetsync.app.cli import main\nmain()\n"
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, env=env,
                          check=True)
    return done.stdout


def generated_body() -> str:
    """``BODY`` as it should read now, from typer's output."""
    out = _typer_help()
    first, _, body = out.partition("\n")
    if first != f"Usage: sheetsync {USAGE_ARGS}":
        raise SystemExit(f"typer's usage line is now {first!r}: update USAGE_ARGS in {__file__}")
    return body


def _write() -> None:
    path = os.path.abspath(__file__)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    head, rest = source.split("# BEGIN GENERATED: python -m sheetsync.app.help_text --write\n", 1)
    _, tail = rest.split("# END GENERATED\n", 1)
    body = generated_body()
    if '"""' in body or "\\" in body:
        raise SystemExit("the help holds a triple quote or a backslash: store it another way")
    new = (f'{head}# BEGIN GENERATED: python -m sheetsync.app.help_text --write\nBODY = """{body}"""\n'
           f"# END GENERATED\n{tail}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    print(f"{path}: BODY {'unchanged' if new == source else 'rewritten'}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        _write()
    else:
        sys.stdout.write(generated_body())
