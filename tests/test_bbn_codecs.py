"""The battalion tracker's column codecs (issue 9): each input column decodes a cell and
encodes a value back, every problem is reported at the address made from its block and
column, and what the writer writes the reader reads back."""

from __future__ import annotations

from typing import Any

import pytest
from input_trackers import LAY, blank, orders, put, snapshot, two_cohorts

from sheetsync.app import usecases
from sheetsync.core.errors import SheetFormatError
from sheetsync.core.layout import Block, CodecError, Column, Int
from sheetsync.sheets import table
from sheetsync.sheets.backend import Formula, MemoryBackend
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle
from sheetsync.systems.bbn.rules import HouseRules
from sheetsync.systems.bbn.rules.catalog import default_catalog
from sheetsync.systems.bbn.tracker import codecs as bc
from sheetsync.systems.bbn.tracker import reader, writer

INPUT_BLOCKS = ("Characters_Table", "Cohorts_Setup", "Orders_Table", "Ranges_Table", "HouseRules_Table")
"""The blocks the reader reads and :func:`writer.input_updates` writes."""

AT_BUILD = ("Characters_Table", "Cohorts_Setup", "HouseRules_Table")
"""Read by Build Cohorts; the Orders and Ranges are read by Resolve Phase."""


def _input_columns() -> list[tuple[str, Column]]:
    return [(name, col) for name in INPUT_BLOCKS for col in LAY.block(name).columns if col.is_input]


def _id(item: tuple[str, Column]) -> str:
    return f"{item[0]}.{item[1].key}"


def _decode(codec: Any, value: Any) -> tuple[Any, list[str]]:
    """A cell through ``codec`` as the reader does: the value and the messages."""
    problems: list[Any] = []
    got = table.decode(Column("x", "X", codec_=codec), value, "Sheet!A1", problems)
    return got, [p.message for p in problems]


def _problems(backend: MemoryBackend, action: str) -> list[str]:
    before = snapshot(backend)
    with pytest.raises(SheetFormatError) as info:
        usecases.run(action, backend)
    assert snapshot(backend) == before, "nothing is written when a cell is refused"
    return [str(p) for p in info.value.problems]


# -- each codec: decode, encode, messages ---------------------------------------------------------


@pytest.mark.parametrize(("value", "want"), [
    ("  Night Watch ", "Night Watch"), (3.0, "3"), (12, "12"), (True, "Yes"), (False, "No"), ("Melee Attack", "Melee Attack"),
])
def test_issue9_text_codec_trims_and_reads_numbers_and_flags(value: Any, want: str) -> None:
    codec = bc.Text("cohort")
    assert codec.decode(value) == want
    assert codec.decode(codec.encode(want)) == want
    assert codec.encode(3) == 3, "a House Rules number is written as a number, not as text"


@pytest.mark.parametrize(("value", "want"), [(7, 7), (7.0, 7), ("+3", 3), (" 12 ", 12), ("0003", 3), ("-0", 0)])
def test_issue9_whole_codec_reads_whole_numbers(value: Any, want: int) -> None:
    codec = bc.Whole(label="temper")
    assert codec.decode(value) == want
    assert codec.decode(codec.encode(want)) == want


@pytest.mark.parametrize(("value", "message"), [
    ("abc", "temper 'abc' is not a whole number"),
    (2.5, "temper 2.5 is not a whole number"),
    (True, "temper True is not a whole number"),
    (float("inf"), "temper inf is not a whole number"),
    ("9" * 16, "temper '9999999999999999' is too large to be a temper"),
    (10**15, "temper 1000000000000000 is too large to be a temper"),
    (51, "temper 51 is not 0 to 50"),
    (-1, "temper -1 is not 0 to 50"),
])
def test_issue9_issue8_item8_whole_codec_messages_name_the_label_and_bounds(value: Any, message: str) -> None:
    with pytest.raises(CodecError) as info:
        bc.Whole(0, 50, label="temper").decode(value)
    assert str(info.value) == message


@pytest.mark.parametrize(("value", "want"), [
    ("Yes", True), ("y", True), ("TRUE", True), ("x", True), ("✓", True), (1, True), (1.0, True), (True, True),
    ("No", False), ("n", False), ("false", False), ("0", False), (0, False), (False, False),
])
def test_issue9_r11_yes_no_codec_reads_every_spelling_of_a_flag(value: Any, want: bool) -> None:
    codec = bc.YesNo("support")
    assert codec.decode(value) is want
    assert codec.encode(want) == ("Yes" if want else "No")
    assert codec.decode(codec.encode(want)) is want


@pytest.mark.parametrize("value", ["maybe", 2, "Yess"])
def test_issue9_yes_no_codec_refuses_anything_else(value: Any) -> None:
    with pytest.raises(CodecError) as info:
        bc.YesNo("support").decode(value)
    assert str(info.value) == f"support {value!r} is not Yes or No"


@pytest.mark.parametrize(("value", "want", "cell"), [
    ("Yes", True, "Yes"), (True, True, "Yes"), ("x", True, "Yes"), (7, 7, 7), ("7", 7, 7), (7.0, 7, 7),
    ("No", None, None), ("n", None, None), (False, None, None), (0, None, None),
])
def test_issue9_r25_reroll_codec_reads_yes_or_the_d10(value: Any, want: Any, cell: Any) -> None:
    codec = bc.Reroll("reroll")
    assert codec.decode(value) == want
    assert codec.encode(want) == cell


@pytest.mark.parametrize(("value", "message"), [
    (11, "reroll 11 is not a d10 (1 to 10) or Yes"),
    ("0", "reroll 0 is not a d10 (1 to 10) or Yes"),
    ("false", "reroll 'false' is not a whole number"),
    ("1" * 20, "reroll '11111111111111111111' is too large to be a reroll"),
])
def test_issue9_r25_reroll_codec_messages(value: Any, message: str) -> None:
    with pytest.raises(CodecError) as info:
        bc.Reroll("reroll").decode(value)
    assert str(info.value) == message


@pytest.mark.parametrize(("value", "want"), [("2 3", [2, 3]), ("2, 3", [2, 3]), (23.0, [23]), ("4", [4])])
def test_issue9_r25_picks_codec_reads_typed_dice(value: Any, want: list[int]) -> None:
    codec = bc.Picks("picks")
    assert codec.decode(value) == want
    assert codec.encode(want) == " ".join(map(str, want))
    assert codec.decode(codec.encode(want)) == want


@pytest.mark.parametrize("value", ["2 x", "two", "2-3", "2 " + "1" * 20])
def test_issue9_r25_picks_codec_refuses_what_is_not_dice(value: str) -> None:
    with pytest.raises(CodecError) as info:
        bc.Picks("picks").decode(value)
    assert str(info.value) == f"picks {bc.short(value)} are not dice (e.g. 2 3)"


def test_issue9_r6_paths_codec_reads_each_path_and_its_level() -> None:
    codec = bc.Paths("offensive paths")
    got = codec.decode("Lure of Flames 3; Hands of Destruction: 2\nPath of Mars=1")
    assert got == [("Lure of Flames", 3), ("Hands of Destruction", 2), ("Path of Mars", 1)]
    assert codec.encode(got) == "Lure of Flames 3; Hands of Destruction 2; Path of Mars 1"
    assert codec.decode(codec.encode(got)) == got


def test_issue9_r6_paths_codec_reports_every_bad_part_and_keeps_the_good_ones() -> None:
    got, messages = _decode(bc.Paths("offensive paths"), f"Lure of Flames 3; Blood Boil; Hands {'1' * 20}")
    assert got == [("Lure of Flames", 3)]
    assert messages == ["'Blood Boil' is not 'Path name level' (e.g. Lure of Flames 3)",
                        "the level of 'Hands' is too large"]


def test_issue9_r5_combinations_codec_reads_name_and_disciplines() -> None:
    codec = bc.Combinations("combination disciplines")
    got = codec.decode("Armor of Caine's Fury: Fortitude + Potence; Flash: Celerity/Auspex")
    assert got == [("Armor of Caine's Fury", ("Fortitude", "Potence")), ("Flash", ("Celerity", "Auspex"))]
    assert codec.encode(got) == "Armor of Caine's Fury: Fortitude + Potence; Flash: Celerity + Auspex"
    got2, messages = _decode(codec, "Flash: Celerity + Auspex; Nonsense")
    assert got2 == [("Flash", ("Celerity", "Auspex"))]
    assert messages == ["'Nonsense' is not 'Name: Discipline + Discipline'"]


def test_issue9_r12_other_traits_codec_reads_levels_and_bare_merits_in_order() -> None:
    codec = bc.OtherTraits("other traits")
    got = codec.decode("Chimerstry 2; Lucky Charm; Sewing 3")
    assert got == [("Chimerstry", 2), "Lucky Charm", ("Sewing", 3)]
    assert codec.encode(got) == "Chimerstry 2; Lucky Charm; Sewing 3"
    got2, messages = _decode(codec, f"Chimerstry 2; Obtenebration {'1' * 20}")
    assert got2 == [("Chimerstry", 2)]
    assert messages == ["the level of 'Obtenebration' is too large"]


@pytest.mark.parametrize(("value", "want"), [(42, 42), (42.0, 42), (" moon ", "moon"), (True, "True")])
def test_issue9_r25_seed_codec_reads_a_number_or_text(value: Any, want: Any) -> None:
    assert bc.Seed("dice seed").decode(value) == want


@pytest.mark.parametrize(("value", "message"), [
    (2.5, "dice seed 2.5 is not a whole number or text"),
    (float("nan"), "dice seed nan is not a whole number or text"),
    (10**15, "dice seed 1000000000000000 is too large; use at most 15 digits"),
])
def test_issue9_issue8_item8_r25_seed_codec_messages(value: Any, message: str) -> None:
    with pytest.raises(CodecError) as info:
        bc.Seed("dice seed").decode(value)
    assert str(info.value) == message


@pytest.mark.parametrize(("codec", "want"), [
    (bc.Text("side"), "the text"), (bc.Whole(label="roll"), "a whole number"), (bc.YesNo("support"), "Yes or No"),
    (bc.Seed("dice seed"), "a whole number or text"), (bc.Reroll("reroll"), "the text"),
])
def test_issue9_issue8_item12_each_codec_words_the_formula_refusal(codec: Any, want: str) -> None:
    _got, messages = _decode(codec, Formula("=RAND()"))
    assert messages == [f"{codec.label}: a formula (=RAND()) is not allowed here; type {want}"]


@pytest.mark.parametrize(("annotation", "cell", "want"), [(bool, "No", False), (int, "4", 4), (str, " pooled ", "pooled")])
def test_issue9_r11_a_house_rule_value_is_read_by_its_rule_type(annotation: Any, cell: str, want: Any) -> None:
    assert bc.for_annotation(annotation, "value").decode(cell) == want


# -- the layout: every input column has its codec ----------------------------------------------------


@pytest.mark.parametrize("item", _input_columns(), ids=_id)
def test_issue9_every_battalion_input_column_has_a_codec_named_after_its_header(item: tuple[str, Column]) -> None:
    _name, col = item
    codec = col.codec
    assert type(codec).__module__ == bc.__name__, f"{col.key} decodes through the battalion codecs"
    assert codec.label == col.header.lower()
    if col.kind == "int":
        assert isinstance(codec, Int) and (codec.low, codec.high) == (col.low, col.high), \
            "the bounds the templates draw are the bounds the reader checks"
    assert codec.kind == col.kind


# -- what the writer writes, the reader reads back --------------------------------------------------


def _every_column_battle() -> dict[str, Any]:
    """A battle that fills every input column of the layout: one member holds every
    Ability, Discipline and Merit column, and more traits than have columns (R12)."""
    path = next(iter(default_catalog().offensive_paths))
    a0 = {"name": "A0", "temper": 12, "willpower_spent": 2, "ranged_attack": True, "blood_magic_in_clan": True,
          "movement_discipline": "Celerity", "health_levels": 8,
          "abilities": {a: 1 + i % 5 for i, a in enumerate(LAY.ability_columns)},
          "disciplines": {**{d: 1 + i % 5 for i, d in enumerate(LAY.discipline_columns)}, "Chimerstry": 2},
          "merits": [*LAY.merit_columns, "Lucky Charm"],
          "blood_magic_paths": {path: {"level": 3, "offensive": True}},
          "combination_disciplines": [{"name": "Armor of Caine's Fury", "includes": ["Fortitude", "Potence"]}]}
    return {"seed": 5, "cohorts": [
        {"name": "Alpha", "side": "players", "sergeant": "A0", "tracker": "Tess", "reporter": "Rob",
         "members": [a0, "A1", "A2"], "aegis": {"A0": 1}, "lasting_rolls": {"A0": 4}},
        {"name": "Beta", "side": "enemy", "support": True, "members": ["B0", "B1", "B2"],
         "pools": {p: 5 + i for i, p in enumerate(c.key[4:] for c in LAY.block("Cohorts_Setup").columns
                                                  if c.key.startswith("set:"))}}],
        "ranges": [["Alpha", "Beta", "Personal"]],
        "house_rules": {"scared_loses_action": False, "combo_bonus": 2, "damage_basis": "members"},
        "orders": [
            {"cohort": "Alpha", "task": "Melee Attack", "target": "Beta", "temper": 2, "roll": 5, "reroll": 7,
             "use_reroll": True},
            {"cohort": "Alpha", "task": "Hero Moment", "member": "A1", "moment": "Boost a Pool", "pool": "melee"},
            {"cohort": "Alpha", "task": "Inspire", "target": "Alpha", "benefit": "Reroll", "use_reroll": True},
            {"cohort": "Alpha", "task": "Tactical Task", "text": "Hold the gate", "free_task": "Heal", "ally": "A1"},
            {"cohort": "Beta", "task": "Melee Attack", "target": "Alpha", "picks": [2, 3]},
        ]}


def _written(battle: Any) -> MemoryBackend:
    backend = blank()
    backend.write_ranges(writer.input_updates(LAY, battle))
    return backend


def _column_cells(backend: MemoryBackend, block: Block, key: str) -> list[Any]:
    col = block.first_col + block.index(key)
    return [backend.sheets[block.sheet].get((block.first_row + i, col)) for i in range(block.rows or 0)]


def test_issue9_every_input_column_decodes_what_the_writer_encodes() -> None:
    """Over a real battle's input_updates: every input cell the writer fills decodes through
    its column's codec with no problem, and encoding the value gives the cell back."""
    backend = _written(load_battle(_every_column_battle()))
    empty = []
    house = LAY.block("HouseRules_Table")
    rules = _column_cells(backend, house, "key")
    for name, col in _input_columns():
        cells = [(i, v) for i, v in enumerate(_column_cells(backend, LAY.block(name), col.key)) if not table.is_blank(v)]
        if not cells:
            empty.append(f"{name}.{col.key}")
        for i, cell in cells:
            codec = col.codec  # a House Rules value is read by its rule's type (R11)
            if name == house.name:
                codec = bc.for_annotation(HouseRules.model_fields[str(rules[i])].annotation, "value")
            value, messages = _decode(codec, cell)
            assert messages == [], (name, col.key, cell)
            assert codec.encode(value) == cell, (name, col.key, cell, value)
    assert empty == [], "the battle fills every input column"


def test_issue9_the_reader_reads_back_the_battle_the_writer_wrote() -> None:
    battle = load_battle(_every_column_battle())
    backend = _written(battle)
    sheets = reader.Sheets.from_grids(backend.read_ranges(reader.read_plan(LAY)))
    built = reader.parse_battle_setup(LAY, sheets)
    want, got = battle_to_file(battle), battle_to_file(built)
    for key in ("cohorts", "house_rules"):
        assert got[key] == want[key], key
    turn, rows = reader.parse_turn(LAY, sheets, built)
    assert battle_to_file(turn)["orders"] == want["orders"]
    assert battle_to_file(turn)["ranges"] == want["ranges"]
    assert rows == list(range(len(want["orders"])))


# -- every bad cell is reported at the address made from its block and column -------------------------


_BAD: dict[type, tuple[Any, str]] = {
    bc.Whole: ("abc", "{label} 'abc' is not a whole number"),
    bc.YesNo: ("maybe", "{label} 'maybe' is not Yes or No"),
    bc.Reroll: ("abc", "reroll 'abc' is not a whole number"),
    bc.Picks: ("2 x", "picks '2 x' are not dice (e.g. 2 3)"),
    bc.Paths: ("Blood Boil", "'Blood Boil' is not 'Path name level' (e.g. Lure of Flames 3)"),
    bc.Combinations: ("Nonsense", "'Nonsense' is not 'Name: Discipline + Discipline'"),
    bc.OtherTraits: ("Obtenebration " + "1" * 20, "the level of 'Obtenebration' is too large"),
}
"""A bad value for each kind of codec, and the message (written out here, not taken from
the codec) the reader gives for it.  A text cell can only be bad by holding a formula."""

_WANT = {"int": "a whole number", "bool": "Yes or No"}


def _house_row(key: str) -> int:
    return [r["key"] for r in writer.house_rules_values()].index(key)


def _backend_for(block: str) -> tuple[MemoryBackend, str, int]:
    """A tracker ready for the step that reads ``block``, the step, and the row to spoil."""
    if block in AT_BUILD:
        return two_cohorts(), "build", 1
    backend = two_cohorts()
    usecases.run("build", backend)
    orders(backend, [{"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghouls"}])
    return backend, "resolve", 0


def _cases() -> list[Any]:
    """(block, column, row, bad value, message) for every input column, from the layout;
    the House Rules value once for each rule, by the rule's type (R11)."""
    out: list[Any] = []
    for name, col in _input_columns():
        label = col.header.lower()
        rows: list[int | None] = [None]
        if name == "HouseRules_Table":
            rows = [_house_row(k) for k in HouseRules.model_fields]
        for row in rows:
            codec, kind, where = col.codec, col.kind, col.key
            if row is not None:
                key = writer.house_rules_values()[row]["key"]
                codec = bc.for_annotation(HouseRules.model_fields[key].annotation, label)
                kind, where = codec.kind, f"{col.key}:{key}"
            offset = -1 if row is None else row
            out.append(pytest.param(name, col, offset, Formula("=1+1"),
                                    f"{label}: a formula (=1+1) is not allowed here; type {_WANT.get(kind, 'the text')}",
                                    id=f"{name}.{where}-formula"))
            if type(codec) in _BAD:
                value, message = _BAD[type(codec)]
                out.append(pytest.param(name, col, offset, value, message.format(label=label), id=f"{name}.{where}-bad"))
    return out


@pytest.mark.parametrize(("block", "col", "row", "value", "message"), _cases())
def test_issue9_a_bad_cell_in_every_input_column_is_reported_at_its_address(block: str, col: Column, row: int,
                                                                            value: Any, message: str) -> None:
    backend, action, offset = _backend_for(block)
    offset = offset if row < 0 else row
    put(backend, block, offset, col.key, value)
    addr = LAY.block(block).cell(offset, col.key)
    got = _problems(backend, action)
    assert f"{addr}: {message}" in got, got
    assert len([p for p in got if p.startswith(f"{addr}: ") and "formula" in p]) <= 1, "each formula is named once"


# -- what the one decoding path changed (each cell read once, by its codec) ----------------------------


def test_issue9_issue8_item12_r25_a_formula_in_reroll_is_named_once() -> None:
    """Reroll was read twice, so a formula there was refused with two different hints."""
    backend, _action, _ = _backend_for("Orders_Table")
    addr = put(backend, "Orders_Table", 0, "reroll", Formula("=1+1"))
    got = [p for p in _problems(backend, "resolve") if p.startswith(f"{addr}: ")]
    assert got == [f"{addr}: reroll: a formula (=1+1) is not allowed here; type the text"]


def test_issue9_r11_a_formula_in_a_house_rule_is_its_only_problem() -> None:
    """A formula in a choice rule used to be refused and then read as an empty choice too
    ("None is not one of ...") at the same cell."""
    backend = two_cohorts()
    addr = put(backend, "HouseRules_Table", _house_row("damage_basis"), "value", Formula("=1+1"))
    got = [p for p in _problems(backend, "build") if p.startswith(f"{addr}: ")]
    assert got == [f"{addr}: value: a formula (=1+1) is not allowed here; type the text"]


@pytest.mark.parametrize("key", ["damage_basis", "scared_loses_action", "combo_bonus"])
def test_issue9_r11_a_house_rule_cell_holding_only_spaces_is_blank(key: str) -> None:
    """Spaces alone are a blank cell in every column; a House Rules value was the exception
    (a choice read as ``None``, a switch as No)."""
    backend = two_cohorts()
    put(backend, "HouseRules_Table", _house_row(key), "value", "   ")
    report = usecases.run("build", backend)
    assert report is not None
    sheets = reader.Sheets.from_grids(backend.read_ranges(reader.read_plan(LAY)))
    battle = reader.parse_battle_setup(LAY, sheets)
    assert getattr(battle.house_rules, key) == HouseRules.model_fields[key].default


# -- the writer writes rows keyed by column --------------------------------------------------------


def test_issue9_log_rows_are_keyed_by_column_and_positional_ones_are_keyed_in_one_place() -> None:
    keyed = {"phase": 2, "cohort": "Alpha", "task": "Undo Phase", "outcome": "done", "damage": 0, "details": "x"}
    positional = [2, None, "Alpha", "Undo Phase", None, "done", 0, None, None, "x"]
    a = writer.log_updates(LAY, [keyed], step="3:ab:undo:2")
    b = writer.log_updates(LAY, [positional], step="3:ab:undo:2")
    assert a[0].values == b[0].values
    log = LAY.block("Log_Table")
    assert a[0].values[0][log.index("step")] == "3:ab:undo:2:1"
    assert a[0].values[0][log.index("details")] == "x"
    with pytest.raises(KeyError, match="no column 'colour'"):
        writer.log_updates(LAY, [{"colour": "red"}], step="s")
    with pytest.raises(ValueError, match="a Log row has 11 columns, not 12"):
        writer.log_updates(LAY, [[None] * 12], step="s")


def test_issue9_house_rules_rows_are_the_keyed_values_over_the_block_columns() -> None:
    block = LAY.block("HouseRules_Table")
    for row, values in zip(writer.house_rules_rows(), writer.house_rules_values(), strict=True):
        assert row == [values.get(c.key) for c in block.columns]
    shown = {r["key"]: r["value"] for r in writer.house_rules_values(HouseRules(scared_loses_action=False, combo_bonus=4))}
    assert shown["scared_loses_action"] == "No" and shown["combo_bonus"] == 4
