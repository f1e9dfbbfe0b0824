"""Drive LibreOffice Calc headless from tests: recalculate, convert, find errors, render.

Every call starts its own ``soffice`` with a fresh profile
(``-env:UserInstallation=file:///tmp/sheetsync-lo-<uuid>``) listening on a private pipe,
runs a small Python-UNO worker against it, and stops it again, so parallel test runs never
share a profile.  The worker runs under the interpreter that has LibreOffice's ``uno``
module (Debian's ``/usr/bin/python3`` with ``python3-uno``), not under the project's
Python.  The worker is written out from :data:`_WORKER` on first use.

System packages (see ``.ci/install-system-deps.sh``): ``libreoffice-calc-nogui``,
``python3-uno`` and ``poppler-utils`` (``pdftoppm``, for :func:`render_png`).

Each call's wall time is appended to :data:`TIMINGS` as ``(operation, seconds)``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "TIMINGS",
    "LibreOfficeError",
    "cell_values",
    "error_cells",
    "error_values",
    "inspect_macros",
    "recalc_and_convert",
    "render_png",
    "require_libreoffice",
    "sheet_pdfs",
    "run_macros",
    "soffice_path",
    "uno_python",
]

#: ``(operation, seconds)`` for every LibreOffice call made in this process.
TIMINGS: list[tuple[str, float]] = []

_PACKAGES = "libreoffice-calc-nogui python3-uno poppler-utils"
_START_TIMEOUT = 90.0
_CALL_TIMEOUT = 240.0


class LibreOfficeError(RuntimeError):
    """LibreOffice could not be started or could not do what was asked."""


def soffice_path() -> str | None:
    """The ``soffice`` executable, or ``None`` when LibreOffice is not installed."""
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if found:
        return found
    for candidate in ("/usr/lib/libreoffice/program/soffice", "/opt/libreoffice/program/soffice"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def uno_python() -> str | None:
    """An interpreter that can ``import uno`` (LibreOffice's Python bridge), or ``None``."""
    candidates = [os.environ.get("SHEETSYNC_UNO_PYTHON", ""), "/usr/bin/python3",
                  "/usr/lib/libreoffice/program/python"]
    for exe in filter(None, candidates):
        if os.access(exe, os.X_OK):
            probe = subprocess.run([exe, "-c", "import uno"], capture_output=True, timeout=60)
            if probe.returncode == 0:
                return exe
    return None


def require_libreoffice() -> str:
    """Return ``soffice``'s path; without it, fail on CI (``CI`` set) and skip elsewhere."""
    soffice = soffice_path()
    missing = []
    if soffice is None:
        missing.append("soffice (Debian package libreoffice-calc-nogui)")
    if uno_python() is None:
        missing.append("Python's uno module (Debian package python3-uno)")
    if not missing:
        assert soffice is not None
        return soffice
    message = (
        f"LibreOffice Calc headless is needed: missing {', '.join(missing)}; install with "
        f"`apt-get install --no-install-recommends {_PACKAGES}` or .ci/install-system-deps.sh"
    )
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


# ---------------------------------------------------------------------------------------
# The worker, run under LibreOffice's Python
# ---------------------------------------------------------------------------------------

_WORKER = r'''
import json, sys, time
import uno
from com.sun.star.beans import PropertyValue


def props(**kw):
    out = []
    for k, v in kw.items():
        p = PropertyValue()
        p.Name, p.Value = k, v
        out.append(p)
    return tuple(out)


def col_letters(index):
    s = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        s = chr(65 + rem) + s
    return s


def quote(name):
    import re
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else "'" + name.replace("'", "''") + "'"


def connect(pipe, deadline):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local)
    last = None
    while time.time() < deadline:
        try:
            return resolver.resolve(
                "uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
        except Exception as exc:  # NoConnectException while soffice starts
            last = exc
            time.sleep(0.25)
    raise RuntimeError("could not connect to soffice: %r" % (last,))


def load(desktop, path, macro_mode=0):
    url = uno.systemPathToFileUrl(path)
    doc = desktop.loadComponentFromURL(url, "_blank", 0, props(Hidden=True, MacroExecutionMode=macro_mode))
    if doc is None:
        raise RuntimeError("LibreOffice could not open %s" % path)
    return doc


def errors(doc):
    from com.sun.star.sheet.CellFlags import FORMULA
    found = []
    sheets = doc.Sheets
    for i in range(sheets.Count):
        sheet = sheets.getByIndex(i)
        ranges = sheet.queryContentCells(FORMULA)
        cells = ranges.getCells().createEnumeration()
        while cells.hasMoreElements():
            cell = cells.nextElement()
            if cell.getError():
                a = cell.getCellAddress()
                found.append(["%s!%s%d" % (quote(sheet.Name), col_letters(a.Column), a.Row + 1),
                              cell.getString() or "Err:%d" % cell.getError()])
    return found


def values(doc, ranges):
    out = {}
    for spec in ranges:
        sheet_name, _, cells = spec.rpartition("!")
        sheet = doc.Sheets.getByName(sheet_name.strip("'").replace("''", "'"))
        rng = sheet.getCellRangeByName(cells)
        out[spec] = [list(row) for row in rng.getDataArray()]
    return out


def macros(doc):
    libs = {}
    basic = doc.BasicLibraries
    for name in basic.getElementNames():
        basic.loadLibrary(name)
        lib = basic.getByName(name)
        libs[name] = {m: lib.getByName(m) for m in lib.getElementNames()}
    controls = []
    sheets = doc.Sheets
    for i in range(sheets.Count):
        sheet = sheets.getByIndex(i)
        forms = sheet.DrawPage.Forms
        for f in range(forms.Count):
            form = forms.getByIndex(f)
            for c in range(form.Count):
                model = form.getByIndex(c)
                events = [
                    {"listener": e.ListenerType, "method": e.EventMethod,
                     "type": e.ScriptType, "code": e.ScriptCode}
                    for e in form.getScriptEvents(c)
                ]
                controls.append({
                    "sheet": sheet.Name,
                    "name": model.Name,
                    "label": getattr(model, "Label", None),
                    "service": model.getImplementationName(),
                    "events": events,
                })
    return {"libraries": libs, "controls": controls}


def run_macros(doc, scripts, ranges):
    # Invoking a routine makes Basic compile its module first.  A module that does not
    # compile runs nothing, and a headless Calc reports that to no one: the invocation
    # still returns normally.  Callers check what the routine did (cells it wrote).
    provider = doc.getScriptProvider()
    runs = []
    for url in scripts:
        try:
            value = provider.getScript(url).invoke((), (), ())[0]
            runs.append({"script": url, "ok": True, "value": value if isinstance(value, (str, int, float, bool)) else None})
        except Exception as exc:
            message = getattr(exc, "Message", "") or str(exc)
            target = getattr(exc, "TargetException", None)
            if target is not None:
                message += " " + (getattr(target, "Message", "") or str(target))
            runs.append({"script": url, "ok": False, "error": "%s: %s" % (type(exc).__name__, message)})
    return {"runs": runs, "values": values(doc, ranges)}


def sheet_pdf(doc, name, out):
    """Print the sheet ``name`` alone (the others hidden) to the PDF ``out``."""
    sheets = doc.Sheets
    if not sheets.hasByName(name):
        raise RuntimeError("no sheet named %r" % name)
    target = sheets.getByName(name)
    target.IsVisible = True
    doc.CurrentController.setActiveSheet(target)
    for i in range(sheets.Count):
        other = sheets.getByIndex(i)
        if other.Name != name:
            other.IsVisible = False
    filter_data = uno.Any("[]com.sun.star.beans.PropertyValue", props(Selection=target))
    uno.invoke(doc, "storeToURL", (uno.systemPathToFileUrl(out),
               props(FilterName="calc_pdf_Export", Overwrite=True, FilterData=filter_data)))


def main():
    pipe, deadline = sys.argv[1], float(sys.argv[2])
    ops = json.loads(sys.stdin.read())
    ctx = connect(pipe, deadline)
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    results = []
    try:
        for op in ops:
            # MacroExecutionMode 4 (ALWAYS_EXECUTE_NO_WARN) only where macros are to run.
            doc = load(desktop, op["src"], 4 if op["op"] == "run_macros" else 0)
            try:
                kind = op["op"]
                if kind in ("recalc", "errors", "values", "pdf", "pdfs"):
                    doc.calculateAll()
                if kind == "recalc":
                    doc.storeToURL(uno.systemPathToFileUrl(op["out"]),
                                   props(FilterName="Calc Office Open XML", Overwrite=True))
                    results.append({"out": op["out"]})
                elif kind == "errors":
                    results.append({"errors": errors(doc)})
                elif kind == "values":
                    results.append({"values": values(doc, op["ranges"])})
                elif kind == "pdf":
                    sheet_pdf(doc, op["sheet"], op["out"])
                    results.append({"out": op["out"]})
                elif kind == "pdfs":
                    for name, out in op["sheets"].items():
                        sheet_pdf(doc, name, out)
                    results.append({"outs": op["sheets"]})
                elif kind == "macros":
                    results.append(macros(doc))
                elif kind == "run_macros":
                    results.append(run_macros(doc, op["scripts"], op.get("ranges", [])))
                else:
                    raise RuntimeError("unknown operation %r" % kind)
            finally:
                doc.close(True)
    finally:
        try:
            desktop.terminate()
        except Exception:
            pass
    sys.stdout.write(json.dumps(results))


main()
'''


def _worker_file() -> Path:
    folder = Path(tempfile.gettempdir()) / f"sheetsync-lo-worker-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    path = folder / f"worker-{hashlib.sha256(_WORKER.encode()).hexdigest()[:16]}.py"
    if not path.exists():
        tmp = path.with_suffix(f".{uuid.uuid4().hex}.tmp")
        tmp.write_text(_WORKER)
        os.replace(tmp, path)
    return path


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the soffice we started (its own process group), politely first."""
    try:
        proc.wait(timeout=20)
        return
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def _run(label: str, ops: list[dict[str, Any]], attempts: int = 3) -> list[dict[str, Any]]:
    """Run ``ops`` in a fresh LibreOffice.  A headless soffice now and then dies while it
    starts or loads (the worker then exits with no error text); such a call is tried again
    in a new instance, at most ``attempts`` times, and any other failure is raised at once."""
    for attempt in range(1, attempts + 1):
        try:
            return _run_once(label, ops)
        except _Crashed as crash:
            if attempt == attempts:
                raise LibreOfficeError(f"LibreOffice {label} failed {attempts} times: {crash}") from None
    raise AssertionError("unreachable")


class _Crashed(LibreOfficeError):
    """The worker or soffice died without saying why."""


def _run_once(label: str, ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    soffice = require_libreoffice()
    python = uno_python()
    assert python is not None
    token = uuid.uuid4().hex
    pipe = f"sheetsync_{token}"
    profile = Path(tempfile.gettempdir()) / f"sheetsync-lo-{token}"
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            soffice,
            "--headless",
            "--invisible",
            "--nocrashreport",
            "--nodefault",
            "--nologo",
            "--nofirststartwizard",
            "--norestore",
            f"-env:UserInstallation={profile.as_uri()}",
            f"--accept=pipe,name={pipe};urp;StarOffice.ComponentContext",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        try:
            done = subprocess.run(
                [python, str(_worker_file()), pipe, str(time.time() + _START_TIMEOUT)],
                input=json.dumps(ops).encode(),
                capture_output=True,
                timeout=_CALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise LibreOfficeError(f"LibreOffice took over {_CALL_TIMEOUT:.0f}s for {label}") from None
        if done.returncode != 0:
            text = done.stderr.decode(errors="replace")[-3000:]
            if not text.strip() or "DisposedException" in text or "NoConnectException" in text:
                raise _Crashed(f"worker exit code {done.returncode}, soffice exit code {proc.poll()}: {text.strip()}")
            raise LibreOfficeError(f"LibreOffice {label} failed (exit code {done.returncode}):\n{text}")
        results: list[dict[str, Any]] = json.loads(done.stdout)
        return results
    finally:
        _stop(proc)
        shutil.rmtree(profile, ignore_errors=True)
        TIMINGS.append((label, time.monotonic() - started))


def _abs(path: str | os.PathLike[str]) -> str:
    p = Path(path).resolve()
    if not p.is_file():
        raise FileNotFoundError(p)
    return str(p)


def recalc_and_convert(src: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> Path:
    """Open ``src`` in LibreOffice, recalculate every formula, save ``out_dir/<stem>.xlsx``.

    The result holds LibreOffice's values as cached values, so openpyxl's
    ``load_workbook(..., data_only=True)`` reads what the formulas compute.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = (out_dir / (Path(src).stem + ".xlsx")).resolve()
    if out == Path(src).resolve():
        raise ValueError("recalc_and_convert would overwrite its source")
    _run("recalc_and_convert", [{"op": "recalc", "src": _abs(src), "out": str(out)}])
    if not out.is_file():
        raise LibreOfficeError(f"LibreOffice wrote no {out}")
    return out


def error_values(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{"Sheet!A1": "#DIV/0!", ...}`` for every formula whose value, after LibreOffice
    recalculates the workbook, is an error (``#VALUE!``, ``#NAME?``, ``Err:508``, ...)."""
    (result,) = _run("error_cells", [{"op": "errors", "src": _abs(path)}])
    return {address: text for address, text in result["errors"]}


def error_cells(path: str | os.PathLike[str]) -> list[str]:
    """Addresses (``Sheet!A1``) of every cell whose recalculated value is an error."""
    return list(error_values(path))


def cell_values(path: str | os.PathLike[str], ranges: list[str]) -> dict[str, list[list[Any]]]:
    """Recalculated values of ``ranges`` (``"Sheet1!A1:B2"``), read straight from Calc."""
    (result,) = _run("cell_values", [{"op": "values", "src": _abs(path), "ranges": ranges}])
    values: dict[str, list[list[Any]]] = result["values"]
    return values


def sheet_pdfs(books: dict[str | os.PathLike[str], dict[str, str | os.PathLike[str]]]) -> None:
    """Print each named sheet of each workbook to its own PDF, as Calc prints it (its page
    setup, print area and titles), in one LibreOffice run: ``{workbook: {sheet: pdf}}``.
    Each workbook is opened once and recalculated first."""
    ops = [{"op": "pdfs", "src": _abs(src), "sheets": {name: str(Path(out).resolve()) for name, out in outs.items()}}
           for src, outs in books.items()]
    _run("sheet_pdfs", ops)


def render_png(
    src: str | os.PathLike[str],
    out_png: str | os.PathLike[str],
    sheet_name: str,
    *,
    dpi: int = 96,
    crop: tuple[float, float, float, float] | None = None,
) -> Path:
    """Render the first page of sheet ``sheet_name`` of ``src`` to ``out_png``.

    ``crop`` is ``(left, top, width, height)`` as fractions of an A4 landscape page, to keep
    only the part of the page that has content.

    Calc recalculates, prints that sheet alone to PDF, and ``pdftoppm`` (poppler-utils)
    turns the first page into a PNG.
    """
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        message = "render_png needs pdftoppm (Debian package poppler-utils)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    out_png = Path(out_png).resolve()
    out_png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sheetsync-render-") as tmp:
        pdf = Path(tmp) / "sheet.pdf"
        _run("render_png", [{"op": "pdf", "src": _abs(src), "out": str(pdf), "sheet": sheet_name}])
        stem = Path(tmp) / "page"
        box: list[str] = []
        if crop is not None:
            width_px, height_px = 11.69 * dpi, 8.27 * dpi
            left, top, w, h = crop
            box = ["-x", str(int(left * width_px)), "-y", str(int(top * height_px)),
                   "-W", str(int(w * width_px)), "-H", str(int(h * height_px))]
        subprocess.run(
            [pdftoppm, "-png", "-r", str(dpi), *box, "-f", "1", "-l", "1", "-singlefile", str(pdf), str(stem)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        os.replace(stem.with_suffix(".png"), out_png)
    return out_png


def inspect_macros(src: str | os.PathLike[str]) -> dict[str, Any]:
    """What Calc makes of a macro-enabled workbook's code and form controls.

    ``{"libraries": {library: {module: source}}, "controls": [{"sheet", "name", "label",
    "service", "events": [{"listener", "method", "type", "code"}]}]}``.  Calc imports a
    workbook's VBA into its Basic library ``VBAProject``.
    """
    (result,) = _run("inspect_macros", [{"op": "macros", "src": _abs(src)}])
    return result


def run_macros(
    src: str | os.PathLike[str], scripts: list[str], ranges: list[str] | None = None
) -> dict[str, Any]:
    """Open ``src`` in Calc with macros enabled, invoke each Basic script URL in ``scripts``
    in turn (``vnd.sun.star.script:VBAProject.Module.Sub?language=Basic&location=document``),
    then read ``ranges`` (``"Sheet!A1:B2"``).

    ``{"runs": [{"script", "ok", "value"} or {"script", "ok": False, "error"}], "values":
    {range: rows}}``.  Invoking a routine makes Basic compile its whole module first; a
    module that does not compile runs nothing but still gives ``ok: True`` in a headless
    Calc, so check the cells the routine writes, not ``ok`` alone.  ``ok: False`` carries an
    error the invocation raised (a script that is not found, for example).
    """
    (result,) = _run(
        "run_macros", [{"op": "run_macros", "src": _abs(src), "scripts": scripts, "ranges": ranges or []}]
    )
    return result
