"""The workbook path as functions of bytes, for a web page running Python in the browser
(Pyodide) and for anything else that holds a tracker in memory (issue 25 §1).

Pure: the standard library and openpyxl.  ``python -c "from sheetsync.app import browser"``
imports no other third-party module, and no step below needs one (pydantic, orjson, PyYAML,
rich, typer, filelock, Pillow and ``multiprocessing`` are optional on this path; the hex map
is drawn as SVG with the standard library, and as PNG too when Pillow is there).

Every step goes through the same use cases as the CLI (:mod:`sheetsync.app.workbook_cli`):
the workbook's bytes are written to a temporary file (Pyodide's in-memory file system in the
browser), the step runs on it exactly as ``sheetsync build FILE`` would, and the file's new
bytes are handed back.  So the cells a page gets are the cells the CLI writes.

The functions::

    systems() -> list[dict]
        [{"id": "bbn", "title": ..., "steps": [{"action": "build", "caption": "Build Cohorts",
          "sub": ..., "help": ...}, ...]}, ...]: each rule system with its buttons' captions
    new_tracker(system, filename="tracker.xlsx", *, battle=None) -> bytes
        a blank tracker, as ``sheetsync template FILE --system SYSTEM`` writes it; with
        ``battle`` (a battle file's data) one holding it, as ``sheetsync new FILE --from``
    describe(workbook, filename="tracker.xlsx") -> dict
        {"ok", "system", "title", "word" (phase, turn, long tick), "step" (its number, or None
         before Build), "built", "ended", "summary" (the Battle sheet's rows), "message"}
    run_step(workbook, filename, step, *, seed=None, battles=None, progress=None) -> dict
        step is one of STEPS: build, check, resolve, undo, end, forecast (writes the Forecast
        sheet), report, export.  The answer's keys:
          ok        the step ran (a check that finds refusals still ran: ``refusals`` says so)
          step, system, message
          workbook  the tracker's new bytes (only when ok, and only for a step that writes)
          events    {"headers": [...], "rows": [[...], ...]}: the step's table (the events of
                    a resolve, the characters or units of End Battle, a check's refusals)
          problems  [{"cell": "Orders!C7", "message": ...}, ...]: every bad cell, at its address
          warnings  what the Tracker should fix though the step went ahead
          json      the step's JSON, as ``--json`` prints it (``export``: the tracker's state)
          forecast  the forecast's chances (forecast only)
          report    the after-action report as Markdown, as ``sheetsync report --md`` writes it,
                    charts inline (report only; the hex map pictures need Pillow)
          map_svg   the hex map as an SVG document (hex trackers, once built), or None
          map_png   the same map as PNG bytes (when Pillow can be imported), or None

``seed``, ``battles`` and ``phases`` are the forecast's (``--seed``, ``--runs``, ``--phases``;
1000 battles of at most 12 steps by default); ``progress`` is called with the number of
simulated battles done so far.  ``map_png=False`` leaves the hex map out (drawing it takes a
moment).  Errors a user can cause come back as
``ok: False`` with the message and its problems; anything else is a bug and is raised.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["STEPS", "describe", "new_tracker", "run_step", "systems"]

STEPS = ("build", "check", "resolve", "undo", "end", "forecast", "report", "export")
"""What :func:`run_step` runs."""

WRITES = frozenset({"build", "resolve", "undo", "end", "forecast"})
"""The steps that write the tracker (``workbook`` in their answer)."""

_SUFFIXES = (".xlsx", ".xlsm")
_FORECAST_RUNS = 1000
_PHASES = 12


def systems() -> list[dict[str, Any]]:
    """Each rule system with a tracker: id, title and its steps' captions (its buttons)."""
    from sheetsync.core.registry import SYSTEMS, TRACKERS, find_system

    out = []
    for sid in SYSTEMS:
        if sid not in TRACKERS:
            continue
        system = find_system(sid)
        out.append({"id": system.id, "title": system.title,
                    "steps": [{"action": st.action, "caption": st.caption, "sub": st.sub, "help": st.help}
                              for st in system.steps]})
    return out


def new_tracker(system: str, filename: str = "tracker.xlsx", *, battle: dict[str, Any] | None = None) -> bytes:
    """A blank tracker of ``system`` (an id or alias), as ``sheetsync template`` writes it;
    with ``battle`` (a battle file's data, as JSON gives it), a tracker holding that battle,
    as ``sheetsync new FILE --from BATTLE.json`` writes it.  A battle with problems raises
    :class:`~sheetsync.core.errors.InputError`, every problem at its path."""
    from sheetsync.app.workbook_cli import system_tracker_from, template_bytes, tracker_from
    from sheetsync.core.registry import find_system

    rules = find_system(system)
    if battle is None:
        return template_bytes(rules, _suffix(filename))
    loaded = rules.load(battle, "the battle")
    with _Workbook(b"", "tracker" + _suffix(filename)) as wb:
        wb.path.unlink()
        if rules.id == "bbn":
            tracker_from(wb.path, loaded, force=False)
        else:
            system_tracker_from(wb.path, rules, loaded, force=False)
        return wb.read()


def _suffix(filename: str) -> str:
    suffix = Path(filename or "tracker.xlsx").suffix.lower()
    return suffix if suffix in _SUFFIXES else ".xlsx"


def _problems(exc: BaseException) -> list[dict[str, str]]:
    return [{"cell": p.where, "message": p.message} for p in getattr(exc, "problems", ())]


def _table(rows: list[Any]) -> dict[str, Any]:
    """``rows`` (JSON objects) as headers and rows; a nested value is written as JSON text."""
    headers: list[str] = []
    for row in rows:
        for key in row if isinstance(row, dict) else ():
            if key not in headers:
                headers.append(key)
    out = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        out.append([_cell(row.get(h)) for h in headers])
    return {"headers": headers, "rows": out}


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _events(data: dict[str, Any]) -> dict[str, Any]:
    for key in ("events", "characters", "units", "refusals"):
        if isinstance(data.get(key), list):
            return _table(data[key])
    return {"headers": [], "rows": []}


class _Workbook:
    """The workbook's bytes as a file in a temporary folder, for the CLI's use cases."""

    def __init__(self, workbook: bytes, filename: str) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="sheetsync-")
        name = Path(filename or "tracker.xlsx").name
        if Path(name).suffix.lower() not in _SUFFIXES:
            name = Path(name).stem + ".xlsx"
        self.path = Path(self._dir.name) / name
        self.path.write_bytes(bytes(workbook))

    def read(self) -> bytes:
        return self.path.read_bytes()

    def unplaced(self, answer: dict[str, Any]) -> dict[str, Any]:
        """``answer`` with its messages naming the Tracker's file, never the temporary folder
        the step ran in."""
        folder = str(self.path.parent) + "/"

        def clean(text: Any) -> Any:
            return text.replace(folder, "") if isinstance(text, str) else text

        answer["message"] = clean(answer.get("message"))
        answer["problems"] = [dict(p, message=clean(p.get("message"))) if isinstance(p, dict) else p
                              for p in answer.get("problems") or []]
        return answer

    def __enter__(self) -> _Workbook:
        return self

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()


def run_step(workbook: bytes, filename: str, step: str, *, seed: int | None = None, battles: int | None = None,
             progress: Callable[[int], None] | None = None, phases: int | None = None,
             map_png: bool = True) -> dict[str, Any]:
    """Run ``step`` on the tracker ``workbook`` (its bytes; ``filename`` says .xlsx or .xlsm)
    through the CLI's use cases; see the module docstring for the answer."""
    from sheetsync.core.errors import SheetSyncError

    answer: dict[str, Any] = {"ok": False, "step": step, "system": None, "message": "", "events": _table([]),
                              "problems": [], "warnings": [], "map_svg": None, "map_png": None}
    if step not in STEPS:
        answer["message"] = f"unknown step {step!r} (expected one of {', '.join(STEPS)})"
        return answer
    with _Workbook(workbook, filename) as wb:
        try:
            answer["system"] = _system_id(wb.path)
            _STEP_RUNNERS[step](wb.path, answer, seed=seed, battles=battles, progress=progress,
                                phases=phases or _PHASES)
        except SheetSyncError as exc:
            answer.update(ok=False, message=str(exc), problems=_problems(exc))
            answer.pop("workbook", None)
            return wb.unplaced(answer)
        answer["ok"] = True
        if step in WRITES:
            answer["workbook"] = wb.read()
        if map_png and answer["system"] == "hexwar" and step != "report":
            answer.update(_map_pictures(wb.path))
    return answer


def _system_id(path: Path) -> str:
    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix
    from sheetsync.sheets.marks import detect

    check_suffix(path, WORKBOOK_SUFFIXES, "a tracker workbook")
    system_id: str = detect(excel_backend(path)).system.id
    return system_id


def _step(path: Path, answer: dict[str, Any], **_: Any) -> None:
    from sheetsync.app.workbook_cli import run_workbook

    report = run_workbook(answer["step"], path)
    data = report.to_json()
    answer.update(message=report.message, warnings=list(report.warnings), json=data, events=_events(data))


def _check(path: Path, answer: dict[str, Any], **_: Any) -> None:
    from sheetsync.app.workbook_cli import check_workbook

    report, word = check_workbook(path)
    data = report.to_json()
    refusals = data.get("refusals") or []
    answer.update(json=data, events=_events(data), refusals=len(refusals),
                  message=f"{len(refusals)} of the next {word}'s orders would be refused" if refusals
                  else f"Nothing in the next {word} would be refused",
                  problems=[{"cell": r["where"], "message": f"{r['cohort']}, {r['task']}: {r['reason']}"}
                            for r in refusals])


def _export(path: Path, answer: dict[str, Any], **_: Any) -> None:
    from sheetsync.app.workbook_cli import export_workbook

    data = export_workbook(path)
    answer.update(json=data, events=_events(data), message="The tracker's battle state and last events")


def _forecast(path: Path, answer: dict[str, Any], *, seed: int | None, battles: int | None,
              progress: Callable[[int], None] | None, phases: int, **_: Any) -> None:
    from sheetsync.app import forecast_io

    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0])

    data = forecast_io.workbook_forecast(path, runs=battles or _FORECAST_RUNS, phases=phases, seed=seed,
                                         workers=None, write=True, console=None, progress=tick)
    answer.update(json=data, forecast=data, events=_table(data.get("next_step", {}).get("orders", [])),
                  message=f"Forecast of {data.get('runs')} simulated battles; the Forecast sheet is written")


def _report(path: Path, answer: dict[str, Any], **_: Any) -> None:
    from sheetsync.app.report import build_account, to_markdown

    acc = build_account(str(path))
    answer.update(report=to_markdown(acc), message="The after-action report")


_STEP_RUNNERS: dict[str, Callable[..., None]] = {"build": _step, "resolve": _step, "undo": _step, "end": _step,
                                                 "check": _check, "export": _export, "forecast": _forecast,
                                                 "report": _report}


def _map_pictures(path: Path) -> dict[str, Any]:
    """H1, H2: the hex map of a built tracker, as SVG (the standard library draws it) and, when
    Pillow can be imported, as PNG; empty when the tracker holds no battle yet."""
    from sheetsync.app.workbook_cli import battle_of_tracker
    from sheetsync.core.errors import SheetSyncError
    from sheetsync.core.registry import room

    try:
        battle = battle_of_tracker(path)
    except SheetSyncError:
        return {}
    picture = room("hexwar", "picture")
    out: dict[str, Any] = {"map_svg": picture.render_map_svg(battle)}
    if picture.pillow_available():
        out["map_png"] = picture.render_map_png(battle)
    return out


def describe(workbook: bytes, filename: str = "tracker.xlsx") -> dict[str, Any]:
    """What the tracker is: its system, where the battle stands and the Battle sheet's rows."""
    from sheetsync.app.workbook_cli import excel_backend, export_workbook
    from sheetsync.core.errors import BattleStateError, SheetSyncError
    from sheetsync.core.registry import find_system

    out: dict[str, Any] = {"ok": False, "system": None, "title": None, "word": None, "step": None, "built": False,
                           "ended": False, "summary": [], "message": "", "problems": []}
    with _Workbook(workbook, filename) as wb:
        try:
            system = find_system(_system_id(wb.path))
            word = {"exalted": "long tick", "hexwar": "turn"}.get(system.id, "phase")
            out.update(system=system.id, title=system.title, word=word,
                       summary=_summary(excel_backend(wb.path).workbook))
            try:
                data = export_workbook(wb.path)
            except BattleStateError as exc:  # not built yet
                out.update(ok=True, message=str(exc))
                return wb.unplaced(out)
        except SheetSyncError as exc:
            out.update(message=str(exc), problems=_problems(exc))
            return wb.unplaced(out)
    battle = data.get("battle") if isinstance(data.get("battle"), dict) else {}
    number = next((v for v in (data.get(k) for k in ("tick", "turn", "phase")) if isinstance(v, int)), None)
    if number is None:
        number = next((battle.get(k) for k in ("tick", "turn", "phase") if isinstance(battle.get(k), int)), None)
    out.update(ok=True, step=number, built=True, ended=bool(data.get("ended") or battle.get("ended")),
               message=f"{system.title}: {word} {number}" if number is not None else system.title)
    return out


def _summary(wb: Any, most: int = 60) -> list[list[Any]]:
    """The Battle sheet's rows as shown (values, no formulas' text), empty rows left out."""
    if "Battle" not in wb.sheetnames:
        return []
    rows = []
    for row in wb["Battle"].iter_rows(min_row=1, max_row=most, values_only=True):
        cells = list(row)
        while cells and cells[-1] in (None, ""):
            cells.pop()
        if cells and not (isinstance(cells[0], str) and cells[0].startswith("=") and len(cells) == 1):
            rows.append([c if not (isinstance(c, str) and c.startswith("=")) else None for c in cells])
    return rows
