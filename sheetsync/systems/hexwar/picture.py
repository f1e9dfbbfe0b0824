"""A picture of a hex battle's map (``sheetsync map FILE --png map.png``, FILE a battle file
or a hex tracker workbook), drawn with Pillow.

What it shows (H1, H2, H9, H10):

- every hex of the map, flat-topped, odd columns half a hex lower, exactly as
  :mod:`sheetsync.systems.hexwar.rules.grid` numbers them: the pixel centre of a hex comes from the
  grid's own cube coordinates (:meth:`Hex.cube`), so two hexes the grid calls neighbours
  are always drawn side by side;
- each hex's ``CCRR`` id at its top, and impassable hexes (5.1) shaded;
- every unit as a NATO-style box in its side's colour (the first side listed in the battle
  file is friendly blue, the second hostile red, then green, yellow and others): the unit's
  name, its value line in the text's notation with its size mark (``II`` a battalion or
  squadron, ``I`` a company), and a casualty bar with the casualties in percent.  When
  casualties have lowered its values (6.2.2, H10) the value line shows the values it now
  fights with, in red;
- several units in one hex are stacked one above the other (two), or in two columns (more),
  each box shrinking its text to fit, closing up its value line (``4-3-1-2(--)``) in a
  narrow box, and shortening a name that still does not fit with "…";
- **destroyed units are not drawn**: at 100% casualties a unit is off the map (H9) and no
  longer holds its hex, so the legend lists it instead ("Destroyed, off the map (H9): ...");
- a legend: the sides' colours, the impassable shade, the casualty bar, the size marks, and
  the destroyed units.

The text is DejaVu Sans (Debian's ``fonts-dejavu-core``).  Without it, Pillow's own font is
used and :func:`font_note` says so.  Pillow is imported inside the functions, so importing
this module (or the CLI) stays cheap.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sheetsync.systems.hexwar.rules.aftermath import effective_values
from sheetsync.systems.hexwar.rules.counter import Counter
from sheetsync.systems.hexwar.rules.grid import Hex, parse_hex
from sheetsync.systems.hexwar.rules.models import Battle, Unit

if TYPE_CHECKING:
    from PIL import Image, ImageDraw, ImageFont

__all__ = [
    "BAR_FILL",
    "DEFAULT_HEX_SIZE",
    "FONT_PATHS",
    "IMPASSABLE_FILL",
    "PASSABLE_FILL",
    "SIDE_COLOURS",
    "MapGeometry",
    "font_note",
    "legend_lines",
    "map_geometry",
    "pillow_available",
    "render_map",
    "render_map_png",
    "render_map_svg",
    "save_map_png",
    "save_map_svg",
    "side_colours",
]

DEFAULT_HEX_SIZE = 90
"""Pixels from a hex's centre to its corners."""
MIN_FONT = 9
"""The smallest text drawn in a box, in pixels."""
MIN_HEX_SIZE = 20
MAX_PIXELS = 40_000_000
"""The largest map drawn, in pixels (about 120 MB while it is drawn); a larger one is refused."""

FONT_PATHS = {
    "regular": Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    "bold": Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
}
"""DejaVu Sans from Debian's fonts-dejavu-core (``.ci/install-system-deps.sh`` installs it)."""

BACKGROUND = (255, 255, 255)
PASSABLE_FILL = (246, 242, 230)
IMPASSABLE_FILL = (128, 116, 102)
"""5.1: the shade of an impassable hex (mountains)."""
HEX_LINE = (160, 154, 140)
ID_TEXT = (110, 104, 92)
ID_TEXT_IMPASSABLE = (235, 230, 220)
TEXT = (0, 0, 0)
REDUCED_TEXT = (170, 0, 0)
FRAME = (20, 20, 20)
BAR_TRACK = (255, 255, 255)
BAR_FILL = (150, 20, 30)
"""The filled part of a casualty bar (a colour nothing else uses)."""

SIDE_COLOURS = (
    (128, 224, 255),  # friendly (NATO crystal blue)
    (255, 128, 128),  # hostile (NATO salmon)
    (170, 255, 170),  # neutral (NATO bamboo green)
    (255, 255, 128),  # unknown (NATO light yellow)
    (210, 180, 255),
    (255, 200, 130),
    (200, 200, 200),
)
"""Box colours by side, in the order the sides are first listed; past seven they repeat."""

SQRT3 = math.sqrt(3.0)


def side_colours(battle: Battle) -> dict[str, tuple[int, int, int]]:
    """Each side's box colour: the first side listed is friendly blue, the second hostile red."""
    return {side: SIDE_COLOURS[i % len(SIDE_COLOURS)] for i, side in enumerate(battle.sides)}


@dataclass(frozen=True)
class MapGeometry:
    """Where each hex of a ``columns`` × ``rows`` map is drawn, in image pixels.

    H2: flat-topped hexes of ``size`` pixels (centre to corner).  A hex's centre is the
    standard flat-top placement of its cube coordinates from :meth:`Hex.cube` (``x = 3/2
    size q``, ``y = sqrt 3 size (r + q/2)``), shifted so the map's top-left corner sits at
    (``left``, ``top``)."""

    columns: int
    rows: int
    size: float
    left: float
    top: float

    def _raw(self, h: Hex) -> tuple[float, float]:
        c = h.cube()
        return 1.5 * self.size * c.q, SQRT3 * self.size * (c.r + c.q / 2)

    @property
    def _offset(self) -> tuple[float, float]:
        # the leftmost centre is column 1's; the topmost is row 1 of an even column (odd
        # columns sit lower), or of column 1 on a map one column wide
        x1, y1 = self._raw(Hex(1, 1))
        y_top = min(y1, self._raw(Hex(2, 1))[1]) if self.columns > 1 else y1
        return self.left + self.size - x1, self.top + SQRT3 * self.size / 2 - y_top

    def center(self, h: Hex | str) -> tuple[float, float]:
        """The pixel centre of hex ``h`` (a :class:`Hex` or its ``CCRR`` id)."""
        hx = parse_hex(h) if isinstance(h, str) else h
        x, y = self._raw(hx)
        ox, oy = self._offset
        return x + ox, y + oy

    def corners(self, h: Hex | str) -> list[tuple[float, float]]:
        """The six corners of hex ``h``, flat-topped (a corner at 0°, then every 60°)."""
        cx, cy = self.center(h)
        return [(cx + self.size * math.cos(math.radians(60 * i)), cy + self.size * math.sin(math.radians(60 * i)))
                for i in range(6)]

    @property
    def width(self) -> float:
        """The map's width in pixels: one hex, then 3/4 of a hex for every further column."""
        return self.size * (2 + 1.5 * (self.columns - 1))

    @property
    def height(self) -> float:
        """The map's height in pixels: a hex height per row, and half a hex more when an odd
        column sits lower than an even one."""
        return SQRT3 * self.size * (self.rows + (0.5 if self.columns > 1 else 0.0))


@dataclass(frozen=True)
class _Layout:
    geometry: MapGeometry
    margin: int
    header: int
    width: int
    map_bottom: int


def _layout(battle: Battle, hex_size: int) -> _Layout:
    margin = max(8, round(hex_size * 0.25))
    header = max(24, round(hex_size * 0.5))
    geo = MapGeometry(battle.map.columns, battle.map.rows, float(hex_size), float(margin), float(margin + header))
    width = max(2 * margin + math.ceil(geo.width), 480)
    return _Layout(geo, margin, header, width, margin + header + math.ceil(geo.height))


def map_geometry(battle: Battle, *, hex_size: int = DEFAULT_HEX_SIZE) -> MapGeometry:
    """The geometry :func:`render_map` draws ``battle``'s map with."""
    return _layout(battle, hex_size).geometry


# -- fonts -----------------------------------------------------------------------------------


def font_note() -> str | None:
    """A note when DejaVu Sans is missing (Pillow's own font is used then), else None."""
    if FONT_PATHS["regular"].is_file():
        return None
    return (f"DejaVu Sans was not found at {FONT_PATHS['regular']}, so the map uses Pillow's plainer built-in font; "
            "install it with: sudo apt-get install fonts-dejavu-core")


@cache
def _font(kind: str, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    for path in (FONT_PATHS.get(kind), FONT_PATHS["regular"]):
        if path is not None and path.is_file():
            return ImageFont.truetype(str(path), size)
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow 10.0 has one bitmap size only
        return ImageFont.load_default()


def _text_width(draw: ImageDraw.ImageDraw, text: str, font: Any) -> float:
    return float(draw.textlength(text, font=font))


def _fit(draw: ImageDraw.ImageDraw, text: str, kind: str, size: int, width: float,
         min_size: int) -> tuple[str, Any]:
    """``text`` in the largest font from ``size`` down to ``min_size`` that fits ``width``,
    shortened with "…" if even the smallest does not."""
    for s in range(size, min_size - 1, -1):
        font = _font(kind, s)
        if _text_width(draw, text, font) <= width:
            return text, font
    font = _font(kind, min_size)
    while len(text) > 1 and _text_width(draw, text + "…", font) > width:
        text = text[:-1].rstrip()
    return text + "…", font


def _wrap_two(draw: ImageDraw.ImageDraw, text: str, font: Any, width: float) -> list[str] | None:
    """``text`` split at a space into two lines that each fit ``width``, or None."""
    words = text.split()
    for cut in range(len(words) - 1, 0, -1):
        first, second = " ".join(words[:cut]), " ".join(words[cut:])
        if _text_width(draw, first, font) <= width and _text_width(draw, second, font) <= width:
            return [first, second]
    return None


def _name_lines(draw: ImageDraw.ImageDraw, name: str, size: int, width: float, roomy: bool) -> tuple[list[str], Any]:
    """A unit's name in the largest bold font from ``size`` down to the smallest legible
    one that fits ``width``: on one line, or on two when the box has room; shortened with
    "…" when nothing fits."""
    for s in range(size, MIN_FONT - 1, -1):
        font = _font("bold", s)
        if _text_width(draw, name, font) <= width:
            return [name], font
        if roomy:
            two = _wrap_two(draw, name, font, width)
            if two is not None:
                return two, font
    text, font = _fit(draw, name, "bold", MIN_FONT, width, MIN_FONT)
    return [text], font


# -- what a box says ---------------------------------------------------------------------------


def _value_line(battle: Battle) -> dict[str, tuple[str, bool]]:
    """H1, 6.2.2, H10: each unit's value line in the text's notation, and whether
    casualties have lowered it (the line then shows the values it fights with now)."""
    out: dict[str, tuple[str, bool]] = {}
    for unit, v in zip(battle.units, effective_values(battle), strict=True):
        now = Counter(attack=v.attack, charge=v.charge, defense=v.defense, movement=v.movement, range=v.range,
                      range_kind=v.range_kind, reduced_attack=v.reduced_attack)
        out[unit.name] = (str(now), now != unit.counter)
    return out


def _echelon(unit: Unit) -> str:
    """H1: the NATO size mark: ``I`` a company (half a battalion), ``II`` a battalion or
    squadron, ``III`` two battalions or more."""
    return "I" if unit.size < 1 else ("II" if unit.size < 2 else "III")


def legend_lines(battle: Battle) -> list[str]:
    """The legend's text lines after the swatches: the casualty bar and size marks, and the
    destroyed units (H9: off the map, so not drawn) with the turn they fell."""
    lines = ["Bar: casualties in percent; a red value line is lowered by casualties (6.2.2). "
             "II battalion or squadron, I company."]
    gone = [u for u in battle.units if u.destroyed]
    if gone:
        lines.append("Destroyed, off the map (H9): " + ", ".join(
            f"{u.name} ({u.side}{f', turn {u.destroyed_turn}' if u.destroyed_turn else ''})" for u in gone))
    off = [u for u in battle.units if not u.destroyed and not battle.map.grid.contains(parse_hex(u.hex))]
    if off:
        lines.append("Not on this map: " + ", ".join(f"{u.name} ({u.hex})" for u in off))
    return lines


# -- drawing ---------------------------------------------------------------------------------


def _draw_box(draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], unit: Unit,
              colour: tuple[int, int, int], value: tuple[str, bool], base: int, roomy: bool) -> None:
    """One NATO-style unit box: frame in the side's colour, name, value line with size
    mark, and the casualty bar (H1, H10)."""
    x0, y0, x1, y1 = (round(v) for v in box)
    draw.rectangle((x0, y0, x1, y1), fill=colour, outline=FRAME, width=2)
    pad = max(2, round(base * 0.3))
    inner = x1 - x0 - 2 * pad
    height = y1 - y0
    size = max(MIN_FONT, min(base, round(height / (5.2 if roomy else 3.6))))
    small = max(MIN_FONT, size - 1)
    # the casualty bar: the bottom line of the box
    label = f"{min(unit.casualties, 999)}%"
    label_font = _font("regular", small)
    bar_h = max(4, round(size * 0.55))
    label_w = _text_width(draw, "100%", label_font) + pad
    show_label = inner - label_w >= inner * 0.4  # a box too narrow keeps the whole width for the bar
    by1 = y1 - pad - 1
    by0 = by1 - bar_h
    bx0 = x0 + pad + 1
    bx1 = max(bx0 + 3, round(x1 - pad - label_w) if show_label else x1 - pad - 1)
    draw.rectangle((bx0, by0, bx1, by1), fill=BAR_TRACK, outline=FRAME, width=1)
    filled = round((bx1 - bx0 - 1) * min(unit.casualties, 100) / 100)
    if filled > 0:
        draw.rectangle((bx0 + 1, by0 + 1, bx0 + filled, by1 - 1), fill=BAR_FILL)
    if show_label:
        draw.text((x1 - pad, (by0 + by1) / 2), label, font=label_font, fill=TEXT, anchor="rm")
    # the value line and size mark, above the bar
    mark = _echelon(unit)
    mark_font = _font("bold", small)
    mark_w = _text_width(draw, mark, mark_font)
    # the name, at the top, on two lines when there is room for them
    top = y0 + pad
    lines, name_font = _name_lines(draw, unit.name, size, inner, roomy)
    step = round(size * 1.2)
    for i, text in enumerate(lines):
        draw.text((x0 + pad + 1, top + i * step), text, font=name_font, fill=TEXT, anchor="lt")
    # the value line and size mark: above the bar, or midway down a box with room to spare
    line, reduced = value
    vy = by0 - pad
    if roomy:
        vy = max(min(vy, round((top + len(lines) * step + by0) / 2 + size * 0.45)), top + len(lines) * step + size)
    # in a narrow box the line closes up ("4-3-1-2(--)"), then gives up the size mark
    for candidate, room in ((line, inner - mark_w - pad), (line.replace(" - ", "-"), inner - mark_w - pad),
                            (line.replace(" - ", "-"), inner)):
        text, font = _fit(draw, candidate, "regular", size + (2 if roomy else 0), room, MIN_FONT)
        if text == candidate:
            break
    draw.text((x0 + pad + 1, vy), text, font=font, fill=REDUCED_TEXT if reduced else TEXT, anchor="ls")
    if room < inner:
        draw.text((x1 - pad, vy), mark, font=mark_font, fill=TEXT, anchor="rs")


def _boxes(geo: MapGeometry, hex_id: str, units: Sequence[Unit]) -> list[tuple[Unit, tuple[float, float, float, float]]]:
    """H4: where the units in one hex are drawn: one box, two stacked, or more in two columns."""
    cx, cy = geo.center(hex_id)
    s = geo.size
    half_w, top, bottom = 0.68 * s, cy - 0.52 * s, cy + 0.56 * s
    cols = 1 if len(units) <= 2 else 2
    rows = math.ceil(len(units) / cols)
    gap = max(2.0, s * 0.04)
    cell_w = (2 * half_w - gap * (cols - 1)) / cols
    cell_h = (bottom - top - gap * (rows - 1)) / rows
    out = []
    for i, unit in enumerate(units):
        r, c = divmod(i, cols)
        x0 = cx - half_w + c * (cell_w + gap)
        y0 = top + r * (cell_h + gap)
        out.append((unit, (x0, y0, x0 + cell_w, y0 + cell_h)))
    return out


def _draw_units(draw: ImageDraw.ImageDraw, geo: MapGeometry, hex_id: str, units: Sequence[Unit],
                colours: dict[str, tuple[int, int, int]], values: dict[str, tuple[str, bool]]) -> None:
    """H4: the units in one hex: one box, two stacked, or more in two columns."""
    base = max(8, round(geo.size * 0.15))
    for unit, box in _boxes(geo, hex_id, units):
        _draw_box(draw, box, unit, colours[unit.side], values[unit.name], base, roomy=len(units) == 1)


def _draw_legend(draw: ImageDraw.ImageDraw, battle: Battle, lay: _Layout, colours: dict[str, tuple[int, int, int]],
                 draw_it: bool) -> int:
    """The legend under the map; returns the height it needs (drawn only with ``draw_it``)."""
    s = lay.geometry.size
    size = max(9, round(s * 0.16))
    font = _font("regular", size)
    sw = round(size * 1.3)
    x, y = lay.margin, lay.map_bottom + lay.margin
    line_h = round(size * 1.8)
    items: list[tuple[tuple[int, int, int], str]] = [(c, side) for side, c in colours.items()]
    items.append((IMPASSABLE_FILL, "Impassable (5.1)"))
    for colour, label in items:
        w = sw + 6 + _text_width(draw, label, font) + size * 2
        if x + w > lay.width - lay.margin and x > lay.margin:
            x, y = lay.margin, y + line_h
        if draw_it:
            draw.rectangle((x, y, x + sw, y + sw), fill=colour, outline=FRAME, width=1)
            draw.text((x + sw + 6, y + sw / 2), label, font=font, fill=TEXT, anchor="lm")
        x += round(w)
    y += line_h
    for text in legend_lines(battle):
        for line in _wrap(draw, text, font, lay.width - 2 * lay.margin):
            if draw_it:
                draw.text((lay.margin, y), line, font=font, fill=TEXT, anchor="lt")
            y += round(size * 1.4)
    return y + lay.margin - lay.map_bottom


def _wrap(draw: ImageDraw.ImageDraw, text: str, font: Any, width: float) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        trial = f"{current} {word}".strip()
        if current and _text_width(draw, trial, font) > width:
            lines.append(current)
            current = word
        else:
            current = trial
    return [*lines, current] if current else lines


def _units_by_hex(battle: Battle) -> dict[str, list[Unit]]:
    """H9: the units on the map by hex id, in the battle's order; destroyed ones are off it."""
    by_hex: dict[str, list[Unit]] = {}
    for u in battle.units:
        if not u.destroyed and battle.map.grid.contains(parse_hex(u.hex)):
            by_hex.setdefault(parse_hex(u.hex).id, []).append(u)
    return by_hex


def _title(battle: Battle) -> str:
    done = battle.turn - 1
    after = f", after turn {done}" if done >= 1 else ""
    return (f"Hex map {battle.map.columns}x{battle.map.rows}: turn {battle.turn}{after} "
            f"({sum(1 for u in battle.units if not u.destroyed)} units on the map)")


def _pixels(battle: Battle, hex_size: int) -> tuple[int, int]:
    lay = _layout(battle, hex_size)
    return lay.width, lay.map_bottom


def _check_size(battle: Battle, hex_size: int) -> None:
    """Refuse a hex size too small to read, or a picture too large to hold in memory (the
    limit is named, with the largest hex size that fits)."""
    from sheetsync.core.errors import InputError, Problem

    if hex_size < MIN_HEX_SIZE:
        raise InputError([Problem("hex size", f"{hex_size} pixels is too small to read; use {MIN_HEX_SIZE} or more")])
    w, h = _pixels(battle, hex_size)
    if w * h <= MAX_PIXELS:
        return
    fits = next((s for s in range(hex_size - 1, MIN_HEX_SIZE - 1, -1)
                 if math.prod(_pixels(battle, s)) <= MAX_PIXELS), None)
    hint = f"use a hex size of {fits} or less" if fits else "no hex size that can be read fits"
    raise InputError([Problem("hex size", f"a {battle.map.columns}x{battle.map.rows} map at {hex_size} pixels a hex "
                                          f"would be {w}x{h} pixels, past the limit of {MAX_PIXELS // 10**6} million "
                                          f"pixels; {hint}")])


def render_map(battle: Battle, *, hex_size: int = DEFAULT_HEX_SIZE) -> Image.Image:
    """H1, H2, H9, H10: the battle's map as an RGB image (see the module docstring): the
    hexes with their ids, impassable hexes shaded, each unit's box in its hex, a legend.
    ``hex_size`` is the pixels from a hex's centre to its corners.  Raises
    :class:`InputError` for a hex size under 20 pixels or a map past :data:`MAX_PIXELS`."""
    from PIL import Image, ImageDraw

    _check_size(battle, hex_size)
    lay = _layout(battle, hex_size)
    geo = lay.geometry
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    colours = side_colours(battle)
    legend_h = _draw_legend(probe, battle, lay, colours, draw_it=False)
    image = Image.new("RGB", (lay.width, lay.map_bottom + legend_h), BACKGROUND)
    draw = ImageDraw.Draw(image)
    title_font = _font("bold", max(11, round(hex_size * 0.2)))
    draw.text((lay.margin, lay.margin + lay.header / 2), _title(battle), font=title_font, fill=TEXT, anchor="lm")

    impassable = battle.map.grid.impassable
    id_font = _font("regular", max(8, round(hex_size * 0.15)))
    line_w = max(1, round(hex_size / 40))
    for h in battle.map.grid.hexes():
        blocked = h in impassable
        draw.polygon(geo.corners(h), fill=IMPASSABLE_FILL if blocked else PASSABLE_FILL, outline=HEX_LINE,
                     width=line_w)
        cx, cy = geo.center(h)
        draw.text((cx, cy - 0.70 * hex_size), h.id, font=id_font, fill=ID_TEXT_IMPASSABLE if blocked else ID_TEXT,
                  anchor="mm")

    by_hex = _units_by_hex(battle)
    values = _value_line(battle)
    for hex_id, units in by_hex.items():
        _draw_units(draw, geo, hex_id, units, colours, values)
    _draw_legend(draw, battle, lay, colours, draw_it=True)
    return image


def render_map_png(battle: Battle, *, hex_size: int = DEFAULT_HEX_SIZE) -> bytes:
    """:func:`render_map` as PNG bytes."""
    buffer = io.BytesIO()
    render_map(battle, hex_size=hex_size).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def save_map_png(battle: Battle, path: Path | str, *, hex_size: int = DEFAULT_HEX_SIZE) -> Path:
    """Draw the map and write it to ``path`` as a PNG, atomically (a temporary file, then a
    rename: a failed write leaves the old picture as it was).  The picture is drawn whole
    before anything is written."""
    from sheetsync.sheets.disk import atomic_write_bytes

    path = Path(path)
    atomic_write_bytes(path, render_map_png(battle, hex_size=hex_size))
    return path


# -- the same map as SVG, with the standard library only ---------------------------------------

SVG_FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
"""The SVG's font family: DejaVu Sans where it is installed, as the PNG uses, else a sans serif."""
_EM = 0.6
"""The width of an average character of a sans serif, in ems (an estimate: the SVG has no
font to measure with, so a line that might overflow its box is squeezed to fit by the
browser through ``textLength``)."""


def pillow_available() -> bool:
    """Whether Pillow can be imported here (not under Pyodide's bare npm package): the PNG
    needs it, the SVG does not."""
    try:
        import PIL
    except ImportError:
        return False
    return PIL is not None


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def _svg_text(x: float, y: float, text: str, size: float, *, fill: tuple[int, int, int] = TEXT, bold: bool = False,
              anchor: str = "start", baseline: str = "alphabetic", room: float | None = None) -> str:
    """One ``<text>``; when ``room`` is given and the text's estimated width passes it, the
    browser squeezes it into ``room`` (``textLength``), so no line leaves its box."""
    from xml.sax.saxutils import escape

    fit = ""
    if room is not None and len(text) * size * _EM > room:
        fit = f' textLength="{room:.1f}" lengthAdjust="spacingAndGlyphs"'
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}"{weight} fill="{_hex(fill)}" '
            f'text-anchor="{anchor}" dominant-baseline="{baseline}"{fit}>{escape(text)}</text>')


def _svg_box(box: tuple[float, float, float, float], unit: Unit, colour: tuple[int, int, int],
             value: tuple[str, bool], base: int, roomy: bool) -> list[str]:
    """H1, H10: one unit's box, as :func:`_draw_box` draws it: the side's colour, the name,
    the value line (red when casualties lowered it) with its size mark, the casualty bar."""
    x0, y0, x1, y1 = box
    pad = max(2.0, base * 0.3)
    inner = x1 - x0 - 2 * pad
    size = max(MIN_FONT, min(base, round((y1 - y0) / (5.2 if roomy else 3.6))))
    small = max(MIN_FONT, size - 1)
    out = [f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" fill="{_hex(colour)}" '
           f'stroke="{_hex(FRAME)}" stroke-width="2"/>']
    bar_h = max(4, round(size * 0.55))
    label_w = 4 * small * _EM + pad
    show_label = inner - label_w >= inner * 0.4
    by1 = y1 - pad - 1
    by0 = by1 - bar_h
    bx0 = x0 + pad + 1
    bx1 = max(bx0 + 3, x1 - pad - label_w if show_label else x1 - pad - 1)
    filled = (bx1 - bx0) * min(unit.casualties, 100) / 100
    out.append(f'<rect x="{bx0:.1f}" y="{by0:.1f}" width="{bx1 - bx0:.1f}" height="{bar_h}" fill="{_hex(BAR_TRACK)}" '
               f'stroke="{_hex(FRAME)}" stroke-width="1"/>')
    if filled > 0:
        out.append(f'<rect x="{bx0:.1f}" y="{by0:.1f}" width="{filled:.1f}" height="{bar_h}" fill="{_hex(BAR_FILL)}"/>')
    if show_label:
        out.append(_svg_text(x1 - pad, (by0 + by1) / 2, f"{min(unit.casualties, 999)}%", small, anchor="end",
                             baseline="central"))
    step = round(size * 1.2)
    words = unit.name.split()
    lines = [unit.name]
    if roomy and len(unit.name) * size * _EM > inner and len(words) > 1:
        cut = max(range(1, len(words)), key=lambda i: -abs(len(" ".join(words[:i])) - len(" ".join(words[i:]))))
        lines = [" ".join(words[:cut]), " ".join(words[cut:])]
    for i, text in enumerate(lines):
        out.append(_svg_text(x0 + pad + 1, y0 + pad + i * step, text, size, bold=True, baseline="hanging", room=inner))
    line, reduced = value
    vy = by0 - pad
    if roomy:
        vy = max(min(vy, (y0 + pad + len(lines) * step + by0) / 2 + size * 0.45), y0 + pad + len(lines) * step + size)
    mark = _echelon(unit)
    mark_w = len(mark) * small * 0.75 + pad
    out.append(_svg_text(x0 + pad + 1, vy, line.replace(" - ", "-") if len(line) * size * _EM > inner - mark_w
                         else line, size, fill=REDUCED_TEXT if reduced else TEXT, room=inner - mark_w))
    out.append(_svg_text(x1 - pad, vy, mark, small, bold=True, anchor="end"))
    return out


def _svg_units(geo: MapGeometry, hex_id: str, units: Sequence[Unit], colours: dict[str, tuple[int, int, int]],
               values: dict[str, tuple[str, bool]]) -> list[str]:
    """H4: the units in one hex, placed as :func:`_draw_units` places them."""
    base = max(8, round(geo.size * 0.15))
    out: list[str] = []
    for unit, box in _boxes(geo, hex_id, units):
        out += _svg_box(box, unit, colours[unit.side], values[unit.name], base, roomy=len(units) == 1)
    return out


def _svg_legend(battle: Battle, lay: _Layout, colours: dict[str, tuple[int, int, int]]) -> tuple[list[str], float]:
    """The legend under the map, as :func:`_draw_legend` lays it out; and its height."""
    size = max(9, round(lay.geometry.size * 0.16))
    sw = round(size * 1.3)
    x, y = float(lay.margin), float(lay.map_bottom + lay.margin)
    line_h = round(size * 1.8)
    out: list[str] = []
    items = [*((c, side) for side, c in colours.items()), (IMPASSABLE_FILL, "Impassable (5.1)")]
    for colour, label in items:
        w = sw + 6 + len(label) * size * _EM + size * 2
        if x + w > lay.width - lay.margin and x > lay.margin:
            x, y = float(lay.margin), y + line_h
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{sw}" height="{sw}" fill="{_hex(colour)}" '
                   f'stroke="{_hex(FRAME)}" stroke-width="1"/>')
        out.append(_svg_text(x + sw + 6, y + sw / 2, label, size, baseline="central"))
        x += w
    y += line_h
    per_line = max(20, int((lay.width - 2 * lay.margin) / (size * _EM)))
    for text in legend_lines(battle):
        for line in textwrap.wrap(text, per_line):
            out.append(_svg_text(lay.margin, y, line, size, baseline="hanging"))
            y += round(size * 1.4)
    return out, y + lay.margin - lay.map_bottom


def render_map_svg(battle: Battle, *, hex_size: int = DEFAULT_HEX_SIZE) -> str:
    """H1, H2, H9, H10: the battle's map as an SVG document, the same picture as
    :func:`render_map` (hexes with their ids, impassable hexes shaded, each unit's box in
    its hex, the legend) drawn with the standard library alone, so it needs no Pillow: the
    web page, running Python in the browser, shows this one.  Raises :class:`InputError`
    for a hex size under 20 pixels or a map past :data:`MAX_PIXELS`."""
    from xml.sax.saxutils import escape

    _check_size(battle, hex_size)
    lay = _layout(battle, hex_size)
    geo = lay.geometry
    colours = side_colours(battle)
    legend, legend_h = _svg_legend(battle, lay, colours)
    height = lay.map_bottom + legend_h
    title = _title(battle)
    body = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width}" height="{height:.0f}" '
            f'viewBox="0 0 {lay.width} {height:.0f}" font-family="{SVG_FONT}" role="img" '
            f'aria-label="{escape(title, {chr(34): "&quot;"})}">',
            f"<title>{escape(title)}</title>",
            f'<rect width="100%" height="100%" fill="{_hex(BACKGROUND)}"/>',
            _svg_text(lay.margin, lay.margin + lay.header / 2, title, max(11, round(hex_size * 0.2)), bold=True,
                      baseline="central")]
    impassable = battle.map.grid.impassable
    line_w = max(1, round(hex_size / 40))
    id_size = max(8, round(hex_size * 0.15))
    for h in battle.map.grid.hexes():
        blocked = h in impassable
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in geo.corners(h))
        body.append(f'<polygon points="{points}" fill="{_hex(IMPASSABLE_FILL if blocked else PASSABLE_FILL)}" '
                    f'stroke="{_hex(HEX_LINE)}" stroke-width="{line_w}"/>')
        cx, cy = geo.center(h)
        body.append(_svg_text(cx, cy - 0.70 * hex_size, h.id, id_size, anchor="middle", baseline="central",
                              fill=ID_TEXT_IMPASSABLE if blocked else ID_TEXT))
    by_hex = _units_by_hex(battle)
    values = _value_line(battle)
    for hex_id, units in by_hex.items():
        body += _svg_units(geo, hex_id, units, colours, values)
    return "\n".join([*body, *legend, "</svg>"]) + "\n"


def save_map_svg(battle: Battle, path: Path | str, *, hex_size: int = DEFAULT_HEX_SIZE) -> Path:
    """Draw the map as SVG (:func:`render_map_svg`) and write it to ``path`` atomically."""
    from sheetsync.sheets.disk import atomic_write_bytes

    path = Path(path)
    atomic_write_bytes(path, render_map_svg(battle, hex_size=hex_size).encode())
    return path
