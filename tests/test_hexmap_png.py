"""The picture of a hex battle's map (sheetsync.systems.hexwar.picture, ``sheetsync map``): the
hexes where grid.py puts them (H2), impassable hexes shaded (5.1), each unit's box in its
hex in its side's colour (H1), the casualty bar (H10), destroyed units off the map (H9),
the CLI, and Pillow imported only when a picture is drawn."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from sheetsync.app.cli import main
from sheetsync.core.errors import InputError
from sheetsync.systems.hexwar import picture as hexmap_png
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.picture import (
    BAR_FILL,
    IMPASSABLE_FILL,
    PASSABLE_FILL,
    font_note,
    legend_lines,
    map_geometry,
    render_map,
    save_map_png,
    side_colours,
)
from sheetsync.systems.hexwar.rules import Battle, example_battle_data, resolve_turn

ROOT = Path(__file__).resolve().parent.parent
SIZE = 60


def _battle(columns: int = 8, rows: int = 6, impassable: tuple[str, ...] = ("0403",),
            units: list[dict[str, Any]] | None = None) -> Battle:
    if units is None:
        units = [{"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0202"},
                 {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"}]
    return load_battle({"system": "hexwar", "seed": 7,
                        "map": {"columns": columns, "rows": rows, "impassable": list(impassable)},
                        "units": units}, "test")


def _pixels_near(image: Image.Image, centre: tuple[float, float], radius: float) -> Iterator[tuple[int, ...]]:
    """Every pixel within ``radius`` of ``centre``."""
    cx, cy = centre
    for y in range(math.floor(cy - radius), math.ceil(cy + radius) + 1):
        for x in range(math.floor(cx - radius), math.ceil(cx + radius) + 1):
            if (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2:
                yield image.getpixel((x, y))


def _count(image: Image.Image, battle: Battle, hex_id: str, colour: tuple[int, int, int]) -> int:
    centre = map_geometry(battle, hex_size=SIZE).center(hex_id)
    return sum(1 for p in _pixels_near(image, centre, 0.8 * SIZE) if p == colour)


# -- H2: the picture follows the map and grid.py ---------------------------------------------


def test_h2_image_size_follows_the_map() -> None:
    base = render_map(_battle(12, 10), hex_size=SIZE)
    wider = render_map(_battle(13, 10), hex_size=SIZE)
    taller = render_map(_battle(12, 11), hex_size=SIZE)
    assert base.mode == "RGB"
    # a column more adds 3/4 of a hex's width (1.5 size); a row more a hex's height (sqrt 3 size)
    assert wider.size[1] == base.size[1]
    assert abs(wider.size[0] - base.size[0] - 1.5 * SIZE) <= 1
    assert taller.size[0] == base.size[0]
    assert abs(taller.size[1] - base.size[1] - math.sqrt(3) * SIZE) <= 1
    # the geometry the picture uses fits inside it
    geo = map_geometry(_battle(12, 10), hex_size=SIZE)
    xs = [x for h in ("0101", "1210", "1201", "0110") for x, _ in geo.corners(h)]
    ys = [y for h in ("0101", "1210", "1201", "0110") for _, y in geo.corners(h)]
    assert min(xs) >= 0 and max(xs) <= base.size[0]
    assert min(ys) >= 0 and max(ys) <= base.size[1]


def test_h2_odd_columns_sit_half_a_hex_lower_and_neighbours_touch() -> None:
    """The centres come from grid.py's cube coordinates: each hex grid.py calls a neighbour
    is drawn exactly one hex height (sqrt 3 size) away, and no other hex is that close."""
    battle = _battle(7, 6)
    geo = map_geometry(battle, hex_size=SIZE)
    (x1, y1), (x2, y2) = geo.center("0101"), geo.center("0201")
    assert x2 - x1 == pytest.approx(1.5 * SIZE)
    assert y1 - y2 == pytest.approx(math.sqrt(3) * SIZE / 2)  # column 01 (odd) is lower
    assert geo.center("0102")[1] - y1 == pytest.approx(math.sqrt(3) * SIZE)
    grid = battle.map.grid
    for h in grid.hexes():
        near = set(grid.neighbours(h))
        assert len(near) >= 2
        for other in grid.hexes():
            if other == h:
                continue
            d = math.dist(geo.center(h), geo.center(other))
            if other in near:
                assert d == pytest.approx(math.sqrt(3) * SIZE), (h.id, other.id)
            else:
                assert d > math.sqrt(3) * SIZE * 1.1, (h.id, other.id)


def test_5_1_impassable_hex_centre_is_shaded_and_a_passable_one_is_not() -> None:
    battle = _battle(impassable=("0403", "0504"))
    image = render_map(battle, hex_size=SIZE)
    geo = map_geometry(battle, hex_size=SIZE)
    for hex_id in ("0403", "0504"):
        x, y = geo.center(hex_id)
        assert image.getpixel((round(x), round(y))) == IMPASSABLE_FILL, hex_id
    for hex_id in ("0303", "0404", "0101"):
        x, y = geo.center(hex_id)
        assert image.getpixel((round(x), round(y))) == PASSABLE_FILL, hex_id
    assert PASSABLE_FILL != IMPASSABLE_FILL


# -- H1, H4: unit boxes ------------------------------------------------------------------------


def test_h1_a_unit_box_is_drawn_in_its_hex_in_its_sides_colour() -> None:
    battle = _battle()
    colours = side_colours(battle)
    assert colours["Party"] != colours["Enemy"]
    image = render_map(battle, hex_size=SIZE)
    party, enemy = colours["Party"], colours["Enemy"]
    assert _count(image, battle, "0202", party) > SIZE * SIZE * 0.3
    assert _count(image, battle, "0202", enemy) == 0
    assert _count(image, battle, "0605", enemy) > SIZE * SIZE * 0.3
    assert _count(image, battle, "0605", party) == 0
    for empty in ("0302", "0201", "0505", "0101"):
        assert _count(image, battle, empty, party) == 0 and _count(image, battle, empty, enemy) == 0, empty


def test_h1_the_unit_moves_and_its_box_with_it() -> None:
    battle = _battle()
    moved = battle.model_copy(update={"units": (battle.units[0].model_copy(update={"hex": "0303"}), battle.units[1])})
    party = side_colours(battle)["Party"]
    image = render_map(moved, hex_size=SIZE)
    assert _count(image, moved, "0202", party) == 0
    assert _count(image, moved, "0303", party) > SIZE * SIZE * 0.3


def test_h4_two_units_in_one_hex_are_stacked_one_above_the_other() -> None:
    units = [{"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0303"},
             {"name": "First Archer Company", "side": "Party", "counter": "4 - 3 - 1 - 2(--)", "hex": "0303",
              "size": "company"},
             {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"}]
    battle = _battle(units=units)
    one = _battle(units=[units[0], units[2]])
    party = side_colours(battle)["Party"]
    image = render_map(battle, hex_size=SIZE)
    cx, cy = map_geometry(battle, hex_size=SIZE).center("0303")
    rows_with_colour = [y for y in range(round(cy - SIZE * 0.8), round(cy + SIZE * 0.8))
                        if any(image.getpixel((x, y)) == party for x in range(round(cx - SIZE * 0.6),
                                                                              round(cx + SIZE * 0.6)))]
    # two boxes: the coloured rows fall in two runs with a gap between them
    runs = 1 + sum(1 for a, b in zip(rows_with_colour, rows_with_colour[1:], strict=False) if b - a > 1)
    assert runs >= 2
    first_run_end = next(a for a, b in zip(rows_with_colour, rows_with_colour[1:], strict=False) if b - a > 1)
    assert rows_with_colour[0] < cy < rows_with_colour[-1]
    assert rows_with_colour[0] <= first_run_end < cy + SIZE * 0.1
    # both boxes stay inside the hex, and the stack differs from one box alone
    assert _count(image, battle, "0303", party) > 0
    assert _count(render_map(one, hex_size=SIZE), one, "0303", party) != _count(image, battle, "0303", party)


def test_h1_h10_the_value_line_is_in_the_texts_notation_and_shows_reduced_values() -> None:
    battle = _battle(units=[
        {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605", "casualties": 59},
        {"name": "Church Knights", "side": "Party", "counter": "4++ - 4 - 3 - 1", "hex": "0202"}])
    lines = hexmap_png._value_line(battle)
    # 6.2.2: at 59% a 4 counts as 2, and the reduced-range 2 as 1
    assert lines["1st Fist"] == ("2 - 2 - 1 - 2(1)", True)
    assert lines["Church Knights"] == ("4++ - 4 - 3 - 1", False)


# -- H10, H9: casualties -----------------------------------------------------------------------


def test_h10_the_casualty_bars_filled_width_grows_with_casualties() -> None:
    counts = []
    for casualties in (0, 10, 35, 60, 99):
        battle = _battle(units=[
            {"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0303",
             "casualties": casualties},
            {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"}])
        counts.append(_count(render_map(battle, hex_size=SIZE), battle, "0303", BAR_FILL))
    assert counts[0] == 0
    assert counts == sorted(counts) and len(set(counts)) == len(counts), counts
    # the filled width is proportional: 35% is about a third of 99%
    assert counts[2] / counts[4] == pytest.approx(35 / 99, abs=0.06)


def test_h9_a_destroyed_unit_is_not_drawn_and_the_legend_lists_it() -> None:
    battle = _battle(units=[
        {"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0303", "casualties": 106,
         "destroyed_turn": 1, "destroyed_by": ["1st Fist"]},
        {"name": "Human Footmen", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0202"},
        {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"}])
    image = render_map(battle, hex_size=SIZE)
    party = side_colours(battle)["Party"]
    assert _count(image, battle, "0303", party) == 0
    assert _count(image, battle, "0303", BAR_FILL) == 0
    assert _count(image, battle, "0202", party) > 0
    assert "Destroyed, off the map (H9): Sun Knights (Party, turn 1)" in legend_lines(battle)
    assert not any("Destroyed" in line for line in legend_lines(_battle()))


def test_the_example_after_turn_one_draws_every_live_unit_in_its_hex() -> None:
    after = resolve_turn(load_battle(yaml.safe_load(example_battle_data()), "example.yaml")).battle
    image = render_map(after, hex_size=SIZE)
    colours = side_colours(after)
    for unit in after.units:
        assert _count(image, after, unit.hex, colours[unit.side]) > 0, unit.name


def test_a_map_too_large_to_draw_is_refused_with_the_limit_and_a_size_that_fits() -> None:
    battle = _battle(99, 99, impassable=())
    with pytest.raises(InputError, match=r"99x99 map at 90 pixels .* past the limit of 40 million pixels; "
                                         r"use a hex size of \d+ or less"):
        render_map(battle, hex_size=90)
    with pytest.raises(InputError, match="too small to read"):
        render_map(_battle(), hex_size=10)


def test_without_dejavu_the_map_uses_pillows_font_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    assert font_note() is None  # fonts-dejavu-core is installed here (.ci/install-system-deps.sh)
    missing = Path("/nonexistent/DejaVuSans.ttf")
    monkeypatch.setattr(hexmap_png, "FONT_PATHS", {"regular": missing, "bold": missing})
    hexmap_png._font.cache_clear()
    try:
        note = font_note()
        assert note is not None and "fonts-dejavu-core" in note and str(missing) in note
        image = render_map(_battle(), hex_size=SIZE)
        assert _count(image, _battle(), "0202", side_colours(_battle())["Party"]) > 0
    finally:
        hexmap_png._font.cache_clear()


def test_save_map_png_writes_a_png_of_the_rendered_map(tmp_path: Path) -> None:
    battle = _battle()
    out = save_map_png(battle, tmp_path / "map.png", hex_size=SIZE)
    with Image.open(out) as png:
        assert png.format == "PNG"
        assert png.size == render_map(battle, hex_size=SIZE).size
    assert [p.name for p in tmp_path.iterdir()] == ["map.png"]  # no temporary file left


# -- the CLI -----------------------------------------------------------------------------------


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sheetsync", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_map_writes_a_valid_png(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    battle_file = tmp_path / "hex.yaml"
    battle_file.write_text(example_battle_data(), encoding="utf-8")
    png = tmp_path / "map.png"
    code, out, err = _run(monkeypatch, capsys, "map", str(battle_file), "--png", str(png), "--hex-size", "40")
    assert code == 0, err
    assert err == ""
    assert out == f"Map of turn 1 written to {png} (12x10 hexes, 10 units on the map).\n"
    with Image.open(png) as image:
        image.load()
        assert image.format == "PNG"
        battle = load_battle(yaml.safe_load(example_battle_data()), "example")
        assert image.size == render_map(battle, hex_size=40).size


def test_cli_map_refuses_a_battalion_battle_file_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from sheetsync.sheets.disk import example_path

    png = tmp_path / "map.png"
    code, out, err = _run(monkeypatch, capsys, "map", str(example_path()), "--png", str(png))
    assert code == 1 and out == ""
    assert err.startswith(f"error: {example_path()}: this is a battalion battle file")
    assert "hex wargame battles only (system: hexwar); nothing was written" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not png.exists()
    other = tmp_path / "exalted.json"
    other.write_text(json.dumps({"system": "exalted", "units": []}), encoding="utf-8")
    code, _, err = _run(monkeypatch, capsys, "map", str(other), "--png", str(png))
    assert code == 1
    assert err.startswith(f"error: {other}: this is a battle file of the 'exalted' rule system")
    assert not png.exists()


def test_cli_map_bad_input_names_the_problem_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load(example_battle_data())
    data["units"][0]["hex"] = "9999"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data), encoding="utf-8")
    png = tmp_path / "map.png"
    code, _, err = _run(monkeypatch, capsys, "map", str(bad), "--png", str(png))
    assert code == 1
    assert err.startswith("error: units[0].hex: '9999'") and "Traceback" not in err
    good = tmp_path / "good.yaml"
    good.write_text(example_battle_data(), encoding="utf-8")
    code, _, err = _run(monkeypatch, capsys, "map", str(good), "--png", str(tmp_path / "map.jpg"))
    assert code == 1
    assert err == f"error: {tmp_path / 'map.jpg'}: the picture is written as PNG, so its name must end in .png; " \
                  "nothing was written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "good.yaml"]


# -- cheap imports -----------------------------------------------------------------------------


def test_pillow_is_imported_only_when_a_map_is_drawn() -> None:
    code = ("import sys, json; import sheetsync.app.cli, sheetsync.systems.hexwar.picture as m; before = 'PIL' in sys.modules; "
            "import yaml; from sheetsync.systems.hexwar.rules import example_battle_data; "
            "from sheetsync.systems.hexwar.files.loader import load_battle; "
            "m.render_map(load_battle(yaml.safe_load(example_battle_data())), hex_size=20); "
            "print(json.dumps([before, 'PIL' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout) == [False, True]


def test_png_bytes_are_a_png() -> None:
    data = hexmap_png.render_map_png(_battle(), hex_size=SIZE)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == render_map(_battle(), hex_size=SIZE).size


@pytest.mark.parametrize("hex_size", [20, 33, 90])
@pytest.mark.parametrize("stack", [1, 2, 3, 4])
def test_h4_any_hex_size_and_stack_draws_every_box_in_its_hex(hex_size: int, stack: int) -> None:
    """Small hexes and crowded ones still draw each unit's box and casualty bar inside the hex."""
    units = [{"name": f"Company {i} of the Long-Named Regiment", "side": "Party", "counter": "4 - 3 - 1 - 2(--)",
              "hex": "0303", "size": "company", "casualties": 50} for i in range(stack)]
    units.append({"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0605"})
    battle = _battle(units=units)
    image = render_map(battle, hex_size=hex_size)
    geo = map_geometry(battle, hex_size=hex_size)
    party = side_colours(battle)["Party"]
    inside = list(_pixels_near(image, geo.center("0303"), 0.8 * hex_size))
    assert inside.count(party) > 0 and inside.count(BAR_FILL) >= stack
    assert not any(p == party for p in _pixels_near(image, geo.center("0302"), 0.5 * hex_size))
