"""GC transitions and invoke statepoints in gctoy's x86-64 lowering.

A GC transition (seed 000 "GC Transitions", its "hypothetical-gc") sets a thread-local flag before a
call into unmanaged code and clears it after: gctoy writes ``mov dword ptr fs:[off], 1/0`` around the
call, as bytes (Keystone would turn the absolute fs: operand into a RIP-relative one), and the machine
points %fs at the image's thread-local block.  An invoke statepoint is a call followed by a jump to
the normal destination (gctoy's runtime never unwinds).
"""
from __future__ import annotations

from gctoy.codegen import compile_module
from gctoy.emu import Machine, disassemble
from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.runtime.run import run_module

SRC = """
@in_native = thread_local global i32 0, align 4
@other = thread_local global i64 0
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @print_i64(i64)
declare void @do_safepoint()
declare void @native_work()
declare i32 @pers(...)
define i64 @main() gc "statepoint-example" personality i32 (...)* @pers {
entry:
  %o = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %p = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  store i64 7, i64 addrspace(1)* %p
  call void @native_work() [ "gc-transition"(i32* @in_native) ]
  invoke void @do_safepoint() to label %ok unwind label %bad
ok:
  %v = load i64, i64 addrspace(1)* %p
  ret i64 %v
bad:
  %lp = landingpad token cleanup
  ret i64 -1
}
"""


def _lowered(text: str = SRC):
    m = parse_module(text)
    run(m, "rewrite-statepoints-for-gc")
    return m


def test_flag_is_set_only_during_the_transition_call():
    compiled = compile_module(_lowered())
    machine = Machine(compiled.image, heap_size=0x10000)
    tls = compiled.image.address_of("__tls_block")
    seen = []
    heap = [machine.heap_base]

    def gc_alloc(nfields, ptrmask):
        addr = heap[0] + 16
        heap[0] += 16 + 8 * nfields
        return addr

    machine.register_native("gc_alloc", gc_alloc)
    machine.register_native("print_i64", lambda v: None)
    machine.register_native("do_safepoint", lambda: seen.append(("safepoint", machine.read_u64(tls) & 0xFFFFFFFF)))
    machine.register_native("native_work", lambda: seen.append(("native", machine.read_u64(tls) & 0xFFFFFFFF)))
    assert machine.call("main") == 7
    assert seen == [("native", 1), ("safepoint", 0)]
    writes = [i for i in disassemble(compiled.image.code, compiled.image.address_of("main"), "x86_64")
              if "fs:" in i.op_str]
    assert [(w.mnemonic, w.op_str) for w in writes] == [("mov", "dword ptr fs:[0], 1"),
                                                        ("mov", "dword ptr fs:[0], 0")]
    # the record says this statepoint is a transition (flags = 1)
    flags = [r.locations[1].offset_or_small_constant for r in compiled.stackmap.records]
    assert 1 in flags


def test_invoke_statepoint_relocates_under_a_moving_collector():
    # the runtime provides only the guest ABI: the unmanaged call becomes a transition into do_safepoint
    text = SRC.replace("call void @native_work()", "call void @do_safepoint()")
    result = run_module(_lowered(text), stress=True, verify=True)
    assert result.result == 7
    assert result.stats.gc.collections >= 1 and result.stats.gc.objects_copied >= 1
