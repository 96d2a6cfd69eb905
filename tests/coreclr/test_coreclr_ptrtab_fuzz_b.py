"""Random and mutated EBP-less pointer tables: decoding and scanning raise only `DecodeError`, and their work
per byte stays bounded (lines of gctoy counted on a sample of the blobs, tests/op_count.py)."""

from __future__ import annotations

import os
import random

from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.ptrtab_esp import CALLEE_SAVED, Call, EspTable, Kill, Pop, Push, ThisReg, canonical
from gctoy.coreclr.ptrtab_esp import MAX_PENDING, decode_table, encode_table, scan
from gctoy.coreclr.tables import CALL_PATTERN_TABLE
from gctoy.errors import DecodeError
from blob_mutation import mutate as _shared_mutate
from op_count import WorkPerByte

BLOBS = int(os.environ.get("GCTOY_FUZZ_COUNT", "30000"))
WORK_SAMPLE_EVERY = 25
# A large push entry of two bytes stands for many pushes, up to MAX_PENDING pending DWORDs in all,
# so a blob's work is allowed per byte plus MAX_PENDING (measured: at most ~2 lines per unit; one
# line per pending DWORD scanned again and again, a quadratic walk, would exceed it by far).
WORK_PER_BYTE = 40
HDR = InfoHdr()
#: Bytes that start entries of every kind, so that random blobs reach the deep paths.
OPCODES = (0x00, 0x1F, 0x20, 0x21, 0x40, 0x45, 0x51, 0x6F, 0x7F, 0x80, 0xCF, 0xD5, 0xE3, 0xF0, 0xF1,
           0xF4, 0xF7, 0xF8, 0xF9, 0xFC, 0xFF)


def random_table(rng: random.Random) -> EspTable:
    """A JIT-like description: pushes (some pointers), pops, kills, calls, `this`."""
    events: list = []
    stack: list[bool] = []
    off = 0
    deep = rng.random() < 0.1
    for _ in range(rng.randint(0, 40 if deep else 12)):
        off += rng.choice([0, 1, 2, 5, 9, 13, 20, 40, 300])
        kind = rng.choice("pppocckt" if deep else "ppocckt")
        if kind == "p" and len(stack) < (40 if deep else 16):
            gc = rng.random() < 0.5
            interior = gc and rng.random() < 0.3 and (not deep or len(stack) >= 34)
            stack.append(gc)
            events.append(Push(off, gc, interior))
        elif kind == "o" and stack:
            stack.pop()
            events.append(Pop(off))
        elif kind == "k" and any(stack):
            events.append(Kill(off, 1))
            stack[max(i for i, g in enumerate(stack) if g)] = False
        elif kind == "t":
            events.append(ThisReg(off, rng.choice(CALLEE_SAVED)))
        elif kind == "c":
            arg_cnt = rng.randint(0, len(stack))
            del stack[len(stack) - arg_cnt:]
            regs = tuple(r for r in CALLEE_SAVED if rng.random() < 0.3)
            events.append(Call(off, arg_cnt, regs, tuple(r for r in regs if rng.random() < 0.3)))
    return EspTable(tuple(events))


def mutate(rng: random.Random, data: bytes) -> bytes:
    return _shared_mutate(rng, data, rounds=3,
                          replace_byte=lambda: rng.choice([rng.randrange(256), rng.choice(OPCODES)]),
                          insert_byte=lambda: rng.choice(OPCODES))


def test_fuzz_only_decode_errors():
    rng = random.Random(0x5EED_E5B)
    corpus = [encode_table(random_table(rng), HDR) for _ in range(300)]
    counts = {"ok": 0, "error": 0}
    work = WorkPerByte(every=WORK_SAMPLE_EVERY)
    for i in range(BLOBS):
        if i % 2:
            blob = mutate(rng, rng.choice(corpus))
        else:
            blob = bytes(rng.choice([rng.randrange(256), rng.choice(OPCODES)]) for _ in range(rng.randint(0, 20)))
        counts[work.run(i, blob, lambda: _check(blob, i, rng), output_size=lambda _: MAX_PENDING)] += 1
    # Both outcomes are exercised in bulk, and no blob makes decoding or scanning work long per byte.
    assert counts["ok"] > BLOBS // 10 and counts["error"] > BLOBS // 10, counts
    assert work.worst <= WORK_PER_BYTE, work.describe()


def _check(blob: bytes, i: int, rng: random.Random) -> str:
    """Decode and scan ``blob`` (the ``i``-th input): "ok" or "error" for decoding."""
    outcome = "ok"
    try:
        table, entries, end = decode_table(blob, 0, HDR)
    except DecodeError as e:
        assert 0 <= e.offset <= len(blob)
        outcome = "error"
    else:
        assert 0 < end <= len(blob) and blob[end - 1] == 0xFF and entries[-1].end == end
        if i % 8 == 1:  # whatever decodes is a valid description, already canonical
            assert canonical(table) == table
            assert decode_table(encode_table(table, HDR), 0, HDR)[0] == table
    for strict in (False, True):
        try:
            state = scan(blob, 0, HDR, rng.choice([0, 1, 7, 13, 40, 0x1000, rng.randrange(1 << 32)]),
                         strict=strict)
        except DecodeError as e:
            assert 0 <= e.offset <= len(blob)
        else:
            assert state.pushed_bytes >= 0
    return outcome


def _regs(mask: int) -> tuple[str, ...]:
    return tuple(r for i, r in enumerate(CALLEE_SAVED) if mask >> i & 1)


def test_encoder_output_uses_every_entry_kind():
    """Every code the JIT writes is the first byte of an entry of some encoder output; 0x20 and
    the reserved codes never are."""
    tables = [EspTable((Push(d),)) for d in range(32)]  # 000DDDDD
    tables += [EspTable((Push(0), Pop(d))) for d in range(16)]  # 0101DDDD
    tables += [EspTable((Push(0), Push(0), Push(0), Call(d, n))) for d in range(16) for n in (2, 3)]  # 011CDDDD
    tables += [EspTable((Push(0), Call(d))) for d in range(1, 16)]  # 0100DDDD, and 0x40 below
    tables += [EspTable((Push(0), Push(0), Call(value >> 24, value & 0xFF, _regs(value >> 8 & 0xFF))))
               for value in CALL_PATTERN_TABLE]  # 1PPPPPPP
    tables += [EspTable((Push(0, True), Call(6, 0, _regs(m)))) for m in range(16)]  # 1101RRRR
    tables += [EspTable((Push(0, True),) + tuple(Push(0) for _ in range(8)) + (Call(3, 0, _regs(m)),))
               for m in range(16)]  # 1110RRRR
    tables += [EspTable((ThisReg(0, r), Push(0, True, True), Call(40, 0, ("ESI",)))) for r in CALLEE_SAVED]
    tables += [EspTable((Push(0, True),) + tuple(Push(0) for _ in range(33)) + (Call(3, 0, ("ESI",)),))]
    seen: set[int] = set()
    for table in tables:
        data = encode_table(table, HDR)
        seen |= {data[e.start] for e in decode_table(data, 0, HDR)[1]}
    written = set(range(0x00, 0x20)) | set(range(0x40, 0xF1)) | {0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xFF}
    assert seen == written
