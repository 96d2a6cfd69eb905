"""Three ways for a collector to find roots, measured side by side: stack maps, a shadow stack, x86 GC info.

Every program is compiled once per *design* from the same RS4GC output, by the same x86-64
code generator, and run on Unicorn under the same runtime (natives, heap, Cheney collector);
only the root finding differs:

* ``statepoint``   gc.statepoint calls, a ``.llvm_stackmaps`` section, frames walked by
                   return address (stackwalk.py);
* ``shadow-stack`` ``statepoints-to-gcroots`` + ``shadow-stack-gc-lowering``: bases spilled to
                   gcroot slots before each call and reloaded after, a StackEntry pushed on
                   ``@llvm_gc_root_chain`` at entry and popped at exit, FrameMaps in the data.

Measured (instructions are Unicorn's count of executed guest instructions):

1. per-call cost with ``k`` GC pointers (k = 0, 1, 2, 4, 8): (a) a caller keeps k pointers
   live across a loop of calls to a pointer-free function; (b) the same loop, but the callee
   takes the k pointers as arguments and keeps them live across one call of its own, so it
   has k roots (shadow stack: a StackEntry push and pop, k null-initialisations, k spills and
   k reloads per call); (b) - (a) is the callee's share. Per-call figures are
   (I(2N) - I(N)) / N, so set-up cancels;
2. generated programs (``tests/runnable_gen.py``): instructions executed, code bytes, GC
   metadata bytes (stack map section vs FrameMaps + root-chain head; plus the StackEntry
   words each activation puts on the machine stack), and with a collection at every runtime
   call the host time per collection, split into finding the roots and the rest, and the
   objects copied per collection (a shadow-stack root keeps its last base until the next
   call overwrites it, so it can keep an object alive a little longer than a stack map does).

* ``x86-gcinfo``   the abstract-machine IR as written (no RS4GC), lowered to 32-bit x86 with
                   CoreCLR's JIT32 conventions; a GC-info blob per method (tracked lifetimes,
                   interior pointers) in a ``.gcinfo_x86`` section, frames walked by return
                   address and unwound by EBP chain or ESP tracking (stackwalk32.py).

The third design runs a different instruction set: its counts include doing 64-bit arithmetic
with 32-bit registers, so its totals say more about x86-32 than about GC info; the *slopes* (the
instructions each extra GC pointer adds per call) and the metadata bytes are the comparable
figures. The designs are rows of one list (``DESIGNS``). Prints tables and ratios to the first
design; exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gctoy.codegen import compile_module  # noqa: E402
from gctoy.codegen.frame import size_of  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from gctoy.passes import run as run_pass  # noqa: E402
from gctoy.runtime.elfload import LoadedObject  # noqa: E402
from gctoy.runtime.run import Runtime  # noqa: E402
from gctoy.runtime.shadowstack import FRAME_MAP_PREFIX, ROOT_CHAIN, lower_for_shadow_stack  # noqa: E402
from gctoy.stackmap import emit  # noqa: E402
from runnable_gen import generate_program  # noqa: E402

P = "i8 addrspace(1)*"
I64P = "i64 addrspace(1)*"
ROOT_COUNTS = (0, 1, 2, 4, 8)


@dataclass(frozen=True)
class Built:
    """One program compiled for one design, with its static costs."""

    loaded: object  # LoadedObject (x86-64) or CompiledModule32 (x86-32)
    code_bytes: int
    metadata_bytes: int  # constant data the collector reads: stack maps, or FrameMaps + chain head
    frame_bytes: int  # per activation, summed over functions: StackEntry words on the machine stack
    target: str = "x86-64"


def make_runtime(built: Built, *, gc: str = "semispace", stress: bool = False, semispace_size: int = 1 << 20,
                 roots=None):
    """The runtime of the built program's target (x86-32 programs get the GC-info root finder)."""
    if built.target == "x86-32":
        from gctoy.runtime.run32 import Runtime32
        from gctoy.runtime.stackwalk32 import GCInfoRoots

        if gc != "none" and roots is None:
            roots = GCInfoRoots()
        return Runtime32(built.loaded, gc=gc, stress=stress, semispace_size=semispace_size,
                         roots=roots if gc != "none" else None)
    return Runtime(built.loaded, gc=gc, stress=stress, semispace_size=semispace_size, roots=roots)


@dataclass(frozen=True)
class Design:
    """A way of finding roots: a name and how to build a program for it."""

    name: str
    build: Callable[[str], Built]


def _loaded(compiled) -> LoadedObject:
    return LoadedObject(image=compiled.image, stackmap=compiled.stackmap if compiled.stackmap.records else None,
                        functions={f.name: f.address for f in compiled.functions}, externals=tuple(compiled.natives))


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
        frame += sum(size_of(i.allocated_type) for i in fn.entry.instructions
                     if getattr(i, "name", None) and i.name.startswith("gc_frame") and i.opcode == "alloca")
    return Built(_loaded(compiled), len(compiled.image.code), meta, frame)


def build_x86_gcinfo(text: str) -> Built:
    """The IR as written, lowered to x86-32 (JIT32) with CoreCLR x86 GC info per method."""
    from gctoy.coreclr.emit_gcinfo import GCINFO_SECTION
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
    lines = [f"declare {P} @gc_alloc(i64, i64)", "",
             'define i64 @leaf(i64 %x) gc "statepoint-example" {', "entry:", "  %y = add i64 %x, 1",
             "  ret i64 %y", "}", "", 'define i64 @main() gc "statepoint-example" {', "entry:"]
    lines += [f"  %o{j} = call {P} @gc_alloc(i64 1, i64 0)" for j in range(k)]
    lines += ["  br label %loop", "loop:", "  %i = phi i64 [0, %entry], [%i1, %loop]",
              "  %acc = phi i64 [0, %entry], [%acc1, %loop]", "  %r = call i64 @leaf(i64 %i)",
              "  %acc1 = add i64 %acc, %r", "  %i1 = add i64 %i, 1", f"  %more = icmp slt i64 %i1, {n}",
              "  br i1 %more, label %loop, label %out", "out:"]
    acc = "%acc1"
    for j in range(k):
        lines += [f"  %f{j} = bitcast {P} %o{j} to {I64P}", f"  %v{j} = load i64, {I64P} %f{j}",
                  f"  %s{j} = add i64 {acc}, %v{j}"]
        acc = f"%s{j}"
    return "\n".join(lines + [f"  ret i64 {acc}", "}", ""])


def callee_loop(n: int, k: int) -> str:
    """@main passes k objects to @hold n times; @hold keeps its k arguments live across one call
    (so it has k roots: on the shadow stack a StackEntry pushed and popped per call)."""
    params = "".join(f", {P} %o{j}" for j in range(k))
    lines = [f"declare {P} @gc_alloc(i64, i64)", "",
             'define i64 @leaf(i64 %x) gc "statepoint-example" {', "entry:", "  %y = add i64 %x, 1",
             "  ret i64 %y", "}", "", f'define i64 @hold(i64 %x{params}) gc "statepoint-example" {{', "entry:",
             "  %r = call i64 @leaf(i64 %x)"]
    acc = "%r"
    for j in range(k):
        lines += [f"  %f{j} = bitcast {P} %o{j} to {I64P}", f"  %v{j} = load i64, {I64P} %f{j}",
                  f"  %s{j} = add i64 {acc}, %v{j}"]
        acc = f"%s{j}"
    args = "".join(f", {P} %m{j}" for j in range(k))
    lines += [f"  ret i64 {acc}", "}", "", 'define i64 @main() gc "statepoint-example" {', "entry:"]
    lines += [f"  %m{j} = call {P} @gc_alloc(i64 1, i64 0)" for j in range(k)]
    lines += ["  br label %loop", "loop:", "  %i = phi i64 [0, %entry], [%i1, %loop]",
              "  %acc = phi i64 [0, %entry], [%acc1, %loop]", f"  %r = call i64 @hold(i64 %i{args})",
              "  %acc1 = add i64 %acc, %r", "  %i1 = add i64 %i, 1", f"  %more = icmp slt i64 %i1, {n}",
              "  br i1 %more, label %loop, label %out", "out:", "  ret i64 %acc1", "}", ""]
    return "\n".join(lines)


def executed(built: Built) -> tuple[int, int]:
    """(instructions, result) of one run of @main with a heap big enough never to collect."""
    runtime = make_runtime(built, gc="none", semispace_size=1 << 22)
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


# ---------------------------------------------------------------- generated programs


class TimedRoots:
    """A root finder that times another one."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.design = getattr(inner, "design", "x86-gcinfo")
        self.seconds = 0.0

    def may_collect(self, machine) -> bool:
        """As the inner finder says."""
        return self.inner.may_collect(machine)

    def find(self, machine):
        """The inner finder's roots, timed."""
        t0 = time.perf_counter()
        try:
            return self.inner.find(machine)
        finally:
            self.seconds += time.perf_counter() - t0

    def all_slots(self, machine):
        """As the inner finder says."""
        return self.inner.all_slots(machine)


def stressed(built: Built) -> tuple[int, float, float, int, tuple]:
    """(collections, seconds collecting, seconds finding roots, objects copied, output), collecting at
    every runtime call."""
    if built.target == "x86-32":
        from gctoy.runtime.stackwalk32 import GCInfoRoots

        roots = TimedRoots(GCInfoRoots())
    else:
        roots = TimedRoots(Runtime(built.loaded).roots)
    runtime = make_runtime(built, stress=True, roots=roots)
    spent = 0.0
    original = runtime.collect

    def timed_collect():
        nonlocal spent
        t0 = time.perf_counter()
        try:
            return original()
        finally:
            spent += time.perf_counter() - t0

    runtime.collect = timed_collect  # type: ignore[method-assign]
    result = runtime.run(max_instructions=None)
    return (len(runtime.collections), spent, roots.seconds, runtime.stats.gc.objects_copied,
            (tuple(runtime.printed), result.result))


def ratio(value: float, base: float) -> str:
    """``value / base`` as ``1.23x``."""
    return f"{value / base:6.2f}x" if base else "     -"


def main(argv: list[str]) -> int:
    """Run the measurements and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500, help="N of the call loops")
    ap.add_argument("--seeds", type=int, nargs="*", default=[11, 12, 13, 14, 15], help="generated programs")
    ap.add_argument("--size", type=int, default=16, help="phases of each generated program")
    args = ap.parse_args(argv)
    names = [d.name for d in DESIGNS]
    head = "".join(f"{n:>14}" for n in names) + "".join(f"{n + '/' + names[0]:>26}" for n in names[1:])

    for title, program in (("caller keeps k pointers live across each call", caller_loop),
                           ("and the callee holds them across one call (k roots)", callee_loop)):
        print(f"Instructions per call, {title}; (I(2N) - I(N)) / N, N = {args.calls}")
        print(f"  {'k':>3}{head}")
        series: dict[str, list[tuple[int, float]]] = {n: [] for n in names}
        for k in ROOT_COUNTS:
            row = [per_call(d, program, args.calls, k) for d in DESIGNS]
            for d, v in zip(DESIGNS, row):
                series[d.name].append((k, v))
            ratios = "".join(f"{ratio(v, row[0]):>26}" for v in row[1:])
            print(f"  {k:>3}" + "".join(f"{v:14.2f}" for v in row) + ratios)
        print("  the first GC pointer (0 -> 1) / each further one (least-squares slope over k >= 1): " +
              ", ".join(f"{n} {series[n][1][1] - series[n][0][1]:+.2f} / {slope(series[n][1:]):+.2f}"
                        for n in names) + " instructions per call\n")

    print(f"Generated programs (runnable_gen, size {args.size}): static costs and a run without collections")
    print(f"  {'seed':>5} {'design':<14}{'instructions':>14}{'code bytes':>12}{'GC metadata':>13}"
          f"{'StackEntry B':>14}")
    totals = {n: [0, 0, 0, 0] for n in names}
    builds: dict[tuple[int, str], Built] = {}
    for seed in args.seeds:
        text = generate_program(seed, args.size)
        outputs = set()
        for d in DESIGNS:
            built = builds[(seed, d.name)] = d.build(text)
            runtime = make_runtime(built, gc="none", semispace_size=1 << 22)
            result = runtime.run(max_instructions=None)
            outputs.add((tuple(runtime.printed), result.result))
            row = (runtime.machine.instructions, built.code_bytes, built.metadata_bytes, built.frame_bytes)
            totals[d.name] = [t + v for t, v in zip(totals[d.name], row)]
            print(f"  {seed:>5} {d.name:<14}" + "".join(f"{v:>{w}}" for v, w in zip(row, (14, 12, 13, 14))))
        assert len(outputs) == 1, f"seed {seed}: the designs disagree"
    base = totals[names[0]]
    for n in names:
        t = totals[n]
        print(f"  {'total':>5} {n:<14}{t[0]:>14}{t[1]:>12}{t[2]:>13}{t[3]:>14}   ratios to {names[0]}: "
              f"instructions {ratio(t[0], base[0]).strip()}, code {ratio(t[1], base[1]).strip()}, "
              f"metadata {ratio(t[2], base[2]).strip()}")

    print("\nA collection at every runtime call (host time, best of 3 runs per program; the same collector, "
          "different roots)")
    print(f"  {'design':<14}{'collections':>12}{'us/collection':>15}{'us finding roots':>18}{'roots share':>13}"
          f"{'copied/collection':>19}")
    per = {}
    for d in DESIGNS:
        n = spent = finding = copied = 0
        outs = []
        for seed in args.seeds:
            runs = [stressed(builds[(seed, d.name)]) for _ in range(3)]
            c, s, f, objects, out = min(runs, key=lambda r: r[1])
            n, spent, finding, copied = n + c, spent + s, finding + f, copied + objects
            outs.append(out)
        per[d.name] = (spent / n, finding / n, outs)
        print(f"  {d.name:<14}{n:>12}{1e6 * spent / n:>15.1f}{1e6 * finding / n:>18.1f}{finding / spent:>12.0%}{copied / n:>19.1f}")
    assert len({tuple(v[2]) for v in per.values()}) == 1, "stressed runs disagree"
    for n in names[1:]:
        print(f"  {n}/{names[0]}: {ratio(per[n][0], per[names[0]][0]).strip()} per collection, "
              f"{ratio(per[n][1], per[names[0]][1]).strip()} finding roots")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
