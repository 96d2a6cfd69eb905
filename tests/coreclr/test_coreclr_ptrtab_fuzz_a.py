"""Random and mutated fully interruptible and EBP-frame pointer tables: only DecodeError, bounded work.

``GCTOY_FUZZ_COUNT`` sets the number of blobs per table kind (default 30,000 each, about 2 s
per kind on one core). Blobs that decode must re-encode to a table that decodes back the same. On a
sample of the blobs the lines of gctoy run are counted (tests/op_count.py): the work per byte stays bounded.
"""

from __future__ import annotations

import os
import random

from gctoy.coreclr import ptrtab_ebp, ptrtab_full
from gctoy.coreclr.codecs import GCInfoEncodeError
from gctoy.coreclr.header import InfoHdr
from gctoy.errors import DecodeError
from blob_mutation import mutate as _shared_mutate
from op_count import WorkPerByte

COUNT = int(os.environ.get("GCTOY_FUZZ_COUNT", "30000"))
WORK_SAMPLE_EVERY = 25
WORK_PER_BYTE = 250
FULL_HDRS = (InfoHdr(interruptible=True), InfoHdr(interruptible=True, ebp_frame=True, ebp_saved=True))
EBP_HDR = InfoHdr(ebp_frame=True, ebp_saved=True)
REGS = ("EAX", "ECX", "EDX", "EBX", "EBP", "ESI", "EDI")
INTERESTING = (0x00, 0x40, 0x80, 0xB0, 0xB8, 0xBC, 0xBF, 0xC0, 0xC8, 0xF0, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC,
               0xFD, 0xFE, 0xFF, 0x7F)


def _full_table(rng: random.Random) -> ptrtab_full.FullTable:
    F = ptrtab_full
    events, offset, live, depth, ptrs = [], 0, set(), 0, 0
    for _ in range(rng.randint(0, 25)):
        offset += rng.choice([0, 1, 5, 9, 40, 100, 3000])
        r = rng.choice(REGS)
        kind = rng.randrange(6)
        if kind == 0 and r not in live:
            events.append(F.RegLive(offset, r, rng.random() < 0.3, rng.random() < 0.1))
            live.add(r)
            offset += 1
        elif kind == 1 and r in live:
            events.append(F.RegDead(offset, r))
            live.discard(r)
            offset += 1
        elif kind == 2 and depth < 20:
            events.append(F.PushPtr(offset, depth, rng.random() < 0.3))
            depth, ptrs = depth + 1, ptrs + 1
        elif kind == 3 and depth < 20:
            events.append(F.PushNonPtr(offset))
            depth += 1
        elif kind == 4 and depth:
            n = rng.randint(1, depth)
            events.append(F.Pop(offset, n))
            depth, ptrs = depth - n, min(ptrs, depth - n)
        elif kind == 5 and ptrs:
            events.append(F.Kill(offset, 1))
            ptrs -= 1
    return F.FullTable(tuple(events))


def _ebp_table(rng: random.Random) -> ptrtab_ebp.EbpTable:
    E = ptrtab_ebp
    calls, offset = [], 0
    for _ in range(rng.randint(0, 10)):
        offset += rng.choice([1, 9, 100, 300, 5000])
        regs = tuple(r for r in E.CALLEE_SAVED if rng.random() < 0.4)
        byref = tuple(r for r in regs if rng.random() < 0.3)
        if rng.random() < 0.1:
            args = tuple(E.ArgOffset(4 * rng.randrange(300), rng.random() < 0.3) for _ in range(rng.randint(1, 4)))
            calls.append(E.CallSite(offset, regs, byref, arg_offsets=args))
        else:
            mask = rng.choice([0, rng.randrange(32), rng.randrange(4096), rng.randrange(1 << 32)])
            calls.append(E.CallSite(offset, regs, byref, mask, mask & rng.choice([0, 0, rng.randrange(1 << 32)])))
    return E.EbpTable(rng.choice([None, "EDI", "ESI", "EBX"]), tuple(calls))


def _mutate(rng: random.Random, data: bytes) -> bytes:
    return _shared_mutate(rng, data, rounds=4,
                          replace_byte=lambda: rng.choice([rng.randrange(256), rng.choice(INTERESTING)]),
                          insert_byte=lambda: rng.choice(INTERESTING + (rng.randrange(256),)))


def _blob(rng: random.Random, corpus: list[bytes]) -> bytes:
    if rng.random() < 0.6:
        return _mutate(rng, rng.choice(corpus))
    blob = bytes(rng.randrange(256) for _ in range(rng.randint(0, 20)))
    return blob + b"\xff" if rng.random() < 0.5 else blob


def _check_full(blob: bytes, hdr: InfoHdr, rng: random.Random) -> bool:
    try:
        table, entries, end = ptrtab_full.decode_table(blob, 0, hdr)
    except DecodeError as e:
        assert 0 <= e.offset <= len(blob)
        ok = False
    else:
        assert 0 < end <= len(blob) and entries[-1].end == end and entries[-1].kind == "end"
        try:
            again = ptrtab_full.encode_table(table, hdr)
        except GCInfoEncodeError:
            pass
        else:
            assert ptrtab_full.decode_table(again, 0, hdr)[0] == ptrtab_full.canonical(table)
        ok = True
    for cur in (rng.randrange(200), rng.randrange(1 << 20)):
        try:
            state = ptrtab_full.scan(blob, 0, hdr, cur, regs_offs=max(cur - rng.randrange(2), 0),
                                     partial_arg_info=hdr.ebp_frame and rng.random() < 0.5)
        except DecodeError as e:
            assert 0 <= e.offset <= len(blob)
        else:
            assert state.pushed_bytes >= 0
    return ok


def _check_ebp(blob: bytes, rng: random.Random) -> bool:
    try:
        table, entries, end = ptrtab_ebp.decode_table(blob, 0, EBP_HDR)
    except DecodeError as e:
        assert 0 <= e.offset <= len(blob)
        ok = False
    else:
        assert 0 < end <= len(blob) and entries[-1].end == end
        assert ptrtab_ebp.decode_table(ptrtab_ebp.encode_table(table, EBP_HDR), 0, EBP_HDR)[0] == table
        ok = True
    for cur in (rng.randrange(300), rng.randrange(1 << 20)):
        try:
            ptrtab_ebp.scan(blob, 0, EBP_HDR, cur)
        except DecodeError as e:
            assert 0 <= e.offset <= len(blob)
    return ok


def test_fuzz_fully_interruptible_table():
    rng = random.Random(0x5EED_00A1)
    corpus = [ptrtab_full.encode_table(_full_table(rng), rng.choice(FULL_HDRS)) for _ in range(300)]
    work = WorkPerByte(every=WORK_SAMPLE_EVERY)
    decoded = 0
    for i in range(COUNT):
        blob = _blob(rng, corpus)
        hdr = rng.choice(FULL_HDRS)
        decoded += work.run(i, blob, lambda: _check_full(blob, hdr, rng))
    assert COUNT // 20 < decoded < COUNT - COUNT // 20  # both outcomes happen in bulk
    assert work.worst <= WORK_PER_BYTE, work.describe()


def test_fuzz_ebp_frame_table():
    rng = random.Random(0x5EED_00A2)
    corpus = [ptrtab_ebp.encode_table(_ebp_table(rng), EBP_HDR) for _ in range(300)]
    work = WorkPerByte(every=WORK_SAMPLE_EVERY)
    decoded = 0
    for i in range(COUNT):
        blob = _blob(rng, corpus)
        decoded += work.run(i, blob, lambda: _check_ebp(blob, rng))
    assert COUNT // 20 < decoded < COUNT - COUNT // 20
    assert work.worst <= WORK_PER_BYTE, work.describe()
