"""The per-byte explanation of a method header agrees with the decoder and covers every byte."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gctoy.coreclr.header import decode_header, encode_header  # noqa: E402
from gctoy.coreclr.header_explain import code_meaning, explain_header, header_fields  # noqa: E402
from gctoy.errors import DecodeError  # noqa: E402
from test_coreclr_header import any_version_hdr  # noqa: E402

SOS_SAMPLE = bytes.fromhex("D48CC7AA93F34005")


@settings(max_examples=300)
@given(any_version_hdr)
def test_explanation_matches_the_decoder_and_tiles_the_bytes(pair):
    version, hdr = pair
    data = b"\x55" + encode_header(hdr, version) + b"\xAA"
    explained, entries, end = explain_header(data, version, 1)
    assert (explained, end) == decode_header(data, version, 1)
    assert explained == hdr
    assert entries[0].start == 1 and entries[-1].end == end
    assert all(a.end == b.start for a, b in zip(entries, entries[1:]))
    assert all(e.text for e in entries)


def test_sos_sample_reads_byte_by_byte():
    hdr, entries, end = explain_header(SOS_SAMPLE, 5)
    texts = [e.text for e in entries]
    assert texts[0].startswith("shortcut row 0x54 (prolog 6, epilog 6, 1 epilog at the end")
    assert texts[1] == "argCount = 4 (SET_ARGCOUNT+4); more follows"
    assert texts[2].startswith("untrackedCnt is large")
    assert texts[5] == "prologSize = prologSize << 3 | 3 (NEXT_THREE_PROLOGSIZE); more follows"
    assert texts[6] == "flip interruptible"
    assert texts[7] == "untrackedCnt = 5 (Unsigned)"
    assert (hdr.prolog_size, hdr.untracked_cnt, hdr.interruptible) == (19, 5, True)


def test_the_seed_names_for_codes_above_0x41_are_not_the_real_ones():
    """Seed 002 calls 0x42 "Flip b", 0x43 "flip all 16 bits in varPtrTableSize", 0x44 "set untrackedCnt
    to 0xFFFF" and 0x45-0x4F illegal; the codes CoreCLR decodes mean something else."""
    assert code_meaning(0x42, 5) == "flip security"
    assert code_meaning(0x43, 5) == "flip handlers"
    assert code_meaning(0x44, 5) == "flip localloc"
    assert code_meaning(0x46, 5).startswith("flip var-ptr table presence")
    assert code_meaning(0x47, 5).startswith("untrackedCnt is large")


def test_bad_bytes_raise_decode_error():
    with pytest.raises(DecodeError):
        explain_header(b"\xD4\x8C", 5)


def test_header_fields_use_coreclr_names():
    names = [n for n, _ in header_fields(decode_header(SOS_SAMPLE, 5)[0])]
    assert names[:3] == ["prologSize", "epilogSize", "epilogCount"]
    assert "argCount" in names and names[-1] == "noGCRegionCnt"


def test_method_regions_carry_the_explanations():
    from gctoy.coreclr.method import MethodGCInfo, decode_with_entries, encode

    from gctoy.coreclr.header import InfoHdr

    blob = encode(MethodGCInfo.create(0x40, InfoHdr(prolog_size=19, epilog_size=8, ebp_frame=True,
                                                    ebp_saved=True, arg_count=4, frame_size=1)))
    header = next(r for r in decode_with_entries(blob).regions if r.name == "header")
    assert [e.text for e in header.entries] == [e.text for e in explain_header(blob, 5, 1)[1]]
    assert header.entries[0].text.startswith("shortcut row")


def test_trailing_fields_follow_the_placeholders_not_the_values():
    """A header the JIT would not write: the untracked placeholder (0x47) for a count of 2."""
    from gctoy.coreclr.header_explain import walk_header

    data = bytes([0x80, 0x47, 0x02])
    walk = walk_header(data, 5)
    assert walk.header.untracked_cnt == 2 and walk.end == 3
    assert walk.placeholders == {"untracked_cnt"}
    assert [e.text for e in walk.entries][-1] == "untrackedCnt = 2 (Unsigned)"
    assert [(e.start, e.end) for e in walk.entries] == [(0, 1), (1, 2), (2, 3)]
