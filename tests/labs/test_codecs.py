"""Lab of chapter 13 (gctoy.labs.codecs): the check fails on the skeleton, passes on the notebook's
solution, and fails with a message that teaches on plausible wrong codecs."""

from __future__ import annotations

import pytest

from course_notebooks import NOTEBOOKS
from gctoy.course import load_chapter, strip_solutions
from gctoy.labs import LabFailure
from gctoy.labs import codecs as lab

CHAPTER = NOTEBOOKS / "13_x86_GC_info_encodings_and_the_method_header.ipynb"


def _lab_source() -> str:
    return load_chapter(CHAPTER).labs()[0].source


def _functions(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "lab", "exec"), namespace)
    return {name: namespace[name] for name in ("encode_unsigned", "decode_unsigned", "encode_signed", "decode_signed")}


def _check(functions: dict):
    return lab.check(functions["encode_unsigned"], functions["decode_unsigned"], functions["encode_signed"],
                     functions["decode_signed"])


@pytest.fixture(scope="module")
def solution() -> dict:
    return _functions(_lab_source())


def test_the_skeleton_fails():
    with pytest.raises(LabFailure, match="skeleton"):
        _check(_functions(strip_solutions(_lab_source())))


def test_the_solution_passes_and_reports_counts(solution):
    report = str(_check(solution))
    assert "all checks passed" in report
    assert "4 methods' GC info" in report and "read back with your decoders" in report
    assert "x86-32 under GC stress (EBP frames)" in report and "(ESP frames)" in report and "heap verified" in report


def test_gctoys_own_codecs_are_refused():
    from gctoy.coreclr import codecs

    with pytest.raises(LabFailure, match="yours"):
        lab.check(codecs.encode_unsigned, codecs.decode_unsigned, codecs.encode_signed, codecs.decode_signed)


# --------------------------------------------------------------------------- plausible wrong codecs


def _signed_seven_bits_first(value):
    """Signed that counts groups as Unsigned does: 7 magnitude bits in the first byte, so 64..127 take one."""
    negative, magnitude = value < 0, abs(value)
    groups = []
    while magnitude > 0x7F:                 # counts groups as for Unsigned: 64..127 become one byte
        groups.append(magnitude & 0x7F)
        magnitude >>= 7
    groups.append(magnitude | (0x40 if negative else 0))
    groups.reverse()
    return bytes(g | 0x80 for g in groups[:-1]) + bytes([groups[-1]])


def _signed_sign_in_bit_7(value):
    """The sign in bit 7 of the first byte (where 'more follows' lives), 7 magnitude bits left for it."""
    negative, magnitude = value < 0, abs(value)
    groups = []
    while magnitude > 0x3F:
        groups.append(magnitude & 0x7F)
        magnitude >>= 7
    first = magnitude | (0x80 if negative else 0)
    groups.append(first)
    groups.reverse()
    return bytes(g | 0x80 for g in groups[:-1]) + bytes([groups[-1]])


def _unsigned_leb128(value):
    """LEB128: least significant group first."""
    out = bytearray()
    while True:
        group, value = value & 0x7F, value >> 7
        out.append(group | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _decode_signed_twos_complement(data, offset=0):
    """Reads the magnitude bits as a two's-complement number instead of applying the sign bit."""
    first = data[offset]
    offset += 1
    value, bits = first & 0x7F, 7
    more = first & 0x80
    while more:
        byte = data[offset]
        offset += 1
        value = (value << 7) | (byte & 0x7F)
        bits += 7
        more = byte & 0x80
    if value & (1 << (bits - 1)):
        value -= 1 << bits
    return value, offset


def _decode_unsigned_ignores_offset(data, offset=0):
    value, pos = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos


def test_signed_that_writes_64_as_one_byte_fails_and_says_why(solution):
    with pytest.raises(LabFailure) as failure:
        _check({**solution, "encode_signed": _signed_seven_bits_first})
    message = str(failure.value)
    assert "encode_signed(64)" in message
    assert "6 bits" in message and "two bytes" in message and "-63 (0x7f) to 63 (0x3F)" in message
    assert "reads your bytes as 0" in message         # the one byte 40 is minus zero to CoreCLR


def test_signed_with_the_sign_in_bit_7_fails_and_says_why(solution):
    with pytest.raises(LabFailure) as failure:
        _check({**solution, "encode_signed": _signed_sign_in_bit_7})
    message = str(failure.value)
    assert "encode_signed(-1)" in message
    assert "bit 6 (0x40) of the FIRST byte" in message and "magnitude is stored" in message


def test_unsigned_in_leb128_order_fails_and_says_why(solution):
    with pytest.raises(LabFailure) as failure:
        _check({**solution, "encode_unsigned": _unsigned_leb128})
    assert "MOST significant 7-bit group first" in str(failure.value)


def test_twos_complement_signed_decoder_fails_and_says_why(solution):
    with pytest.raises(LabFailure) as failure:
        _check({**solution, "decode_signed": _decode_signed_twos_complement})
    message = str(failure.value)
    assert message.startswith("decode_signed(") and "negated when the sign bit is set" in message


def test_decoder_that_ignores_its_offset_fails_and_says_why(solution):
    with pytest.raises(LabFailure) as failure:
        _check({**solution, "decode_unsigned": _decode_unsigned_ignores_offset})
    assert "decode_unsigned(" in str(failure.value) and "offset=1" in str(failure.value)


def test_codecs_wrong_only_inside_gctoy_are_caught(solution):
    """Right on every value the comparison uses, wrong on one the real blobs hold: caught by the blob part."""
    def encode_unsigned(value):
        return solution["encode_unsigned"](value) if value != 0x90 else b"\x00"   # the GS cookie offset

    with pytest.raises(LabFailure) as failure:
        _check({**solution, "encode_unsigned": encode_unsigned})
    assert "With your encoders plugged in" in str(failure.value) and "0x1234-byte EBP method" in str(failure.value)


def test_plugging_in_is_undone(solution):
    from gctoy.coreclr import decode_unsigned, header, method

    with pytest.raises(LabFailure):
        _check({**solution, "decode_unsigned": _decode_unsigned_ignores_offset})
    assert header.decode_unsigned is decode_unsigned and method.decode_unsigned is decode_unsigned


# --------------------------------------------------------------------------- the GC-stress run


def _stress(functions: dict):
    return lab.stress_run(functions["encode_unsigned"], functions["decode_unsigned"], functions["encode_signed"],
                          functions["decode_signed"])


@pytest.mark.parametrize("name, wrong, words", [
    ("encode_signed", _signed_seven_bits_first,
     ["printed [", "with gctoy's codecs", "stale pointer", "encode_signed(95) gave 5F", "takes two bytes"]),
    ("encode_unsigned", _unsigned_leb128,
     ["ESP frames", "failed under GC stress", "encode_unsigned(142)", "MOST significant 7-bit group first"]),
    ("decode_signed", _decode_signed_twos_complement,
     ["EBP frames", "failed under GC stress", "decode_signed(48", "the format reads (-8,"]),
])
def test_a_wrong_codec_fails_in_the_x86_32_stress_run_and_says_why(solution, name, wrong, words):
    """The codecs write the GC info the x86-32 stack walk reads: a wrong one sends the collector to the wrong slot."""
    with pytest.raises(LabFailure) as failure:
        _stress({**solution, name: wrong})
    message = str(failure.value)
    assert "under GC stress" in message and "x86-32 GC-info encoder" in message
    for word in words:
        assert word in message, message


def test_the_stress_run_leaves_gctoys_codecs_and_decoded_methods_behind(solution):
    from gctoy.coreclr import decode_signed, info_tables

    with pytest.raises(LabFailure):
        _stress({**solution, "decode_signed": _decode_signed_twos_complement})
    assert info_tables.decode_signed is decode_signed
    # the wrong decoder's readings of the (right) blobs are not remembered for gctoy's own stack walks
    from gctoy.ir import parse_module
    from gctoy.runtime.run32 import run_module32

    done = run_module32(parse_module(lab.STRESS_PROGRAM), gc="semispace", stress=True, verify=True, frame="ebp")
    assert done.printed == [31, 32, 4242, 0, 99]
