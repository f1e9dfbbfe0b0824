"""Fuzz the tracker workbooks of every rule system (issue 26).

Each case takes the example battle's tracker of a system, damages it in one way (a flipped
bit in a compressed part, broken XML, an odd value in a cell, a merged range over cells a
step writes, a hand-edited State), runs one command on it through the command line's own
entry point and judges the outcome: a success, or a clean refusal (a ``SheetSyncError``,
exit code 1 or 2, no traceback) that left the file and its ``.bak`` byte for byte as they
were.  Anything else is a crash, printed with its traceback's last line.

The cases are drawn from ``random.Random(seed)``, so a case number always makes the same
damage.  ``tests/test_fuzz_trackers.py`` runs a small sample of them on every CI run.

    python benchmarks/fuzz_trackers.py                   # 2000 cases per system
    python benchmarks/fuzz_trackers.py -n 100 --systems hexwar --show
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

SYSTEMS = ("bbn", "hexwar", "exalted")

COMMANDS: tuple[tuple[str, ...], ...] = (
    ("check",), ("build",), ("resolve",), ("undo",), ("end",), ("status",), ("export",),
    ("forecast", "--runs", "20", "--phases", "2", "--workers", "1", "--seed", "1"), ("report",),
)
"""Every command that reads or steps a tracker workbook (forecast kept to a few runs)."""

READ_ONLY = {"check", "status", "export", "forecast", "report"}

class RawNumber(str):
    """A number cell's text as it stands in the file (``1e309``, ``NaN``): what a program
    other than a spreadsheet may write."""


ODD_VALUES: tuple[Any, ...] = (
    "9" * 4301, "-" + "9" * 4301, "1e309", 1e308, "-1e309", "NaN", "nan", "inf", "-Infinity", "Infinity", -5, -1, 0,
    2**63, -(2**63), 2**63 - 1, 10**30, "9223372036854775808", 1.5, -0.0, "", " ", "x" * 40_000, "é" * 3000,
    "[" * 30_000, "{\"a\":" * 5000, "bbn@" + "9" * 4301, "bbn@²", "hexwar@٣", "exalted@-1", "=1/0", "=A1",
    "=SUM(A1:A3)", RawNumber("1e309"), RawNumber("-1e309"), RawNumber("NaN"), RawNumber("9" * 4301),
    RawNumber("1e-400"), True, False, "True", "yes", "0601", "9999", "-0101", "😀", "\x00", "a\tb\nc", "None",
)
"""Values that trackers have been seen (or might be) hand-edited to hold."""


def _odd(rng: random.Random) -> Any:
    return rng.choice(ODD_VALUES)


# ---------------------------------------------------------------------------- the package


@dataclass
class Package:
    """A workbook's zip members by name, in order, and its sheet name -> member map."""

    members: dict[str, bytes]
    sheets: dict[str, str]

    @classmethod
    def read(cls, data: bytes) -> Package:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = {i.filename: zf.read(i) for i in zf.infolist()}
        rels = {m.group(1): m.group(2) for m in re.finditer(
            rb'<Relationship[^>]*?Id="([^"]+)"[^>]*?Target="([^"]+)"', members["xl/_rels/workbook.xml.rels"])}
        rels.update({m.group(2): m.group(1) for m in re.finditer(
            rb'<Relationship[^>]*?Target="([^"]+)"[^>]*?Id="([^"]+)"', members["xl/_rels/workbook.xml.rels"])})
        sheets: dict[str, str] = {}
        for m in re.finditer(rb'<sheet [^>]*?name="([^"]+)"[^>]*?r:id="([^"]+)"', members["xl/workbook.xml"]):
            target = rels[m.group(2)].decode()
            sheets[m.group(1).decode()] = target.lstrip("/") if target.startswith("/") else "xl/" + target
        return cls(members, sheets)

    def write(self) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in self.members.items():
                zf.writestr(name, data)
        return buf.getvalue()

    def shared(self) -> list[str]:
        xml = self.members.get("xl/sharedStrings.xml", b"").decode()
        out = []
        for si in re.findall(r"<si>(.*?)</si>", xml, re.S):
            out.append("".join(re.findall(r"<t[^>]*>(.*?)</t>", si, re.S)))
        return out


_CELL = re.compile(rb'<c r="([A-Z]+)([0-9]+)"[^>]*?(?:/>|>.*?</c>)', re.S)


def _cell_xml(ref: str, value: Any, style: bytes) -> bytes:
    s = b' s="' + style + b'"' if style else b""
    head = f'<c r="{ref}"'.encode() + s
    if value is None:
        return head + b"/>"
    if isinstance(value, RawNumber):
        return head + b"><v>" + escape(str(value)).encode() + b"</v></c>"
    if isinstance(value, bool):
        return head + b' t="b"><v>' + (b"1" if value else b"0") + b"</v></c>"
    if isinstance(value, (int, float)):
        return head + b"><v>" + repr(value).encode() + b"</v></c>"
    if isinstance(value, str) and value.startswith("="):
        return head + b"><f>" + escape(value[1:]).encode() + b"</f><v></v></c>"
    return head + b' t="inlineStr"><is><t xml:space="preserve">' + escape(str(value)).encode() + b"</t></is></c>"


def set_cell(pkg: Package, sheet: str, ref: str, value: Any) -> None:
    """Put ``value`` in ``sheet!ref`` (the cell must be in the sheet's XML already, or its
    row: else the value goes in a new row at the end)."""
    member = pkg.sheets[sheet]
    xml = pkg.members[member]
    for m in _CELL.finditer(xml):
        if (m.group(1) + m.group(2)).decode() == ref:
            style = re.search(rb' s="([0-9]+)"', m.group(0)[:m.group(0).find(b">") + 1])
            pkg.members[member] = xml[:m.start()] + _cell_xml(ref, value, style.group(1) if style else b"") + xml[m.end():]
            return
    row = int(re.sub("[A-Z]", "", ref))
    new = f'<row r="{row}">'.encode() + _cell_xml(ref, value, b"") + b"</row>"
    rows = [(int(m.group(1)), m.start()) for m in re.finditer(rb'<row r="([0-9]+)"', xml)]
    if any(r == row for r, _ in rows):
        return  # a row holding other cells: skip (keeping cells in column order is not worth it here)
    after = [pos for r, pos in rows if r > row]
    at = after[0] if after else xml.find(b"</sheetData>")
    if at < 0:
        return
    pkg.members[member] = xml[:at] + new + xml[at:]


def cells_with_values(pkg: Package, sheet: str) -> list[str]:
    xml = pkg.members[pkg.sheets[sheet]]
    return [(m.group(1) + m.group(2)).decode() for m in _CELL.finditer(xml) if b"<v>" in m.group(0) or b"<is>" in m.group(0)]


def cell_text(pkg: Package, sheet: str, ref: str) -> str | None:
    xml = pkg.members[pkg.sheets[sheet]]
    for m in _CELL.finditer(xml):
        if (m.group(1) + m.group(2)).decode() != ref:
            continue
        body = m.group(0).decode()
        if 't="s"' in body:
            v = re.search(r"<v>(.*?)</v>", body)
            return pkg.shared()[int(v.group(1))] if v else None
        t = re.findall(r"<t[^>]*>(.*?)</t>", body, re.S)
        if t:
            return "".join(t)
        v = re.search(r"<v>(.*?)</v>", body)
        return v.group(1) if v else None
    return None


def _unescape(text: str) -> str:
    from xml.sax.saxutils import unescape

    return unescape(text, {"&quot;": '"', "&apos;": "'"})


# ---------------------------------------------------------------------------- the damage


def flip_bit(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One flipped bit inside one member's compressed data."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = [i for i in zf.infolist() if i.compress_size > 0]
    info = rng.choice(infos)
    head = info.header_offset
    name_len, extra_len = struct.unpack("<HH", data[head + 26:head + 30])
    start = head + 30 + name_len + extra_len
    pos = start + rng.randrange(info.compress_size)
    out = bytearray(data)
    out[pos] ^= 1 << rng.randrange(8)
    return bytes(out), f"flip a bit of {info.filename} at byte {pos - start}"


def break_xml(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    pkg = Package.read(data)
    name = rng.choice([n for n in pkg.members if n.endswith(".xml") or n.endswith(".rels")])
    xml = pkg.members[name]
    how = rng.choice(["cut", "junk", "tag", "empty"])
    if how == "cut":
        xml = xml[:rng.randrange(len(xml))]
    elif how == "junk":
        at = rng.randrange(len(xml))
        xml = xml[:at] + rng.choice([b"<", b"&", b"\xff\xfe", b"]]>", b"<x>"]) + xml[at:]
    elif how == "tag":
        xml = xml.replace(b"<sheetData", b"<sheetDatum", 1).replace(b"</sheetData>", b"</sheetDatum>", 1)
    else:
        xml = b""
    pkg.members[name] = xml
    return pkg.write(), f"{how} the XML of {name}"


def odd_cell(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    pkg = Package.read(data)
    sheet = rng.choice([s for s in pkg.sheets if s != "State"] + ["State"])
    cells = cells_with_values(pkg, sheet)
    if not cells:
        return data, "nothing"
    ref = rng.choice(cells)
    value = _odd(rng)
    set_cell(pkg, sheet, ref, value)
    return pkg.write(), f"{sheet}!{ref} = {str(value)[:40]!r}"


def state_edit(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A hand-edited State: the mark, the blob or an undo record."""
    pkg = Package.read(data)
    if "State" not in pkg.sheets:
        return odd_cell(data, rng)
    how = rng.choice(["mark", "nest", "blob", "blob", "blob", "record"])
    if how == "mark":
        value = rng.choice(["bbn@" + "9" * 4301, "bbn@²", "hexwar@1", "exalted@1", "bbn@1", "x@1", 2**63, "@"])
        set_cell(pkg, "State", "B1", value)
        return pkg.write(), f"State!B1 = {str(value)[:30]!r}"
    if how == "nest":
        depth = rng.choice([1000, 30_000])
        set_cell(pkg, "State", "A2", "[" * depth + "]" * depth)
        return pkg.write(), f"State!A2 nested {depth} deep"
    if how == "record":
        refs = [r for r in cells_with_values(pkg, "State") if r[0] in "CDEF"]
        if not refs:
            return odd_cell(data, rng)
        ref = rng.choice(refs)
        value = _odd(rng)
        set_cell(pkg, "State", ref, value)
        return pkg.write(), f"State!{ref} = {str(value)[:40]!r}"
    # the blob: change one number or text inside its JSON
    pieces = []
    for row in range(2, 402):
        text = cell_text(pkg, "State", f"A{row}")
        if not text:
            break
        pieces.append(_unescape(text))
    try:
        blob = json.loads("".join(pieces))
    except ValueError:
        return odd_cell(data, rng)
    leaves: list[tuple[Any, Any]] = []
    stack: list[Any] = [blob]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
        for k, v in items:
            if isinstance(v, (dict, list)):
                stack.append(v)
            if isinstance(v, (int, float, str)) and k not in ("mark",):
                leaves.append((node, k))
    if not leaves:
        return odd_cell(data, rng)
    node, key = rng.choice(leaves)
    value = rng.choice([2**63, -(2**63), -1, 10**6, 10**30, "x", None, [], {}, "9" * 5000])
    node[key] = value
    text = json.dumps(blob, separators=(",", ":"))
    for i in range(len(pieces)):
        set_cell(pkg, "State", f"A{i + 2}", None)
    for i in range(0, len(text), 30_000):
        set_cell(pkg, "State", f"A{i // 30_000 + 2}", text[i:i + 30_000])
    return pkg.write(), f"State blob: {key!r} = {str(value)[:30]!r}"


def merge_cells(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A merged range over cells of one sheet (a step may write into it)."""
    pkg = Package.read(data)
    sheet = rng.choice(list(pkg.sheets))
    cells = cells_with_values(pkg, sheet) or ["A1"]
    ref = rng.choice(cells)
    col, row = re.match(r"([A-Z]+)([0-9]+)", ref).groups()  # type: ignore[union-attr]
    last = f"{chr(min(ord(col[-1]) + rng.randrange(0, 3), ord('Z')))}{int(row) + rng.randrange(1, 4)}"
    first = f"{col}{max(1, int(row) - rng.randrange(0, 2))}"
    member = pkg.sheets[sheet]
    xml = pkg.members[member]
    merge = f'<mergeCell ref="{first}:{last}"/>'.encode()
    if b"</mergeCells>" in xml:
        xml = xml.replace(b"</mergeCells>", merge + b"</mergeCells>", 1)
    else:
        xml = xml.replace(b"</sheetData>", b"</sheetData><mergeCells count=\"1\">" + merge + b"</mergeCells>", 1)
    pkg.members[member] = xml
    return pkg.write(), f"merge {sheet}!{first}:{last}"


def formula_cell(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    pkg = Package.read(data)
    sheet = rng.choice(list(pkg.sheets))
    cells = cells_with_values(pkg, sheet)
    if not cells:
        return data, "nothing"
    ref = rng.choice(cells)
    value = rng.choice(["=1/0", "=NA()", "=A1", "=TRUE()", '="x"', "=" + "(" * 500 + "1" + ")" * 500])
    set_cell(pkg, sheet, ref, value)
    return pkg.write(), f"{sheet}!{ref} = {value[:30]!r}"


MUTATIONS: tuple[tuple[str, Callable[[bytes, random.Random], tuple[bytes, str]], int], ...] = (
    ("flip", flip_bit, 2), ("xml", break_xml, 1), ("cell", odd_cell, 5), ("state", state_edit, 3),
    ("merge", merge_cells, 2), ("formula", formula_cell, 1),
)


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    kinds = [m for m in MUTATIONS for _ in range(m[2])]
    name, fn, _ = rng.choice(kinds)
    out, what = fn(data, rng)
    return out, f"{name}: {what}"


# ---------------------------------------------------------------------------- the runs


_BASES: dict[str, bytes] = {}


def base_tracker(system_id: str, *, resolved: bool = True) -> bytes:
    """The example battle's tracker of ``system_id`` (built once a process), with its first
    step resolved (so that undo and end have something to work on), or not."""
    key = f"{system_id}:{resolved}"
    if key not in _BASES:
        import yaml

        from sheetsync.app.workbook_cli import run_workbook, system_tracker_from, tracker_from
        from sheetsync.core.registry import find_system

        system = find_system(system_id)
        battle = system.load(yaml.safe_load(system.example_data()))
        with tempfile.TemporaryDirectory() as tmp:
            book = Path(tmp) / f"{system_id}.xlsx"
            if system_id == "bbn":
                tracker_from(book, battle)
            else:
                system_tracker_from(book, system, battle)
            if resolved:
                run_workbook("resolve", book)
            _BASES[key] = book.read_bytes()
    return _BASES[key]


@dataclass
class Outcome:
    system: str
    case: int
    damage: str
    command: str
    kind: str  # "ok", "refused" or "crash"
    detail: str = ""


class Hang(Exception):
    """A command still running after the case's time limit."""


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`Hang` in the command after ``seconds`` (main thread, POSIX only)."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def hang(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_case(system_id: str, case: int, seed: int = 26, workdir: Path | None = None,
             timeout: float | None = None) -> Outcome:
    """Case ``case`` of ``system_id``: its damage, then its command (cases take the commands
    in turn, so any run of len(COMMANDS) cases runs every one).  A command still running
    after ``timeout`` seconds is a crash (a hang)."""
    from typer.testing import CliRunner

    from sheetsync.app.cli import app
    from sheetsync.core.errors import SheetSyncError

    rng = random.Random(f"{seed}:{system_id}:{case}")
    command = COMMANDS[case % len(COMMANDS)]
    data, damage = mutate(base_tracker(system_id), rng)
    own = workdir is None
    folder = Path(tempfile.mkdtemp()) if own else workdir
    assert folder is not None
    try:
        book = folder / f"case{case}.xlsx"
        book.write_bytes(data)
        bak = book.with_name(book.name + ".bak")
        bak.write_bytes(b"the previous copy")
        with _time_limit(timeout):
            out = CliRunner().invoke(app, [command[0], str(book), *command[1:]])
        exc = out.exception
        unchanged = book.read_bytes() == data and bak.read_bytes() == b"the previous copy"
        if exc is None or isinstance(exc, SystemExit):
            if out.exit_code not in (0, 1, 2):
                return Outcome(system_id, case, damage, command[0], "crash", f"exit code {out.exit_code}")
            if command[0] in READ_ONLY and not unchanged:
                return Outcome(system_id, case, damage, command[0], "crash", "a read-only command changed the file")
            if out.exit_code != 0 and not unchanged:
                return Outcome(system_id, case, damage, command[0], "crash", "refused, but the file changed")
            return Outcome(system_id, case, damage, command[0], "ok" if out.exit_code == 0 else "refused")
        if isinstance(exc, SheetSyncError):
            if not unchanged:
                return Outcome(system_id, case, damage, command[0], "crash",
                               f"refused ({exc}), but the file or its .bak changed")
            return Outcome(system_id, case, damage, command[0], "refused", f"{type(exc).__name__}: {exc}"[:300])
        if isinstance(exc, Hang):
            return Outcome(system_id, case, damage, command[0], "crash", f"Hang: {exc}")
        tb = traceback.extract_tb(exc.__traceback__)
        at = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
        return Outcome(system_id, case, damage, command[0], "crash", f"{type(exc).__name__} at {at}: {str(exc)[:200]}")
    finally:
        if own:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            for name in (f"case{case}.xlsx", f"case{case}.xlsx.bak"):
                (folder / name).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--cases", type=int, default=2000, help="cases per system (default 2000)")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated system ids")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--start", type=int, default=0, help="first case number")
    parser.add_argument("--show", action="store_true", help="print every crash as it happens")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a command may run (a hang is a crash)")
    args = parser.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    crashes: dict[str, list[Outcome]] = {s: [] for s in systems}
    kinds: dict[str, Counter[str]] = {s: Counter() for s in systems}
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for system_id in systems:
            for case in range(args.start, args.start + args.cases):
                outcome = run_case(system_id, case, args.seed, Path(tmp), args.timeout)
                kinds[system_id][outcome.kind] += 1
                if outcome.kind == "crash":
                    crashes[system_id].append(outcome)
                    if args.show:
                        print(f"{system_id} case {case} [{outcome.command}] {outcome.damage}: {outcome.detail}",
                              flush=True)
    print(f"{'system':<9} {'cases':>6} {'ok':>6} {'refused':>8} {'crashes':>8}")
    for system_id in systems:
        k = kinds[system_id]
        print(f"{system_id:<9} {sum(k.values()):>6} {k['ok']:>6} {k['refused']:>8} {k['crash']:>8}")
    causes = Counter(o.detail.split(":")[0] for s in systems for o in crashes[s])
    for cause, n in causes.most_common():
        print(f"  {n:>5}  {cause}")
    print(f"{time.perf_counter() - began:.0f} s")
    return 1 if any(crashes.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
