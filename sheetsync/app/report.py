"""The after-action report (issue 11, part 3): the Reporter's account of a battle.

``sheetsync report FILE --html report.html`` (or ``--md report.md``; with neither, the
Markdown version on the terminal) tells the battle in words: each side and each cohort or
unit with who was in it, each step in the order it happened with the rule it applied,
the Hero Moments and casualties, the aftermath, and charts.

The report is built in two halves:

- **per system**, one function ``account(source) -> Account`` turns a battle into an
  :class:`Account`: plain lines of text, each citing its rule, plus chart series and
  pictures.  :data:`REPORTERS` names it lazily (``"module:function"``, as the registry of
  rule systems does), so a new rule system plugs in with one module and one entry here;
* **shared**, :func:`to_markdown` and :func:`to_html` render any :class:`Account`.  The
  HTML is one file that opens offline: the charts are inline SVG, pictures are ``data:``
  URIs, and the style sheet is in the page (no external CSS, scripts or fonts); it prints
  on A4 and Letter alike.

Where each system keeps what happened: a battalion battle file carries its ``history``
(the battle before each resolved phase) and ``log``; a tracker keeps the same history in
its hidden State sheet.  A hex battle keeps one undo record per turn.  Every step is
replayed from that record with the battle's own dice (R25, H8) and checked against the
standing that followed it, so the report shows exactly what the engine did.  Reading a
source never writes to it.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

from sheetsync.core.account import Account, Chart, Group, Line, Picture, ReportSource, StepBlock
from sheetsync.core.errors import BackendError, InputError, Problem

__all__ = [
    "REPORTERS",
    "Account",
    "Chart",
    "Group",
    "Line",
    "Picture",
    "ReportSource",
    "StepBlock",
    "account_of",
    "build_account",
    "load_source",
    "md_escape",
    "svg_bar_chart",
    "svg_line_chart",
    "to_html",
    "to_markdown",
    "write_reports",
]

REPORTERS: dict[str, str] = {
    "bbn": "sheetsync.systems.bbn.report:account",
    "hexwar": "sheetsync.systems.hexwar.report:account",
    "exalted": "sheetsync.systems.exalted.report:account",
}
"""The per-system account function of each rule system, by system id ("module:function")."""


def _tracker_source(backend: Any, name: str, kind: str) -> ReportSource:
    """A tracker's battle with its full history, read through ``backend`` (nothing written)."""
    from sheetsync.core.registry import room
    from sheetsync.sheets.marks import detect

    tracker = detect(backend)
    system = tracker.system
    if system.id == "bbn":
        from sheetsync.app.usecases import export

        data = export(backend, room(system, "tracker.layout").layout(capacity=tracker.capacity))
        return ReportSource(system, system.load(data["battle"], name), name, kind, backend)
    data = room(system, "tracker.steps").export(backend, tracker.capacity or None)
    return ReportSource(system, system.load(data["battle"], name), name, kind, backend, bool(data.get("ended")))


def is_gsheet(source: str) -> bool:
    """A Google Sheet's URL (a bare key needs ``--service-account`` or ``--oauth``)."""
    return source.startswith(("https://docs.google.com/spreadsheets/", "http://docs.google.com/spreadsheets/"))


def _checked_path(source: str) -> Path:
    from sheetsync.sheets.disk import (
        BATTLE_SUFFIXES,
        WORKBOOK_SUFFIXES,
        check_suffix,
        refuse_special_file,
    )

    path = Path(source)
    check_suffix(path, BATTLE_SUFFIXES + WORKBOOK_SUFFIXES, "a battle file, a tracker workbook or a Google Sheet's URL")
    if not path.is_dir():
        refuse_special_file(path)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise InputError([Problem(str(path), f"{what}; nothing was written")])
    return path


def _is_workbook(path: Path) -> bool:
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES

    return path.suffix.lower() in WORKBOOK_SUFFIXES


def load_source(source: str, *, service_account: Path | None = None, oauth: bool = False,
                progress: Any = None, google: bool = False) -> ReportSource:
    """The battle ``source`` names: a battle file, a tracker workbook, or a Google Sheet (its
    URL, or its key with ``service_account``/``oauth``, or any key with ``google``, the
    credentials then from ``SHEETSYNC_SERVICE_ACCOUNT``).  Only reads."""
    if google or is_gsheet(source) or service_account is not None or oauth:
        from sheetsync.app.gsheet_cli import gsheet_backend, gspread_client

        kwargs = {"progress": progress} if progress is not None else {}
        backend = gsheet_backend(source, gspread_client(service_account, oauth=oauth), **kwargs)
        return _tracker_source(backend, source, "gsheet")
    path = _checked_path(source)
    if _is_workbook(path):
        from sheetsync.app.workbook_cli import excel_backend

        backend = excel_backend(path)
        with backend.locked():
            return _tracker_source(backend, str(path), "workbook")
    from sheetsync.core.registry import system_of_data
    from sheetsync.sheets.disk import read_data_file

    try:
        data = read_data_file(path)
    except InputError as exc:
        if len(exc.problems) != 1 or str(path) in str(exc):
            raise
        # one syntax error: the reader names its line; the message names the file too
        (p,) = exc.problems
        raise InputError([Problem(f"{path}, {p.where}" if p.where else str(path), p.message)]) from None
    system = system_of_data(data)
    return ReportSource(system, system.load(data, str(path)), str(path), "file")


def build_account(source: str, *, service_account: Path | None = None, oauth: bool = False,
                  progress: Any = None, google: bool = False) -> Account:
    """The :class:`Account` of the battle ``source`` names (see :func:`load_source`).  A
    workbook is read under its step lock from the first read to the last (the battle, and
    the aftermath End Battle would write), so a step saving at that moment is never half
    read."""
    if not (google or is_gsheet(source) or service_account is not None or oauth):
        path = _checked_path(source)
        if _is_workbook(path):
            from sheetsync.app.workbook_cli import excel_backend

            backend = excel_backend(path)
            with backend.locked():
                return account_of(_tracker_source(backend, str(path), "workbook"))
    return account_of(load_source(source, service_account=service_account, oauth=oauth, progress=progress,
                                  google=google))


def account_of(src: ReportSource) -> Account:
    """The :class:`Account` of ``src``, from its rule system's reporter (:data:`REPORTERS`)."""
    target = REPORTERS.get(src.system.id)
    if target is None:
        have = ", ".join(sorted(REPORTERS))
        raise BackendError(f"{src.name}: there is no after-action report for the {src.system.title} yet "
                           f"(reports exist for: {have}); nothing was written")
    module, _, func = target.partition(":")
    result: Account = getattr(import_module(module), func)(src)
    return result


# --------------------------------------------------------------------------- charts

_PALETTE = ("#1f5fa8", "#c0392b", "#2e8b57", "#b8860b", "#7b3fa0", "#d2691e", "#20808f", "#666666")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def _nice_range(lo: float, hi: float, ticks: int = 5) -> tuple[float, float, float]:
    """An axis from ``lo`` to ``hi`` widened to round tick steps (1, 2, 2.5 or 5 times a
    power of ten), and that step."""
    import math

    span = hi - lo if hi > lo else 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return math.floor(lo / step) * step, math.ceil(hi / step) * step, step


def _axes(width: int, height: int, lo: float, hi: float, x_labels: Sequence[str], step: float,
          y_label: str) -> tuple[list[str], Any, float, float]:
    left, right, top, bottom = 52, 16, 14, 40
    pw, ph = width - left - right, height - top - bottom

    def y_of(v: float) -> float:
        return top + ph - (v - lo) / (hi - lo) * ph

    parts: list[str] = []
    _, _, tick = _nice_range(lo, hi)
    ticks = round((hi - lo) / tick)
    for i in range(ticks + 1):
        v = lo + tick * i
        y = y_of(v)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{_num(round(v, 1))}</text>')
    if lo < 0 < hi:
        parts.append(f'<line x1="{left}" y1="{y_of(0):.1f}" x2="{width - right}" y2="{y_of(0):.1f}" stroke="#888"/>')
    for i, label in enumerate(x_labels):
        x = left + step * (i + 0.5)
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="11">'
                     f'{html.escape(label)}</text>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#444"/>')
    parts.append(f'<line x1="{left}" y1="{top + ph}" x2="{width - right}" y2="{top + ph}" stroke="#444"/>')
    if y_label:
        parts.append(f'<text x="12" y="{top + ph / 2:.1f}" font-size="11" text-anchor="middle" '
                     f'transform="rotate(-90 12 {top + ph / 2:.1f})">{html.escape(y_label)}</text>')
    return parts, y_of, float(left), float(pw)


def _legend(names: Sequence[str], width: int, height: int) -> list[str]:
    parts, x = [], 52.0
    for i, name in enumerate(names):
        colour = _PALETTE[i % len(_PALETTE)]
        parts.append(f'<rect x="{x:.0f}" y="{height - 14}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14:.0f}" y="{height - 5}" font-size="11">{html.escape(name)}</text>')
        x += 24 + 6.5 * len(name)
        if x > width - 60:
            break
    return parts


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
            f'aria-label="{html.escape(title)}" font-family="sans-serif"><title>{html.escape(title)}</title>'
            + "".join(body) + "</svg>")


def svg_line_chart(chart: Chart, width: int = 640, height: int = 260) -> str:
    """A line chart of ``chart.series`` over its x labels, as inline SVG."""
    values = [v for s in chart.series.values() for v in s] or [0.0]
    lo, hi, _ = _nice_range(min(0.0, min(values)), max(values))
    n = max(1, len(chart.x_labels))
    step = (width - 52 - 16) / n
    parts, y_of, left, _ = _axes(width, height + 16, lo, hi, chart.x_labels, step, chart.y_label)
    for i, (name, series) in enumerate(chart.series.items()):
        colour = _PALETTE[i % len(_PALETTE)]
        pts = " ".join(f"{left + step * (j + 0.5):.1f},{y_of(v):.1f}" for j, v in enumerate(series))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{pts}"/>')
        for j, v in enumerate(series):
            parts.append(f'<circle cx="{left + step * (j + 0.5):.1f}" cy="{y_of(v):.1f}" r="3" fill="{colour}">'
                         f'<title>{html.escape(name)}: {_num(v)}</title></circle>')
    parts += _legend(list(chart.series), width, height + 16)
    return _svg(width, height + 16, chart.title, parts)


def svg_bar_chart(chart: Chart, width: int = 640, height: int = 260) -> str:
    """A grouped bar chart of ``chart.series`` over its x labels, as inline SVG."""
    values = [v for s in chart.series.values() for v in s] or [0.0]
    lo, hi, _ = _nice_range(min(0.0, min(values)), max(values))
    n = max(1, len(chart.x_labels))
    step = (width - 52 - 16) / n
    parts, y_of, left, _ = _axes(width, height + 16, lo, hi, chart.x_labels, step, chart.y_label)
    k = max(1, len(chart.series))
    bar = min(step * 0.7 / k, 48.0)
    for i, (name, series) in enumerate(chart.series.items()):
        colour = _PALETTE[i % len(_PALETTE)]
        for j, v in enumerate(series):
            x = left + step * (j + 0.5) - bar * k / 2 + bar * i
            y0, y1 = sorted((y_of(0), y_of(v)))
            parts.append(f'<rect x="{x:.1f}" y="{y0:.1f}" width="{bar:.1f}" height="{max(y1 - y0, 0.5):.1f}" '
                         f'fill="{colour}"><title>{html.escape(name)}: {_num(v)}</title></rect>')
    parts += _legend(list(chart.series), width, height + 16)
    return _svg(width, height + 16, chart.title, parts)


# --------------------------------------------------------------------------- Markdown


_MD_ANYWHERE = re.compile(r"([\\`*_{}\[\]<>!|~&@])")
"""Characters that can open a link, an image, raw HTML, an autolink, emphasis, code or a
table cell wherever they stand."""
_MD_BLOCK_START = re.compile(r"^(\s*)([#+\-=]|\d+(?=[.)]))")
"""What starts a heading, a list or a setext underline when it opens a line."""
_MD_GFM_AUTOLINK = re.compile(r"(?i)(://|www\.)")


def md_escape(text: str) -> str:
    """``text`` (a name, or a line that holds names) as Markdown that shows exactly those
    characters and can make nothing else (issue 26): no link, image, raw HTML, autolink or
    emphasis, and no heading or list from its first character.  Line breaks become spaces,
    so a name cannot start a block of its own.  Plain prose (``Tasks 5.2 (d10 7 + 18)``)
    stays readable: parentheses, dots and dashes are escaped only where they could matter."""
    text = " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text
    text = _MD_ANYWHERE.sub(r"\\\1", text)
    text = _MD_GFM_AUTOLINK.sub(lambda m: "\\://" if m.group(1) == "://" else m.group(1)[:3] + "\\.", text)
    m = _MD_BLOCK_START.match(text)
    if m is None:
        return text
    lead, mark = m.group(1), m.group(2)
    if mark[0].isdigit():  # "1986. " or "3) " would start a numbered list: escape its dot
        cut = m.end()
        return text[:cut] + "\\" + text[cut:]
    return lead + "\\" + text[len(lead):]



def _md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(md_escape(str(h)) for h in headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(md_escape(str(c)) for c in row) + " |" for row in rows]
    return out


def _chart_rows(chart: Chart) -> tuple[list[str], list[list[str]]]:
    headers = [chart.y_label or "", *chart.x_labels]
    rows = [[name, *(_num(v) for v in series)] for name, series in chart.series.items()]
    return headers, rows


def _split(step: StepBlock) -> tuple[list[Line], list[Line], list[Line]]:
    """A step's notes (before its orders, such as who held initiative), its orders in the
    order they were resolved, and what the end of the step did."""
    return ([ln for ln in step.lines if ln.kind == "note"], [ln for ln in step.lines if ln.kind == "event"],
            [ln for ln in step.lines if ln.kind not in ("note", "event")])


def to_markdown(acc: Account, *, images: bool = True) -> str:
    """The account as Markdown.  With ``images``, charts and pictures are embedded as
    ``data:`` URIs (a file that stands alone); every chart is also given as a table."""
    out = [f"# After-action report: {md_escape(acc.title)}", "",
           f"*{md_escape(acc.system_title)}, from {md_escape(acc.source)}*", ""]
    for note in acc.notes:
        out += [f"> {md_escape(note)}", ""]
    out += ["## Sides", ""]
    for side in acc.sides:
        out += [f"### {md_escape(side)}", ""]
        for g in (g for g in acc.groups if g.side == side):
            details = f" ({md_escape(g.details)})" if g.details else ""
            out.append(f"- **{md_escape(g.name)}**{details}: {md_escape(', '.join(g.members))}")
        out.append("")
    out += ["## What happened", ""]
    if not acc.steps:
        out += [f"No {acc.step_word} of this battle has been resolved yet.", ""]
    for step in acc.steps:
        out += [f"### {md_escape(step.title)}", ""]
        if step.problem:
            out += [f"> {md_escape(step.problem)}", ""]
        notes, events, ends = _split(step)
        out += [f"*{md_escape(ln.text)}*" for ln in notes] + ([""] if notes else [])
        out += [f"{n}. {md_escape(ln.text)}" for n, ln in enumerate(events, 1)] + ([""] if events else [])
        out += [f"- {md_escape(ln.text)}" for ln in ends] + ([""] if ends else [])
    if acc.heroes is not None:
        out += ["## Hero Moments", ""]
        out += [f"- {md_escape(ln.text)}" for ln in acc.heroes] or ["No Hero Moment was taken."]
        out.append("")
    out += ["## Casualties", ""]
    out += [f"- {md_escape(ln.text)}" for ln in acc.casualties] or ["No casualties."]
    out += ["", "## Aftermath", ""]
    out += [f"- {md_escape(ln.text)}" for ln in acc.aftermath] or ["No aftermath to report."]
    out.append("")
    for chart in acc.charts:
        out += [f"## {md_escape(chart.title)}", ""]
        if images:
            svg = svg_bar_chart(chart) if chart.kind == "bar" else svg_line_chart(chart)
            uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
            out += [f"![{md_escape(chart.title)}]({uri})", ""]
        out += [*_md_table(*_chart_rows(chart)), ""]
    if images:
        for pic in acc.pictures:
            out += [f"## {md_escape(pic.title)}", "", f"![{md_escape(pic.title)}]({pic.uri})", ""]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; font-size: 11pt; line-height: 1.45;
       color: #1a1a1a; max-width: 46em; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.1em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #bbb; margin-top: 1.6em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
h1, h2, h3 { break-after: avoid; page-break-after: avoid; }
.sub { color: #555; margin-top: 0; }
.note { border-left: 4px solid #b8860b; background: #fff8e6; padding: 0.4em 0.8em; }
.problem { border-left: 4px solid #c0392b; background: #fdecea; padding: 0.4em 0.8em; }
table { border-collapse: collapse; width: 100%; margin: 0.5em 0 1em; font-size: 0.95em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
thead { display: table-header-group; }
tr, li, figure, .group { break-inside: avoid; page-break-inside: avoid; }
ol.events li { margin-bottom: 0.15em; }
ul.end { list-style: none; padding-left: 1.2em; color: #444; font-style: italic; margin-top: 0; }
.step-note { color: #444; font-style: italic; margin: 0.2em 0; }
.rule { color: #555; white-space: nowrap; }
figure { margin: 1em 0; }
figure img, figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #555; }
.side { margin-bottom: 0.8em; }
@page { margin: 15mm 14mm; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  h2 { break-before: auto; }
  section.charts, section.pictures { break-before: page; page-break-before: always; }
  a { color: inherit; text-decoration: none; }
}
"""


def _e(text: str) -> str:
    """Text for an element's content or a double-quoted attribute."""
    return html.escape(text, quote=False).replace('"', "&quot;")


def _line_html(ln: Line) -> str:
    """A line, its rule set off in grey."""
    text = _e(ln.text)
    ref = _e(ln.rule_ref)
    if ref and ref in text:
        cut = text.rfind(ref)
        text = f'{text[:cut]}<span class="rule">{ref}</span>{text[cut + len(ref):]}'
    return text


def to_html(acc: Account) -> str:
    """The account as one HTML page that opens offline and prints on A4 and Letter."""
    b: list[str] = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
                    '<meta name="viewport" content="width=device-width, initial-scale=1">',
                    f"<title>After-action report: {_e(acc.title)}</title>", f"<style>{_CSS}</style>", "</head><body>",
                    f"<h1>After-action report: {_e(acc.title)}</h1>",
                    f'<p class="sub">{_e(acc.system_title)}, from {_e(acc.source)}</p>']
    b += [f'<p class="note">{_e(n)}</p>' for n in acc.notes]
    b.append("<section><h2>Sides</h2>")
    for side in acc.sides:
        b.append(f'<div class="side"><h3>{_e(side)}</h3><table><thead><tr><th>{_e(acc.group_word)}</th>'
                 "<th>Who was in it</th></tr></thead><tbody>")
        for g in (g for g in acc.groups if g.side == side):
            details = f'<br><span class="sub">{_e(g.details)}</span>' if g.details else ""
            b.append(f"<tr><td><strong>{_e(g.name)}</strong>{details}</td><td>{_e(', '.join(g.members))}</td></tr>")
        b.append("</tbody></table></div>")
    b.append("</section><section><h2>What happened</h2>")
    if not acc.steps:
        b.append(f"<p>No {_e(acc.step_word)} of this battle has been resolved yet.</p>")
    for step in acc.steps:
        b.append(f"<h3>{_e(step.title)}</h3>")
        if step.problem:
            b.append(f'<p class="problem">{_e(step.problem)}</p>')
        notes, events, ends = _split(step)
        b += [f'<p class="step-note">{_line_html(ln)}</p>' for ln in notes]
        if events:
            b.append('<ol class="events">' + "".join(f"<li>{_line_html(ln)}</li>" for ln in events) + "</ol>")
        if ends:
            b.append('<ul class="end">' + "".join(f"<li>{_line_html(ln)}</li>" for ln in ends) + "</ul>")
    b.append("</section>")
    if acc.heroes is not None:
        b.append("<section><h2>Hero Moments</h2>")
        b.append("<ul>" + "".join(f"<li>{_line_html(ln)}</li>" for ln in acc.heroes) + "</ul>" if acc.heroes
                 else "<p>No Hero Moment was taken.</p>")
        b.append("</section>")
    b.append("<section><h2>Casualties</h2>")
    b.append("<ul>" + "".join(f"<li>{_line_html(ln)}</li>" for ln in acc.casualties) + "</ul>" if acc.casualties
             else "<p>No casualties.</p>")
    b.append("</section><section><h2>Aftermath</h2>")
    b.append("<ul>" + "".join(f"<li>{_line_html(ln)}</li>" for ln in acc.aftermath) + "</ul>" if acc.aftermath
             else "<p>No aftermath to report.</p>")
    b.append("</section>")
    if acc.charts:
        b.append('<section class="charts"><h2>Charts</h2>')
        for chart in acc.charts:
            svg = svg_bar_chart(chart) if chart.kind == "bar" else svg_line_chart(chart)
            headers, rows = _chart_rows(chart)
            table = ("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr></thead><tbody>"
                     + "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
                     + "</tbody></table>")
            b.append(f"<figure>{svg}<figcaption>{_e(chart.title)}</figcaption></figure>{table}")
        b.append("</section>")
    if acc.pictures:
        b.append('<section class="pictures">')
        for pic in acc.pictures:
            b.append(f"<h2>{_e(pic.title)}</h2><figure><img src=\"{pic.uri}\" alt=\"{_e(pic.title)}\"></figure>")
        b.append("</section>")
    b.append("</body></html>")
    return "\n".join(b) + "\n"


# --------------------------------------------------------------------------- writing


def _check_out(path: Path, suffixes: tuple[str, ...], what: str, source: str) -> None:
    if path.suffix.lower() not in suffixes:
        raise InputError([Problem(str(path), f"the {what} report's name must end in {' or '.join(suffixes)}; "
                                             "nothing was written")])
    try:
        same = path.resolve() == Path(source).resolve()
    except OSError:
        same = False
    if same:
        raise InputError([Problem(str(path), "is the battle itself: pick another name for the report; "
                                             "nothing was written")])


def write_reports(acc: Account, source: str, *, html_path: Path | None = None,
                  md_path: Path | None = None) -> list[Path]:
    """Write the HTML and/or Markdown report; both names are checked before either is
    written, and each goes through a temporary file."""
    from sheetsync.sheets.disk import atomic_write_text

    if html_path is not None:
        _check_out(html_path, (".html", ".htm"), "HTML", source)
    if md_path is not None:
        _check_out(md_path, (".md", ".markdown"), "Markdown", source)
    texts = []
    if html_path is not None:
        texts.append((html_path, to_html(acc)))
    if md_path is not None:
        texts.append((md_path, to_markdown(acc)))
    for path, _ in texts:
        if not path.parent.is_dir():
            raise InputError([Problem(str(path), f"its folder {path.parent} does not exist; nothing was written")])
    for path, text in texts:
        atomic_write_text(path, text)
    return [p for p, _ in texts]
