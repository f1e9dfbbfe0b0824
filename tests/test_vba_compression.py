"""[MS-OVBA] 2.4.1 compression of module source and the dir stream: every input reads back
exactly, through our decompressor and through oletools', including data that will not
compress (random bytes) at and around the 4096-byte chunk boundaries."""

from __future__ import annotations

import os
import random
import warnings
import zipfile
from pathlib import Path

import olefile
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sheetsync.backends.vba import compress, decompress

with warnings.catch_warnings():  # oletools 0.60 calls pyparsing APIs deprecated in 3.3
    warnings.simplefilter("ignore", DeprecationWarning)
    from oletools.olevba import decompress_stream

SETTINGS = settings(max_examples=200, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CHUNK = 4096
# Lengths at and around every place the chunking changes: a whole chunk, the largest
# final chunk that fits as literals (3640 + 455 flag bytes = 4095), one past it.
EDGES = sorted({n + d for n in (0, 3640, 4096, 4096 + 3640, 8192, 12288) for d in (-2, -1, 0, 1, 2)} - {-1, -2})


def _chunks(container: bytes) -> list[tuple[bool, int]]:
    """(compressed?, size in bytes with header) of each chunk of a container."""
    out, pos = [], 1
    while pos < len(container):
        header = int.from_bytes(container[pos : pos + 2], "little")
        size = (header & 0x0FFF) + 3
        out.append((bool(header & 0x8000), size))
        pos += size
    return out


def _round_trips(data: bytes) -> None:
    packed = compress(data)
    assert decompress(packed) == data
    assert bytes(decompress_stream(bytearray(packed))) == data  # an independent reader


# -- the deviation: a final chunk that does not compress ---------------------------------


@pytest.mark.parametrize("size", [3641, 3700, 4000, 4095])
def test_ms_ovba_2_4_1_incompressible_short_last_chunk_round_trips(size: int) -> None:
    """Before, compress() raised ValueError here: random bytes of 3,641 to 4,095 bytes
    (the final chunk) need more than 4096 bytes as literal tokens."""
    data = random.Random(size).randbytes(size)
    packed = compress(data)
    assert decompress(packed) == data
    assert bytes(decompress_stream(bytearray(packed))) == data
    # never a raw chunk for the short remainder: 2.4.1.3.10 would pad it with zeros
    assert all(compressed for compressed, _ in _chunks(packed))
    assert all(size <= CHUNK + 2 for _, size in _chunks(packed))


def test_ms_ovba_2_4_1_3_10_incompressible_full_chunk_is_one_raw_chunk() -> None:
    data = random.Random(7).randbytes(CHUNK * 2 + 100)
    packed = compress(data)
    assert _chunks(packed)[:2] == [(False, CHUNK + 2), (False, CHUNK + 2)]
    # a raw chunk: header 0x3FFF (flag 0, signature 0b011, size 4095), then the bytes as they are
    assert packed[1:3] == (0x3FFF).to_bytes(2, "little")
    assert packed[3 : 3 + CHUNK] == data[:CHUNK]
    _round_trips(data)


@pytest.mark.parametrize("size", EDGES)
def test_ms_ovba_2_4_1_random_bytes_round_trip_at_chunk_edges(size: int) -> None:
    _round_trips(random.Random(size).randbytes(size))


# -- properties ------------------------------------------------------------------------------


@SETTINGS
@given(st.binary(max_size=3 * CHUNK + 10))
def test_ms_ovba_2_4_1_any_bytes_round_trip(data: bytes) -> None:
    _round_trips(data)


@SETTINGS
@given(st.sampled_from(EDGES), st.randoms(use_true_random=False))
def test_ms_ovba_2_4_1_incompressible_bytes_round_trip_near_chunk_boundaries(size: int, rng: random.Random) -> None:
    _round_trips(rng.randbytes(size))


@SETTINGS
@given(
    st.lists(st.sampled_from([b"Sub ", b"End Sub\r\n", b"Dim x As Long\r\n", b"RunPython ", b"'", b"\x00", b"\xff"]),
             max_size=2000),
    st.binary(max_size=64),
)
def test_ms_ovba_2_4_1_repetitive_text_round_trips_and_shrinks(words: list[bytes], noise: bytes) -> None:
    data = b"".join(words) + noise
    _round_trips(data)
    if len(data) >= 2 * CHUNK and not noise:
        assert len(compress(data)) < len(data)


# -- the decompressor reads what Excel wrote, and refuses what is not a container ----------


def test_ms_ovba_2_4_1_3_1_decompress_reads_excels_streams_as_oletools_does() -> None:
    import xlwings

    book = Path(xlwings.__file__).parent / "quickstart_standalone.xlsm"
    with zipfile.ZipFile(book) as zf:
        ole = olefile.OleFileIO(zf.read("xl/vbaProject.bin"))
    try:
        container = ole.openstream("VBA/dir").read()
        assert decompress(container) == bytes(decompress_stream(bytearray(container)))
        module = ole.openstream("VBA/xlwings").read()  # its source starts after the p-code
    finally:
        ole.close()
    # the source follows the p-code cache: find its container by its first words
    start = next(i for i in range(len(module)) if module[i] == 1 and _decodes(module[i:]))
    assert decompress(module[start:]).startswith(b'Attribute VB_Name = "xlwings"')


def _decodes(container: bytes) -> bool:
    try:
        return decompress(container).startswith(b"Attribute VB_Name")
    except ValueError:
        return False


@pytest.mark.parametrize(
    ("container", "problem"),
    [
        (b"", "first byte is not 0x01"),
        (b"\x02\x00\x00", "first byte is not 0x01"),
        (b"\x01\x05", "chunk header cut short"),
        (b"\x01\x00\x00", "no 0b011 signature"),
        (b"\x01\xff\x3f" + b"a" * 100, "raw chunk at byte 1 does not hold 4096 bytes"),
        (b"\x01\x03\xb0\x01\x00\x00", "reaches before its chunk"),
    ],
)
def test_ms_ovba_2_4_1_1_decompress_refuses_malformed_containers(container: bytes, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        decompress(container)


def test_compress_is_deterministic() -> None:
    data = os.urandom(9000) + b"Sub X()\r\nEnd Sub\r\n" * 300
    assert compress(data) == compress(data)
