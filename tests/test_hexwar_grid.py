"""The odd-q map (H2): CCRR ids, cube distance, neighbours, lines and shortest paths, with
property tests over the whole id range."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.systems.hexwar.rules import (
    Hex,
    HexMap,
    hex_distance,
    hex_line,
    neighbours,
    parse_hex,
)
from sheetsync.systems.hexwar.rules.grid import Cube

SETTINGS = settings(max_examples=300, deadline=None, database=None)
hexes = st.builds(Hex, st.integers(0, 99), st.integers(0, 99))


@SETTINGS
@given(hexes, hexes)
def test_h2_distance_is_symmetric_and_zero_only_on_itself(a: Hex, b: Hex) -> None:
    assert hex_distance(a, b) == hex_distance(b, a)
    assert (hex_distance(a, b) == 0) == (a == b)


@SETTINGS
@given(hexes, hexes, hexes)
def test_h2_distance_obeys_the_triangle_inequality(a: Hex, b: Hex, c: Hex) -> None:
    assert hex_distance(a, c) <= hex_distance(a, b) + hex_distance(b, c)


@SETTINGS
@given(hexes)
def test_h2_six_distinct_neighbours_each_at_distance_1(h: Hex) -> None:
    ns = neighbours(h)
    assert len(set(ns)) == 6
    assert all(hex_distance(h, n) == 1 for n in ns)
    assert all(h in neighbours(n) for n in ns)


@SETTINGS
@given(hexes)
def test_h2_offset_cube_and_id_round_trips(h: Hex) -> None:
    c = h.cube()
    assert c.q + c.r + c.s == 0
    assert c.to_hex() == h
    assert parse_hex(h.id) == h


@SETTINGS
@given(st.integers(-50, 50), st.integers(-50, 50))
def test_h2_cube_to_offset_round_trips(q: int, r: int) -> None:
    c = Cube(q, r, -q - r)
    assert c.to_hex().cube() == c


@SETTINGS
@given(hexes, hexes)
def test_h2_line_has_distance_plus_1_hexes_each_next_to_the_last(a: Hex, b: Hex) -> None:
    line = hex_line(a, b)
    assert len(line) == hex_distance(a, b) + 1
    assert line[0] == a and line[-1] == b
    assert all(hex_distance(x, y) == 1 for x, y in zip(line, line[1:], strict=False))


@settings(max_examples=150, deadline=None, database=None)
@given(st.builds(Hex, st.integers(1, 12), st.integers(1, 10)), st.builds(Hex, st.integers(1, 12), st.integers(1, 10)))
def test_h4_shortest_path_on_an_open_map_is_distance_plus_1(a: Hex, b: Hex) -> None:
    path = HexMap(12, 10).shortest_path(a, b, lambda h: False)
    assert path is not None
    assert len(path) == hex_distance(a, b) + 1
    assert all(hex_distance(x, y) == 1 for x, y in zip(path, path[1:], strict=False))


def test_h2_odd_columns_sit_lower() -> None:
    """0201 (an even column) touches 0101 and the row above it, not 0102; 0202 touches both."""
    assert parse_hex("0101") in neighbours(parse_hex("0201"))
    assert hex_distance(parse_hex("0102"), parse_hex("0201")) == 2
    assert {parse_hex("0101"), parse_hex("0102")} <= set(neighbours(parse_hex("0202")))


def test_h4_shortest_path_goes_round_impassable_and_blocked_hexes() -> None:
    wall = HexMap(10, 10, frozenset({parse_hex("0404"), parse_hex("0405"), parse_hex("0406")}))
    path = wall.shortest_path(parse_hex("0305"), parse_hex("0505"), lambda h: False)
    assert path is not None and [h.id for h in path] == ["0305", "0306", "0407", "0506", "0505"]
    enemy = parse_hex("0407")
    round_north = wall.shortest_path(parse_hex("0305"), parse_hex("0505"), lambda h: h == enemy)
    assert round_north is not None and enemy not in round_north and len(round_north) > len(path)
    closed = HexMap(3, 1)
    assert closed.shortest_path(Hex(1, 1), Hex(3, 1), lambda h: h == Hex(2, 1)) is None


def test_h4_shortest_path_limit_stops_the_search() -> None:
    assert HexMap(10, 10).shortest_path(Hex(1, 1), Hex(1, 9), lambda h: False, limit=3) is None


@pytest.mark.parametrize("bad", ["405", "04055", "ab12", "", None, True, 3.5])
def test_h2_a_malformed_hex_id_says_what_an_id_looks_like(bad: object) -> None:
    with pytest.raises(ValueError, match="is not a hex id"):
        parse_hex(bad)


def test_h2_a_spreadsheet_number_reads_as_an_id() -> None:
    assert parse_hex(405) == Hex(4, 5)
    assert parse_hex(" 0405 ").id == "0405"
