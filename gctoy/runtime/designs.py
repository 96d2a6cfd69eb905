"""Three ways for a collector to find roots, built from the same IR so they can be measured side by side.

* ``statepoint``   RS4GC's gc.statepoint calls, gctoy's x86-64 lowering with a ``.llvm_stackmaps``
                   section, frames walked by return address (stackwalk.py);
* ``shadow-stack`` RS4GC, then ``statepoints-to-gcroots`` + ``shadow-stack-gc-lowering``: bases
                   spilled to gcroot slots before each call and reloaded after, a StackEntry pushed
                   on ``@llvm_gc_root_chain`` at entry and popped at exit, FrameMaps in the data
                   (shadowstack.py);
* ``x86-gcinfo``   the abstract-machine IR as written, lowered to 32-bit x86 with CoreCLR's JIT32
                   conventions, a GC-info blob per method in a ``.gcinfo_x86`` section, frames
                   walked by return address and unwound by EBP chain or ESP tracking
                   (stackwalk32.py).

`DESIGNS` lists them; ``design.build(ir_text)`` gives a `Built` (the loaded program and its static
costs) and `make_runtime` the runtime that runs it. `caller_loop` and `callee_loop` are the
microprograms that measure the cost per call of keeping k GC pointers live; `per_call` measures
it. Used by ``bench/bench_designs.py`` and chapter 17.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gctoy.codegen import compile_module
from gctoy.codegen.frame import size_of
from gctoy.codegen.x86_32 import CompiledModule32
from gctoy.ir import parse_module
from gctoy.passes import run as run_pass
from gctoy.runtime.elfload import LoadedObject
from gctoy.runtime.run import GCMode, Runtime
from gctoy.runtime.shadowstack import FRAME_MAP_PREFIX, ROOT_CHAIN, lower_for_shadow_stack
from gctoy.stackmap import emit

P = "i8 addrspace(1)*"
I64P = "i64 addrspace(1)*"
ROOT_COUNTS = (0, 1, 2, 4, 8)


@dataclass(frozen=True)
class Built:
    """One program compiled for one design, with its static costs."""

    loaded: LoadedObject | CompiledModule32  # by target
    code_bytes: int
    metadata_bytes: int  # constant data the collector reads: stack maps, or FrameMaps + chain head
    frame_bytes: int  # per activation, summed over functions: StackEntry words on the machine stack
    target: str = "x86-64"


def make_runtime(
    built: Built, *, gc: GCMode = "semispace", stress: bool = False, semispace_size: int = 1 << 20, roots=None
):
    """The runtime of the built program's target (x86-32 programs get the GC-info root finder)."""
    if built.target == "x86-32":
        from gctoy.runtime.run32 import Runtime32
        from gctoy.runtime.stackwalk32 import GCInfoRoots

        if gc != "none" and roots is None:
            roots = GCInfoRoots()
        assert isinstance(built.loaded, CompiledModule32)
        return Runtime32(
            built.loaded, gc=gc, stress=stress, semispace_size=semispace_size, roots=roots if gc != "none" else None
        )
    assert isinstance(built.loaded, LoadedObject)
    return Runtime(built.loaded, gc=gc, stress=stress, semispace_size=semispace_size, roots=roots)


@dataclass(frozen=True)
class Design:
    """A way of finding roots: a name and how to build a program for it."""

    name: str
    build: Callable[[str], Built]


def _loaded(compiled) -> LoadedObject:
    return LoadedObject(
        image=compiled.image,
        stackmap=compiled.stackmap if compiled.stackmap.records else None,
        functions={f.name: f.address for f in compiled.functions},
        externals=tuple(compiled.natives),
    )


def build_statepoint(text: str) -> Built:
    """RS4GC; gctoy's lowering with a StackMap v3 record per statepoint."""
    module = parse_module(text)
    run_pass(module, "rewrite-statepoints-for-gc")
    compiled = compile_module(module)
    meta = len(emit(compiled.stackmap)) if compiled.stackmap.records else 0
    return Built(_loaded(compiled), len(compiled.image.code), meta, 0)


def build_shadow_stack(text: str) -> Built:
    """RS4GC; statepoints-to-gcroots; shadow-stack-gc-lowering; the same code generator."""
    module = lower_for_shadow_stack(parse_module(text))
    compiled = compile_module(module)
    meta = frame = 0
    for g in module.globals:
        if g.name.startswith(FRAME_MAP_PREFIX) or g.name == ROOT_CHAIN:
            meta += size_of(g.value_type)
    for fn in module.definitions():
        frame += sum(
            size_of(i.allocated_type)
            for i in fn.entry.instructions
            if getattr(i, "name", None) and i.name.startswith("gc_frame") and i.opcode == "alloca"
        )
    return Built(_loaded(compiled), len(compiled.image.code), meta, frame)


def build_x86_gcinfo(text: str) -> Built:
    """The IR as written, lowered to x86-32 (JIT32) with CoreCLR x86 GC info per method."""
    from gctoy.coreclr.section import GCINFO_SECTION
    from gctoy.runtime.stackwalk32 import compile_with_gcinfo

    compiled, _ = compile_with_gcinfo(parse_module(text))
    return Built(compiled, len(compiled.image.code), len(compiled.image.sections[GCINFO_SECTION]), 0, "x86-32")


DESIGNS: list[Design] = [
    Design("statepoint", build_statepoint),
    Design("shadow-stack", build_shadow_stack),
    Design("x86-gcinfo", build_x86_gcinfo),
]


# ---------------------------------------------------------------- microprograms


def caller_loop(n: int, k: int) -> str:
    """@main keeps k objects live across n calls of a pointer-free function."""
    lines = [
        f"declare {P} @gc_alloc(i64, i64)",
        "",
        'define i64 @leaf(i64 %x) gc "statepoint-example" {',
        "entry:",
        "  %y = add i64 %x, 1",
        "  ret i64 %y",
        "}",
        "",
        'define i64 @main() gc "statepoint-example" {',
        "entry:",
    ]
    lines += [f"  %o{j} = call {P} @gc_alloc(i64 1, i64 0)" for j in range(k)]
    lines += [
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [0, %entry], [%i1, %loop]",
        "  %acc = phi i64 [0, %entry], [%acc1, %loop]",
        "  %r = call i64 @leaf(i64 %i)",
        "  %acc1 = add i64 %acc, %r",
        "  %i1 = add i64 %i, 1",
        f"  %more = icmp slt i64 %i1, {n}",
        "  br i1 %more, label %loop, label %out",
        "out:",
    ]
    acc = "%acc1"
    for j in range(k):
        lines += [
            f"  %f{j} = bitcast {P} %o{j} to {I64P}",
            f"  %v{j} = load i64, {I64P} %f{j}",
            f"  %s{j} = add i64 {acc}, %v{j}",
        ]
        acc = f"%s{j}"
    return "\n".join(lines + [f"  ret i64 {acc}", "}", ""])


def callee_loop(n: int, k: int) -> str:
    """@main passes k objects to @hold n times; @hold keeps its k arguments live across one call
    (so it has k roots: on the shadow stack a StackEntry pushed and popped per call)."""
    params = "".join(f", {P} %o{j}" for j in range(k))
    lines = [
        f"declare {P} @gc_alloc(i64, i64)",
        "",
        'define i64 @leaf(i64 %x) gc "statepoint-example" {',
        "entry:",
        "  %y = add i64 %x, 1",
        "  ret i64 %y",
        "}",
        "",
        f'define i64 @hold(i64 %x{params}) gc "statepoint-example" {{',
        "entry:",
        "  %r = call i64 @leaf(i64 %x)",
    ]
    acc = "%r"
    for j in range(k):
        lines += [
            f"  %f{j} = bitcast {P} %o{j} to {I64P}",
            f"  %v{j} = load i64, {I64P} %f{j}",
            f"  %s{j} = add i64 {acc}, %v{j}",
        ]
        acc = f"%s{j}"
    args = "".join(f", {P} %m{j}" for j in range(k))
    lines += [f"  ret i64 {acc}", "}", "", 'define i64 @main() gc "statepoint-example" {', "entry:"]
    lines += [f"  %m{j} = call {P} @gc_alloc(i64 1, i64 0)" for j in range(k)]
    lines += [
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [0, %entry], [%i1, %loop]",
        "  %acc = phi i64 [0, %entry], [%acc1, %loop]",
        f"  %r = call i64 @hold(i64 %i{args})",
        "  %acc1 = add i64 %acc, %r",
        "  %i1 = add i64 %i, 1",
        f"  %more = icmp slt i64 %i1, {n}",
        "  br i1 %more, label %loop, label %out",
        "out:",
        "  ret i64 %acc1",
        "}",
        "",
    ]
    return "\n".join(lines)


def executed(built: Built) -> tuple[int, int]:
    """(instructions, result) of one run of @main with a heap big enough never to collect."""
    with make_runtime(built, gc="none", semispace_size=1 << 22) as runtime:
        result = runtime.run(max_instructions=None)
        return runtime.machine.instructions, result.result


def per_call(design: Design, program: Callable[[int, int], str], n: int, k: int) -> float:
    """Instructions per loop iteration: the difference between 2N and N iterations, over N."""
    a, b = (executed(design.build(program(m, k)))[0] for m in (n, 2 * n))
    return (b - a) / n


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope: instructions per call added by each GC pointer."""
    mx = sum(k for k, _ in points) / len(points)
    my = sum(v for _, v in points) / len(points)
    return sum((k - mx) * (v - my) for k, v in points) / sum((k - mx) ** 2 for k, _ in points)
