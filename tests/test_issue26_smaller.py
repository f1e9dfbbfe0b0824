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
from sheetsync.app.files import example_path
from sheetsync.app.report import md_escape

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
        return (ROOT / "sheetsync" / "rules" / "hexwar" / "example.yaml").read_text(encoding="utf-8")
    from sheetsync.rules.exalted.system import SYSTEM

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
