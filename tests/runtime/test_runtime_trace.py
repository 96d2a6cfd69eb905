"""gctoy.runtime.trace: recorded machine states around safepoints and collections."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gctoy.emu.image import HEAP_BASE  # noqa: E402
from gctoy.runtime.heap import HEADER_SIZE  # noqa: E402
from gctoy.runtime.run import run_module  # noqa: E402
from gctoy.runtime.trace import (  # noqa: E402
    LIST3,
    HeapObject,
    TraceError,
    cheney_forwarding,
    prepare_module,
    record_trace,
)
from runtime_programs import EXPECTED, LIST, TREE  # noqa: E402


@pytest.fixture(scope="module")
def calm():
    return record_trace(LIST3)


@pytest.fixture(scope="module")
def stressed():
    return record_trace(LIST3, stress=True)


def _straight_after(state, n: int) -> list[int]:
    """The addresses of the ``n`` instructions that follow the state's pc in its disassembly window."""
    addresses = [line.address for line in state.disasm]
    k = addresses.index(state.pc)
    return addresses[k + 1:k + 1 + n]


def _pairs_of_collections(trace):
    """(state before, state after) for every collection."""
    out = []
    for s in trace.states:
        if s.kind == "collected":
            before = trace.states[s.index - 1]
            assert before.kind == "safepoint"
            out.append((before, s))
    return out


def _words(state):
    return {w.address: w for w in state.frame.words}


def _in_space(value, space):
    base, end = space
    return base <= value < end


def test_two_recordings_are_equal(calm, stressed):
    assert record_trace(LIST3) == calm
    assert record_trace(LIST3, stress=True) == stressed
    assert calm != stressed


def test_the_run_is_the_same_as_without_recording(calm, stressed):
    plain = run_module(prepare_module(LIST3), semispace_size=0x1000)
    assert (calm.printed, calm.result) == ((30, 20, 10), 80) == (tuple(plain.printed), plain.result)
    assert (stressed.printed, stressed.result) == (calm.printed, calm.result)
    assert calm.collections == 1 and stressed.collections == 10


def test_state_kinds_and_order(calm):
    kinds = [s.kind for s in calm.states]
    assert kinds[0] == "start" and kinds[-1] == "returned"
    assert [s.index for s in calm.states] == list(range(len(calm.states)))
    assert kinds.count("collected") == 1
    # one arrival at a safepoint per runtime call: 6 gc_alloc, 1 gc_collect, 3 print_i64
    assert kinds.count("safepoint") == 10
    assert calm.states[-1].printed == (30, 20, 10)


def test_single_steps_around_the_focus_statepoint(calm):
    assert calm.focus == "main.sp2"
    focus = next(s for s in calm.statepoints if s.label == calm.focus)
    assert focus.callee == "gc_collect"
    steps = [s for s in calm.states if s.kind == "step"]
    before = [s for s in steps if s.pc < focus.return_address]
    after = [s for s in steps if s.pc >= focus.return_address and s.runtime_call is None]
    # at most 4 before the call, all in the call's block, + the call itself; the return address + 5
    assert 2 <= len(before) <= 5 and len(after) == 6
    assert [s.pc for s in before[1:]] == _straight_after(before[0], len(before) - 1)  # no jump on the way
    # a single step executes exactly one instruction
    for a, b in zip(before, before[1:]):
        assert b.instructions == a.instructions + 1
    for a, b in zip(after, after[1:]):
        assert b.instructions == a.instructions + 1
    assert after[0].pc == focus.return_address
    assert all(s.frame is not None and s.frame.record == "main.sp2" for s in before + after)
    marked = [line for line in after[0].disasm if line.marker == "pc"]
    assert [line.address for line in marked] == [focus.return_address]


def test_the_reload_after_the_statepoint_reads_the_rewritten_slot(calm):
    (before, after) = _pairs_of_collections(calm)[0]
    base = next(u for u in after.collection.roots if "%node2" in u.slot)
    off = int(base.slot.split("]")[0].removeprefix("[rsp+"))
    operand = f"qword ptr [rsp + {off if off < 10 else hex(off)}]"
    # after the return address, the code loads %node2 from its slot, which the collector rewrote
    states = calm.states[after.index + 1:]
    k, line = next((k, line) for k, state in enumerate(states) for line in state.disasm
                   if line.address == state.pc and line.text.endswith(", " + operand))
    register = line.text.split()[1].rstrip(",")
    assert dict(states[k + 1].registers)[register] == base.new != base.old
    assert dict(states[k].registers)[register] != base.new


def test_slots_are_rewritten_by_the_objects_move(calm, stressed):
    for trace in (calm, stressed):
        for before, after in _pairs_of_collections(trace):
            c = after.collection
            moved = {old: new for _, old, new in c.forwarding}
            wb, wa = _words(before), _words(after)
            for frame in (after.frame, *after.outer_frames):
                for w in frame.words:
                    if w.roles and w.value:
                        assert _in_space(w.value, after.heap.space), (trace.focus, after.index, w)
            for u in c.roots:
                if u.old == 0:
                    assert u.new == 0
                    continue
                assert u.new == moved[u.old]
                assert _in_space(u.old, c.from_space) and _in_space(u.new, c.to_space)
            for u in c.derived:
                if u.old == 0:
                    continue
                base = max((old for old in moved if old <= u.old), default=None)
                assert base is not None
                assert u.new - moved[base] == u.old - base  # derived = new base + old offset
            assert before.frame.sp == after.frame.sp
            for address, w in wa.items():
                if w.roles and w.value:
                    old = wb[address].value
                    assert w.previous == old != w.value
                    base = max(b for b in moved if b <= old)
                    assert w.value == moved[base] + (old - base)


def test_the_derived_pointer_is_in_the_record_and_moves_with_its_base(calm):
    (before, after) = _pairs_of_collections(calm)[0]
    (derived,) = after.collection.derived
    node2 = next(u for u in after.collection.roots if u.slot.endswith("%node2"))
    assert derived.slot.endswith("] %link0") and derived.new - derived.old == node2.new - node2.old
    pair = after.frame.pairs[0]
    assert (pair.base, pair.derived) == (node2.slot, derived.slot)
    assert pair.derived_value == pair.base_value + 8


def test_heap_objects_move_and_keep_their_names(calm, stressed):
    for trace in (calm, stressed):
        for before, after in _pairs_of_collections(trace):
            old = {o.address: o for o in before.heap.objects}
            c = after.collection
            moved = {o: n for _, o, n in c.forwarding}
            copies = [o for o in after.heap.objects if o.copied_from is not None]
            assert len(copies) == c.objects_copied == len(c.forwarding)
            for obj in copies:
                src = old[obj.copied_from]
                assert obj.address != src.address and obj.name == src.name
                assert (obj.nfields, obj.ptrmask) == (src.nfields, src.ptrmask)
                for i, (a, b) in enumerate(zip(src.fields, obj.fields)):
                    assert b == (moved.get(a, a) if src.is_pointer_field(i) else a)
            assert {n for n, _ in c.garbage} == {o.name for o in before.heap.objects} - {o.name for o in copies}
            # from-space poisoned up to where it had been used
            assert after.heap.other_poisoned_bytes >= c.from_space[1] - c.from_space[0]
            assert after.heap.space[0] != before.heap.space[0]


def test_garbage_is_left_behind(calm):
    (before, after) = _pairs_of_collections(calm)[0]
    assert [o.name for o in before.heap.objects] == ["A", "B", "C", "D", "E", "F"]
    assert [o.name for o in after.heap.objects] == ["F", "D", "B"]
    assert [n for n, _ in after.collection.garbage] == ["A", "C", "E"]
    assert after.heap.space == (HEAP_BASE + 0x1000, HEAP_BASE + 0x1000 + 3 * 32)


def test_cheney_replay_order():
    a = HeapObject("A", 0x100, 2, 0b11, (0x200, 0x300), None)
    b = HeapObject("B", 0x200, 1, 0b0, (7,), None)
    c = HeapObject("C", 0x300, 1, 0b1, (0x100,), None)
    dead = HeapObject("D", 0x400, 1, 0, (1,), None)
    got = cheney_forwarding((a, b, c, dead), [0x300, 0, 0x300], 0x1000)
    assert got == [(0x300, 0x1000 + HEADER_SIZE), (0x100, 0x1018 + HEADER_SIZE), (0x200, 0x1038 + HEADER_SIZE)]


def test_several_frames_show_outer_frames():
    small_tree = TREE.replace("@build(i64 5)", "@build(i64 2)")
    trace = record_trace(small_tree, stress=True, focus="sum.sp0", steps_before=2, steps_after=2)
    assert trace.printed == (EXPECTED_TREE2,)
    deep = [s for s in trace.states if s.kind == "collected" and s.outer_frames]
    assert deep, "no collection happened with callers on the stack"
    for s in deep:
        for fr in s.outer_frames:
            for p in fr.pairs:
                if p.base_value:
                    assert _in_space(p.base_value, s.heap.space)


def _tree_sum(d):
    return 100 if d == 0 else 2 * _tree_sum(d - 1) + d


EXPECTED_TREE2 = _tree_sum(2)


def test_the_list_program_of_the_runtime_tests_records_too():
    trace = record_trace(LIST, stress=True, focus="main.sp1", steps_before=1, steps_after=1)
    assert (list(trace.printed), trace.result) == EXPECTED["list"]


def test_bad_focus_and_programs_without_statepoints():
    with pytest.raises(TraceError, match="no statepoint 'nope'"):
        record_trace(LIST3, focus="nope")
    with pytest.raises(TraceError, match="no statepoints"):
        record_trace("define i64 @main() {\n  ret i64 1\n}\n")


def test_state_budget():
    with pytest.raises(TraceError, match="more than 5 states"):
        record_trace(LIST3, max_states=5)


def test_a_focus_on_a_call_of_compiled_code_steps_over_the_callee():
    small_tree = TREE.replace("@build(i64 5)", "@build(i64 2)")
    trace = record_trace(small_tree, focus="main.sp0", steps_before=2, steps_after=2)
    focus = next(s for s in trace.statepoints if s.label == "main.sp0")
    assert focus.callee == "build"
    steps = [s for s in trace.states if s.kind == "step"]
    # main's call of build is its second instruction after the prologue, so the window opens 1
    # instruction before the call; then the call; then the return address and 2 more
    assert steps[0].title.startswith("1 instruction before the call of main.sp0")
    assert len(steps) == 5
    assert all(s.where.startswith("main+") for s in steps)
    assert steps[2].pc == focus.return_address
    assert steps[2].instructions > steps[1].instructions + 100
    # the safepoints inside build are still recorded, with main's frame among the callers
    inner = trace.states[steps[1].index + 1 : steps[2].index]
    assert inner and all(s.kind == "safepoint" for s in inner)
    assert all(s.outer_frames[-1].function == "main" for s in inner)


def test_no_steps_after_the_return_address():
    trace = record_trace(LIST3, steps_before=0, steps_after=0)
    steps = [s for s in trace.states if s.kind == "step"]
    assert [s.title.split(",")[0] for s in steps] == [
        "0 instructions before the call of main.sp2: single-stepping from here", "back at main.sp2"]


def test_the_prologue_length_codegen_reports_matches_its_code():
    from gctoy.codegen import compile_module
    from gctoy.codegen.frame_ra import RegisterFrame
    from gctoy.emu import disassemble

    for regalloc in (True, False):
        compiled = compile_module(prepare_module(TREE), regalloc=regalloc)
        image = compiled.image
        insns = disassemble(image.code, image.symbols[compiled.functions[0].name], image.arch)
        for fn in compiled.functions:
            at = [i for i in insns if i.address >= fn.address]
            frame = fn.frame
            if isinstance(frame, RegisterFrame):
                expected = [f"push {r}" for r in frame.saved] + ([f"sub rsp, {frame.size}"] if frame.size else [])
            else:
                expected = ["push rbp", "mov rbp, rsp"] + ([f"sub rsp, {frame.size}"] if frame.size else [])
            n = fn.prologue_instructions
            assert [i.text for i in at[:n]] == [e.replace(f"{frame.size}", hex(frame.size) if frame.size > 9
                                                          else str(frame.size)) for e in expected]
            assert not at[n].text.startswith(("sub rsp", "push"))


def test_the_focus_window_starts_after_the_prologue_and_the_call_block_label():
    from gctoy.codegen import compile_module
    from gctoy.emu import disassemble

    compiled = compile_module(prepare_module(LIST3))
    main = next(f for f in compiled.functions if f.name == "main")
    body = disassemble(compiled.image.code, compiled.image.symbols[compiled.functions[0].name], compiled.image.arch)
    after_prologue = [i for i in body if i.address >= main.address][main.prologue_instructions].address
    trace = record_trace(LIST3, steps_before=10_000, max_states=2_000)
    ra = next(s for s in trace.statepoints if s.label == trace.focus).return_address
    call = max(i.address for i in body if i.address < ra)
    labels = [a for a in compiled.image.symbols.values() if main.address < a <= call]
    first = next(s for s in trace.states if s.kind == "step")
    assert first.pc == max([after_prologue, *labels]) and first.frame.record == trace.focus


def test_runtimes_close_their_machines(monkeypatch):
    from gctoy.emu import Machine
    from gctoy.runtime.run import Runtime, load_compiled

    closed = []
    real = Machine.close
    monkeypatch.setattr(Machine, "close", lambda self: (closed.append(self), real(self)))
    assert run_module(prepare_module(LIST3)).printed == [30, 20, 10]
    assert len(closed) == 1 and closed[0].closed
    record_trace(LIST3)
    assert len(closed) == 2
    with Runtime(load_compiled(prepare_module(LIST3))) as runtime:
        assert runtime.run("main").result == 80
    assert runtime.machine.closed
