"""The x86 `InfoHdr`: bytes the JIT writes, round trips for every version, every fixup code, seed errors."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.coreclr.codecs import U32_MAX, GCInfoEncodeError
from gctoy.coreclr.header import (
    INVALID_REV_PINVOKE_OFFSET,
    VERSIONS,
    InfoHdr,
    choose_shortcut,
    decode_header,
    encode_header,
    header_codes,
    shortcut,
)
from gctoy.errors import DecodeError

# ----------------------------------------------------------------------------- helpers


def real_row(index: int) -> InfoHdr:
    """Shortcut row ``index`` with the var-ptr placeholder replaced by a real count (1)."""
    row = shortcut(index)
    return dataclasses.replace(row, var_ptr_table_size=1) if row.var_ptr_table_size else row


def split_codes(codes: bytes) -> tuple[list[int], list[int]]:
    """(first-set codes, second-set codes) of a header's fixup bytes."""
    first, second = [], []
    i = 1
    while i < len(codes):
        code = codes[i] & 0x7F
        first.append(code)
        if code == 0x4F:
            i += 1
            second.append(codes[i] & 0x7F)
        i += 1
    return first, second


def counts(draw_small=20):
    return st.one_of(st.integers(0, draw_small), st.integers(0, U32_MAX))


@st.composite
def info_hdrs(draw, version: int) -> InfoHdr:
    b = st.booleans()
    sync_start = draw(st.one_of(st.just(0), counts()))
    fields = dict(
        prolog_size=draw(st.one_of(st.integers(0, 20), st.integers(0, 255))),
        epilog_size=draw(st.one_of(st.integers(0, 12), st.integers(0, 255))),
        epilog_count=draw(st.integers(0, 4)),
        arg_count=draw(st.one_of(st.integers(0, 40), st.integers(0, 0xFFFF))),
        frame_size=draw(counts(40)),
        untracked_cnt=draw(counts(6)),
        var_ptr_table_size=draw(counts(3)),
        gs_cookie_offset=draw(st.one_of(st.just(0), counts())),
        sync_start_offset=sync_start,
        sync_end_offset=draw(counts()) if sync_start else 0,
    )
    for name in ("epilog_at_end", "edi_saved", "esi_saved", "ebx_saved", "ebp_saved", "ebp_frame",
                 "interruptible", "double_align", "security", "handlers", "localloc", "edit_n_continue",
                 "varargs", "prof_callbacks", "generics_context", "generics_context_is_method_desc"):
        fields[name] = draw(b)
    if version >= 2:
        fields["return_kind"] = draw(st.integers(0, 3))
        fields["rev_pinvoke_offset"] = draw(st.one_of(st.just(INVALID_REV_PINVOKE_OFFSET), counts()))
    if version >= 4:
        fields["no_gc_region_cnt"] = draw(st.one_of(st.integers(0, 6), counts()))
    if version >= 5:
        fields["is_async"] = draw(b)
    if draw(st.booleans()):  # start near a shortcut row, as real methods do
        base = real_row(draw(st.integers(0, 127)))
        keep = draw(st.sets(st.sampled_from(list(fields))))
        fields.update({k: getattr(base, k) for k in keep})
    if not fields["sync_start_offset"]:
        fields["sync_end_offset"] = 0
    return InfoHdr(**fields)


any_version_hdr = st.sampled_from(VERSIONS).flatmap(lambda v: st.tuples(st.just(v), info_hdrs(v)))

# ----------------------------------------------------------------------------- known bytes

# The header of the x86 method in SOS's `!gcinfo` documentation (after its methodSize byte 0x36):
# row 0x54, argCount 4, untracked placeholder, epilog size 8, prolog 2 then 2<<3|3 = 19,
# fully interruptible; the untracked count 5 follows.
SOS_SAMPLE = bytes.fromhex("D48CC7AA93F34005")


@pytest.mark.parametrize("version", VERSIONS)
def test_sos_sample_header(version):
    hdr, end = decode_header(SOS_SAMPLE, version)
    assert end == len(SOS_SAMPLE)
    assert hdr == dataclasses.replace(
        shortcut(0x54), prolog_size=19, epilog_size=8, arg_count=4, untracked_cnt=5, interruptible=True,
    )
    assert hdr.ebp_frame and hdr.edi_saved and hdr.esi_saved and hdr.ebp_saved and not hdr.ebx_saved
    # The encoder picks the same row and the same fixups as the JIT that wrote the sample.
    assert encode_header(hdr, version) == SOS_SAMPLE


def test_arg_count_set_then_shift():
    # argCount 0 -> 35: SET_ARGCOUNT+2 then NEXT_FOUR_ARGCOUNT+3 (= 2 << 4 | 3).
    hdr = dataclasses.replace(shortcut(0), arg_count=35)
    assert choose_shortcut(hdr) == (0, False)
    assert encode_header(hdr) == bytes([0x80, 0x8A, 0x63])


def test_frame_size_single_shift():
    # frameSize 1 -> 18 = 1 << 4 | 2: one NEXT_FOUR_FRAMESIZE+2; the var-ptr count 5 follows.
    hdr = dataclasses.replace(shortcut(0x0C), frame_size=18, var_ptr_table_size=5)
    assert encode_header(hdr) == bytes([0x8C, 0x52, 0x05])


@pytest.mark.parametrize("index", range(128))
def test_every_shortcut_row_is_one_byte(index):
    hdr = real_row(index)
    tail = b"\x01" if hdr.var_ptr_table_size else b""
    for version in VERSIONS:
        assert choose_shortcut(hdr, version) == (index, True)
        assert encode_header(hdr, version) == bytes([index]) + tail
        assert decode_header(bytes([index]) + tail, version) == (hdr, 1 + len(tail))


def test_trailing_fields_in_order():
    hdr = InfoHdr(untracked_cnt=4, var_ptr_table_size=2, gs_cookie_offset=3, sync_start_offset=5,
                  sync_end_offset=6, rev_pinvoke_offset=7, no_gc_region_cnt=300)
    data = encode_header(hdr, 4)
    assert data.endswith(bytes([4, 2, 3, 5, 6, 7, 0x82, 0x2C]))
    assert decode_header(data, 4) == (hdr, len(data))


# ----------------------------------------------------------------------------- properties


@settings(max_examples=600)
@given(any_version_hdr, st.binary(max_size=4))
def test_decode_encode_round_trip(vh, tail):
    version, hdr = vh
    data = encode_header(hdr, version)
    assert decode_header(data + tail, version) == (hdr, len(data))
    # Decoding at an offset inside a larger blob works the same way.
    assert decode_header(b"\x00\x01" + data, version, 2) == (hdr, 2 + len(data))


@settings(max_examples=300)
@given(any_version_hdr)
def test_encode_decode_round_trip_of_encoder_bytes(vh):
    version, hdr = vh
    data = encode_header(hdr, version)
    again, end = decode_header(data, version)
    assert end == len(data)
    assert encode_header(again, version) == data


@settings(max_examples=300)
@given(any_version_hdr)
def test_header_bytes_shape(vh):
    version, hdr = vh
    codes = header_codes(hdr, version)
    # Every byte but the last has the "more" bit, and 0x4F is always written as 0xCF.
    assert all(b & 0x80 for b in codes[:-1]) and not codes[-1] & 0x80
    first, second = split_codes(codes)
    assert len(second) == first.count(0x4F)
    assert all(codes[i] == 0xCF for i in range(1, len(codes)) if codes[i] & 0x7F == 0x4F
               and (i == 1 or codes[i - 1] != 0xCF))
    if version == 1:
        assert 0x4E not in first and 0x4F not in first


# ----------------------------------------------------------------------------- every fixup code


def coverage_headers():
    """Headers that between them make the encoder write every fixup code it can write."""
    base = InfoHdr()
    out = [dataclasses.replace(base, frame_size=n) for n in range(0, 600, 1)]
    out += [dataclasses.replace(shortcut(10), frame_size=n) for n in range(8)]
    out += [dataclasses.replace(base, arg_count=n) for n in range(0, 600)]
    out += [dataclasses.replace(shortcut(0x7F), arg_count=n) for n in range(9)]
    out += [dataclasses.replace(base, prolog_size=n) for n in range(256)]
    out += [dataclasses.replace(base, epilog_size=n) for n in range(256)]
    out += [dataclasses.replace(base, epilog_count=c, epilog_at_end=e) for c in range(5) for e in (False, True)]
    out += [dataclasses.replace(real_row(0x0D), untracked_cnt=n) for n in range(6)]
    out += [dataclasses.replace(shortcut(0x0C), var_ptr_table_size=0)]
    flags = ("edi_saved", "esi_saved", "ebx_saved", "ebp_saved", "ebp_frame", "interruptible",
             "double_align", "security", "handlers", "localloc", "edit_n_continue", "varargs",
             "prof_callbacks", "generics_context", "generics_context_is_method_desc")
    out += [dataclasses.replace(base, **{f: True}) for f in flags]
    out += [InfoHdr(var_ptr_table_size=9), InfoHdr(gs_cookie_offset=8), InfoHdr(sync_start_offset=1, sync_end_offset=1),
            InfoHdr(rev_pinvoke_offset=0)]
    out += [InfoHdr(return_kind=k, is_async=a) for k in range(4) for a in (False, True)]
    out += [InfoHdr(no_gc_region_cnt=n) for n in range(7)]
    # Small values set on top of other rows, with a flag no row has so that no row matches exactly.
    small = [("prolog_size", n) for n in range(17)] + [("epilog_size", n) for n in range(11)]
    small += [("arg_count", n) for n in range(9)] + [("frame_size", n) for n in range(8)]
    small += [("untracked_cnt", n) for n in range(4)] + [("epilog_count", n) for n in range(5)]
    small += [("epilog_at_end", e) for e in (False, True)]
    for index in range(0, 128, 5):
        row = dataclasses.replace(real_row(index), edit_n_continue=True)
        out += [dataclasses.replace(row, **{field: value}) for field, value in small]
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_every_fixup_code_is_written_and_read(version):
    first: set[int] = set()
    second: set[int] = set()
    for hdr in coverage_headers():
        try:
            data = encode_header(hdr, version)
        except GCInfoEncodeError:
            continue  # a field this version does not have
        assert decode_header(data, version) == (hdr, len(data))
        f, s = split_codes(header_codes(hdr, version))
        first.update(f)
        second.update(s)
    unused_in_v1 = {0x4E, 0x4F} if version == 1 else set()
    assert first == set(range(0x80)) - unused_in_v1
    # No shortcut row has a return kind or no-GC regions, so "set to 0" is never needed.
    expected_second = {1: set(), 2: {1, 2, 3}, 3: {1, 2, 3}, 4: {1, 2, 3, 5, 6, 7, 8, 9},
                       5: set(range(1, 8)) | {9, 10, 11, 12, 13}}[version]
    assert second == expected_second


@pytest.mark.parametrize(("version", "code", "field", "value"), [
    (2, 0, "return_kind", 0), (4, 0, "return_kind", 0), (4, 4, "no_gc_region_cnt", 0),
    (5, 0, "return_kind", 0), (5, 8, "no_gc_region_cnt", 0), (5, 4, "is_async", True),
])
def test_second_set_codes_the_encoder_never_needs_still_decode(version, code, field, value):
    # Start from a state where the code changes something: first set a value with another code.
    setup = {("return_kind", 0): 0x03, ("no_gc_region_cnt", 0): 0x0C if version == 5 else 0x08,
             ("is_async", True): 0x00}[(field, value)]
    data = bytes([0x80, 0xCF, 0x80 | setup, 0xCF, code])
    hdr, end = decode_header(data, version)
    assert end == len(data) and getattr(hdr, field) == value


# ----------------------------------------------------------------------------- versions and seed errors


@pytest.mark.parametrize(("code", "field"), [
    (0x42, "security"), (0x43, "handlers"), (0x44, "localloc"), (0x45, "edit_n_continue"),
    (0x48, "varargs"), (0x49, "prof_callbacks"), (0x4C, "generics_context"),
    (0x4D, "generics_context_is_method_desc"),
])
def test_seed_codes_above_0x41_are_modern_flag_flips(code, field):
    # The seed calls 0x42 "flip b", 0x43 "flip varPtrTableSize", 0x44 "untrackedCnt = 0xFFFF" and
    # 0x45..0x4F illegal. CoreCLR flips these flags instead.
    hdr, end = decode_header(bytes([0x80, code]), 1)
    assert end == 2 and hdr == dataclasses.replace(shortcut(0), **{field: True})


def test_seed_placeholders_are_modern():
    # 0x46 switches the var-ptr count to "follows the header" (the seed: flip 16 bits of it).
    assert decode_header(bytes([0x80, 0x46, 0x83, 0x00]), 3)[0].var_ptr_table_size == 0x180
    # 0x47 means "untracked count follows" as an Unsigned, not "0xFFFF, too big".
    hdr, end = decode_header(bytes([0x80, 0x47, 0x82, 0x2C]), 3)
    assert (hdr.untracked_cnt, end) == (300, 4)
    # 0x4A, 0x4B, 0x4E, 0x4F (the seed: illegal): GS cookie, sync range, rev-P/Invoke frame, second set.
    hdr, end = decode_header(bytes([0x80, 0xCA, 0xCB, 0xCE, 0xCF, 0x02, 0x10, 0x20, 0x21, 0x00]), 3)
    assert end == 10
    assert (hdr.gs_cookie_offset, hdr.sync_start_offset, hdr.sync_end_offset) == (0x10, 0x20, 0x21)
    assert (hdr.rev_pinvoke_offset, hdr.return_kind) == (0, 2)


def test_counts_are_32_bit():
    # The seed's InfoHdr has 16-bit frameSize and counts; the modern one has 32-bit ones.
    hdr = InfoHdr(frame_size=0x12345678, untracked_cnt=0x10000, var_ptr_table_size=0xFFFFFFFF)
    assert decode_header(encode_header(hdr), 5)[0] == hdr


def test_rev_pinvoke_flip_is_a_toggle():
    hdr, _ = decode_header(bytes([0x80, 0xCE, 0x4E]), 2)
    assert hdr.rev_pinvoke_offset == INVALID_REV_PINVOKE_OFFSET


@pytest.mark.parametrize(("version", "data", "offset"), [
    (1, bytes([0x80, 0x4E]), 1),  # no rev-P/Invoke flip in v1
    (1, bytes([0x80, 0xCF, 0x01]), 1),  # no second set in v1
    (3, bytes([0x80, 0x4F]), 1),  # 0x4F must say "more"
    (3, bytes([0x80, 0xCF, 0x04]), 2),  # v2/v3 second set is return kind 0..3 only
    (4, bytes([0x80, 0xCF, 0x0A]), 2),
    (5, bytes([0x80, 0xCF, 0x0E]), 2),
    (5, b"", 0),
    (5, bytes([0x80]), 1),
    (5, bytes([0x80, 0xCF]), 2),
    (5, bytes([0x80, 0x47]), 2),  # untracked count missing
    (5, bytes([0x80, 0xCB, 0x00, 0x05]), 4),  # sync end missing
    (5, bytes([0x80, 0x88, 0xEF, 0xEF, 0xEF, 0xEF, 0x6F]), 6),  # argCount beyond 16 bits
    (5, bytes([0x80, 0x91, 0xF7, 0xF7, 0x77]), 4),  # prologSize beyond 8 bits
])
def test_malformed_headers(version, data, offset):
    with pytest.raises(DecodeError) as e:
        decode_header(data, version)
    assert e.value.offset == offset


@pytest.mark.parametrize(("version", "hdr"), [
    (1, InfoHdr(return_kind=1)), (1, InfoHdr(rev_pinvoke_offset=4)), (3, InfoHdr(no_gc_region_cnt=1)),
    (4, InfoHdr(is_async=True)), (5, InfoHdr(epilog_count=5)), (5, InfoHdr(prolog_size=256)),
    (5, InfoHdr(arg_count=0x10000)), (5, InfoHdr(return_kind=4)), (5, InfoHdr(sync_end_offset=3)),
    (5, InfoHdr(frame_size=-1)), (5, InfoHdr(ebp_frame=1)), (6, InfoHdr()), (0, InfoHdr()),
])
def test_encoder_rejects_what_the_format_cannot_hold(version, hdr):
    with pytest.raises(GCInfoEncodeError):
        encode_header(hdr, version)
