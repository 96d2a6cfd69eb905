"""Lab (chapter 11): the seed's ``visitGCRoots``, written by the student, as the shadow-stack collector's root finder.

The student writes::

    def visit_gc_roots(read_u64, read_i32, head, visitor):
        ...

over guest memory: ``head`` is the address of ``@llvm_gc_root_chain`` (it holds the innermost
StackEntry, or 0), ``read_u64``/``read_i32`` read guest words, and ``visitor(root, meta)`` must be
called for every root of every StackEntry on the chain: ``root`` is the address of the root slot
``&R->Roots[i]`` and ``meta`` is ``R->Map->Meta[i]`` for ``i < NumMeta``, 0 after it (seed 003,
"The Shadow Stack GC").

:func:`check` plugs the student's walk into the shadow-stack design's collector (a
:class:`StudentShadowStackRoots` is the runtime's root finder), runs programs under GC stress
(a collection at every runtime call) with the heap verifier, and at every collection compares the
``(root, meta)`` pairs with gctoy's own walk (:func:`gctoy.runtime.shadowstack.visit_gc_roots`).
The heap verifier checks the roots gctoy's walk names, not the student's, so a root the student
missed is caught even where the comparison would not say why.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from gctoy.ir import parse_module
from gctoy.labs import LabFailure, LabReport, call_student
from gctoy.runtime.designs import callee_loop
from gctoy.runtime.run import Runtime, load_compiled
from gctoy.runtime.shadowstack import MAP_HEADER, WORD, ShadowStackRoots, lower_for_shadow_stack, shadow_stack_chain
from gctoy.runtime.shadowstack import visit_gc_roots as gctoy_visit_gc_roots

__all__ = ["PROGRAMS", "StudentShadowStackRoots", "check"]

P = "i8 addrspace(1)*"
PP = "i8 addrspace(1)**"

#: @cons keeps its tail in a root with metadata; @main keeps the list in a root without (two frames)
LIST = f"""
declare {P} @gc_alloc(i64, i64)
declare void @llvm.gcroot(i8**, i8*)
@cell_meta = constant i64 2

define {P} @cons(i64 %v, {P} %tail) gc "shadow-stack" {{
entry:
  %t = alloca {P}
  %t.slot = bitcast {PP} %t to i8**
  call void @llvm.gcroot(i8** %t.slot, i8* bitcast (i64* @cell_meta to i8*))
  store {P} %tail, {PP} %t
  %c = call {P} @gc_alloc(i64 2, i64 2)
  %cv = bitcast {P} %c to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %cv
  %t1 = load {P}, {PP} %t
  %cn = getelementptr i8, {P} %c, i64 8
  %cnp = bitcast {P} %cn to {P} addrspace(1)*
  store {P} %t1, {P} addrspace(1)* %cnp
  ret {P} %c
}}

define i64 @main() gc "shadow-stack" {{
entry:
  %list = alloca {P}
  %list.slot = bitcast {PP} %list to i8**
  call void @llvm.gcroot(i8** %list.slot, i8* null)
  %a = call {P} @cons(i64 1, {P} null)
  store {P} %a, {PP} %list
  %l1 = load {P}, {PP} %list
  %b = call {P} @cons(i64 2, {P} %l1)
  store {P} %b, {PP} %list
  %l2 = load {P}, {PP} %list
  %c = call {P} @cons(i64 3, {P} %l2)
  store {P} %c, {PP} %list
  br label %loop
loop:
  %p = phi {P} [ %c, %entry ], [ %nx, %body ]
  %s = phi i64 [ 0, %entry ], [ %s1, %body ]
  %z = icmp eq {P} %p, null
  br i1 %z, label %done, label %body
body:
  %pv = bitcast {P} %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %pv
  %s1 = add i64 %s, %v
  %pn = getelementptr i8, {P} %p, i64 8
  %pnp = bitcast {P} %pn to {P} addrspace(1)*
  %nx = load {P}, {P} addrspace(1)* %pnp
  br label %loop
done:
  ret i64 %s
}}
"""

#: @tree(d) builds a full binary tree of depth d: three roots, the first two with metadata, so
#: NumMeta (2) < NumRoots (3); with @main's entry the chain is d + 2 entries deep at the innermost
#: allocation.  @main's FrameMap follows @tree's in the data, so reading a Meta[] entry past NumMeta
#: reads main's NumRoots, not a convenient zero
TREE = f"""
declare {P} @gc_alloc(i64, i64)
declare void @llvm.gcroot(i8**, i8*)
@left_meta = constant i64 10
@right_meta = constant i64 20

define {P} @tree(i64 %d) gc "shadow-stack" {{
entry:
  %tmp = alloca {P}
  %l = alloca {P}
  %r = alloca {P}
  %tmp.s = bitcast {PP} %tmp to i8**
  call void @llvm.gcroot(i8** %tmp.s, i8* null)
  %l.s = bitcast {PP} %l to i8**
  call void @llvm.gcroot(i8** %l.s, i8* bitcast (i64* @left_meta to i8*))
  %r.s = bitcast {PP} %r to i8**
  call void @llvm.gcroot(i8** %r.s, i8* bitcast (i64* @right_meta to i8*))
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %make_leaf, label %inner
make_leaf:
  %o = call {P} @gc_alloc(i64 3, i64 0)
  %ov = bitcast {P} %o to i64 addrspace(1)*
  store i64 1, i64 addrspace(1)* %ov
  ret {P} %o
inner:
  %d1 = sub i64 %d, 1
  %lt = call {P} @tree(i64 %d1)
  store {P} %lt, {PP} %l
  %junk = call {P} @gc_alloc(i64 1, i64 0)
  store {P} %junk, {PP} %tmp
  %rt = call {P} @tree(i64 %d1)
  store {P} %rt, {PP} %r
  %n = call {P} @gc_alloc(i64 3, i64 6)
  %l1 = load {P}, {PP} %l
  %r1 = load {P}, {PP} %r
  %lv = bitcast {P} %l1 to i64 addrspace(1)*
  %rv = bitcast {P} %r1 to i64 addrspace(1)*
  %lc = load i64, i64 addrspace(1)* %lv
  %rc = load i64, i64 addrspace(1)* %rv
  %c0 = add i64 %lc, %rc
  %c = add i64 %c0, 1
  %nv = bitcast {P} %n to i64 addrspace(1)*
  store i64 %c, i64 addrspace(1)* %nv
  %nl = getelementptr i8, {P} %n, i64 8
  %nlp = bitcast {P} %nl to {P} addrspace(1)*
  store {P} %l1, {P} addrspace(1)* %nlp
  %nr = getelementptr i8, {P} %n, i64 16
  %nrp = bitcast {P} %nr to {P} addrspace(1)*
  store {P} %r1, {P} addrspace(1)* %nrp
  ret {P} %n
}}

define i64 @main() gc "shadow-stack" {{
entry:
  %keep = alloca {P}
  %keep.s = bitcast {PP} %keep to i8**
  call void @llvm.gcroot(i8** %keep.s, i8* null)
  %t0 = call {P} @tree(i64 3)
  store {P} %t0, {PP} %keep
  %junk = call {P} @gc_alloc(i64 2, i64 0)
  %t = load {P}, {PP} %keep
  %tv = bitcast {P} %t to i64 addrspace(1)*
  %count = load i64, i64 addrspace(1)* %tv
  ret i64 %count
}}
"""

#: name -> (IR text, whether it still needs statepoints-to-gcroots)
PROGRAMS: dict[str, tuple[str, bool]] = {
    "tree (NumMeta 2 < NumRoots 3, 5 entries deep)": (TREE, False),
    "list (metadata root in the callee)": (LIST, False),
    "callee_loop(3, 2) (statepoints turned into gcroots)": (callee_loop(3, 2), True),
}

Pair = tuple[int, int]


def _read_i32(machine) -> Callable[[int], int]:
    return lambda address: struct.unpack("<i", machine.read(address, 4))[0]


def _describe_chain(machine, head: int, names: dict[int, str]) -> list[str]:
    return [
        f"{e.function}: StackEntry {e.address:#x}, NumRoots {e.num_roots}, NumMeta {e.num_meta}"
        for e in shadow_stack_chain(machine, head, names)
    ]


def _diagnose(machine, head: int, names: dict[int, str], got: list[Pair], want: list[Pair]) -> str:
    """Say what the student's walk did differently from the seed's, in the seed's terms."""
    chain = shadow_stack_chain(machine, head, names)
    lines = ["At a collection the chain was (innermost first):"]
    lines += [f"  #{d} {line}" for d, line in enumerate(_describe_chain(machine, head, names))]
    lines.append(f"gctoy's walk visits {len(want)} (root, meta) pairs; yours visited {len(got)}.")
    first = chain[0] if chain else None
    only_top = [(s, first.root_meta(i)) for i, s in enumerate(first.roots)] if first else []
    shifted = [(s + WORD * e.num_meta, e.root_meta(i)) for e in chain for i, s in enumerate(e.roots)]
    upto_meta = [(s, e.root_meta(i)) for e in chain for i, s in enumerate(e.roots) if i < e.num_meta]
    all_meta = [
        (s, machine.read_u64(e.frame_map + MAP_HEADER + WORD * i)) for e in chain for i, s in enumerate(e.roots)
    ]
    if len(chain) > 1 and got == only_top:
        lines.append(
            "You visited only the innermost StackEntry. Every active function with roots has its own "
            "entry: after its roots, follow R->Next (the word at R + 0) and stop only at null."
        )
    elif got == upto_meta and upto_meta != want:
        lines.append(
            "You stopped at NumMeta. NumMeta counts the roots that come with metadata; the roots "
            "[NumMeta, NumRoots) are roots too (with null metadata), so the loop runs to NumRoots."
        )
    elif got == shifted and shifted != want:
        lines.append(
            "Your root addresses are NumMeta words too far: the Meta[] array is in the FrameMap "
            "(constant data), not in the StackEntry. Roots[i] is at R + 16 + 8*i, right after Next "
            "and Map."
        )
    elif [s for s, _ in got] == [s for s, _ in want]:
        if got == all_meta:
            lines.append(
                "Right slots, wrong metadata: only the first NumMeta roots have a Meta[] entry; the "
                "words after Meta[NumMeta-1] belong to something else, so roots from NumMeta on get 0."
            )
        else:
            lines.append(
                "Right slots, wrong metadata: meta for root i < NumMeta is the pointer stored at "
                "Map + 8 + 8*i (Map is the word at R + 8), and 0 for the others."
            )
    else:
        missing = [f"{s:#x}" for s, _ in want if s not in {g for g, _ in got}]
        extra = [f"{s:#x}" for s, _ in got if s not in {w for w, _ in want}]
        if missing:
            lines.append(
                f"Root slots you did not visit: {', '.join(missing[:8])}: the collector would not "
                "update them, and their objects would be lost or left in from-space."
            )
        if extra:
            lines.append(
                f"Addresses you visited that are no root slot: {', '.join(extra[:8])}: the collector "
                "would treat whatever they hold as a pointer and overwrite it."
            )
        if not missing and not extra:
            lines.append(
                "The same slots in another order: visit each entry's roots in index order (metadata "
                "roots first, as the FrameMap lists them), innermost entry first."
            )
    return "\n".join(lines)


class StudentShadowStackRoots(ShadowStackRoots):
    """The shadow-stack root finder with the student's walk; the heap verifier keeps gctoy's walk."""

    def __init__(self, walk, head: int | None, names: dict[int, str] | None = None) -> None:
        super().__init__(head, names)
        self.walk = walk
        self.collections = 0
        self.visited = 0

    def student_pairs(self, machine) -> list[Pair]:
        got: list[Pair] = []

        def visitor(root, meta=None):
            got.append((root, meta))

        call_student(
            self.walk,
            "walking the shadow stack at a collection",
            machine.read_u64,
            _read_i32(machine),
            self.head,
            visitor,
        )
        for root, meta in got:
            if not isinstance(root, int) or not isinstance(meta, int):
                raise LabFailure(
                    f"visitor got ({root!r}, {meta!r}): both the root (a slot address) and meta "
                    "(a pointer, 0 for none) are integers read from guest memory."
                )
        return got

    def find(self, machine):
        if self.head is None:
            return [], []
        got = self.student_pairs(machine)
        want: list[Pair] = []
        gctoy_visit_gc_roots(machine, self.head, lambda root, meta: want.append((root, meta)))
        if got != want:
            raise LabFailure(_diagnose(machine, self.head, self.names, got, want))
        self.collections += 1
        self.visited += len(got)
        return list(dict.fromkeys(root for root, _ in got)), []


def check(visit_gc_roots) -> LabReport:
    """Run every program of :data:`PROGRAMS` with ``visit_gc_roots`` as the collector's root walk."""
    collections = visited = copied = 0
    for name, (text, convert) in PROGRAMS.items():
        expected = (
            Runtime(load_compiled(lower_for_shadow_stack(parse_module(text), convert_statepoints=convert)), gc="none")
            .run()
            .result
        )
        loaded = load_compiled(lower_for_shadow_stack(parse_module(text), convert_statepoints=convert))
        finder = ShadowStackRoots.for_symbols(loaded.image.symbols)
        roots = StudentShadowStackRoots(visit_gc_roots, finder.head, finder.names)
        runtime = Runtime(loaded, stress=True, verify=True, roots=roots)
        try:
            result = runtime.run()
        except LabFailure as failure:
            raise LabFailure(f"program {name}:\n{failure}") from None
        except Exception as error:  # the heap verifier, a fault in guest memory
            raise LabFailure(
                f"program {name}: {type(error).__name__}: {error}\n  The collector moved objects "
                "using the roots your walk reported; a root it was not told about still points "
                "into from-space."
            ) from None
        if result.result != expected:
            raise LabFailure(
                f"program {name} returned {result.result}, not {expected} as it does without a "
                "collector: some root was not updated when its object moved."
            )
        if roots.collections == 0:
            raise LabFailure(f"program {name}: no collection used your walk")
        collections += roots.collections
        visited += roots.visited
        copied += runtime.stats.gc.objects_copied
    return LabReport(
        "visit_gc_roots",
        [
            f"{len(PROGRAMS)} programs under GC stress with the heap verifier: {collections} collections",
            f"{visited} (root, meta) pairs visited, the same as gctoy's walk at every collection",
            f"{copied} objects copied, every program's result the same as without a collector",
        ],
    )
