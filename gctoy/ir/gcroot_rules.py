"""The rules for ``@llvm.gcroot``, ``@llvm.gcread`` and ``@llvm.gcwrite`` (seed 003, "LLVM IR Features").

Each rule says where it comes from, because LLVM's own verifier (``opt -passes=verify``, 14
and 19 alike) enforces only some of what the seed's prose demands:

==========================  ======  =====================================================
rule                        origin  what it demands
==========================  ======  =====================================================
``SIGNATURE``               LLVM    the call's type is the intrinsic's: typed
                                    ``void (i8**, i8*)``, ``i8* (i8*, i8**)``,
                                    ``void (i8*, i8*, i8**)``; opaque ``ptr`` everywhere;
                                    address space 0 only ("Intrinsic has incorrect
                                    argument type!")
``HAS_GC``                  LLVM    the enclosing function names a collector with
                                    ``gc "..."`` ("Enclosing function does not use GC.")
``ROOT_IS_ALLOCA``          LLVM    gcroot's first operand, pointer casts stripped, is
                                    an ``alloca``
``META_IS_CONSTANT``        LLVM    gcroot's second operand is a constant
``NON_POINTER_NEEDS_META``  LLVM    a root whose alloca does not hold a pointer needs
                                    non-null metadata (the collector must be told what
                                    the slot holds)
``ROOT_IN_ENTRY``           seed    every gcroot call sits in the entry block (LLVM
                                    accepts one elsewhere; if the root's alloca is there
                                    too, its ``store null`` stays there, after the shadow
                                    stack's frame is pushed)
``META_IS_GLOBAL``          seed    the metadata is ``null`` or the address of a global
                                    (through constant casts or a constant GEP); LLVM
                                    accepts any constant, e.g. ``inttoptr (i64 7 ...)``
==========================  ======  =====================================================

LLVM checks signatures at call sites only (an unused, mistyped declaration passes), and so
does gctoy. ``gc_intrinsic_problems`` lists every broken rule, the seed's included;
``check_gc_intrinsics`` raises the first of them (the seed's strict reading). The structural
verifier (``gctoy.ir.verifier``, run by ``-passes=verify`` and on every input of ``gctoy opt``)
refuses exactly what LLVM refuses: the rules of origin LLVM.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeGuard

from ..errors import VerifyError
from . import instructions as I
from .module import Module
from .statepoint import source_location
from .types import I8, VOID, FunctionType, PointerType
from .values import BasicBlock, Constant, ConstantExpr, ConstantNull, Function, GlobalValue

GCROOT = "llvm.gcroot"
GCREAD = "llvm.gcread"
GCWRITE = "llvm.gcwrite"
GC_ROOT_INTRINSICS = (GCROOT, GCREAD, GCWRITE)

_I8P = PointerType(I8)
_I8PP = PointerType(_I8P)
_PTR = PointerType(None)

#: The one type each intrinsic has, in typed and in opaque IR.
SIGNATURES: dict[str, tuple[FunctionType, FunctionType]] = {
    GCROOT: (FunctionType(VOID, (_I8PP, _I8P)), FunctionType(VOID, (_PTR, _PTR))),
    GCREAD: (FunctionType(_I8P, (_I8P, _I8PP)), FunctionType(_PTR, (_PTR, _PTR))),
    GCWRITE: (FunctionType(VOID, (_I8P, _I8P, _I8PP)), FunctionType(VOID, (_PTR, _PTR, _PTR))),
}


class Origin(enum.Enum):
    """Who demands a rule: LLVM's verifier (gctoy's refuses it too), or only the seed's text (reported)."""

    LLVM = "llvm"
    SEED = "seed"


class Rule(enum.Enum):
    """One rule of the gcroot family, with its origin."""

    SIGNATURE = ("signature", Origin.LLVM)
    HAS_GC = ("has-gc", Origin.LLVM)
    ROOT_IS_ALLOCA = ("root-is-alloca", Origin.LLVM)
    META_IS_CONSTANT = ("meta-is-constant", Origin.LLVM)
    NON_POINTER_NEEDS_META = ("non-pointer-needs-meta", Origin.LLVM)
    ROOT_IN_ENTRY = ("root-in-entry", Origin.SEED)
    META_IS_GLOBAL = ("meta-is-global", Origin.SEED)

    @property
    def origin(self) -> Origin:
        """LLVM or SEED."""
        return self.value[1]


@dataclass(frozen=True)
class GCIntrinsicProblem:
    """One broken rule at one call."""

    rule: Rule
    call: I.CallBase
    message: str


def is_gc_root_intrinsic(inst: I.Instruction) -> TypeGuard[I.CallBase]:
    """True for a call of ``llvm.gcroot``, ``llvm.gcread`` or ``llvm.gcwrite``."""
    return isinstance(inst, I.CallBase) and inst.callee_name in GC_ROOT_INTRINSICS


def strip_pointer_casts(v):
    """Look through ``bitcast`` and ``addrspacecast`` (instructions and constant expressions)."""
    while True:
        if isinstance(v, I.Cast) and v.opcode in ("bitcast", "addrspacecast"):
            v = v.value
        elif isinstance(v, ConstantExpr) and v.opcode in ("bitcast", "addrspacecast", "getelementptr"):
            v = v.operands[0]
        else:
            return v


def _is_null(v) -> bool:
    return isinstance(strip_pointer_casts(v), ConstantNull)


def _signature_problem(name: str, ftype: FunctionType) -> str | None:
    typed, opaque = SIGNATURES[name]
    if ftype in (typed, opaque):
        return None
    want = typed if not _mentions_opaque(ftype) else opaque
    return (
        f"@{name} has type '{ftype.render()}', the intrinsic is '{want.render()}' (incorrect argument or return type)"
    )


def _mentions_opaque(ftype: FunctionType) -> bool:
    return any(isinstance(t, PointerType) and t.pointee is None for t in (ftype.ret, *ftype.params))


def gc_intrinsic_problems(fn: Function) -> list[GCIntrinsicProblem]:
    """Every broken rule of the gcroot family in one function, in instruction order."""
    out: list[GCIntrinsicProblem] = []
    if fn.is_declaration:
        return out
    for block in fn.blocks:
        for inst in block.instructions:
            if is_gc_root_intrinsic(inst):
                out += _call_problems(fn, block, inst)
    return out


def _call_problems(fn: Function, block: BasicBlock, call: I.CallBase) -> list[GCIntrinsicProblem]:
    name = call.callee_name
    assert name is not None  # a call of one of the gcroot intrinsics, by name
    found: list[GCIntrinsicProblem] = []

    def report(rule: Rule, message: str) -> None:
        found.append(GCIntrinsicProblem(rule, call, message))

    bad_sig = _signature_problem(name, call.ftype)
    if bad_sig is not None:
        report(Rule.SIGNATURE, bad_sig)
    if fn.gc is None:
        report(
            Rule.HAS_GC, f"@{name} in a function without a 'gc \"...\"' attribute (enclosing function does not use GC)"
        )
    if name != GCROOT or bad_sig is not None or len(call.args) != 2:
        return found
    slot, meta = call.args
    alloca = strip_pointer_casts(slot)
    if not isinstance(alloca, I.Alloca):
        report(Rule.ROOT_IS_ALLOCA, "llvm.gcroot parameter #1 must be an alloca (or a pointer cast of one)")
    if not isinstance(meta, Constant):
        report(Rule.META_IS_CONSTANT, "llvm.gcroot parameter #2 (the metadata) must be a constant")
    elif not (_is_null(meta) or isinstance(strip_pointer_casts(meta), GlobalValue)):
        report(Rule.META_IS_GLOBAL, "llvm.gcroot metadata must be null or the address of a global (seed 003)")
    if (
        isinstance(alloca, I.Alloca)
        and not isinstance(alloca.allocated_type, PointerType)
        and isinstance(meta, Constant)
        and _is_null(meta)
    ):
        report(
            Rule.NON_POINTER_NEEDS_META, "llvm.gcroot of an alloca that does not hold a pointer needs non-null metadata"
        )
    if block is not fn.entry:
        report(Rule.ROOT_IN_ENTRY, "llvm.gcroot must be called in the entry block (seed 003)")
    return found


def problem_location(fn: Function, call: I.Instruction) -> str:
    """``file:line:col`` of a parsed call, else ``@f, block %b, instruction N``."""
    loc = source_location(call)
    if loc:
        return loc
    block = call.parent
    label = f"%{block.name}" if block.name is not None else f"#{fn.blocks.index(block)}"
    return f"@{fn.name}, block {label}, instruction {block.instructions.index(call)}"


def check_gc_intrinsics(module: Module) -> None:
    """Raise VerifyError (with the call's location) for the first broken gcroot-family rule."""
    for fn in module.functions:
        problems = gc_intrinsic_problems(fn)
        if problems:
            p = problems[0]
            raise VerifyError(p.message, problem_location(fn, p.call))


__all__ = [
    "GCIntrinsicProblem",
    "GCREAD",
    "GCROOT",
    "GCWRITE",
    "GC_ROOT_INTRINSICS",
    "Origin",
    "Rule",
    "SIGNATURES",
    "check_gc_intrinsics",
    "gc_intrinsic_problems",
    "is_gc_root_intrinsic",
    "problem_location",
    "strip_pointer_casts",
]
