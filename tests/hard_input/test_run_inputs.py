"""``gctoy run`` on guests that misbehave: every run ends, within its budget, with one error in
the guest's terms (and no traceback), on both targets.

Each case is a child process (tests/limited_run.py) with a time and a memory limit. The time
limit only catches a run that never ends; no test asserts how long a run took.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from limited_run import assert_clean_error, run_gctoy  # noqa: E402
from lli_shim import run_lli  # noqa: E402
from runtime_programs import ABI  # noqa: E402

TARGETS = [[], ["--target", "x86-32"]]
TARGET_IDS = ["x86-64", "x86-32"]


SPIN = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  br label %l
l:
  br label %l
}
"""

SPIN_CALLING = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  %p = call i8 addrspace(1)* @gc_alloc(i64 2, i64 1)
  br label %l
l:
  call void @do_safepoint()
  %q = getelementptr i8, i8 addrspace(1)* %p, i64 8
  br label %l
}
"""

# 100,000 live nodes of 32 bytes: 3.2 MB, and a semispace holds 1 MiB.
TOO_MUCH_LIVE = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %head = phi i8 addrspace(1)* [null, %entry], [%n, %loop]
  %n = call i8 addrspace(1)* @gc_alloc(i64 2, i64 2)
  %f1p = getelementptr i8, i8 addrspace(1)* %n, i64 8
  %f1 = bitcast i8 addrspace(1)* %f1p to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %f1
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, 100000
  br i1 %c, label %loop, label %out
out:
  ret i64 %i1
}
"""

# 600 collections under --stress, one live object throughout.
MANY_COLLECTIONS = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  %p = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  call void @do_safepoint()
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, 600
  br i1 %c, label %loop, label %out
out:
  %f = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %f
  ret i64 %i1
}
"""

RECURSE = ABI + """
define i64 @down(i64 %n) gc "statepoint-example" {
entry:
  %m = add i64 %n, 1
  %r = call i64 @down(i64 %m)
  ret i64 %r
}

define i64 @main() gc "statepoint-example" {
entry:
  %r = call i64 @down(i64 0)
  ret i64 %r
}
"""

DIVIDE = ABI + """
define i64 @quotient(i64 %a, i64 %b) gc "statepoint-example" {
entry:
  %q = sdiv i64 %a, %b
  ret i64 %q
}

define i64 @main() gc "statepoint-example" {
entry:
  %r = call i64 @quotient(i64 7, i64 0)
  ret i64 %r
}
"""

WILD_READ = ABI + """
define i64 @peek() gc "statepoint-example" {
entry:
  %p = inttoptr i64 305419896 to i64*
  %v = load i64, i64* %p
  ret i64 %v
}

define i64 @main() gc "statepoint-example" {
entry:
  %v = call i64 @peek()
  ret i64 %v
}
"""

# No function says gc "statepoint-example": nothing can be collected.
NO_GC_ATTRIBUTE = ABI + """
define i64 @fill(i64 %k) {
entry:
  %p = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)
  call void @print_i64(i64 %k)
  ret i64 %k
}

define i64 @main() {
entry:
  %a = call i64 @fill(i64 1)
  %b = call i64 @fill(i64 2)
  ret i64 %b
}

define i64 @leaf(i64 %x) {
entry:
  ret i64 %x
}
"""

# Collects (twice) while no GC pointer is live: nothing for the shadow stack to hold.
COLLECT_WITHOUT_ROOTS = ABI + """
define i64 @sum(i64 %n) gc "statepoint-example" {
entry:
  %p = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %f = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  store i64 %n, i64 addrspace(1)* %f
  %v = load i64, i64 addrspace(1)* %f
  call void @gc_collect()
  %w = mul i64 %v, 3
  call void @print_i64(i64 %w)
  ret i64 %w
}

define i64 @main() gc "statepoint-example" {
entry:
  %a = call i64 @sum(i64 5)
  call void @gc_collect()
  %b = call i64 @sum(i64 7)
  %c = add i64 %a, %b
  call void @print_i64(i64 %c)
  ret i64 %c
}
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.ll"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_a_guest_that_never_stops_ends_with_the_instruction_budget(tmp_path, target):
    src = _write(tmp_path, "spin", SPIN)
    r = run_gctoy(["run", src, *target, "--max-instructions", "200000"], timeout=60)
    assert_clean_error(r, "instruction budget of 200000 instructions spent", "in @main", "--max-instructions")


def test_the_default_instruction_budget_stops_a_spinning_guest(tmp_path):
    src = _write(tmp_path, "spin", SPIN)
    r = run_gctoy(["run", src], timeout=120)
    assert_clean_error(r, "instruction budget of 50000000 instructions spent", "in @main")


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_a_guest_looping_through_the_runtime_ends_with_the_wall_clock_budget(tmp_path, target):
    src = _write(tmp_path, "spin_calling", SPIN_CALLING)
    r = run_gctoy(["run", src, *target, "--max-instructions", "0", "--max-seconds", "2"], timeout=90)
    assert_clean_error(r, "wall-clock budget of 2 s spent", "@do_safepoint", "@main", "--max-seconds")


def test_the_wall_clock_budget_holds_while_stress_collections_run(tmp_path):
    src = _write(tmp_path, "too_much_live", TOO_MUCH_LIVE)
    r = run_gctoy(["run", src, "--stress", "--max-seconds", "2"], timeout=90)
    assert_clean_error(r, "wall-clock budget of 2 s spent", "@gc_alloc", "@main")


def test_run_help_documents_both_budgets():
    r = run_gctoy(["run", "--help"], timeout=60)
    assert r.returncode == 0, r.describe()
    text = " ".join(r.stdout.split())  # argparse wraps the help
    for needle in ("--max-instructions N stop with an error after N guest instructions (default 50000000",
                   "--max-seconds S stop with an error after S seconds of wall-clock time", "(default 60;"):
        assert needle in text, r.describe()


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_stress_keeps_a_bounded_number_of_collection_records(tmp_path, target):
    src = _write(tmp_path, "many", MANY_COLLECTIONS)
    r = run_gctoy(["run", src, *target, "--stress"], timeout=120)
    assert r.returncode == 0, r.describe()
    assert "result: 600" in r.stdout
    summary = r.stderr.strip().splitlines()[-1]
    collections = int(summary.split("collections: ")[1].split(",")[0])
    assert collections > 600, summary
    assert f"collection records dropped: {collections - 256} (the last 256 kept)" in summary, summary


def test_a_long_stress_run_stays_within_bounded_memory(tmp_path):
    src = _write(tmp_path, "spin_calling", SPIN_CALLING)
    r = run_gctoy(["run", src, "--stress", "--max-instructions", "0", "--max-seconds", "8"],
                  timeout=120)
    assert_clean_error(r, "wall-clock budget of 8 s spent", max_rss_mb=300)


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_live_data_larger_than_a_semispace_is_heap_exhaustion(tmp_path, target):
    src = _write(tmp_path, "too_much_live", TOO_MUCH_LIVE)
    r = run_gctoy(["run", src, *target], timeout=120)
    assert_clean_error(r, "heap exhausted:", "live bytes", "do not fit in a semispace of 1048576 bytes")


def test_heap_exhaustion_where_no_collection_can_run_says_why(tmp_path):
    src = _write(tmp_path, "too_much_live", TOO_MUCH_LIVE)
    r = run_gctoy(["run", src, "--gc", "none"], timeout=120)
    assert_clean_error(r, "heap exhausted:", "--gc none never collects")


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_stack_overflow_is_named_with_its_depth(tmp_path, target):
    src = _write(tmp_path, "recurse", RECURSE)
    r = run_gctoy(["run", src, *target], timeout=120)
    assert_clean_error(r, "stack overflow after", "frames in @down")
    depth = int(r.stderr.split("stack overflow after ")[1].split(" ")[0])
    assert depth > 10_000, r.describe()


def test_division_by_zero_is_a_divide_error_in_the_function(tmp_path):
    src = _write(tmp_path, "divide", DIVIDE)
    r = run_gctoy(["run", src], timeout=60)
    assert_clean_error(r, "divide error", "division by zero", "in @quotient at pc")
    assert "interrupt 0 outside the native stubs" not in r.stderr


def test_division_by_zero_on_x86_32_is_named_with_its_caller(tmp_path):
    src = _write(tmp_path, "divide", DIVIDE)
    r = run_gctoy(["run", src, "--target", "x86-32"], timeout=60)
    assert_clean_error(r, "divide error", "division by zero", "called from @quotient")


@pytest.mark.parametrize("target,width", [([], 8), (["--target", "x86-32"], 4)], ids=TARGET_IDS)
def test_a_wild_read_names_the_address_and_the_function(tmp_path, target, width):
    src = _write(tmp_path, "wild", WILD_READ)
    r = run_gctoy(["run", src, *target], timeout=60)
    assert_clean_error(r, f"read of {width} bytes at unmapped address 0x12345678 in @peek at pc")


def test_functions_without_the_gc_attribute_are_named_in_a_warning(tmp_path):
    src = _write(tmp_path, "nogc", NO_GC_ATTRIBUTE)
    r = run_gctoy(["run", src], timeout=60)
    assert r.returncode == 0, r.describe()
    assert r.stdout.splitlines() == ["1", "2", "result: 2"]
    warnings = [line for line in r.stderr.splitlines() if ": warning: " in line]
    assert len(warnings) == 1, r.describe()
    assert '@fill, @main have no gc "statepoint-example" attribute' in warnings[0]
    assert "@leaf" not in warnings[0]  # it calls nothing: it can never be on the stack at a collection


def test_no_warning_when_every_function_has_the_attribute(tmp_path):
    src = _write(tmp_path, "many", MANY_COLLECTIONS)
    r = run_gctoy(["run", src], timeout=60)
    assert r.returncode == 0 and "warning" not in r.stderr, r.describe()


def test_gc_collect_without_any_statepoint_is_a_clean_error(tmp_path):
    text = NO_GC_ATTRIBUTE.replace("  call void @print_i64(i64 %k)\n", "  call void @gc_collect()\n")
    src = _write(tmp_path, "nogc_collect", text)
    r = run_gctoy(["run", src], timeout=60)
    assert_clean_error(r, "no stack map", 'gc "statepoint-example"')


@pytest.mark.parametrize("stress", [[], ["--stress", "--verify-heap"]], ids=["calm", "stress"])
def test_shadow_stack_collects_with_no_live_pointer_as_lli_runs_it(tmp_path, stress, lli14):
    src = _write(tmp_path, "noroots", COLLECT_WITHOUT_ROOTS)
    printed, result = run_lli(COLLECT_WITHOUT_ROOTS, lli14)
    r = run_gctoy(["run", src, "--design", "shadow-stack", *stress], timeout=60)
    assert r.returncode == 0, r.describe()
    assert r.stdout.splitlines() == [str(v) for v in printed] + [f"result: {result}"]
    collections = int(r.stderr.strip().splitlines()[-1].split("collections: ")[1].split(",")[0])
    assert collections >= 2, r.describe()


def _damaged_stackmap_object(tmp_path: Path, llvm14, stack_size: int) -> str:
    """The tree program compiled by llc with its first function's stack size replaced."""
    from runtime_programs import PROGRAMS, compile_program

    obj = Path(compile_program(PROGRAMS["tree"], tmp_path, llvm14, "tree"))
    data = bytearray(obj.read_bytes())
    from elftools.elf.elffile import ELFFile
    import io

    section = ELFFile(io.BytesIO(bytes(data))).get_section_by_name(".llvm_stackmaps")
    at = section["sh_offset"] + 16 + 8  # header, then the first function record: address, stack size
    data[at:at + 8] = stack_size.to_bytes(8, "little")
    damaged = tmp_path / "damaged.o"
    damaged.write_bytes(bytes(data))
    return str(damaged)


@pytest.mark.parametrize("stack_size", [0x7FFF_0000, 0], ids=["huge", "zero"])
def test_a_wrong_stack_size_in_the_stack_map_is_a_walk_error(tmp_path, llvm14, stack_size):
    obj = _damaged_stackmap_object(tmp_path, llvm14, stack_size)
    r = run_gctoy(["run", obj, "--stress"], timeout=120)
    # the frame's CFI and its stack map record disagree: the walk stops at the first such frame
    assert_clean_error(r, "error: build+0x", "the stack map's stack size gives")


def test_a_stack_map_naming_the_wrong_slot_ends_with_the_budget_under_stress(tmp_path, llvm14):
    """The first record of the list program names [rsp + 8] instead of [rsp + 0]: the collector
    moves the wrong word and leaves the list head stale; once the semispaces swap back, the
    stale head points into live objects and the list walk cycles forever, collecting at every
    print under --stress. Nothing is wrong that the runtime could see; the budget ends it."""
    import io

    from elftools.elf.elffile import ELFFile
    from runtime_programs import PROGRAMS, compile_program

    obj = Path(compile_program(PROGRAMS["list"], tmp_path, llvm14, "list"))
    data = bytearray(obj.read_bytes())
    section = ELFFile(io.BytesIO(bytes(data))).get_section_by_name(".llvm_stackmaps")
    body = bytes(data[section["sh_offset"]:section["sh_offset"] + section["sh_size"]])
    spill = bytes([3, 0, 8, 0, 7, 0, 0, 0]) + (0).to_bytes(4, "little")  # Indirect [rsp + 0], 8 bytes
    at = section["sh_offset"] + body.index(spill) + 8
    data[at:at + 4] = (8).to_bytes(4, "little")
    damaged = tmp_path / "wrong_slot.o"
    damaged.write_bytes(bytes(data))
    r = run_gctoy(["run", str(damaged), "--stress", "--max-seconds", "3"], timeout=90)
    assert_clean_error(r, "wall-clock budget of 3 s spent", "@print_i64", "called from @main")
