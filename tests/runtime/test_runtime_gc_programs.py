"""Real `llc -filetype=obj` output of small allocation-heavy programs under the runtime:
gc none vs semispace vs stress give identical output; objects move; slots are rewritten."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gctoy.errors import EmulationFault, GCToyError
from gctoy.runtime import POISON_WORD, HeapCorruption, load_object, run_object
from gctoy.runtime import run as run_module
from runtime_programs import EXPECTED, PROGRAMS, compile_program  # noqa: E402

BIG = 1 << 20  # gc="none" never frees: give it room
SMALL = 0x1000  # one page per semispace: collections happen because the space is full


def _watch(log):
    """An on_collect hook: objects moved, from-space poisoned, both recorded in ``log``."""

    def hook(runtime, done):
        for slot, old, new in done.roots:
            if old:
                assert new != old, f"root {slot} did not move"
                assert runtime.heap.space.base <= new < runtime.heap.space.end
        base, end = done.from_space
        if end > base:
            assert runtime.machine.read_u64(base) == POISON_WORD
            assert runtime.heap.is_poisoned(runtime.heap.other, end)
        log.append(done)

    return hook


@pytest.mark.parametrize("rs4gc", ["opt", "gctoy"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runtime_gc_modes_agree(name, rs4gc, tmp_path, llvm14):
    obj = compile_program(PROGRAMS[name], tmp_path, llvm14, name, rs4gc)
    plain = run_object(obj, gc="none", semispace_size=BIG)
    assert (plain.printed, plain.result) == EXPECTED[name]
    assert plain.stats.collections == 0
    for stress in (False, True):
        log = []
        moving = run_object(obj, gc="semispace", stress=stress, verify=True, semispace_size=SMALL,
                            on_collect=_watch(log))
        assert (moving.printed, moving.result) == (plain.printed, plain.result)
        assert moving.stats.instructions == plain.stats.instructions
        assert moving.stats.collections == len(log) == moving.stats.verified
        assert moving.stats.collections >= 1
        if stress:
            assert moving.stats.collections >= moving.stats.runtime_calls - 2
            assert moving.stats.gc.slots_moved > 0
            assert any(old != new for c in log for _, old, new in c.roots if old)


def test_runtime_gc_small_heap_forces_collections(tmp_path, llvm14):
    """The swap loop allocates 400 objects of 24 bytes; a 4 KiB semispace must collect to finish."""
    obj = compile_program(PROGRAMS["swap"], tmp_path, llvm14, "swap")
    result = run_object(obj, gc="semispace", verify=True, semispace_size=SMALL)
    assert (result.printed, result.result) == EXPECTED["swap"]
    assert result.stats.collections >= 2
    assert result.stats.bytes_allocated > SMALL
    with pytest.raises(GCToyError, match="do not fit"):
        run_object(obj, gc="none", semispace_size=SMALL)


def test_runtime_gc_derived_pointer_rebased(tmp_path, llvm14):
    """With remat off in RS4GC and CGP's GC opts off in llc, the GEP has its own spill slot."""
    obj = compile_program(PROGRAMS["derived"], tmp_path, llvm14, "derived",
                          opt_flags=["-spp-rematerialization-threshold=0"], llc_flags=["-disable-cgp-gc-opts"])
    log = []
    result = run_object(obj, stress=True, verify=True, on_collect=_watch(log))
    assert (result.printed, result.result) == EXPECTED["derived"]
    rebased = [(c, d) for c in log for d in c.derived]
    assert rebased, "no derived slot was reported by the stack map"
    for collection, (slot, old, new) in rebased:
        (_, old_base, new_base), = [r for r in collection.roots if r[1] and 0 <= old - r[1] < 40]
        assert new != old
        assert new - new_base == old - old_base == 24


def test_runtime_gc_tree_walks_several_frames(tmp_path, llvm14):
    obj = compile_program(PROGRAMS["tree"], tmp_path, llvm14, "tree")
    loaded = load_object(obj)
    depths = []
    original = run_module.walk

    def counting_walk(machine, table):
        frames = original(machine, table)
        depths.append(len(frames))
        return frames

    run_module.walk = counting_walk
    try:
        result = run_module.Runtime(loaded, stress=True, verify=True).run()
    finally:
        run_module.walk = original
    assert (result.printed, result.result) == EXPECTED["tree"]
    assert max(depths) >= 6  # main -> build x5 (or sum x6) frames at once
    assert result.stats.gc.objects_copied > result.stats.objects_allocated


@pytest.mark.parametrize("name", ["list", "tree"])
def test_runtime_gc_skipping_a_root_is_caught(name, tmp_path, llvm14, monkeypatch):
    """Drop one root before each collection: the verifier (or the program itself) must notice."""
    obj = compile_program(PROGRAMS[name], tmp_path, llvm14, name)
    healthy = run_object(obj, stress=True, verify=True)
    assert (healthy.printed, healthy.result) == EXPECTED[name]  # unmutated, the same run is right
    original = run_module.roots_of

    def lossy(frames):
        roots, derived = original(frames)
        return roots[1:], derived

    monkeypatch.setattr(run_module, "roots_of", lossy)
    with pytest.raises(HeapCorruption):
        run_object(obj, stress=True, verify=True)
    # Without the verifier the program reads poison: a fault or wrong output.
    try:
        broken = run_object(obj, stress=True)
    except (EmulationFault, GCToyError):
        return
    assert (broken.printed, broken.result) != EXPECTED[name]
