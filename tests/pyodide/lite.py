# Under Pyodide (tests/pyodide/run.mjs): sheetsync.lite's scripts on xw.Book(json=payload), as
# xlwings Lite runs them. /host/in.json holds {"system/step": payload}; RESULT holds, for
# each, the actions the script queued (book.json()), and the scripts xlwings sees, in
# sheetsync.lite and in the main.py a --lite tracker carries (/host/main.py).
import inspect
import json
import os
import sys
import types

os.environ["XLWINGS_LICENSE_KEY"] = "noncommercial"  # xlwings' remote engine: free for noncommercial use
os.environ["XLWINGS_ON_SERVER"] = "true"  # @script registers its metadata, as in xlwings Lite

from xlwings.server import custom_scripts_meta

import sheetsync.lite as lite
from sheetsync.backends.xlwings_remote import close_book, remote_book

SCRIPTS = {"build": lite.build, "check": lite.check, "resolve": lite.resolve, "undo": lite.undo,
           "end": lite.end_battle, "report": lite.report}

with open("/host/in.json", encoding="utf-8") as fh:
    PAYLOADS = json.load(fh)


def click(script, book):
    """Run a script as the runtime does: with XLWINGS_ON_SERVER, @script makes it a coroutine
    taking the signed-in user (none here) before the book; nothing in it waits on anything."""
    run = script(None, book)
    assert inspect.iscoroutine(run)
    try:
        run.send(None)
    except StopIteration:
        return
    raise RuntimeError("the script waited on something")


answers = {}
for key, payload in PAYLOADS.items():
    step = key.split("/")[1]
    book = remote_book(payload)
    try:
        click(SCRIPTS[step], book)
        answers[key] = book.json()
    finally:
        close_book(book)
main = types.ModuleType("main")  # the workbook's main.py, as the pane imports it
with open("/host/main.py", encoding="utf-8") as fh:
    exec(compile(fh.read(), "main.py", "exec"), main.__dict__)
RESULT = {"platform": sys.platform, "answers": answers, "scripts": custom_scripts_meta(lite),
          "main_scripts": custom_scripts_meta(main)}
