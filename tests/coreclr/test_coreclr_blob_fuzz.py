"""Random and mutated whole-method blobs: decoding raises only `DecodeError` (with an offset), and its work per
byte stays bounded (counted in lines of gctoy on a sample of the blobs, tests/op_count.py).

CI runs 100,000 blobs; ``GCTOY_FUZZ_COUNT`` scales the number. Blobs that decode must also print
(gcdump), answer `gc_refs_at` at a few offsets, and keep their meaning through re-encoding.
"""

from __future__ import annotations

import importlib
import os
import random

import pytest

from gctoy.coreclr.codecs import GCInfoEncodeError
from gctoy.coreclr.gcdump import gcdump
from gctoy.coreclr.gcrefs import gc_refs_at
from gctoy.coreclr.header import VERSIONS, InfoHdr
from gctoy.coreclr.info_tables import Lifetime, NoGCRegion, UntrackedSlot
from gctoy.coreclr.method import MethodGCInfo, decode, encode
from gctoy.errors import DecodeError, GCToyError
from blob_mutation import mutate as _shared_mutate
from op_count import WorkPerByte

BLOBS = int(os.environ.get("GCTOY_FUZZ_COUNT", "100000"))
DEEP_EVERY = 97  # every so many decodable blobs also go through gcdump, gc_refs_at and re-encoding
WORK_SAMPLE_EVERY = 25  # every so many blobs, the lines of gctoy that decoding runs are counted
WORK_PER_BYTE = 250  # the most lines per byte (measured: at most ~55)

full = importlib.import_module("gctoy.coreclr.ptrtab_full")
ebp_tab = importlib.import_module("gctoy.coreclr.ptrtab_ebp")
esp_tab = importlib.import_module("gctoy.coreclr.ptrtab_esp")


def _full_table(rng: random.Random, ebp_frame: bool) -> tuple[object, int]:
    events, live, depth, offset = [], set(), 0, 0
    for _ in range(rng.randrange(10)):
        offset += rng.randint(1, 100)
        choice = rng.randrange(5)
        free = [r for r in ("EAX", "ECX", "EDX", "EBX", "EBP", "ESI", "EDI") if r not in live]
        if choice == 0 and free:
            reg = rng.choice(free)
            live.add(reg)
            events.append(full.RegLive(offset, reg, rng.random() < 0.3, False))
        elif choice == 1 and live:
            reg = rng.choice(sorted(live))
            live.remove(reg)
            events.append(full.RegDead(offset, reg))
        elif choice == 2:
            events.append(full.PushPtr(offset, depth, rng.random() < 0.3, False))
            depth += 1
        elif choice == 3 and not ebp_frame:
            events.append(full.PushNonPtr(offset, 1))
            depth += 1
        elif depth:
            n = rng.randint(1, depth)
            events.append(full.Pop(offset, n))
            depth -= n
    return full.FullTable(tuple(events)), offset


def _ebp_table(rng: random.Random) -> tuple[object, int]:
    calls, offset = [], 0
    for _ in range(rng.randrange(6)):
        offset += rng.choice([rng.randint(1, 15), rng.randint(16, 600), rng.randint(600, 70000)])
        regs = tuple(r for r in ("EDI", "ESI", "EBX") if rng.random() < 0.4)
        mask = rng.choice([0, rng.randrange(32), rng.randrange(1 << 12), rng.randrange(1 << 32)])
        byref = mask & rng.randrange(1 << 5) if rng.random() < 0.3 else 0
        calls.append(ebp_tab.CallSite(offset, regs, tuple(r for r in regs if rng.random() < 0.2), mask, byref))
    this = rng.choice([None, None, "EDI", "ESI", "EBX"])
    return ebp_tab.canonical(ebp_tab.EbpTable(this, tuple(calls))), offset


def _esp_table(rng: random.Random) -> tuple[object, int]:
    events, depth, offset = [], 0, 0
    for _ in range(rng.randrange(10)):
        offset += rng.choice([rng.randint(1, 12), rng.randint(13, 300)])
        choice = rng.randrange(3)
        if choice == 0:
            gc = rng.random() < 0.5
            events.append(esp_tab.Push(offset, gc, gc and rng.random() < 0.2))
            depth += 1
        elif choice == 1 and depth:
            events.append(esp_tab.Pop(offset, 1))
            depth -= 1
        else:
            n = rng.randint(0, depth)
            regs = tuple(r for r in ("EDI", "ESI", "EBX", "EBP") if rng.random() < 0.4)
            events.append(esp_tab.Call(offset, n, regs, tuple(r for r in regs if rng.random() < 0.2)))
            depth -= n
    return esp_tab.canonical(esp_tab.EspTable(tuple(events))), offset


def _method(rng: random.Random, version: int) -> MethodGCInfo:
    kind = rng.choice(["full-ebp", "full-esp", "ebp", "esp"])
    ebp_frame = kind in ("full-ebp", "ebp")
    hdr = InfoHdr(prolog_size=rng.randrange(60), epilog_size=rng.randrange(16), ebp_frame=ebp_frame,
                  ebp_saved=ebp_frame, interruptible=kind.startswith("full"), edi_saved=rng.random() < 0.5,
                  esi_saved=rng.random() < 0.5, frame_size=rng.choice([0, 3, 40, 5000]),
                  arg_count=rng.randrange(20), gs_cookie_offset=rng.choice([0, 0, 8]),
                  sync_start_offset=rng.choice([0, 0, 1]), return_kind=rng.randrange(4) if version >= 2 else 0)
    if hdr.sync_start_offset:
        hdr = InfoHdr(**{**hdr.__dict__, "sync_end_offset": 1})
    if kind == "ebp":
        table, last = _ebp_table(rng)
    elif kind == "esp":
        table, last = _esp_table(rng)
    else:
        table, last = _full_table(rng, ebp_frame)
    size = last + rng.randrange(100) + hdr.epilog_size
    epilogs = sorted(rng.randrange(size - hdr.epilog_size + 1) for _ in range(rng.randrange(5)))  # within the method
    lives, begin = [], 0
    for _ in range(rng.choice([0, 0, 1, 3, 6])):
        begin += rng.randrange(40)
        lives.append(Lifetime(4 * rng.randint(1, 200), begin, begin + rng.randrange(60),
                              rng.random() < 0.3, rng.random() < 0.2))
    untracked = [UntrackedSlot(4 * rng.randint(-300, 300), rng.random() < 0.3, rng.random() < 0.2)
                 for _ in range(rng.choice([0, 0, 2, 5]))]
    regions = []
    if version >= 4 and rng.random() < 0.3:
        regions = [NoGCRegion(o, rng.randint(1, 9)) for o in sorted(rng.randrange(size + 1) for _ in range(3))]
    return MethodGCInfo.create(size, hdr, epilogs=epilogs, untracked=untracked, lifetimes=lives,
                               no_gc_regions=regions, pointer_table=table)


def _corpus(rng: random.Random) -> list[tuple[int, bool, bytes]]:
    out = []
    for _ in range(300):
        version = rng.choice(VERSIONS)
        info = _method(rng, version)
        legacy = not info.no_gc_regions and rng.random() < 0.15
        out.append((version, legacy, encode(info, version, legacy=legacy)))
    return out


def _mutate(rng: random.Random, data: bytes) -> bytes:
    return _shared_mutate(rng, data, rounds=4, duplicate=True, replace_byte=lambda: rng.randrange(256),
                          insert_byte=lambda: rng.choice([0x80, 0xFF, 0x47, 0x46, 0xF8, 0xFB, rng.randrange(256)]))


def _deep(data: bytes, version: int, legacy: bool, info: MethodGCInfo) -> None:
    """A decodable blob prints, answers live-reference queries and keeps its meaning re-encoded."""
    text = gcdump(data, version, legacy=legacy)
    assert text.endswith("| \n")
    for offset in {0, info.header.prolog_size, info.method_size // 2, info.method_size, info.method_size + 1}:
        if offset > info.method_size:  # the runtime never asks past the end (a damaged prolog size may)
            with pytest.raises(GCToyError, match="past the method's end"):
                gc_refs_at(data, offset, active_frame=True, version=version, legacy=legacy)
            continue
        try:
            gc_refs_at(data, offset, active_frame=offset % 2 == 0, esp=0x1000, ebp=0x2000,
                       version=version, legacy=legacy)
        except DecodeError as e:  # a pointer table the runtime itself would reject when scanning
            assert 0 <= e.offset <= len(data)
    try:
        again = encode(info, version, legacy=legacy)
    except GCInfoEncodeError:
        # Only a register that goes live and dead at one offset of a fully interruptible table: a
        # meaning the runtime reads but the JIT never writes (decoding keeps its byte order).
        events = getattr(info.pointer_table, "events", ())
        runs = [(e.offset, e.reg) for e in events if hasattr(e, "reg")]
        assert len(runs) != len(set(runs)), "encode refused a table without a repeated register"
        return
    assert decode(again, version, legacy=legacy) == info


def test_fuzz_whole_blobs_only_decode_errors():
    rng = random.Random(0x5EED_0005)
    corpus = _corpus(rng)
    counts = {"ok": 0, "error": 0}
    work = WorkPerByte(every=WORK_SAMPLE_EVERY)
    for i in range(BLOBS):
        version, legacy, seed = rng.choice(corpus)
        if i % 4 == 0:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
            version, legacy = rng.choice(VERSIONS), rng.random() < 0.2
        else:
            data = _mutate(rng, seed)
        info = work.run(i, data, lambda: _decode_or_error(data, version, legacy))
        if info is None:
            counts["error"] += 1
            continue
        counts["ok"] += 1
        if counts["ok"] % DEEP_EVERY == 0:
            _deep(data, version, legacy, info)
    assert counts["ok"] > BLOBS // 50 and counts["error"] > BLOBS // 4, counts
    assert work.worst <= WORK_PER_BYTE, work.describe()


def _decode_or_error(data: bytes, version: int, legacy: bool) -> MethodGCInfo | None:
    """The decoded blob, or None when it raises `DecodeError` (whose offset must lie in the blob)."""
    try:
        return decode(data, version, legacy=legacy)
    except DecodeError as e:
        assert 0 <= e.offset <= len(data), (data.hex(), e)
        return None


def test_every_corpus_blob_round_trips():
    rng = random.Random(0x5EED_0006)
    for version, legacy, data in _corpus(rng):
        info = decode(data, version, legacy=legacy)
        assert encode(info, version, legacy=legacy) == data
        _deep(data, version, legacy, info)
