"""Issue 12: the battalion step's faster paths write exactly what the plain ones write.

The Resolve step reads each block through a per-block plan, and takes the cohorts and
ranges that the battle and its undo snapshot share from the snapshot's dump instead of
dumping them again.  These tests pin each shortcut to the plain computation it
replaces, byte for byte (the State blob, its step id, the cells and their addresses).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from battles import make_battle

from sheetsync.app import usecases
from sheetsync.core.errors import BattleStateError, InputError, SheetFormatError
from sheetsync.core.registry import find_system
from sheetsync.sheets.backend import Formula, MemoryBackend, RangeUpdate
from sheetsync.sheets.marks import mark_updates
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle, load_turn
from sheetsync.systems.bbn.rules import Battle, resolve_phase
from sheetsync.systems.bbn.tracker import journal as sj
from sheetsync.systems.bbn.tracker import reader, writer
from sheetsync.systems.bbn.tracker.layout import STATE_CHUNKS, layout
from sheetsync.systems.bbn.tracker.reader import Sheets, parse_turn, read_plan
from sheetsync.systems.bbn.tracker.steps import journal

LAY = layout()


def _resolved(cohorts: int = 6) -> tuple[sj.Stored, Battle, Any, list[int]]:
    """A tracker's stored battle, the battle its Orders give, the engine's result and the rows."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(cohorts)), LAY)
    backend.write_ranges(mark_updates(find_system("bbn"), LAY.capacity))
    sh = Sheets.from_grids(backend.read_ranges(read_plan(LAY)))
    stored = journal(LAY, sh).stored
    assert stored.battle is not None
    battle, rows = parse_turn(LAY, sh, stored.battle)
    return stored, battle, resolve_phase(battle), rows


def test_issue12_battle_data_from_the_snapshot_equals_to_data() -> None:
    """R13: the new battle of a resolve keeps the cohorts and ranges its snapshot dumped;
    taking them from that dump gives ``to_data()`` exactly, key order included, but for the
    log, which the State never holds and is not dumped (the phase's events are in it)."""
    _stored, battle, result, _rows = _resolved()
    new = result.battle
    assert new.cohorts is battle.cohorts and new.ranges is battle.ranges
    assert len(new.log) == len(result.events) > 0
    plain = {**new.to_data(), "log": []}
    fast = sj._battle_data(new, sj.SHARED_KEYS)
    assert json.dumps(fast) == json.dumps(plain)
    assert fast["cohorts"] is fast["history"][-1]["cohorts"]  # one object, dumped once
    assert json.dumps(sj._battle_data(new)) == json.dumps(plain)  # nothing shared: dumped, log left out


def test_issue12_state_write_is_byte_identical_with_the_shared_parts() -> None:
    """The State blob, its step id and the undo record are the same whether the resolve's
    shared parts are taken from the snapshot's dump or the battle is dumped whole."""
    stored, _battle, result, rows = _resolved()
    stamps = [[i, e.outcome, e.damage, writer.result_text(e)] for i, e in zip(rows, result.events, strict=True)]

    def write(kept: tuple[str, ...]) -> sj.StateWrite:
        return sj.state_update(LAY, result.battle, result.to_json(), prior=stored, action="resolve",
                               phase=result.phase, stamps=stamps, kept=kept)

    fast, plain = write(sj.SHARED_KEYS), write(())
    assert fast.update == plain.update and fast.extra == plain.extra
    assert (fast.token, fast.step, fast.rev) == (plain.token, plain.step, plain.rev)
    blob = "".join(str(row[0]) for row in fast.update.values if row[0])
    assert json.loads(blob)["battle"]["history"][0]["cohorts"] == json.loads(blob)["battle"]["cohorts"]
    # the blob, put together from the body encoded once and the rest, is json.dumps' own text
    assert json.dumps(json.loads(blob), separators=(",", ":"), ensure_ascii=False) == blob


def test_issue12_reader_plans_name_each_layouts_cells() -> None:
    """The per-block plans address every cell as :meth:`Block.cell` does, for layouts of
    different capacities (the blocks under a longer one move down, issue 9)."""
    for lay in (LAY, layout(capacity={"cohorts": 60, "orders": 900})):
        for name in ("Orders_Table", "Ranges_Table", "Characters_Table", "Cohorts_Setup", "HouseRules_Table"):
            block = lay.block(name)
            plan = reader._plan(block)
            for key, (j, col, letter) in plan.by_key.items():
                assert block.columns[j] is col
                for i in (0, 7):
                    assert f"{plan.prefix}{letter}{block.first_row + i}" == block.cell(i, key)
    small, big = layout().block("Cohorts_Pools"), layout(capacity={"cohorts": 60}).block("Cohorts_Pools")
    assert small.first_row != big.first_row and reader._plan(small).block is small and reader._plan(big).block is big


def test_issue12_text_cells_read_as_before_r12() -> None:
    """R12: a cohort typed with spaces, in another case, or as a number reads as it always
    did; a range named by a whitespace cell is refused at its cell."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(4)), LAY)
    orders, ranges = LAY.block("Orders_Table"), LAY.block("Ranges_Table")
    backend.write_ranges([RangeUpdate(orders.cell(0, "cohort"), [["  cohort 0  "]]),
                          RangeUpdate(ranges.cell(0, "a"), [["   "]])])
    sh = Sheets.from_grids(backend.read_ranges(read_plan(LAY)))
    stored = journal(LAY, sh).stored
    assert stored.battle is not None
    with pytest.raises(SheetFormatError) as err:
        parse_turn(LAY, sh, stored.battle)
    assert [(p.where, p.message) for p in err.value.problems] == [
        (ranges.cell(0, "a"), "a range needs two cohorts and a band")]
    backend.write_ranges([RangeUpdate(ranges.cell(0, "a"), [["Cohort 0"]])])
    sh = Sheets.from_grids(backend.read_ranges(read_plan(LAY)))
    battle, _rows = parse_turn(LAY, sh, stored.battle)
    assert battle.orders[0].cohort == "Cohort 0"


def _plain_turn(battle: Battle, rules: Any, ranges: Any, orders: Any) -> Battle:
    """What Resolve loaded before issue 12: the whole battle file, with the turn put in."""
    data = battle_to_file(battle)
    data.update(house_rules=rules, ranges=ranges, orders=orders)
    data.pop("log", None)
    return load_battle(data)


def _played(phases: int) -> Battle:
    """A 6-cohort battle after ``phases`` resolved phases (a history and states to carry)."""
    battle = load_battle(make_battle(6))
    for _ in range(phases):
        battle = resolve_phase(battle).battle
        battle = battle.model_copy(update={"orders": load_battle(make_battle(6)).orders})
    return battle


@pytest.mark.parametrize("phases", [0, 1, 3])
def test_issue12_r13_r24_load_turn_equals_loading_the_whole_file(phases: int) -> None:
    """R13, R24: a phase's orders and ranges put into a stored battle give the very battle
    that loading the whole battle file gives (cohorts, states, history, pools, bands), with
    names in another case and labels typed loosely read alike (R12)."""
    stored = _played(phases)
    ranges = [[" cohort 0", "COHORT 1", "personal"], ["Cohort 2", "Cohort 3", "distanced"]]
    orders = [{"cohort": "cohort 0", "task": "melee attack", "target": "Cohort 1", "roll": 7},
              {"cohort": "Cohort 1", "task": "Hero Moment", "member": "C1M0", "moment": "boost a pool",
               "pool": "melee "},
              {"cohort": "Cohort 2", "task": "Inspire", "target": "cohort 4", "benefit": "Reroll",
               "ally": "cohort 4"}]
    rules = stored.house_rules.model_dump(mode="json")
    fast = load_turn(stored, rules, ranges, orders)
    plain = _plain_turn(stored, rules, ranges, orders)
    assert fast == plain
    assert json.dumps(fast.to_data()) == json.dumps(plain.to_data())
    assert fast.bands == plain.bands and fast.pools == plain.pools and fast.log == ()
    assert resolve_phase(fast).to_json() == resolve_phase(plain).to_json()


def test_issue12_r13_load_turn_lists_the_same_problems() -> None:
    """R13: a bad order or range is reported with the same path and words either way, every
    one of them at once."""
    stored = _played(1)
    rules = stored.house_rules.model_dump(mode="json")
    ranges = [["Cohort 0", "Cohort 99", "Personal"], ["Cohort 0", "Cohort 1", "Very Far"], "nonsense"]
    orders = [{"cohort": "Cohort 7", "task": "Melee Attack", "target": "Cohort 1"},
              {"cohort": "Cohort 0", "task": "Melee"},
              {"cohort": "Cohort 0", "task": "Hero Moment", "member": "Nobody"},
              "not an order"]
    with pytest.raises(InputError) as fast:
        load_turn(stored, rules, ranges, orders)
    with pytest.raises(InputError) as plain:
        _plain_turn(stored, rules, ranges, orders)
    got = [(p.where, p.message) for p in fast.value.problems]
    assert got == [(p.where, p.message) for p in plain.value.problems]
    assert len(got) >= 6


def test_issue12_r1_other_house_rules_load_the_whole_battle() -> None:
    """R1: house rules typed other than the stored ones can change what a valid cohort is,
    so the whole battle is loaded again: a 2-member cohort is refused unless
    allow_any_size lifts it, as when the whole file is loaded."""
    file = make_battle(4)
    file["cohorts"][0]["members"] = file["cohorts"][0]["members"][:2]
    stored = load_battle({**file, "house_rules": {"allow_any_size": True}})
    orders = [{"cohort": "Cohort 0", "task": "Melee Attack", "target": "Cohort 1"}]
    with pytest.raises(InputError) as fast:
        load_turn(stored, {}, [], orders)
    with pytest.raises(InputError) as plain:
        _plain_turn(stored, {}, [], orders)
    assert [(p.where, p.message) for p in fast.value.problems] == [(p.where, p.message) for p in plain.value.problems]
    assert any("3 to 5" in p.message for p in fast.value.problems)
    same = {"allow_any_size": True}
    assert load_turn(stored, same, [], orders) == _plain_turn(stored, same, [], orders)


def _blob(backend: MemoryBackend) -> str:
    rows = backend.read_ranges([LAY.block("State_Blob").range()])[0]
    return "".join(r[0] for r in rows if r and isinstance(r[0], str))


def test_issue12_r13_r25_each_written_state_equals_its_parse_after_every_step() -> None:
    """R13, R25: every State blob a step writes is remembered with the battle it reads back
    as; through resolves, an undo, a resolve again and the end, each one equals the battle
    that parsing and checking the text written gives, so the next click may skip the check."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(5)), LAY)
    orders = LAY.block("Orders_Table")

    def phase_two(b: MemoryBackend) -> None:  # two orders typed in the rows below phase 1's
        b.write_ranges([RangeUpdate(orders.cell(10 + i, key), [[value]]) for i in range(2)
                        for key, value in (("cohort", f"Cohort {i}"), ("task", "Melee Attack"),
                                           ("target", f"Cohort {i + 1}"), ("roll", 6))])
        usecases.resolve(b)

    for step in (usecases.resolve, phase_two, usecases.undo, usecases.resolve, usecases.end_battle, usecases.undo):
        sj.forget_states()
        step(backend)
        text = _blob(backend)
        remembered, rest = sj._KNOWN[text]
        sj.forget_states()
        fresh = sj.parse_state([[text]]).battle
        assert fresh == remembered
        assert json.dumps(fresh.to_data()) == json.dumps(remembered.to_data())
        # the rest of the blob as JSON reads it: lists, not tuples; the same keys in the same order
        parsed = {k: v for k, v in json.loads(text).items() if k != "battle"}
        assert rest == parsed and list(rest) == list(parsed)
        assert json.dumps(rest) == json.dumps(parsed)
        assert sj._KNOWN[text][1] == parsed  # and what a read remembers is the same


def test_issue8_10_a_state_edited_by_hand_is_checked_in_full_after_a_remembered_one() -> None:
    """Issue 8 item 10: a remembered State does not vouch for another text: a blob edited
    by hand (one cohort's standing deleted) is parsed and refused at State!A1, and nothing
    is written."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(3)), LAY)
    usecases.resolve(backend)
    text = _blob(backend)
    assert text in sj._KNOWN
    payload = json.loads(text)
    del payload["battle"]["state"]["Cohort 0"]
    block = LAY.block("State_Blob")
    backend.write_ranges([RangeUpdate(block.range(rows=STATE_CHUNKS),
                                      [[json.dumps(payload)]] + [[None]] * (STATE_CHUNKS - 1))])
    before = {k: dict(v) for k, v in backend.sheets.items()}
    with pytest.raises(BattleStateError) as err:
        usecases.undo(backend)
    assert "State!A1" in str(err.value) and "damaged" in str(err.value), err.value
    assert backend.sheets == before


def test_issue12_r25_undo_snapshot_reuses_the_cohorts_dump_and_equals_the_plain_dump() -> None:
    """R25: a phase's undo snapshot is the battle's plain dump (no history, no log, plus
    the log's length) in the fields' order, whether its cohorts' dump is made or reused;
    other cohort objects (another battle, equal or not) get their own dump."""
    first = load_battle(make_battle(5))
    later = resolve_phase(first).battle  # the same cohort objects, another standing
    other = load_battle(make_battle(5))  # equal cohorts, other objects
    for battle in (first, later, other, load_battle(make_battle(3))):
        plain = battle.model_dump(mode="json", exclude={"history", "log"})
        plain["log_length"] = len(battle.log)
        snap = battle.snapshot()
        assert json.dumps(snap) == json.dumps(plain) and list(snap) == list(plain)
    assert first.snapshot()["cohorts"] is later.snapshot()["cohorts"]
    assert first.snapshot()["ranges"] is later.snapshot()["ranges"]
    # a standing written by one click is dumped once: the next click's snapshot shares it
    name = later.cohorts[0].name
    assert later.snapshot()["state"][name] is sj._battle_data(later)["state"][name]
    assert later.snapshot()["state"][name] == later.state[name].model_dump(mode="json")
    assert other.snapshot()["cohorts"] is not first.snapshot()["cohorts"]


def _codecs() -> list[Any]:
    """Every codec of every column of every block of the battalion tracker."""
    return [c.codec for block in LAY.blocks.values() for c in block.columns]


def test_issue12_codecs_that_say_they_encode_as_is_give_every_value_back() -> None:
    """A codec that sets ``encodes_as_is`` is skipped by the writer: its ``encode`` must
    give back whatever it is handed (text, numbers, flags, blanks)."""
    as_is = [c for c in _codecs() if getattr(c, "encodes_as_is", False)]
    assert {type(c).__name__ for c in as_is} >= {"Text", "Whole"}
    for codec in as_is:
        for value in ("Night Watch", "", 0, 7, -3, 2.5, True, False, None, "=1+1"):
            got = codec.encode(value)
            assert got is value or (got == value and type(got) is type(value)), (codec, value, got)


def test_issue12_r13_writer_rows_equal_block_row_values() -> None:
    """The writer's per-block plan writes each dashboard row as :meth:`Block.row_values`
    does (the codecs that change a value, Yes/No for a flag, still run); a live formula is
    written as it is, and an unknown column is refused by name."""
    _stored, _battle, result, _rows = _resolved()
    new = result.battle
    updates = writer.battle_updates(LAY, new, status="s", last_action="a", breakdown_too=False)
    roster = LAY.block("Cohorts_Roster")
    got = next(u for u in updates if u.range == roster.range())
    spec = new.cohorts[0]
    first = {"cohort": spec.name, "member": spec.members[0].name, "role": "Sergeant",
             "state": new.state[spec.name].states[spec.members[0].name].value,
             "hero": spec.members[0].name in new.state[spec.name].hero_used}
    assert got.values[0] == roster.row_values(first)
    assert got.values[0][roster.index("hero")] in ("Yes", "No")
    formula = writer.Formula("=1+1")
    cells = writer._cells(roster, {**first, "role": formula})
    assert cells[roster.index("role")] is formula
    with pytest.raises(KeyError, match="no column 'nope'"):
        writer._cells(roster, {**first, "nope": 1})
    padded = writer._pad([first, {**first, "role": formula}, {"cohort": spec.name}], roster)  # a block's rows at once
    assert padded[:3] == [roster.row_values(first), cells, roster.row_values({"cohort": spec.name})]
    assert padded[1][roster.index("role")] is formula and len(padded) == roster.rows
    assert all(row == [None] * len(roster.columns) for row in padded[3:])
    with pytest.raises(KeyError, match="no column 'nope'"):
        writer._pad([first, {**first, "nope": 1}], roster)


def test_issue12_r13_a_phase_writes_the_same_dashboard_without_the_breakdown() -> None:
    """A phase (``breakdown_too=False``) writes every block a build writes but the pool
    breakdown, with the same cells (the breakdown's lines are not even built then)."""
    _stored, _battle, result, _rows = _resolved()
    new = result.battle
    full = writer.battle_updates(LAY, new, status="s", last_action="a")
    phase = writer.battle_updates(LAY, new, status="s", last_action="a", breakdown_too=False)
    breakdown = LAY.block("Cohorts_Breakdown").range()
    assert [u for u in full if u.range != breakdown] == phase
    assert any(u.range == breakdown and any(any(row) for row in u.values) for u in full)


def test_issue12_cohort_sheet_pools_by_the_cohort_object_follow_the_house_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cohort Sheet 1.1-1.7: pools remembered by the cohort object are that cohort's pools
    under the battle's own house rules and catalog: the same object under other rules or
    another catalog is computed anew, and the same object under the same ones is not."""
    from sheetsync.systems.bbn.rules import battle as battle_module

    computed: list[tuple[str, str]] = []

    def compute(spec: Any, rules: Any, catalog: Any) -> tuple[str, str]:
        computed.append((spec.name, rules.ability_bonus))
        return (spec.name, rules.ability_bonus)

    _stored, battle, _result, _rows = _resolved(2)
    monkeypatch.setattr(battle_module, "compute_pools", compute)
    monkeypatch.setattr(battle_module, "_POOLS_CACHE", {})
    monkeypatch.setattr(battle_module, "_POOLS_BY_SPEC", {})
    first = Battle.model_validate(battle.to_data())
    assert first.pools == {c.name: (c.name, "pooled") for c in first.cohorts}
    other = first.house_rules.model_copy(update={"ability_bonus": "per_ability"})
    swapped = Battle.model_validate({**first.model_dump(), "cohorts": first.cohorts, "house_rules": other})
    assert swapped.cohorts[0] is first.cohorts[0]  # the very objects, under other rules
    assert swapped.pools == {c.name: (c.name, "per_ability") for c in first.cohorts}
    extended = Battle.model_validate({**first.model_dump(), "cohorts": first.cohorts, "catalog_extra": {"merits": {}}})
    count = len(computed)
    assert extended.pools == first.pools and len(computed) == count + len(first.cohorts)  # another catalog: anew
    again = Battle.model_validate({**first.model_dump(), "cohorts": first.cohorts})
    assert again.pools == first.pools and len(computed) == count + len(first.cohorts)  # same: remembered


def test_issue12_r25_snapshot_orders_compact_from_their_objects_as_from_their_dump() -> None:
    """R25: the State writes a snapshot's orders without their default values; made from
    the Order objects a snapshot was dumped from, they are what validating each dumped
    order and dumping it compact gives; a list the snapshot did not make (an equal copy)
    takes the validating path."""
    _stored, battle, _result, _rows = _resolved()
    snap = battle.snapshot()
    copied = {**snap, "orders": json.loads(json.dumps(snap["orders"]))}
    fast, slow = sj._canonical(snap), sj._canonical(copied)
    assert fast == slow and json.dumps(fast) == json.dumps(slow)
    assert any(len(o) < len(snap["orders"][i]) for i, o in enumerate(fast["orders"]))  # defaults left out
    from sheetsync.systems.bbn.rules.battle import orders_behind

    assert orders_behind(snap["orders"]) is battle.orders and orders_behind(copied["orders"]) is None


def test_issue12_r24_an_unchanged_ranges_sheet_is_checked_once_and_keeps_its_entries() -> None:
    """R24: a phase's Ranges sheet equal to the stored ranges gives the stored battle's own
    entries (shared with its undo snapshot, dumped once); the same sheet again is not
    checked again; a changed sheet gives its own entries, and a wrong one is refused every
    time, never remembered."""
    from sheetsync.systems.bbn.files import loader
    from sheetsync.systems.bbn.rules import battle as battle_module

    stored = _played(1)
    rules = stored.house_rules.model_dump(mode="json")
    orders = [{"cohort": "Cohort 0", "task": "Melee Attack", "target": "Cohort 1"}]
    sheet = [[r.a, r.b, r.band.value] for r in stored.ranges]
    loader._RANGES_SEEN.clear()
    def same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))

    first = load_turn(stored, rules, sheet, orders)
    assert same(first.ranges, stored.ranges)  # the stored battle's own entries
    assert same(load_turn(stored, rules, [list(r) for r in sheet], orders).ranges, stored.ranges)
    assert len(loader._RANGES_SEEN) == 1
    snap = first.snapshot()
    assert snap["ranges"] is battle_module._shared_dump(stored.ranges)
    assert snap["ranges"] == [r.model_dump(mode="json") for r in stored.ranges]
    changed = [["Cohort 0", "Cohort 1", "Distanced"], *sheet[1:]]
    other = load_turn(stored, rules, changed, orders)
    assert other.ranges != stored.ranges and other.ranges[0].band.value == "Distanced"
    assert other == _plain_turn(stored, rules, changed, orders)
    wrong = [["Cohort 0", "Cohort 99", "Personal"]]
    for _ in range(2):
        with pytest.raises(InputError, match="Cohort 99"):
            load_turn(stored, rules, wrong, orders)
    assert all("Cohort 99" not in repr(key) for key in loader._RANGES_SEEN)


def test_issue12_r13_r25_a_phase_and_its_undo_leave_the_characters_unread() -> None:
    """R13, R25: Resolve Phase and Undo Phase take the cohorts from the State, so their read
    leaves out the Characters sheet (a build and an end read it); given that shorter read
    or the whole plan's grids, a step writes the very same cells."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(4)), LAY)
    backend.write_ranges(mark_updates(find_system("bbn"), LAY.capacity))
    characters = LAY.block("Characters_Table")
    steps = usecases.tracker_steps(backend)
    for action in ("build", "end"):
        assert any(r.startswith("Characters!") for r in steps.read_plan(action))
    for action in ("resolve", "undo"):
        plan = steps.read_plan(action)
        assert not any(r.startswith("Characters!") for r in plan)
        assert len(plan) == len(steps.read_plan()) - 1
    full_grids = backend.read_ranges(steps.read_plan())
    assert full_grids[1], "the Characters sheet holds the battle's characters"
    short = steps.step("resolve", backend.read_ranges(steps.read_plan("resolve")))
    whole = steps.step("resolve", full_grids)
    assert short[1] == whole[1] and short[0].message == whole[0].message
    assert not any(u.range.startswith(characters.sheet) for u in short[1])


def _tracker_sheets(rules: dict[str, Any] | None = None, ranges: list[list[Any]] | None = None) -> Sheets:
    """A four-cohort tracker's grids, with House Rules values and Ranges rows typed over."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(4)), LAY)
    backend.write_ranges(mark_updates(find_system("bbn"), LAY.capacity))
    sh = Sheets.from_grids(backend.read_ranges(read_plan(LAY)))
    for row in sh.house_rules:
        if rules and row[0] in rules:
            row[1] = rules[row[0]]
    if ranges is not None:
        sh.ranges[: len(ranges)] = [list(r) for r in ranges]
    return sh


def _turn_problems(sh: Sheets) -> list[tuple[str, str]]:
    stored = journal(LAY, sh).stored
    assert stored.battle is not None
    with pytest.raises((SheetFormatError, InputError)) as err:
        parse_turn(LAY, sh, stored.battle)
    return [(p.where, p.message) for p in err.value.problems]


def _clear_reader_caches() -> None:
    reader._RULES_SEEN.clear()
    reader._RANGES_READ.clear()


def test_issue12_r24_a_house_rules_and_ranges_sheet_read_again_gives_the_same_battle_undecoded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """R24, RULINGS: the House Rules and Ranges sheets read a second time, unchanged, give
    the very battle and cell names the first read gave, and no cell of theirs is decoded
    again; a changed sheet is read afresh."""
    _clear_reader_caches()
    sh = _tracker_sheets({"combo_bonus": 4}, [["Cohort 0", "Cohort 1", "Distanced"]])
    stored = journal(LAY, sh).stored
    assert stored.battle is not None
    first, rows = parse_turn(LAY, sh, stored.battle)
    assert first.house_rules.combo_bonus == 4 and first.ranges[0].band.value == "Distanced"
    r = reader._Reader(LAY)
    assert reader.parse_house_rules(r, sh)["combo_bonus"] == 4
    fresh_where = dict(r.where)
    decoded: list[str] = []
    real = reader.table.decode

    def counting(col: Any, value: Any, where: str, problems: list[Any]) -> Any:
        decoded.append(where)
        return real(col, value, where, problems)

    monkeypatch.setattr(reader.table, "decode", counting)
    again, rows_again = parse_turn(LAY, sh, stored.battle)
    assert again == first and rows_again == rows
    assert decoded and not [w for w in decoded if w.startswith(("House Rules!", "Ranges!"))]
    r2 = reader._Reader(LAY)
    reader.parse_house_rules(r2, sh)
    ranges = reader._ranges(r2, sh)
    assert r2.where == fresh_where and ranges[0] == ["Cohort 0", "Cohort 1", "Distanced"]
    assert r2.cells()["ranges[0].band"] == "Ranges!C3"
    changed = _tracker_sheets({"combo_bonus": 5}, [["Cohort 0", "Cohort 1", "Personal"]])
    other, _ = parse_turn(LAY, changed, stored.battle)
    assert other.house_rules.combo_bonus == 5 and other.ranges[0].band.value == "Personal"
    assert any(w.startswith("House Rules!") for w in decoded)  # read afresh (a range's text needs no decoding)


def test_issue12_r24_bad_house_rules_and_ranges_cells_are_named_on_every_read() -> None:
    """R24, issue 9: a bad cell on either sheet is named with its address on every read
    (a sheet with a problem is never remembered), and so is a problem only the loader
    finds (a rule out of its bounds, a range naming no cohort), remembered sheet or not."""
    _clear_reader_caches()
    bad = _tracker_sheets({"scared_loses_action": "perhaps"}, [["Cohort 0", "Cohort 1", Formula('="Personal"')]])
    first = _turn_problems(bad)
    assert any(w.startswith("House Rules!B") for w, _ in first) and any(w == "Ranges!C3" for w, _ in first)
    assert _turn_problems(bad) == first
    assert not reader._RULES_SEEN and not reader._RANGES_READ
    loader_only = _tracker_sheets({"combo_bonus": 99}, [["Cohort 0", "Cohort 99", "Very Far"]])
    once = _turn_problems(loader_only)
    assert reader._RULES_SEEN and reader._RANGES_READ  # the cells read well: remembered
    again = _turn_problems(loader_only)
    assert again == once
    wheres = [w for w, _ in once]
    assert {"Ranges!B3", "Ranges!C3"} <= set(wheres) and any(w.startswith("House Rules!B") for w in wheres)
