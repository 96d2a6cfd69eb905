"""The seeds' examples, retyped as input data, behind one accessor.

Several chapters run the same example of a seed (LLVM's ``@test1`` appears in six of them). Each
example is kept here once, retyped from the seed exactly as the seed prints it (including what
LLVM 14 no longer accepts, such as ``call void ()* @foo()``), with the seed file and section it
comes from; a chapter asks for it by name::

    from gctoy.seed_examples import seed_example
    example = seed_example("test1-explicit")
    example.text          # the IR as the seed prints it
    example.cite          # 'seed 000-Statepoints-modern.rst, "Explicit Representation" (second example)'

Where a chapter must change an example to run it (declare ``@foo``, today's call syntax), it
says so next to the change; the text here stays the seed's. ``tests/test_seed_examples.py``
checks every example against the seed blocks kept in ``tests/seed_text``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SeedExample", "seed_example", "seed_examples"]


@dataclass(frozen=True)
class SeedExample:
    name: str
    seed: str  # the seed's file name
    section: str  # the section heading, as the seed writes it
    which: str  # which example of the section
    text: str

    @property
    def cite(self) -> str:
        return f'seed {self.seed}, "{self.section}" ({self.which})'


_MODERN = "000-Statepoints-modern.rst"
_OLDEST = "001-Statepoints-oldest.rst"
_MIDDLE = "004-Statepoints-middle.rst"

_EXAMPLES = [
    SeedExample(
        "test1-abstract",
        _MODERN,
        "Explicit Representation",
        "first example: the abstract machine",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  call void ()* @foo()
  ret i8 addrspace(1)* %obj
}
""",
    ),
    SeedExample(
        "test1-explicit",
        _MODERN,
        "Explicit Representation",
        "second example: the relocation sequence",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  %0 = call token (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %0, i32 7, i32 7)
  ret i8 addrspace(1)* %obj.relocated
}
""",
    ),
    SeedExample(
        "test1-asm",
        _MODERN,
        "Explicit Representation",
        "third example: the x86-64 code",
        """\
        .globl  test1
        .align  16, 0x90
        pushq   %rax
        callq   foo
.Ltmp1:
        movq    (%rsp), %rax  # This load is redundant (oops!)
        popq    %rdx
        retq
""",
    ),
    SeedExample(
        "test1-oldest",
        _OLDEST,
        "Overview",
        "the relocation sequence",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  %0 = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %0, i32 9, i32 9)
  ret i8 addrspace(1)* %obj.relocated
}
""",
    ),
    SeedExample(
        "test1-middle",
        _MIDDLE,
        "Overview",
        "the relocation sequence",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  %0 = call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %0, i32 7, i32 7)
  ret i8 addrspace(1)* %obj.relocated
}
""",
    ),
    SeedExample(
        "gc-transition",
        _MODERN,
        "GC Transitions",
        "the relocation sequence",
        """\
@flag = thread_local global i32 0, align 4

define i8 addrspace(1)* @test1(i8 addrspace(1) *%obj)
       gc "hypothetical-gc" {

  %0 = call token (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 1, i32* @Flag, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %0, i32 7, i32 7)
  ret i8 addrspace(1)* %obj.relocated
}
""",
    ),
    SeedExample(
        "gc-transition-asm",
        _MODERN,
        "GC Transitions",
        "the x86-64 code",
        """\
        .globl  test1
        .align  16, 0x90
        pushq   %rax
        movl $1, %fs:Flag@TPOFF
        callq   foo
        movl $0, %fs:Flag@TPOFF
.Ltmp1:
        movq    (%rsp), %rax  # This load is redundant (oops!)
        popq    %rdx
        retq
""",
    ),
    SeedExample(
        "derived",
        _MODERN,
        "Base & Derived Pointers",
        "the exterior derived pointer",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  %gep = getelementptr i8, i8 addrspace(1)* %obj, i64 20000
  %token = call token (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj, i8 addrspace(1)* %gep)
  %obj.relocated = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %token, i32 7, i32 7)
  %gep.relocated = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %token, i32 7, i32 8)
  %p = getelementptr i8, i8 addrspace(1)* %gep, i64 -20000
  ret i8 addrspace(1)* %p
}
""",
    ),
    SeedExample(
        "non-relocating",
        _MODERN,
        "Simplifications for Non-Relocating GCs",
        "the statepoint without relocates",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  call token (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  ret i8 addrspace(1)* %obj
}
""",
    ),
    SeedExample(
        "rs4gc-input-000",
        _MODERN,
        "RewriteStatepointsForGC",
        "the input shown for @test1",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  call void @foo()
  ret i8 addrspace(1)* %obj
}
""",
    ),
    SeedExample(
        "rs4gc-output-000",
        _MODERN,
        "RewriteStatepointsForGC",
        "the output shown for @test1",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  %0 = call token (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %0, i32 12, i32 12)
  ret i8 addrspace(1)* %obj.relocated
}
""",
    ),
    SeedExample(
        "rs4gc-input-004",
        _MIDDLE,
        "RewriteStatepointsForGC",
        "the input",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0)
  ret i8 addrspace(1)* %obj
}
""",
    ),
    SeedExample(
        "rs4gc-output-004",
        _MIDDLE,
        "RewriteStatepointsForGC",
        "the output",
        """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
       gc "statepoint-example" {
  %0 = call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %0, i32 12, i32 12)
  ret i8 addrspace(1)* %obj.relocated
}
""",
    ),
    SeedExample(
        "place-safepoints-input",
        _MODERN,
        "PlaceSafepoints",
        "the input (seeds 001 and 004 have the same)",
        """\
define void @test() gc "statepoint-example" {
  call void @foo()
  ret void
}

declare void @do_safepoint()
define void @gc.safepoint_poll() {
  call void @do_safepoint()
  ret void
}
""",
    ),
    SeedExample(
        "place-safepoints-output-000",
        _MODERN,
        "PlaceSafepoints",
        "the output for @test",
        """\
define void @test() gc "statepoint-example" {
  call void @do_safepoint()
  call void @foo()
  ret void
}
""",
    ),
    SeedExample(
        "place-safepoints-output-004",
        _MIDDLE,
        "PlaceSafepoints",
        "the output for @test",
        """\
define void @test() gc "statepoint-example" {
  %safepoint_token = call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @do_safepoint, i32 0, i32 0, i32 0, i32 0)
  %safepoint_token1 = call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  ret void
}
""",
    ),
    SeedExample(
        "place-safepoints-output-001",
        _OLDEST,
        "PlaceSafepoints",
        "the output for @test",
        """\
define void @test() gc "statepoint-example" {
%safepoint_token = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @do_safepoint, i32 0, i32 0, i32 0)
%safepoint_token1 = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo, i32 0, i32 0, i32 0)
ret void
}
""",
    ),
]

_BY_NAME = {e.name: e for e in _EXAMPLES}


def seed_example(name: str) -> SeedExample:
    """The example called ``name``; a KeyError lists the names there are."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no seed example {name!r}; there are: {', '.join(_BY_NAME)}") from None


def seed_examples() -> list[SeedExample]:
    return list(_EXAMPLES)
