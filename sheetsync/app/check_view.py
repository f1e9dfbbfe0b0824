"""``sheetsync check``: the dry run's table (what the next Resolve Phase would refuse, R13)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sheetsync.app.usecases import CheckReport

__all__ = ["print_check"]


def print_check(console: Console, report: CheckReport, source: str, *, word: str = "phase") -> None:
    """One row per refusal (its order's cell, cohort, task and why), or one line saying the
    phase would go through; reads at 80 columns (the reason wraps, the rest never does)."""
    if not report.refusals:
        console.print(Text(f"{source}: {word} {report.phase} would resolve every order ({report.orders}); none is refused.",
                           style="green"))
        return
    if report.bad_cells:
        n = len(report.refusals)
        title = f"{word.title()} {report.phase} cannot be resolved yet: {n} bad cell{'' if n == 1 else 's'}"
    else:
        title = (f"{word.title()} {report.phase}: {len(report.refusals)} of {report.orders} "
                 f"order{'' if report.orders == 1 else 's'} would be refused")
    table = Table(title=title, header_style="bold", title_justify="left")
    table.add_column("Cell" if report.bad_cells else "Order", no_wrap=True)
    if not report.bad_cells:
        table.add_column("Cohort" if word == "phase" else "Unit", no_wrap=True)
        table.add_column("Task" if word == "phase" else "Kind", no_wrap=True)
    table.add_column("Why", overflow="fold", ratio=1)
    for r in report.refusals:
        if report.bad_cells:
            table.add_row(r.where, r.reason)
        else:
            table.add_row(r.where, r.cohort, r.task, r.reason)
    console.print(table)
    console.print(Text("Nothing was written. Fix these, then run the check again or resolve.", style="dim"))
