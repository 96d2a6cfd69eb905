"""gctoy.workbench: a reader's program through the pipeline, into panes; bad input gives one message
at its line and never an exception."""

from __future__ import annotations

import pytest

from gctoy.workbench import PIPELINE_STEPS, TARGETS, run_assembly, run_ir

PROGRAM = """\
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @main() gc "statepoint-example" {
  %a = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %p = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  store i64 42, i64 addrspace(1)* %p
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %p
  call void @print_i64(i64 %v)
  ret i64 7
}
"""


def test_ir_end_to_end_stages_code_records_and_run():
    result = run_ir(PROGRAM)
    assert result.ok, result.problem
    assert [s.name for s in result.stages] == ["input", "rewrite-statepoints-for-gc", "verify-safepoints"]
    rs4gc = result.stages[1]
    assert rs4gc.changed and any(tag == "+" and "gc.statepoint" in line for tag, line in rs4gc.diff)
    assert not result.stages[2].changed
    # every record is linked to a call instruction that ends at its return address
    assert len(result.records) == 3
    by_address = {line.address: line for line in result.code}
    for record in result.records:
        call = by_address[record.call_address]
        assert call.text.startswith("call") and call.record == record.index
        assert call.address + len(call.data) == record.return_address
    assert result.run.printed == [42] and result.run.result == 7 and result.run.collections >= 1
    # gctoy's assembly line beside Keystone's bytes and Capstone's reading of them
    assert all(line.source for line in result.code)
    calls = [line for line in result.code if line.record is not None]
    assert [line.source.split()[0] for line in calls] == ["call"] * 3 and "gc_collect" in calls[1].source
    from gctoy.viz.workbench import code_html

    assert "gctoy's assembly" in code_html(result.code, result.records)
    assert result.run.trace is not None and len(result.run.trace.states) > 3


def test_ir_on_x86_32_has_gc_info_and_runs():
    abstract = PROGRAM.replace(' gc "statepoint-example"', ' gc "coreclr"')
    result = run_ir(abstract, (), target="x86-32")
    assert result.ok, result.problem
    assert "Method info block" in result.gcinfo and "@main" in result.gcinfo
    assert result.records and all(r.call_address is not None for r in result.records)
    assert result.run.printed == [42]


def test_shadow_stack_lowering_runs_and_shows_its_frame_maps():
    result = run_ir(PROGRAM, ("rewrite-statepoints-for-gc", "shadow-stack lowering"))
    assert result.ok, result.problem
    assert "llvm_gc_root_chain" in result.stages[-1].ir and result.run.printed == [42]
    assert [fn for fn, _ in result.frame_maps] == ["main"] and "i32 1, i32 0" in result.frame_maps[0][1]
    from gctoy.viz.workbench import records_html

    page = records_html(result.records, frame_maps=result.frame_maps)
    assert "FrameMap" in page and "@main" in page and "i32 1, i32 0" in page


def test_assembly_playground_bytes_lines_and_steps():
    result = run_assembly("mov rax, 5\nadd rax, 3   # eight\nret\n")
    assert result.ok
    assert [(c.data.hex(), c.source_line) for c in result.code] == [("48c7c005000000", 1), ("4883c003", 2), ("c3", 3)]
    assert [s.registers["rax"] for s in result.steps[:2]] == [5, 8]
    assert "rax" in result.steps[1].changed and "returned after 3" in result.stopped


BAD_IR = {
    "garbage": ("garbage here", "parse", 1),
    "unterminated function": ("define i64 @main() {\n  ret i64 0\n", "parse", None),
    "type mismatch": ("define i64 @main() {\n  ret i32 0\n}\n", "parse", 2),
    "undefined value": ("define i64 @main() {\n  ret i64 %nope\n}\n", "parse", 2),
    "unknown instruction": ("define i64 @main() {\n  %x = frobnicate i64 1\n  ret i64 0\n}\n", "parse", 2),
    "no main": ("define i64 @other() {\n  ret i64 0\n}\n", "run", None),
    "unrelocated use": ("""\
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
define i8 addrspace(1)* @main(i8 addrspace(1)* %obj) gc "statepoint-example" {
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  ret i8 addrspace(1)* %obj
}
""", "verify-safepoints", 5),
    "guest fault": ("""\
define i64 @main() {
  %p = inttoptr i64 16 to i64*
  %v = load i64, i64* %p
  ret i64 %v
}
""", "run", 3),
    "infinite loop": ("""\
define i64 @main() {
entry:
  br label %loop
loop:
  br label %loop
}
""", "run", 5),
    "statepoint on x86-32": (PROGRAM, "x86-32 lowering", None),
    "empty text": ("", "run", None),
    "division by zero in the guest": ("define i64 @main() {\n  %q = udiv i64 1, 0\n  ret i64 %q\n}\n", "run", 2),
}


@pytest.mark.parametrize("name", sorted(BAD_IR))
def test_bad_ir_gives_one_message_at_its_line(name):
    text, stage, line = BAD_IR[name]
    steps = ("rewrite-statepoints-for-gc",) if name == "statepoint on x86-32" else ("rewrite-statepoints-for-gc", "verify-safepoints")
    target = "x86-32" if name == "statepoint on x86-32" else "x86-64"
    result = run_ir(text, steps, target=target, max_instructions=200_000, max_seconds=5)
    assert result.problem is not None, f"{name}: no problem reported"
    assert result.problem.stage == stage, result.problem
    assert result.problem.message and "Traceback" not in result.problem.message
    if line is not None:
        assert result.problem.line == line, result.problem


#: the bad programs that stop while they run: the (line, column) of the IR instruction the guest was in
RUN_STOPS = {"guest fault": (3, 8), "infinite loop": (5, 3), "division by zero in the guest": (2, 8)}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(RUN_STOPS))
def test_a_run_that_stops_is_reported_at_the_instruction_it_stopped_in(name, target):
    result = run_ir(BAD_IR[name][0], (), target=target, max_instructions=200_000, max_seconds=5)
    problem = result.problem
    assert problem is not None and problem.stage == "run", problem
    assert (problem.line, problem.column) == RUN_STOPS[name], problem
    assert ("the run was stopped here" in problem.message) == (name == "infinite loop"), problem
    # the machine instruction the run stopped in was lowered from that line
    assert any(line.ir_loc == RUN_STOPS[name] for line in result.code)


FAULT_IN_A_CALLEE = """\
declare void @print_i64(i64)

define i64 @deref(i64* %p) {
  %v = load i64, i64* %p
  ret i64 %v
}

define i64 @main() {
  %p = inttoptr i64 16 to i64*
  call void @print_i64(i64 1)
  %v = call i64 @deref(i64* %p)
  ret i64 %v
}
"""

FAULT_AFTER_A_COLLECTION = """\
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()

define i64 @main() gc "statepoint-example" {
  %a = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  call void @gc_collect()
  %p = inttoptr i64 16 to i64*
  %v = load i64, i64* %p
  %q = ptrtoint i8 addrspace(1)* %a to i64
  %s = add i64 %q, %v
  ret i64 %s
}
"""

ENDLESS_RECURSION = """\
define i64 @down(i64 %n) {
  %m = add i64 %n, 1
  %r = call i64 @down(i64 %m)
  %s = add i64 %r, %n
  ret i64 %s
}

define i64 @main() {
  %r = call i64 @down(i64 0)
  ret i64 %r
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_fault_in_a_callee_is_at_the_callees_line(target):
    result = run_ir(FAULT_IN_A_CALLEE, (), target=target)
    assert (result.problem.stage, result.problem.line, result.problem.column) == ("run", 4, 8), result.problem
    assert "@deref" in result.problem.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_fault_after_statepoints_and_a_collection_is_at_its_line(target):
    if target == "x86-64":  # a program with records runs for the stepper's trace first, then again for the message
        result = run_ir(FAULT_AFTER_A_COLLECTION, ("rewrite-statepoints-for-gc", "verify-safepoints"))
        assert result.run.trace is None and result.records
    else:
        result = run_ir(FAULT_AFTER_A_COLLECTION.replace("statepoint-example", "coreclr"), (), target=target)
    assert (result.problem.stage, result.problem.line, result.problem.column) == ("run", 8, 8), result.problem


def test_a_stop_in_code_of_no_instruction_is_at_the_functions_define_line():
    # x86-32: the stack overflows in @down's prolog, which copies its argument before any instruction's code
    result = run_ir(ENDLESS_RECURSION, (), target="x86-32")
    assert "stack overflow" in result.problem.message
    assert (result.problem.line, result.problem.column) == (1, None), result.problem
    # x86-64: in the call that pushes one return address too many
    result = run_ir(ENDLESS_RECURSION, ())
    assert (result.problem.line, result.problem.column) == (3, 8), result.problem


BAD_ASM = {
    "file-system directive": ('.incbin "/etc/hostname"\n', "assemble", 1, "not allowed"),
    "include": ('nop\n.include "/etc/passwd"\n', "assemble", 2, "not allowed"),
    "bad mnemonic": ("mov rax, 1\nfrobnicate rax\nret\n", "assemble", 2, "mnemonic"),
    "bad operand": ("mov rax, 1\nmov rax, [rbx+\nret\n", "assemble", 2, "brackets"),
    "fault": ("mov rax, [0]\nret\n", "run", 1, "unmapped"),
    "nothing": ("# only a comment\n", "assemble", None, "no bytes"),
    "huge fill": (".skip 0x7fffffff\n", "assemble", None, "memory limit"),
    "undefined label": ("jmp nowhere\n", "assemble", 1, "symbol"),
    "unknown arch": ("nop\n", "assemble", None, "architecture"),
}


@pytest.mark.parametrize("name", sorted(BAD_ASM))
def test_bad_assembly_gives_one_message(name):
    text, stage, line, words = BAD_ASM[name]
    result = run_assembly(text, arch="arm" if name == "unknown arch" else "x86_64", timeout=5.0)
    assert result.problem is not None and result.problem.stage == stage, result.problem
    assert words.lower() in result.problem.message.lower()
    if line is not None:
        assert result.problem.line == line, result.problem


def test_an_endless_loop_stops_at_the_step_limit():
    result = run_assembly("top: jmp top\n", max_steps=50)
    assert result.ok and len(result.steps) == 50 and "step limit" in result.stopped


def test_unknown_step_is_a_problem_not_an_exception():
    result = run_ir(PROGRAM, ("no-such-pass",))
    assert result.problem.stage == "pipeline" and all(name in result.problem.message for name in PIPELINE_STEPS)


def test_assembly_steps_show_the_stack():
    result = run_assembly("push 7\npush 9\npop rax\npop rbx\nret\n")
    assert result.ok
    after_pushes = result.steps[1]
    assert [value for _, value in after_pushes.stack[:2]] == [9, 7]
    addresses = [address for address, _ in after_pushes.stack]
    assert addresses == sorted(addresses) and addresses[0] == after_pushes.registers["rsp"]
    from gctoy.viz.workbench import asm_html

    page = asm_html(result, 1)
    assert "<b>stack</b>" in page and "<td>0x9</td>" in page and "<td>0x7</td>" in page


def test_a_big_rewrite_is_diffed_as_removed_then_added_lines_and_still_rebuilds_both_texts():
    # 60 objects live across each later allocation: RS4GC replaces 60 lines by ~1900, one block of the diff
    k = 60
    body = [f"  %o{i} = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)" for i in range(k)]
    body += [f"  %v{i} = ptrtoint i8 addrspace(1)* %o{i} to i64" for i in range(k)]
    text = PROGRAM.split("define")[0] + 'define i64 @main() gc "statepoint-example" {\n' + "\n".join(body)
    text += "\n  ret i64 %v0\n}\n"
    result = run_ir(text, ("rewrite-statepoints-for-gc",), execute=False)
    assert result.ok, result.problem
    before, after = result.stages
    diff = after.diff
    assert [line for tag, line in diff if tag != "+"] == before.ir.splitlines()
    assert [line for tag, line in diff if tag != "-"] == after.ir.splitlines()
    removed = [n for n, (tag, _) in enumerate(diff) if tag == "-"]
    added = [n for n, (tag, _) in enumerate(diff) if tag == "+"]
    assert len(added) > 1000 and max(removed) < min(added)
