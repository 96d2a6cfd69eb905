"""Small LLVM IR programs whose stack maps the differential tests compare with `llvm-readobj`.

Each `Case` is IR text, whether `opt -passes=rewrite-statepoints-for-gc` must run first, and
the `llc` flags. Most are generated from a seed (GC pointers, derived pointers, deopt bundles
with small and large constants, invokes, several functions per module); a few call the
`llvm.experimental.stackmap` / `patchpoint` intrinsics directly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from gctoy.llvm_tools import run_tool

HEADER = """target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare void @callee()
declare void @callee_i64(i64)
declare i8 addrspace(1)* @alloc(i64)
declare i32 @__gxx_personality_v0(...)
declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)
"""

PTR = "i8 addrspace(1)*"


@dataclass(frozen=True)
class Case:
    """One object to build: IR text, whether RS4GC runs on it first, and `llc` flags."""

    name: str
    ir: str
    rs4gc: bool
    llc_flags: tuple[str, ...] = ()


def _deopt_operand(rng: random.Random, ptrs: list[str], ints: list[str]) -> str:
    """One deopt operand: a small or large constant, an integer argument, a GC pointer, null, a double."""
    choice = rng.randrange(9)
    if choice == 0:
        return f"i32 {rng.choice([0, 1, 7, -1, -7, 2147483647, -2147483648])}"
    if choice == 1:
        return f"i64 {rng.choice([2**31, 2**32, 12345678901, -(2**40), 2**63 - 1, -(2**63)]) + rng.randrange(3)}"
    if choice == 2:
        return f"i64 {rng.choice(ints)}"
    if choice == 3:
        return f"{PTR} {rng.choice(ptrs)}"
    if choice == 4:
        return f"{PTR} null"
    if choice == 5:
        return f"double {rng.choice(['1.5', '0.0', '-2.25'])}"
    if choice == 6:
        return "i1 true"
    if choice == 7:
        return f"i16 {rng.randrange(-300, 300)}"
    return f"i64 {rng.randrange(-100, 100)}"


def _function(rng: random.Random, name: str, use_invoke: bool) -> str:
    """A GC function with pointer arguments, derived pointers and a few calls with deopt state."""
    nptr = rng.randint(1, 4)
    nint = rng.randint(1, 3)
    params = [f"{PTR} %p{i}" for i in range(nptr)] + [f"i64 %n{i}" for i in range(nint)]
    ptrs = [f"%p{i}" for i in range(nptr)]
    ints = [f"%n{i}" for i in range(nint)]
    personality = " personality i32 (...)* @__gxx_personality_v0" if use_invoke else ""
    body = ["entry:"]
    for i in range(rng.randint(0, 3)):
        body.append(f"  %d{i} = getelementptr i8, {PTR} {rng.choice(ptrs)}, i64 {rng.choice(ints)}")
        ptrs.append(f"%d{i}")
    ncalls = rng.randint(1, 3)
    for c in range(ncalls):
        attrs = []
        if rng.random() < 0.3:
            attrs.append(f'"statepoint-id"="{rng.randrange(1, 1000)}"')
        if rng.random() < 0.25:
            attrs.append('"deopt-lowering"="live-in"')
        deopt = ", ".join(_deopt_operand(rng, ptrs, ints) for _ in range(rng.randint(0, 5)))
        bundle = f' [ "deopt"({deopt}) ]' if deopt or rng.random() < 0.5 else ""
        attr_text = (" " + " ".join(attrs)) if attrs else ""
        if rng.random() < 0.4:
            body.append(f"  %a{c} = call {PTR} @alloc(i64 {8 * (c + 1)}){attr_text}{bundle}")
            ptrs.append(f"%a{c}")
        else:
            body.append(f"  call void @callee(){attr_text}{bundle}")
    uses = [f"  store i8 0, {PTR} {p}" for p in ptrs]
    if use_invoke:
        deopt = ", ".join(_deopt_operand(rng, ptrs, ints) for _ in range(rng.randint(0, 3)))
        body.append(f'  invoke void @callee() [ "deopt"({deopt}) ] to label %ok unwind label %bad')
        body.append("ok:")
        body.extend(uses)
        body.append(f"  ret {PTR} {ptrs[0]}")
        body.append("bad:")
        body.append("  %lp = landingpad token cleanup")
        body.append(f"  ret {PTR} {rng.choice(ptrs)}")
    else:
        body.extend(uses)
        body.append(f"  ret {PTR} {ptrs[-1]}")
    return (f'define {PTR} @{name}({", ".join(params)}) gc "statepoint-example"{personality} {{\n'
            + "\n".join(body) + "\n}\n")


def rs4gc_module(seed: int) -> str:
    """A module of one to three GC functions made from `seed`, before RS4GC."""
    rng = random.Random(seed)
    funcs = [_function(rng, f"f{seed}_{i}", use_invoke=rng.random() < 0.3) for i in range(rng.randint(1, 3))]
    return HEADER + "\n" + "\n".join(funcs)


_LLC_FLAG_CHOICES = (
    (),
    ("-max-registers-for-gc-values=1",),
    ("-max-registers-for-gc-values=3",),
    ("-max-registers-for-gc-values=8",),
    ("-disable-cgp-gc-opts",),
    ("-frame-pointer=all",),
)

INTRINSIC_CASES = {
    "stackmap_kinds": """
define i64 @sm(i64 %x, i64 %y, double %z) {
entry:
  %a = alloca i64
  store i64 %x, i64* %a
  %s = add i64 %x, %y
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 11, i32 0, i64 %s, i64* %a, i64 3, i64 -1, i64 4294967296, i32 -7, double %z, i64 4294967296)
  %r = add i64 %s, 1
  ret i64 %r
}
""",
    "patchpoint_liveouts": """
define i64 @pp(i64 %x, i64 %y) {
entry:
  %s = add i64 %x, %y
  %t = mul i64 %x, %y
  call anyregcc void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 12, i32 15, i8* null, i32 1, i64 %s)
  %r = add i64 %t, %s
  ret i64 %r
}
""",
    "patchpoint_call": """
define i64 @pc(i64 %x, i64 %y, i64 %z) {
entry:
  %r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 3, i32 15, i8* inttoptr (i64 4096 to i8*), i32 2, i64 %x, i64 %y, i64 %z, i64 -5, i64 8589934592)
  %q = add i64 %r, %z
  ret i64 %q
}
""",
    "dynamic_frame": """
define void @dyn(i64 %n, i64 %m) {
entry:
  %v = alloca i8, i64 %n
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 5, i8* %v, float 2.0, i64 %m, i64 -9223372036854775808)
  call void @callee_i64(i64 %m)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 2, i32 0)
  ret void
}
""",
    "registers": """
define void @regs(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, double %g, double %h, <4 x float> %v) {
entry:
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 7, i32 0, i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, double %g, double %h, <4 x float> %v, i32 undef)
  ret void
}
""",
    "statepoint_alloca_deopt_live_in": """
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)

define i8 addrspace(1)* @spa(i8 addrspace(1)* %obj, i64 %k) gc "statepoint-example" {
entry:
  %root = alloca i8 addrspace(1)*
  %root2 = alloca i8 addrspace(1)*, i32 2
  store i8 addrspace(1)* %obj, i8 addrspace(1)** %root
  %inner = getelementptr i8, i8 addrspace(1)* %obj, i64 24
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 314, i32 0, void ()* elementtype(void ()) @callee, i32 0, i32 2, i32 0, i32 0) [ "deopt"(i64 %k, i32 -3, i64 77777777777), "gc-live"(i8 addrspace(1)** %root, i8 addrspace(1)* %obj, i8 addrspace(1)* %inner, i8 addrspace(1)** %root2) ]
  %inner.rel = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 1, i32 2)
  %obj.rel = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 1, i32 1)
  store i8 1, i8 addrspace(1)* %obj.rel
  ret i8 addrspace(1)* %inner.rel
}
""",
    "many_functions": "".join(f"""
define i64 @m{i}(i64 %x) {{
entry:
  %s = mul i64 %x, {i + 3}
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 {100 + i}, i32 {i}, i64 %s, i64 {(i + 1) * 4294967296}, i64 {(i % 2) * 4294967296})
  call void @callee_i64(i64 %s)
  ret i64 %s
}}
""" for i in range(5)),
}


def cases() -> list[Case]:
    """The whole corpus: 36 RS4GC modules under varied `llc` flags plus the intrinsic modules."""
    out = []
    for seed in range(36):
        flags = _LLC_FLAG_CHOICES[seed % len(_LLC_FLAG_CHOICES)]
        if seed % 9 == 8:
            flags = ("-O0",)
        out.append(Case(f"rs4gc_{seed:02d}", rs4gc_module(seed), True, flags))
    for name, body in INTRINSIC_CASES.items():
        out.append(Case(name, HEADER + body, False))
        out.append(Case(name + "_O0", HEADER + body, False, ("-O0",)))
    return out


def build_object(llvm14, case: Case, workdir: Path) -> Path:
    """Compile `case` with the real `opt` (if RS4GC is wanted) and `llc` into an ELF object."""
    source = workdir / f"{case.name}.ll"
    source.write_text(case.ir)
    if case.rs4gc:
        rewritten = workdir / f"{case.name}.rs4gc.ll"
        res = run_tool(llvm14.opt, ["-passes=rewrite-statepoints-for-gc", "-S", str(source), "-o", str(rewritten)])
        assert res.returncode == 0, res.stderr
        source = rewritten
    flags = list(case.llc_flags)
    if "-O0" not in flags:
        flags.insert(0, "-O2")
    obj = workdir / f"{case.name}.o"
    res = run_tool(llvm14.llc, [*flags, "-filetype=obj", str(source), "-o", str(obj)])
    assert res.returncode == 0, res.stderr
    return obj
