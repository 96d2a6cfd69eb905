"""The workbench under hostile input, each case in a child process with time and memory limits:
file-system directives refused, Keystone's bad habits bounded, a guest that never stops stopped."""

from __future__ import annotations

import pytest

from limited_run import assert_clean_error, run_gctoy

CASES = {
    "incbin": ('nop\n.incbin "/etc/hostname"\n', "line 2", "'.incbin' is not allowed"),
    "include": ('.include "/etc/passwd"\nnop\n', "line 1", "'.include' is not allowed"),
    "incbin in a comment-looking place": ('nop # .incbin "/etc/hostname"\n', "line 1", "not allowed"),
    "huge skip": (".skip 0x7fffffff\nnop\n", "", "Keystone"),
    "unbalanced brackets": ("mov rax, [rbx+\n", "line 1", "do not balance"),
    "guest fault": ("mov rax, [0]\nret\n", "line 1", "unmapped"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_assembly_gives_one_clean_error(name, tmp_path):
    text, where, words = CASES[name]
    source = tmp_path / "input.s"
    source.write_text(text)
    result = run_gctoy(["--assembly", str(source)], module="gctoy.workbench", timeout=60, memory_mb=2048)
    assert_clean_error(result, words)
    if where:
        assert f"{source}:{where.split()[1]}:" in result.stderr, result.stderr


def test_the_workbench_bounds_a_guest_that_never_stops(tmp_path):
    source = tmp_path / "loop.s"
    source.write_text("top: jmp top\n")
    result = run_gctoy(["--assembly", str(source)], module="gctoy.workbench", timeout=60)
    assert result.returncode == 0 and "step limit" in result.stdout, result.stderr


def test_ir_that_loops_forever_is_stopped_by_the_budget(tmp_path):
    source = tmp_path / "loop.ll"
    source.write_text("define i64 @main() {\nentry:\n  br label %l\nl:\n  br label %l\n}\n")
    result = run_gctoy([str(source)], module="gctoy.workbench", timeout=90)
    assert_clean_error(result, "run:")
    assert f"{source}:5:3: error: run: the run was stopped here" in result.stderr, result.stderr
    assert "--max-" not in result.stderr  # the command's options, which the workbench does not take


def test_ir_that_calls_the_runtime_forever_is_stopped_by_the_wall_clock_budget(tmp_path):
    # few guest instructions per iteration, each a slow runtime call: the instruction budget alone
    # would take minutes, the wall-clock budget stops it
    source = tmp_path / "alloc_loop.ll"
    source.write_text(
        "declare i8 addrspace(1)* @gc_alloc(i64, i64)\n\n"
        'define i64 @main() gc "statepoint-example" {\nentry:\n  br label %l\nl:\n'
        "  %p = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)\n  br label %l\n}\n"
    )
    result = run_gctoy([str(source)], module="gctoy.workbench", timeout=120)
    assert_clean_error(result, "wall-clock budget of 5 s spent", "@gc_alloc")


def test_errors_of_standard_input_carry_one_prefix_and_its_name():
    bad_text = run_gctoy(["-"], module="gctoy.workbench", stdin=b"\xff")
    assert_clean_error(bad_text, "not UTF-8")
    assert bad_text.stderr.startswith("<stdin>:1:1: error: not UTF-8") and bad_text.stderr.count("error:") == 1
    bad_ir = run_gctoy(["-"], module="gctoy.workbench", stdin="define i64 @main() {\nentry:\n  %x = add i64 1\n}\n")
    assert_clean_error(bad_ir, "expected ','")
    assert bad_ir.stderr.startswith("<stdin>:4:1: error: parse: "), bad_ir.stderr
