"""The runtime's bounds: collection records, budgets through run_module, heap exhaustion, the walker's checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gctoy.emu.budget import BudgetExceeded
from gctoy.ir import parse_module
from gctoy.runtime.collector import KEEP_COLLECTIONS, CollectionLog
from gctoy.runtime.heap import OutOfMemory
from gctoy.runtime.run import Runtime, gc_strategy_warning, load_compiled, run_module
from gctoy.runtime.run32 import run_module32

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runtime_programs import ABI  # noqa: E402


LOOP = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  %p = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  call void @do_safepoint()
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, COUNT
  br i1 %c, label %loop, label %out
out:
  %f = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %f
  %r = add i64 %v, %i1
  ret i64 %r
}
"""

LIVE = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %head = phi i8 addrspace(1)* [null, %entry], [%n, %loop]
  %n = call i8 addrspace(1)* @gc_alloc(i64 6, i64 1)
  %f0 = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %f0
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, 1000
  br i1 %c, label %loop, label %out
out:
  ret i64 %i1
}
"""


def _module(text: str, count: int = 10):
    from gctoy.passes import run

    module = parse_module(text.replace("COUNT", str(count)))
    run(module, "rewrite-statepoints-for-gc")
    return module


def test_collection_log_keeps_the_last_records_and_counts_all() -> None:
    log = CollectionLog(keep=3)
    for i in range(1, 8):
        log.append(i)  # records are opaque to the log
    assert len(log) == 7 and log.dropped == 4
    assert list(log) == [5, 6, 7] and log[-1] == 7 and log[0] == 5
    assert not CollectionLog() and log


def test_stress_keeps_at_most_the_last_records() -> None:
    count = KEEP_COLLECTIONS + 100
    runtime = Runtime(load_compiled(_module(LOOP, count)), stress=True)
    result = runtime.run()
    assert result.result == count
    assert len(runtime.collections) == result.stats.collections > count
    kept = list(runtime.collections)
    assert len(kept) == KEEP_COLLECTIONS
    assert [c.index for c in kept] == list(range(result.stats.collections - KEEP_COLLECTIONS + 1,
                                                 result.stats.collections + 1))
    assert result.stats.records_dropped == result.stats.collections - KEEP_COLLECTIONS
    assert f"collection records dropped: {result.stats.records_dropped}" in result.stats.summary()


def test_few_collections_keep_every_record_and_the_summary_as_before() -> None:
    result = run_module(_module(LOOP, 5), stress=True)
    assert result.stats.records_dropped == 0 and "dropped" not in result.stats.summary()


@pytest.mark.parametrize("runner", [run_module, run_module32], ids=["x86-64", "x86-32"])
def test_budgets_reach_the_runtime(runner) -> None:
    module = _module(LOOP, 10**9) if runner is run_module else parse_module(LOOP.replace("COUNT", "1000000000"))
    with pytest.raises(BudgetExceeded, match="instruction budget of 5000 instructions"):
        runner(module, gc="semispace", max_instructions=5000)
    with pytest.raises(BudgetExceeded, match="wall-clock budget of 0.5 s"):
        runner(module, gc="semispace", stress=True, max_instructions=None, max_seconds=0.5)


def test_live_data_beyond_the_semispace_is_heap_exhaustion() -> None:
    # 1000 objects of 64 bytes stay live; a semispace of 16 KiB holds 256 of them
    with pytest.raises(OutOfMemory, match=r"heap exhausted: \d+ live bytes and a new object of 64 bytes .* "
                                          r"do not fit in a semispace of 16384 bytes"):
        run_module(_module(LIVE), semispace_size=1 << 14)
    assert run_module(_module(LIVE), semispace_size=1 << 16).result == 1000


def test_gc_strategy_warning_names_only_functions_that_call_out() -> None:
    module = parse_module(ABI + """
define i64 @main() {
entry:
  call void @do_safepoint()
  %r = call i64 @leaf()
  ret i64 %r
}
define i64 @leaf() {
entry:
  ret i64 1
}
define i64 @good() gc "statepoint-example" {
entry:
  call void @do_safepoint()
  ret i64 0
}
""")
    warning = gc_strategy_warning(module)
    assert warning is not None and warning.startswith('@main has no gc "statepoint-example" attribute')
    assert "@leaf" not in warning and "@good" not in warning
    assert gc_strategy_warning(parse_module(LOOP.replace("COUNT", "3"))) is None


def test_a_root_into_the_middle_of_an_object_is_a_heap_error() -> None:
    from gctoy.emu import Image, Machine
    from gctoy.runtime.collector import Collector
    from gctoy.runtime.heap import Heap, HeapError

    machine = Machine(Image.from_assembly("main: ret"), heap_size=2 * 0x4000)
    heap = Heap(machine, 0x4000)
    obj = heap.alloc(4, 0)
    machine.write_u64(obj + 8, 0xFFFF_FFFF_FFFF_FFFF)  # read as a mask: every field a pointer
    machine.write_u64(obj + 16, (1 << 1) | 1)  # read as a header: one field
    machine.set_reg("rbx", obj + 24)  # a root that points at field 3, as a damaged stack map would say
    with pytest.raises(HeapError, match="does not point at an object"):
        Collector(heap).collect(["rbx"])
