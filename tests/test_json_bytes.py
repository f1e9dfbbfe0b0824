"""Issue 12: the State blob and the endpoint's answer are encoded by orjson, with the
general encoder behind it; the bytes are those of the standard library's compact JSON."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sheetsync.sheets.backend import Formula
from sheetsync.sheets.json_bytes import dumps

_PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


def _standard(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@given(_PLAIN)
def test_issue12_r25_plain_data_encodes_as_the_standard_compact_json(data: Any) -> None:
    """Texts (any character, quotes and controls included), whole numbers, flags, blanks,
    lists and text-keyed mappings: the very bytes of ``json.dumps``, and they read back."""
    assert dumps(data) == _standard(data)
    assert json.loads(dumps(data)) == data


def test_issue12_r25_a_seed_past_64_bits_and_number_keys_take_the_general_encoder() -> None:
    """A typed seed may have more digits than orjson encodes, and a mapping may be keyed by
    numbers: those take the general encoder, which gives the same text."""
    big = {"seed": 10**30, "phases": {1: "done"}, "neg": -(10**25)}
    assert json.loads(dumps(big)) == {"seed": 10**30, "phases": {"1": "done"}, "neg": -(10**25)}
    assert dumps({"seed": 10**30}) == _standard({"seed": 10**30})


@pytest.mark.parametrize("stray", [object(), Formula("=1+1"), {1, 2}, dt.datetime(2026, 1, 1)],
                         ids=["object", "dataclass", "set", "datetime"])
def test_issue12_an_object_that_is_not_json_data_is_a_type_error(stray: Any) -> None:
    """What is not JSON data is refused as the standard encoder refuses it, never written
    in some form of orjson's own (a dataclass as a mapping, a date-time as text)."""
    with pytest.raises(TypeError):
        dumps({"cell": stray})


@given(_PLAIN)
def test_issue12_r13_sorted_keys_encode_as_the_standard_sorted_json(data: Any) -> None:
    """A step's id hashes its parts with their keys sorted: the same bytes as the standard
    encoder's ``sort_keys=True`` (so an id does not change with the encoder)."""
    assert dumps(data, sort_keys=True) == json.dumps(data, sort_keys=True, separators=(",", ":"),
                                                     ensure_ascii=False).encode("utf-8")
