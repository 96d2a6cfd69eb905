"""Stackmap and patchpoint sites llc accepts: 64-bit IDs above 2^63, a patchpoint invoked (its record, then on
to the normal destination), a target computed by an inttoptr instruction, webkit_jscc arguments (the first in
rax, the others on the stack in 4- or 8-byte slots, undef ones not written), stack arguments of a C-convention
patchpoint. Records equal llc-14's."""
from __future__ import annotations

import subprocess

import pytest

from gctoy.codegen.frame_ra import RegisterFrame
from gctoy.command_support import driver_module
from gctoy.codegen import compile_module
from gctoy.stackmap import read_object

DECLS = """
declare void @llvm.experimental.stackmap(i64, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare i32 @pers(...)
"""

SITES = DECLS + """
define void @ids(i64 %x) {
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 -2, i32 0, i64 %x)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 9223372036854775808, i32 4)
  ret void
}

define i64 @invoked(i64 %a, i64 %b) personality i32 (...)* @pers {
entry:
  %target = inttoptr i64 81985529216486895 to i8*
  %r = invoke i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 3, i32 16, i8* %target, i32 1, i64 %a, i64 %b)
          to label %ok unwind label %bad
ok:
  ret i64 %r
bad:
  %lp = landingpad { i8*, i32 } catch i8* null
  ret i64 -1
}

define i64 @webkit(i64 %callee, i32 %n) {
  %target = inttoptr i64 81985529216486895 to i8*
  %r = call webkit_jscc i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 4, i32 16, i8* %target, i32 5, i64 %callee, i64 2, i32 %n, i32 undef, i64 6, i64 %callee)
  ret i64 %r
}

declare void @escape(i64*)
define void @realigned() {
  %big = alloca i64, i32 3, align 128
  call void @escape(i64* %big)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 6, i32 0)
  ret void
}

define void @c_stack(i64 %v) {
  call void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 5, i32 16, i8* null, i32 8, i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 %v, i64 %v)
  ret void
}
"""


def _records(stackmap) -> list[tuple]:
    """ID and locations (a value in a register or a stack slot alike: gctoy keeps every value in a slot)."""
    kind = {"REGISTER": "value", "INDIRECT": "value"}
    return [(rec.id, tuple((kind.get(loc.kind.name, loc.kind.name), loc.size) for loc in rec.locations))
            for rec in stackmap.records]


@pytest.fixture()
def compiled(tmp_path):
    path = tmp_path / "sites.ll"
    path.write_text(SITES)
    return compile_module(driver_module(str(path), False, False))


def test_records_equal_llc14(llvm14, tmp_path, compiled):
    src, obj = tmp_path / "ref.ll", tmp_path / "ref.o"
    src.write_text(SITES)
    res = subprocess.run([str(llvm14.llc), "-O2", "-filetype=obj", str(src), "-o", str(obj)],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    ref = read_object(obj.read_bytes()).stackmap()
    assert [f.record_count for f in compiled.stackmap.functions] == [f.record_count for f in ref.functions]
    assert _records(compiled.stackmap) == _records(ref)
    realigned = [f.stack_size for f in ref.functions].index((1 << 64) - 1)  # unknown: the stack is realigned
    assert [f.stack_size == (1 << 64) - 1 for f in compiled.stackmap.functions] == [
        k == realigned for k in range(len(ref.functions))]


def test_ids_above_two_to_the_63_are_unsigned(compiled):
    assert [r.id for r in compiled.stackmap.records[:2]] == [(1 << 64) - 2, 1 << 63]


def _body(compiled, name: str) -> list[str]:
    lines = compiled.asm_text.splitlines()
    start = lines.index(f"{name}:")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].endswith(":") and "." not in lines[i])
    return lines[start:end]


def test_invoked_patchpoint_calls_its_constant_target_and_goes_on(compiled):
    body = _body(compiled, "invoked")
    assert "    .byte 0x49, 0xbb, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01" in body  # movabs r11, target
    call = body.index("    call r11")
    assert any(line.startswith("    jmp invoked.bb1") for line in body[call:])


def test_webkit_arguments_go_to_rax_and_packed_stack_slots(compiled):
    body = _body(compiled, "webkit")
    stores = [line.strip() for line in body if line.strip().startswith(("mov qword ptr [rsp + ", "mov dword ptr [rsp + "))]
    assert "mov dword ptr [rsp + 8], eax" in stores  # i32 %n after i64 2 at 0
    assert not any("[rsp + 12]" in s for s in stores)  # the undef i32 is not written
    joined = "\n".join(body)
    assert "mov qword ptr [rsp + 0], rax" in joined and "mov qword ptr [rsp + 16], rax" in joined
    assert "[rsp + 24]" not in joined  # the sixth operand is a live value, not an argument
    site = body.index("webkit.sp0:")
    frame = compiled.functions[[f.name for f in compiled.functions].index("webkit")].frame
    callee = frame.function.args[0]
    register = frame.allocation.register(callee) if isinstance(frame, RegisterFrame) else None
    where = register or f"qword ptr [rsp + {frame.slot(callee)}]"
    assert body[site - 1] == f"    mov rax, {where}"  # %callee in rax, last
