"""Printing then parsing is the identity, on random well-formed modules.

The modules come from ``random_ir`` driven by hypothesis (so a failure shrinks): named structs,
globals, external declarations, functions of several blocks with phis, conditional branches and
one-block loops, integer and floating arithmetic, casts, loads / stores / GEPs on typed pointers,
allocas, calls, and modern-form statepoints with ``deopt`` and ``gc-live`` bundles, ``gc.result``
and ``gc.relocate``. The text is valid by construction; LLVM 14 checks that on a smaller sample,
together with gctoy's printed text.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gctoy.ir import parse_module, print_module
from gctoy.ir.verifier import verify_module
from gctoy.llvm_tools import LLVMTools, run_opt
from random_ir import DrawChooser, Limits, RandomChooser, random_module

SMALL = Limits(functions=(1, 2), blocks=(1, 4), instructions=(1, 6), statepoint_percent=20)
COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def modules(draw, limits: Limits = SMALL) -> str:
    """IR text of one random well-formed module (typed pointers)."""
    return random_module(DrawChooser(draw), limits)


@settings(max_examples=150, **COMMON)
@given(modules())
def test_print_parse_is_identity(text: str) -> None:
    m = parse_module(text, "gen.ll")
    assert verify_module(m) == []
    printed = print_module(m)
    again = parse_module(printed, "printed.ll")
    assert again == m
    assert print_module(again) == printed


@settings(max_examples=60, **COMMON)
@given(modules())
def test_opaque_print_parse_is_identity(text: str) -> None:
    m = parse_module(text, "gen.ll")
    printed = print_module(m, opaque=True)
    again = parse_module(printed, "printed.ll")
    assert print_module(again, opaque=True) == printed
    # intrinsic declarations merge under their opaque names (p0f_isVoidf, p0f_i64i64f -> p0); definitions stay
    defined = lambda mod: [(f.name, len(f.blocks)) for f in mod.definitions()]  # noqa: E731
    assert defined(again) == defined(m)


@settings(max_examples=15, **COMMON)
@given(text=modules())
def test_llvm19_accepts_opaque_print(llvm19: LLVMTools, text: str) -> None:
    printed = print_module(parse_module(text, "gen.ll"), opaque=True)
    r = run_opt(llvm19.opt, ["-passes=verify", "-S", "-o", "/dev/null"], printed)
    assert r.returncode == 0, f"LLVM 19 rejects gctoy's opaque print:\n{r.stderr}\n{printed}"


@settings(max_examples=25, **COMMON)
@given(text=modules())
def test_llvm14_accepts_generated_and_printed(llvm14: LLVMTools, text: str) -> None:
    r = run_opt(llvm14.opt, ["-passes=verify", "-S", "-o", "/dev/null"], text)
    assert r.returncode == 0, f"the generator made invalid IR:\n{r.stderr}\n{text}"
    printed = print_module(parse_module(text, "gen.ll"))
    r = run_opt(llvm14.opt, ["-passes=verify", "-S", "-o", "/dev/null"], printed)
    assert r.returncode == 0, f"LLVM 14 rejects gctoy's print:\n{r.stderr}\n{printed}"


def test_generator_covers_the_features() -> None:
    """Across a few seeds the generator emits every construct the docstring promises."""
    text = "".join(random_module(RandomChooser(s), SMALL) for s in range(60))
    for construct in ("%struct.S", "@g", "declare", " phi ", "br i1", "load ", "store ", "getelementptr",
                      "alloca", "call ", "gc.statepoint", '"gc-live"(', '"deopt"(', "gc.relocate", "gc.result",
                      "fadd", "sext", "select", "%0 ="):
        assert construct in text, construct
    loops = re.findall(r"^(bb\d+):\n(?:  .*\n)*?  br i1 [^\n]*label %\1\b", text, re.M)
    assert loops, "no block branches to itself"


def test_generator_is_reproducible() -> None:
    assert random_module(RandomChooser(7)) == random_module(RandomChooser(7))
    assert random_module(RandomChooser(7)) != random_module(RandomChooser(8))
