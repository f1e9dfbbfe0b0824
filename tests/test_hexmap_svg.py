"""The hex map as SVG (``render_map_svg``, ``sheetsync map --svg``), drawn with the standard
library so the web page can show it under Pyodide, where there is no Pillow: the same
hexes where grid.py puts them (H2), impassable hexes shaded (5.1), each unit's box in its
side's colour (H1), reduced value lines in red and the casualty bar (H10), destroyed units
off the map (H9)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from PIL import Image

from sheetsync.app.cli import main
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.picture import (
    BAR_FILL,
    IMPASSABLE_FILL,
    PASSABLE_FILL,
    REDUCED_TEXT,
    map_geometry,
    render_map,
    render_map_svg,
    side_colours,
)
from sheetsync.systems.hexwar.rules import Battle, example_battle_data

NS = "{http://www.w3.org/2000/svg}"
SIZE = 60


def _battle(units: list[dict[str, object]] | None = None, impassable: tuple[str, ...] = ("0403",)) -> Battle:
    if units is None:
        units = [{"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0202"},
                 {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"}]
    return load_battle({"system": "hexwar", "seed": 7, "map": {"columns": 8, "rows": 6,
                                                               "impassable": list(impassable)},
                        "units": units}, "test")


def _svg(battle: Battle) -> ET.Element:
    return ET.fromstring(render_map_svg(battle, hex_size=SIZE))


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def _texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{NS}text")]


def _rects(root: ET.Element, fill: tuple[int, int, int], stroke: str | None = None) -> list[ET.Element]:
    """The rectangles of one fill (with ``stroke``, of that stroke width only: unit boxes have 2)."""
    return [r for r in root.iter(f"{NS}rect")
            if r.get("fill") == _hex(fill) and (stroke is None or r.get("stroke-width") == stroke)]


def test_h2_svg_has_every_hex_at_the_pngs_corners_and_the_pngs_size() -> None:
    battle = _battle()
    root = _svg(battle)
    polygons = list(root.iter(f"{NS}polygon"))
    assert len(polygons) == 8 * 6
    geo = map_geometry(battle, hex_size=SIZE)
    first = [tuple(map(float, p.split(","))) for p in polygons[0].get("points", "").split()]
    assert first == [pytest.approx((round(x, 1), round(y, 1)), abs=0.06) for x, y in geo.corners("0101")]
    png = render_map(battle, hex_size=SIZE)
    assert (int(root.get("width", 0)), round(float(root.get("height", 0)))) == png.size


def test_5_1_impassable_hexes_are_shaded() -> None:
    root = _svg(_battle(impassable=("0403", "0404")))
    fills = [p.get("fill") for p in root.iter(f"{NS}polygon")]
    assert fills.count(_hex(IMPASSABLE_FILL)) == 2
    assert fills.count(_hex(PASSABLE_FILL)) == 8 * 6 - 2


def test_h1_each_unit_is_a_box_in_its_sides_colour_inside_its_hex() -> None:
    battle = _battle()
    root = _svg(battle)
    geo = map_geometry(battle, hex_size=SIZE)
    for name, side, hex_id in (("Sun Knights", "Party", "0202"), ("1st Fist", "Enemy", "0605")):
        (box,) = _rects(root, side_colours(battle)[side], stroke="2")
        cx, cy = geo.center(hex_id)
        x, y = float(box.get("x", 0)), float(box.get("y", 0))
        w, h = float(box.get("width", 0)), float(box.get("height", 0))
        assert x < cx < x + w and y < cy < y + h
        assert name in _texts(root)


def test_h10_reduced_values_are_red_and_the_bar_fills_with_casualties() -> None:
    units: list[dict[str, object]] = [
        {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605", "casualties": 59},
        {"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0202", "casualties": 20}]
    root = _svg(_battle(units))
    red = [t.text for t in root.iter(f"{NS}text") if t.get("fill") == _hex(REDUCED_TEXT)]
    assert [(t or "").replace(" ", "") for t in red] == ["2-2-1-2(1)"]  # 6.2.2: at 59% a 4 counts as 2
    bars = sorted(float(r.get("width", 0)) for r in _rects(root, BAR_FILL))
    assert len(bars) == 2 and bars[1] / bars[0] == pytest.approx(59 / 20, rel=0.01)
    assert "59%" in _texts(root) and "20%" in _texts(root)


def test_h9_a_destroyed_unit_is_not_drawn_and_the_legend_lists_it() -> None:
    units: list[dict[str, object]] = [
        {"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0303", "casualties": 106,
         "destroyed_turn": 1, "destroyed_by": ["1st Fist"]},
        {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"}]
    root = _svg(_battle(units))
    assert "Sun Knights" not in _texts(root)
    assert _rects(root, side_colours(_battle(units))["Party"], stroke="2") == []
    assert any("Destroyed, off the map (H9): Sun Knights" in t for t in _texts(root))


def test_names_with_markup_characters_are_escaped() -> None:
    units: list[dict[str, object]] = [
        {"name": "Knights <of> & \"Sun\"", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0202"},
        {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"}]
    root = _svg(_battle(units))  # parses: the name is escaped
    assert 'Knights <of> & "Sun"' in " ".join(_texts(root))


def test_the_svg_is_drawn_without_pillow() -> None:
    """Under Pyodide there is no Pillow: the SVG needs only the standard library."""
    code = ("import sys; sys.modules['PIL'] = None\nimport yaml\n"
            "from sheetsync.systems.hexwar.picture import render_map_svg\n"
            "from sheetsync.systems.hexwar.files.loader import load_battle\n"
            "from sheetsync.systems.hexwar.rules import example_battle_data\n"
            "svg = render_map_svg(load_battle(yaml.safe_load(example_battle_data()), 'x'))\n"
            "assert 'PIL' not in [m.split('.')[0] for m in sys.modules if sys.modules[m] is not None]\n"
            "print(svg.count('<polygon'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    battle = load_battle(yaml.safe_load(example_battle_data()), "x")
    assert int(out.stdout) == battle.map.columns * battle.map.rows


def test_cli_map_svg_writes_the_svg_and_png_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    battle_file = tmp_path / "b.yaml"
    battle_file.write_text(example_battle_data())
    svg, png = tmp_path / "map.svg", tmp_path / "map.png"
    monkeypatch.setattr(sys, "argv", ["sheetsync", "map", str(battle_file), "--svg", str(svg), "--png", str(png),
                                      "--hex-size", "40"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    out = capsys.readouterr().out
    assert f"written to {svg} and {png}" in " ".join(out.split())
    root = ET.parse(svg).getroot()
    with Image.open(png) as image:
        assert (int(root.get("width", 0)), round(float(root.get("height", 0)))) == image.size


def test_cli_map_without_a_picture_to_write_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    battle_file = tmp_path / "b.yaml"
    battle_file.write_text(example_battle_data())
    monkeypatch.setattr(sys, "argv", ["sheetsync", "map", str(battle_file)])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code not in (0, None)
    err = " ".join(capsys.readouterr().err.split())
    assert "--png map.png, --svg map.svg, or both" in err
    monkeypatch.setattr(sys, "argv", ["sheetsync", "map", str(battle_file), "--svg", str(tmp_path / "m.png")])
    with pytest.raises(SystemExit):
        main()
    assert "must end in .svg" in " ".join(capsys.readouterr().err.split())
    assert list(tmp_path.iterdir()) == [battle_file]
