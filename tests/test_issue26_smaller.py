"""Issue 26, the "Smaller" items: names cannot make Markdown, capacity figures, packages
openpyxl refuses, paths that are not regular files, and read-only file systems."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.report import md_escape
from sheetsync.core.errors import SheetSyncError
from sheetsync.sheets.disk import example_path

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


def _ok(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, (res.output, res.exception)
    return res


# --------------------------------------------------------------------------- Markdown names

HOSTILE = ("![{i}](http://evil/{i}.png)", "[c{i}](javascript:alert({i}))", "<img src=x{i} onerror=alert(1)>",
           "<https://evil/{i}>", "[d{i}](http://evil/{i})")


def _example(system: str) -> str:
    if system == "bbn":
        return example_path().read_text(encoding="utf-8")
    if system == "hexwar":
        return (ROOT / "sheetsync" / "systems" / "hexwar" / "example.yaml").read_text(encoding="utf-8")
    from sheetsync.systems.exalted.system import SYSTEM

    return SYSTEM.example_data()


def _names_of(data: dict[str, Any]) -> list[str]:
    """Every cohort, unit, character, member and side name the battle file holds."""
    out: list[str] = []
    for key in ("cohorts", "units", "characters"):
        for item in data.get(key, []):
            out += [item["name"], *([item["side"]] if "side" in item else [])]
            out += [m["name"] for m in item.get("members", []) if isinstance(m, dict) and "name" in m]
    return list(dict.fromkeys(out))


def _swap(obj: Any, mapping: dict[str, str]) -> Any:
    if isinstance(obj, dict):
        return {k: _swap(v, mapping) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_swap(v, mapping) for v in obj]
    return mapping.get(obj, obj) if isinstance(obj, str) else obj


def _constructs(markdown: str) -> list[str]:
    """What a CommonMark parser makes of ``markdown`` that a name must never make: links
    (whatever their scheme: the parser's own URL filter is switched off so that a
    ``javascript:`` link counts too), images other than the report's own ``data:``
    charts, and raw HTML."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("strikethrough").enable("table")
    md.validateLink = lambda url: True
    found = []
    for block in md.parse(markdown):
        for tok in [block, *(block.children or [])]:
            if tok.type == "link_open":
                found.append(f"link {tok.attrGet('href')}")
            elif tok.type == "image" and not str(tok.attrGet("src")).startswith("data:image/"):
                found.append(f"image {tok.attrGet('src')}")
            elif tok.type in ("html_inline", "html_block"):
                found.append(f"html {tok.content}")
    return found


@pytest.mark.parametrize("system", ["bbn", "hexwar", "exalted"])
def test_issue26_markdown_report_escapes_names(system: str, tmp_path: Path) -> None:
    """Every name in the battle made hostile; the Markdown report of a resolved step holds
    no link, image or HTML made from them, and still shows each name as typed."""
    data = yaml.safe_load(_example(system))
    names = _names_of(data)
    mapping = {n: HOSTILE[i % len(HOSTILE)].format(i=i) for i, n in enumerate(names)}
    src, nxt, out = tmp_path / "b.yaml", tmp_path / "b-1.yaml", tmp_path / "b.md"
    src.write_text(yaml.safe_dump(_swap(data, mapping), sort_keys=False), encoding="utf-8")
    _ok(["resolve", str(src), "--out", str(nxt)])
    _ok(["report", str(nxt), "--md", str(out)])
    text = out.read_text(encoding="utf-8")
    assert _constructs(text) == []
    from markdown_it import MarkdownIt

    shown = MarkdownIt("commonmark").render(text)
    import html

    shown = html.unescape(re.sub(r"<[^>]*>", "", shown))
    for hostile in mapping.values():
        assert hostile in shown, hostile
    # the terminal report goes through the same escaping
    res = _ok(["report", str(nxt)])
    assert "evil" in res.output


def test_issue26_markdown_escape_helper_blocks_every_construct() -> None:
    """The one helper all three reports' Markdown goes through: block starts, line
    breaks, GFM's bare autolinks and the inline constructs; prose stays readable."""
    for name in ("# Heading", "- item", "+ item", "1986. Year", "3) Third", "= under", "a\n# b", "x\r\n[y]: /z",
                 "**bold**", "`code`", "~~gone~~", "a | b", "&amp;", "<b>x</b>", "![i](x)", "[l](x)"):
        line = f"- {md_escape(name)}"
        assert _constructs(line) == [], name
        from markdown_it import MarkdownIt

        tokens = MarkdownIt("commonmark").enable("strikethrough").enable("table").parse(line)
        kinds = {t.type for b in tokens for t in [b, *(b.children or [])]}
        assert not kinds & {"heading_open", "ordered_list_open", "strong_open", "em_open", "code_inline", "s_open",
                            "table_open", "hr"}, (name, kinds)
        assert [b.type for b in tokens].count("bullet_list_open") == 1, name
    # GitHub links bare "www." and "scheme://" text; an escape in the middle stops it
    assert md_escape("www.evil.com") == "www\\.evil.com" and md_escape("https://e.com") == "https\\://e.com"
    assert md_escape("Tasks 5.2 (d10 7 + 18 = 25)") == "Tasks 5.2 (d10 7 + 18 = 25)"


# --------------------------------------------------------------------------- capacity figures


def _hex_battle(units: int) -> dict[str, Any]:
    """``units`` hex units, one a hex, on a map 20 columns wide; no orders typed."""
    cols = 20
    return {"system": "hexwar", "seed": 1, "map": {"columns": cols, "rows": -(-units // cols)},
            "units": [{"name": f"U{i}", "side": "Party" if i % 2 else "Enemy", "counter": "3 - 3 - 1 - 1",
                       "hex": f"{i % cols + 1:02d}{i // cols + 1:02d}"} for i in range(units)],
            "turn": {"initiative": "Party", "moves": [], "attacks": []}}


def _exalted_battle(units: int) -> dict[str, Any]:
    """The Exalted tracker tests' battle with its mob copied until it has ``units`` units,
    each with its own commander; no orders typed."""
    import copy

    from test_exalted_tracker import FILE

    data = copy.deepcopy(FILE)
    mob, boss = data["units"][1], data["characters"][2]
    data["orders"], data["units"] = [], [data["units"][0]]
    for i in range(units - 1):
        data["units"].append({**{k: v for k, v in mob.items() if k != "named_members"},
                              "name": f"Mob {i}", "commander": f"Boss {i}"})
        data["characters"].append({**boss, "name": f"Boss {i}"})
    return data


def test_issue26_capacity_figures_headroom_never_refuses_a_battle_that_fits() -> None:
    """The issue's 267 hex units (401 with headroom) and 150 Exalted units with 400
    characters fit: the headroom stops at the limit instead of refusing the battle."""
    from sheetsync.systems.exalted.system import SYSTEM as EXALTED
    from sheetsync.systems.exalted.tracker import steps as exalted_tracker
    from sheetsync.systems.exalted.tracker.layout import MAX_CAPACITY as EX_MAX
    from sheetsync.systems.hexwar.system import SYSTEM as HEXWAR
    from sheetsync.systems.hexwar.tracker import steps as hexwar_tracker
    from sheetsync.systems.hexwar.tracker.layout import MAX_CAPACITY as HEX_MAX

    cap = hexwar_tracker.capacity_for(HEXWAR.load(_hex_battle(267), "x"))
    assert cap["units"] == HEX_MAX["units"] and (cap["moves"], cap["attacks"]) == (2 * 267, 267)
    data = _exalted_battle(150)
    data["characters"] += [{"name": f"Member {i}", "role": "member"} for i in range(400 - len(data["characters"]))]
    cap = exalted_tracker.capacity_for(EXALTED.load(data, "x"))
    assert (cap["units"], cap["characters"], cap["orders"]) == (EX_MAX["units"], EX_MAX["characters"], 10 * 150)


@pytest.mark.parametrize(("system", "limit"), [("hexwar", 400), ("exalted", 200)])
def test_issue26_capacity_figures_at_the_limit_makes_a_tracker_past_it_names_the_right_number(
        system: str, limit: int, tmp_path: Path) -> None:
    from importlib import import_module

    max_units = import_module(f"sheetsync.systems.{system}.tracker.layout").MAX_CAPACITY["units"]
    assert max_units == limit
    make = _hex_battle if system == "hexwar" else _exalted_battle
    fits, past = tmp_path / "fits.yaml", tmp_path / "past.yaml"
    fits.write_text(yaml.safe_dump(make(limit)), encoding="utf-8")
    past.write_text(yaml.safe_dump(make(limit + 1)), encoding="utf-8")
    out = tmp_path / "fits.xlsx"
    assert f"{limit} units" in _ok(["new", str(out), "--from", str(fits)]).output
    if system == "hexwar":  # the last unit is in the tracker and reads back (one system is enough: it is slow)
        assert "U399" in _ok(["status", str(out)]).output
    res = runner.invoke(app, ["new", str(tmp_path / "past.xlsx"), "--from", str(past)])
    assert res.exit_code != 0
    assert f"units: a tracker holds at most {limit} units; this battle needs {limit + 1}" in str(res.exception) + res.output
    assert not (tmp_path / "past.xlsx").exists()


# --------------------------------------------------------------------------- not a regular file

_FIFO_DRIVER = """
import json, sys
from typer.testing import CliRunner
from sheetsync.app.cli import app
runner = CliRunner()
out = []
for args in json.loads(sys.argv[1]):
    res = runner.invoke(app, args)
    out.append([res.exit_code, str(res.exception) + res.output])
print(json.dumps(out))
"""


def test_issue26_fifo_is_refused(tmp_path: Path) -> None:
    """A FIFO named like a workbook, a battle file or a CSV is refused by every command
    before anything opens it (opening one waits for a writer that never comes).  The
    commands run in a child process with a deadline, so a regression fails instead of
    hanging the suite; no lock file or anything else is left beside the FIFO."""
    import json
    import os
    import stat
    import subprocess
    import sys

    for name in ("battle.xlsx", "battle.yaml", "chars.csv"):
        os.mkfifo(tmp_path / name)
    (tmp_path / "folder.xlsx").mkdir()
    book, data, csv = (str(tmp_path / n) for n in ("battle.xlsx", "battle.yaml", "chars.csv"))
    commands = [["status", book], ["check", book], ["export", book], ["pools", book], ["report", book],
                ["forecast", book], ["resolve", book], ["undo", book], ["build", book], ["end", book],
                ["aftermath", book], ["template", book], ["status", data], ["check", data], ["resolve", data],
                ["report", data], ["new", str(tmp_path / "new.xlsx"), "--from", data],
                ["map", data, "--png", str(tmp_path / "map.png")], ["status", str(tmp_path / "folder.xlsx")],
                ["import", csv, "--into", str(tmp_path / "new.yaml")]]
    proc = subprocess.run([sys.executable, "-c", _FIFO_DRIVER, json.dumps(commands)], capture_output=True,
                          text=True, timeout=240, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    for args, (code, output) in zip(commands, results, strict=True):
        assert code == 1, (args, output)
        if "folder.xlsx" in args[1]:
            assert "folder.xlsx is a folder, not a file" in output
        elif args[1] == csv:
            assert "chars.csv: is not a regular file" in output, output
        else:
            assert "is a FIFO (named pipe), not a file" in output and "Nothing was read or written" in output, \
                (args, output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["battle.xlsx", "battle.yaml", "chars.csv", "folder.xlsx"]
    assert all(stat.S_ISFIFO((tmp_path / n).stat().st_mode) for n in ("battle.xlsx", "battle.yaml", "chars.csv"))


# --------------------------------------------------------------------------- read-only file system


@pytest.fixture
def read_only_folder(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make a folder behave as on a read-only file system: every call that would create,
    change or remove something in it fails with ``EROFS``, as the kernel's does (as root,
    permission bits alone would not stop a write).  Returns the function that turns it on."""
    import errno
    import os

    real = {name: getattr(os, name) for name in ("open", "mkdir", "replace", "rename", "unlink", "remove",
                                                  "chmod", "utime", "rmdir")}
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def on(folder: Path) -> None:
        root = str(folder.resolve())

        def inside(path: Any) -> bool:
            try:
                return os.path.realpath(os.fspath(path)).startswith(root)
            except TypeError:  # a file descriptor
                return False

        def refuse(path: Any) -> None:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

        def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & writes and inside(path):
                refuse(path)
            return real["open"](path, flags, *args, **kwargs)

        def guard(name: str) -> Any:
            def call(path: Any, *args: Any, **kwargs: Any) -> Any:
                if inside(path) or (args and isinstance(args[0], (str, os.PathLike)) and inside(args[0])):
                    refuse(path)
                return real[name](path, *args, **kwargs)
            return call

        monkeypatch.setattr(os, "open", fake_open)
        for name in real:
            if name != "open":
                monkeypatch.setattr(os, name, guard(name))

    return on


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_issue26_read_only_file_system_reading_commands_work_writing_ones_are_refused(
        tmp_path: Path, read_only_folder: Any) -> None:
    """On a read-only file system the step lock can't be created; commands that only read
    need none and work (status, check, export, pools, report to the terminal, aftermath),
    on a tracker and on a battle file.  Commands that write are
    refused with a message that names the read-only file system, and nothing changes."""
    folder = tmp_path / "ro"
    folder.mkdir()
    book, data = folder / "battle.xlsx", folder / "battle.yaml"
    data.write_text(example_path().read_text(encoding="utf-8"), encoding="utf-8")
    _ok(["new", str(book), "--from", str(data)])
    _ok(["resolve", str(book)])
    for extra in folder.glob(".*.lock"):
        extra.unlink()
    for extra in folder.glob("*.bak"):
        extra.unlink()
    before = _snapshot(folder)
    read_only_folder(folder)
    with pytest.raises(OSError):
        (folder / ".probe").touch()  # the simulation holds
    assert "Ghoul Pack" in _ok(["status", str(book)]).output
    assert "Ghoul Pack" in _ok(["status", str(data)]).output
    assert "Ghoul Pack" in _ok(["export", str(book)]).output
    assert "Ghoul Pack" in _ok(["pools", str(book)]).output
    assert "Ghoul Pack" in _ok(["report", str(book)]).output
    assert "Ghoul Pack" in _ok(["aftermath", str(book)]).output
    assert "none is refused" in _ok(["check", str(data)]).output
    res = runner.invoke(app, ["check", str(book)])  # phase 2 has no orders: refused for that reason alone
    assert "no pending orders" in str(res.exception) + res.output
    for args in (["undo", str(book)], ["resolve", str(data), "--out", str(folder / "after.yaml")]):
        res = runner.invoke(app, args)
        assert res.exit_code != 0, args
        assert "is on a read-only file system; nothing was written" in str(res.exception) + res.output, args
    assert _snapshot(folder) == before


# --------------------------------------------------------------------------- packages openpyxl refuses


def _damaged_packages(good: bytes) -> dict[str, tuple[bytes, str]]:
    """A tracker's package damaged in the ways openpyxl refuses, each with the words the
    refusal must hold (the part it names)."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(good)) as z:
        parts = {i.filename: z.read(i) for i in z.infolist()}

    def build(mod: dict[str, bytes]) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in mod.items():
                z.writestr(name, data)
        return buf.getvalue()

    def without(name: str) -> bytes:
        return build({k: v for k, v in parts.items() if k != name})

    def cut(name: str) -> bytes:  # the part's XML loses its last characters
        return build({**parts, name: parts[name][:-12]})

    no_book_type = re.sub(rb'<Override[^>]*PartName="/xl/workbook.xml"[^>]*/>', b"", parts["[Content_Types].xml"])
    return {
        "no content types": (without("[Content_Types].xml"), "[Content_Types].xml is missing"),
        "content types not XML": (cut("[Content_Types].xml"), "[Content_Types].xml is not well-formed XML"),
        "no workbook type": (build({**parts, "[Content_Types].xml": no_book_type}),
                             "[Content_Types].xml names no workbook part"),
        "no workbook part": (without("xl/workbook.xml"), "xl/workbook.xml is missing"),
        "workbook not XML": (cut("xl/workbook.xml"), "xl/workbook.xml"),
        "no workbook relationships": (without("xl/_rels/workbook.xml.rels"), "the sheet 'Battle' is damaged"),
        "properties not XML": (cut("docProps/core.xml"), "docProps/core.xml is not well-formed XML"),
        "sheet relationships not XML": (cut("xl/worksheets/_rels/sheet1.xml.rels"),
                                        "xl/worksheets/_rels/sheet1.xml.rels is not well-formed XML"),
        "drawing not XML": (cut("xl/drawings/drawing1.xml"), "xl/drawings/drawing1.xml is not well-formed XML"),
        "chart not XML": (cut("xl/charts/chart1.xml"), "xl/charts/chart1.xml is not well-formed XML"),
        "not a zip": (b"PK\x03\x04 not really a workbook" * 64, "is not a zip file"),
    }


def test_issue26_packages_openpyxl_refuses_are_refused(tmp_path: Path) -> None:
    """Each damaged package: openpyxl's load_workbook refuses it; sheetsync's reading and
    writing commands (which take the fast package path) refuse it too, naming the part,
    and the file stays byte for byte as it was, with no .bak made."""
    import io

    import openpyxl

    book = tmp_path / "good.xlsx"
    _ok(["new", str(book), "--from", str(example_path())])
    for case, (data, words) in _damaged_packages(book.read_bytes()).items():
        with pytest.raises(Exception):  # noqa: B017 - openpyxl raises whatever its parser raises
            openpyxl.load_workbook(io.BytesIO(data))
        path = tmp_path / f"{case.replace(' ', '-')}.xlsx"
        path.write_bytes(data)
        for command in ("status", "resolve"):
            res = runner.invoke(app, [command, str(path)])
            message = str(res.exception) + res.output
            assert res.exit_code != 0 and isinstance(res.exception, SheetSyncError), (case, command, message)
            assert words in message, (case, command, message)
            if case != "not a zip":  # the workbook loader's own refusal, which predates this issue
                assert "nothing was written" in message.lower(), (case, command, message)
            assert path.read_bytes() == data and not path.with_name(path.name + ".bak").exists(), case
