"""Random and mutated header blobs: decoding raises only `DecodeError`, and the work per byte stays bounded."""

from __future__ import annotations

import random

from gctoy.coreclr.codecs import decode_signed, decode_unsigned
from gctoy.coreclr.header import VERSIONS, InfoHdr, decode_header, encode_header, shortcut
from gctoy.errors import DecodeError
from blob_mutation import mutate as _shared_mutate
from op_count import WorkPerByte

BLOBS = 50_000
#: every so many inputs, the lines of gctoy run are counted; per input byte they stay under the limit
WORK_SAMPLE_EVERY = 25
WORK_PER_BYTE = 200


def _corpus(rng: random.Random) -> list[tuple[int, bytes]]:
    """Encoder-produced headers for every version: the seeds that mutations start from."""
    out = []
    for index in range(128):
        row = shortcut(index)
        for version in VERSIONS:
            hdr = InfoHdr(
                prolog_size=rng.choice([row.prolog_size, rng.randrange(256)]),
                epilog_size=rng.randrange(256), epilog_count=rng.randrange(5),
                arg_count=rng.choice([row.arg_count, rng.randrange(0x10000)]),
                frame_size=rng.choice([row.frame_size, rng.randrange(1 << 32)]),
                untracked_cnt=rng.choice([0, 2, 9, 1000]), var_ptr_table_size=rng.choice([0, 3, 500]),
                gs_cookie_offset=rng.choice([0, 12]), sync_start_offset=rng.choice([0, 1]),
                return_kind=rng.randrange(4) if version >= 2 else 0,
                is_async=version >= 5 and rng.random() < 0.5,
                no_gc_region_cnt=rng.choice([0, 3, 77]) if version >= 4 else 0,
                ebp_frame=rng.random() < 0.5, localloc=rng.random() < 0.2,
            )
            out.append((version, encode_header(hdr, version)))
    return out


def _mutate(rng: random.Random, data: bytes) -> bytes:
    return _shared_mutate(rng, data, rounds=4, replace_byte=lambda: rng.randrange(256),
                          insert_byte=lambda: rng.choice([0x80, 0xCF, 0xFF, 0x47, 0x4E, rng.randrange(256)]))


def test_fuzz_only_decode_errors():
    rng = random.Random(0x5EED_0002)
    corpus = _corpus(rng)
    counts = {"ok": 0, "error": 0}
    work = WorkPerByte(every=WORK_SAMPLE_EVERY)
    for i in range(BLOBS):
        if i % 2:
            version, seed = rng.choice(corpus)
            blob = _mutate(rng, seed)
            version = rng.choice([version, rng.choice(VERSIONS)])
        else:
            version = rng.choice(VERSIONS)
            blob = bytes(rng.randrange(256) for _ in range(rng.randint(0, 24)))
            if rng.random() < 0.5:  # runs of "more" bytes reach the long paths
                blob = bytes(x | 0x80 for x in blob[:-1]) + blob[-1:]
        counts[work.run(i, blob, lambda: _check(blob, version))] += 1
    # Both outcomes are exercised in bulk, and no input makes the decoders work long per byte.
    assert counts["ok"] > BLOBS // 10 and counts["error"] > BLOBS // 10
    assert work.worst <= WORK_PER_BYTE, work.describe()


def _check(blob: bytes, version: int) -> str:
    """Decode ``blob`` as a header and as both number encodings: "ok" or "error" for the header."""
    outcome = "ok"
    try:
        hdr, end = decode_header(blob, version)
    except DecodeError as e:
        assert 0 <= e.offset <= len(blob)
        outcome = "error"
    else:
        assert isinstance(hdr, InfoHdr) and 0 < end <= len(blob)
    for decode in (decode_unsigned, decode_signed):
        try:
            decode(blob, 0)
        except DecodeError as e:
            assert 0 <= e.offset <= len(blob)
    return outcome
