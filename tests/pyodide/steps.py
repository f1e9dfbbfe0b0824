"""The workbook path run through :mod:`sheetsync.app.browser`, for the tests that compare it
with the CLI on CPython (issue 25): under Pyodide in Node (``tests/test_pyodide.py``) and on
CPython where the optional libraries can't be imported (``tests/test_pure_path.py``).

It reads ``HOST/in.json``: ``{"systems": {"bbn": <the example battle's data>, ...},
"steps": ["build", "resolve", ...], "seed": n, "battles": n, "phases": n}``, and for each
system writes ``HOST/out-SYSTEM.json``: the blank template's cells, then for each step its
answer (ok, message, problems, the step's JSON) and the tracker's visible cells after it
(when it wrote them),
and the ``export`` JSON at the end.  ``HOST`` is ``/host`` (Pyodide) or
``$SHEETSYNC_TEST_HOST``.  Sets ``RESULT`` to a short summary.
"""

import io
import json
import os
import sys
import time


def visible_cells(data):
    """Every value of every visible sheet, ``{sheet: {A1: value}}``; a value JSON can't hold
    is written as its ``repr``."""
    import openpyxl

    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    out = {}
    for ws in wb.worksheets:
        if ws.sheet_state != "visible":
            continue
        cells = {}
        for row in ws.iter_rows():
            for c in row:
                v = c.value
                if v is None:
                    continue
                cells[c.coordinate] = v if isinstance(v, (str, int, float, bool)) else repr(v)
        out[ws.title] = cells
    return out


def run(host):
    from sheetsync.app import browser

    with open(os.path.join(host, "in.json"), encoding="utf-8") as fh:
        spec = json.load(fh)
    summary = {}
    for system, battle in spec["systems"].items():
        t0 = time.perf_counter()
        record = {"template": visible_cells(browser.new_tracker(system)), "steps": []}
        wb = browser.new_tracker(system, battle=battle)
        record["new"] = visible_cells(wb)
        seen = []
        for step in spec["steps"]:
            ticks = []
            answer = browser.run_step(wb, "tracker.xlsx", step, seed=spec.get("seed"), battles=spec.get("battles"),
                                      phases=spec.get("phases"), progress=ticks.append, map_png=False)
            if answer.get("workbook"):
                wb = answer["workbook"]
            record["steps"].append({"step": step, "ok": answer["ok"], "message": answer["message"],
                                    "problems": answer["problems"], "json": answer.get("json"),
                                    "report": answer.get("report"), "progress": ticks,
                                    "cells": visible_cells(wb) if answer.get("workbook") else None})
            seen.append(f"{step}:{'ok' if answer['ok'] else 'refused'}")
        record["export"] = browser.run_step(wb, "tracker.xlsx", "export")["json"]
        with open(os.path.join(host, f"out-{system}.json"), "w", encoding="utf-8") as fh:
            json.dump(record, fh, ensure_ascii=False, sort_keys=True)
        summary[system] = {"steps": seen, "seconds": round(time.perf_counter() - t0, 3)}
    return {"python": sys.version.split()[0], "platform": sys.platform, "systems": summary}


if __name__ == "__main__":  # run by Pyodide's runPython, or as a script
    RESULT = run(os.environ.get("SHEETSYNC_TEST_HOST") or "/host")
    if sys.platform != "emscripten":
        print(json.dumps(RESULT))
