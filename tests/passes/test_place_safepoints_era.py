"""PlaceSafepoints as seed 004 ("PlaceSafepoints" section) describes it: polls *and* calls become statepoints."""
from gctoy.ir import parse_module, print_module
from gctoy.ir.statepoint import StatepointForm, convert_statepoints, statepoints
from gctoy.passes import run
from gctoy.llvm_tools import run_opt

# Seed 004, section "PlaceSafepoints": the input of its example, retyped.
SEED004_INPUT = """
define void @test() gc "statepoint-example" {
  call void @foo()
  ret void
}
declare void @foo()
declare void @do_safepoint()
define void @gc.safepoint_poll() {
  call void @do_safepoint()
  ret void
}
"""


def test_seed004_example_gives_the_documented_statepoints(llvm14):
    m = parse_module(SEED004_INPUT)
    run(m, "place-safepoints<wrap-calls>")
    fn = m.get_function("test")
    sps = statepoints(fn)
    # the documented result: the entry poll's call, then the original call, both wrapped
    assert [sp.target.name for sp in sps] == ["do_safepoint", "foo"]
    assert [sp.call.name for sp in sps] == ["safepoint_token", "safepoint_token1"]
    assert all(sp.gc_args == [] and sp.id == 2882400000 for sp in sps)
    assert run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], print_module(m)).returncode == 0
    # In the seed's middle signature (its i32 results aside: our middle form uses tokens) a statepoint
    # with no transition, deopt or GC arguments is written exactly like a modern one with no bundles,
    # so gctoy reads it as modern; in the oldest signature it loses the ID and patch-byte fields.
    convert_statepoints(m, "oldest")
    assert all(sp.form is StatepointForm.OLDEST and sp.id is None for sp in statepoints(m.get_function("test")))
    assert "call i32 (void ()*, i32, i32, ...)" in print_module(m)


def test_without_the_option_llvm14_leaves_calls_alone():
    m = parse_module(SEED004_INPUT)
    run(m, "place-safepoints")
    fn = m.get_function("test")
    assert statepoints(fn) == []
    callees = [i.callee_name for i in fn.instructions() if hasattr(i, "callee_name")]
    assert callees == ["do_safepoint", "foo"]


def test_results_become_gc_results_and_leaves_stay_calls(llvm14):
    m = parse_module("""
declare i8 addrspace(1)* @make()
declare void @leaf() "gc-leaf-function"
define i8 addrspace(1)* @f() gc "statepoint-example" {
entry:
  call void @leaf()
  %x = call i8 addrspace(1)* @make()
  ret i8 addrspace(1)* %x
}
define void @gc.safepoint_poll() {
  ret void
}
""")
    run(m, "place-safepoints<wrap-calls;no-entry>")
    fn = m.get_function("f")
    (sp,) = statepoints(fn)
    assert sp.target.name == "make"
    assert sp.result() is not None and sp.result().name == "x"
    assert fn.blocks[0].terminator.value is sp.result()
    assert run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], print_module(m)).returncode == 0
