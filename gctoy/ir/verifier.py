"""The structural verifier: the rules every well-formed function obeys, plus statepoint consistency.

``verify_module(m)`` returns a list of :class:`Problem`; ``check_module(m)``
raises :class:`~gctoy.errors.VerifyError` with the first one.  The rules are
LLVM's (a subset): one terminator per block and only at its end, phis first
and agreeing with the predecessors, every use dominated by its definition,
operand types that fit, and for ``gc.statepoint`` the layout of its operands,
relocate indices inside the GC pointer section, tokens used only by
``gc.relocate``/``gc.result``, and no call-site attribute that lets a statepoint read or write less
than all memory; and the gcroot/gcread/gcwrite rules of gcroot_rules.py that LLVM enforces
(the seed's two further rules are reported by ``gc_intrinsic_problems``, not refused here).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import VerifyError
from . import instructions as I
from .gcroot_rules import Origin, gc_intrinsic_problems
from .intrinsics import RELOCATE, RESULT, STATEPOINT, base_name, is_relocate_name, is_result_name
from .module import Module, resolve_attrs
from .order import in_function_order
from .printer import print_operand
from .statepoint import Statepoint, StatepointForm, source_location, token_statepoint
from .types import I1, VOID, FunctionType, IntType, PointerType, TokenType, VectorType, is_gc_pointer
from .values import Argument, BasicBlock, Function


#: call-site attributes that would let a statepoint read or write less than all memory (LLVM 14's
#: verifier refuses them: doesNotAccessMemory, onlyReadsMemory, onlyAccessesArgMemory)
_MEMORY_LIMITING = frozenset({"readnone", "readonly", "argmemonly"})


@dataclass(frozen=True)
class Problem:
    """One rule broken: where (``file:line:col`` or ``@function``) and what."""

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: error: {self.message}"


def verify_module(module: Module) -> list[Problem]:
    """Every problem in the module, in source order."""
    problems: list[Problem] = []
    for fn in module.functions:
        problems += verify_function(fn)
    return problems


def check_module(module: Module) -> None:
    """Raise VerifyError for the first problem, if any."""
    problems = verify_module(module)
    if problems:
        p = problems[0]
        raise VerifyError(p.message, p.location)


def verify_function(fn: Function) -> list[Problem]:
    """Every problem in one function."""
    return _FunctionVerifier(fn).run()


class _FunctionVerifier:
    def __init__(self, fn: Function):
        self.fn = fn
        self.problems: list[Problem] = []
        self._views: dict[int, Statepoint | VerifyError] = {}

    def where(self, inst: I.Instruction | None = None) -> str:
        if inst is not None:
            loc = source_location(inst)
            if loc:
                return loc
            b = inst.parent
            if b is not None:
                idx = b.instructions.index(inst)
                return f"@{self.fn.name}, block {_block_name(self.fn, b)}, instruction {idx}"
        return f"@{self.fn.name}"

    def report(self, inst: I.Instruction | None, message: str) -> None:
        self.problems.append(Problem(self.where(inst), message))

    def run(self) -> list[Problem]:
        fn = self.fn
        self.signature()
        if fn.is_declaration:
            return self.problems
        self.structure()
        if self.problems:
            return self.problems  # dominance needs a sane CFG
        self.dominance()
        self.types()
        self.statepoints()
        for p in gc_intrinsic_problems(fn):
            if p.rule.origin is Origin.LLVM:
                self.report(p.call, p.message)
        return self.problems

    def signature(self) -> None:
        """Only intrinsics take or return a token."""
        fn = self.fn
        if fn.name.startswith("llvm."):
            return
        mod = getattr(fn, "module", None)
        where = getattr(mod, "filename", None) or f"@{fn.name}"
        if isinstance(fn.ftype.ret, TokenType):
            self.problems.append(Problem(where, f"function @{fn.name} returns a token but is not an intrinsic"))
        if any(isinstance(t, TokenType) for t in fn.ftype.params):
            self.problems.append(Problem(where, f"function @{fn.name} takes a token but is not an intrinsic"))

    # -- blocks and terminators ----------------------------------------------------
    def structure(self) -> None:
        fn = self.fn
        preds: dict[int, list[BasicBlock]] = {id(b): [] for b in fn.blocks}
        for b in fn.blocks:
            if not b.instructions or not b.instructions[-1].is_terminator:
                self.report(
                    b.instructions[-1] if b.instructions else None,
                    f"block {_block_name(fn, b)} does not end in a terminator",
                )
                continue
            for inst in b.instructions[:-1]:
                if inst.is_terminator:
                    self.report(inst, "terminator found in the middle of a basic block")
            term = b.terminator
            assert term is not None  # the block ends in a terminator (checked above)
            for s in term.successors:
                if s.parent is not fn:
                    self.report(term, "branch to a block of another function")
                elif id(s) in preds:
                    preds[id(s)].append(b)
        if fn.blocks and preds[id(fn.entry)]:
            self.report(
                fn.entry.instructions[0] if fn.entry.instructions else None,
                "the entry block must not have predecessors",
            )
        for b in fn.blocks:
            seen_other = False
            for inst in b.instructions:
                if isinstance(inst, I.Phi):
                    if seen_other:
                        self.report(inst, "phi nodes must be grouped at the top of their block")
                    self.check_phi(inst, preds[id(b)])
                elif isinstance(inst, I.LandingPad):
                    if seen_other or b.instructions.index(inst) != len(b.phis()):
                        self.report(inst, "landingpad must be the first non-phi instruction of its block")
                    seen_other = True
                else:
                    seen_other = True

    def check_phi(self, phi: I.Phi, preds: list[BasicBlock]) -> None:
        if isinstance(phi.type, TokenType):
            self.report(phi, "phi nodes cannot have token type")
        want: dict[int, int] = {}
        for p in preds:
            want[id(p)] = want.get(id(p), 0) + 1
        got: dict[int, int] = {}
        vals: dict[int, object] = {}
        for v, b in phi.incoming:
            got[id(b)] = got.get(id(b), 0) + 1
            if id(b) in vals and vals[id(b)] is not v:
                self.report(phi, "phi has different incoming values for the same predecessor")
            vals[id(b)] = v
            if v.type != phi.type:
                self.report(phi, f"phi incoming value has type '{v.type}', not '{phi.type}'")
        if got != want:
            names = sorted(_block_name(self.fn, p) for p in preds)
            self.report(phi, f"phi entries do not match the block's predecessors ({', '.join(names) or 'none'})")

    # -- SSA dominance ---------------------------------------------------------------------
    def dominance(self) -> None:
        from .analysis.dominators import DominatorTree

        fn = self.fn
        dt = DominatorTree(fn)
        defined = {id(a) for a in fn.args}
        for b in fn.blocks:
            for inst in b.instructions:
                defined.add(id(inst))
        for b in fn.blocks:
            if not dt.is_reachable(b):
                continue
            earlier: set[int] = set()  # this block's instructions so far: they dominate a later non-phi use
            for inst in b.instructions:
                pairs = (
                    [(v, blk) for v, blk in inst.incoming]
                    if isinstance(inst, I.Phi)
                    else [(v, None) for v in inst.operands]
                )
                for v, via in pairs:
                    if isinstance(v, BasicBlock):
                        continue
                    if isinstance(v, (I.Instruction, Argument)):
                        if id(v) not in defined:
                            self.report(inst, "operand is not defined in this function")
                            continue
                        if isinstance(v, Argument):
                            continue
                        if v is inst and not isinstance(inst, I.Phi):
                            self.report(inst, "only phi nodes may reference their own value")
                            continue
                        if via is None and id(v) in earlier:
                            continue
                        if not dt.dominates_use(v, inst, via):
                            self.report(inst, f"instruction does not dominate all uses: {_describe(v)} is used here")
                earlier.add(id(inst))

    # -- operand types ----------------------------------------------------------------------
    def types(self) -> None:
        ret = self.fn.ftype.ret
        for inst in self.fn.instructions():
            if isinstance(inst, I.Ret):
                got = inst.value.type if inst.value is not None else VOID
                if got != ret:
                    self.report(inst, f"function returns '{ret}' but 'ret' has '{got}'")
            elif isinstance(inst, I.Br) and inst.condition is not None:  # a conditional branch
                if inst.condition.type != I1:
                    self.report(inst, "branch condition must be i1")
            elif isinstance(inst, I.Alloca) and isinstance(inst.allocated_type, TokenType):
                self.report(inst, "invalid type for alloca: 'token'")
            elif isinstance(inst, I.Select):
                if isinstance(inst.type, TokenType):
                    self.report(inst, "select values cannot have token type")
                if inst.condition.type != I1:
                    self.report(inst, "select condition must be i1")
                if inst.true_value.type != inst.false_value.type:
                    self.report(inst, "select operands must have the same type")
            elif isinstance(inst, (I.BinaryOp, I.ICmp)):
                a, b = inst.ops
                if a.type != b.type:
                    self.report(inst, f"'{inst.opcode}' operands have different types")
            elif isinstance(inst, I.Switch):
                if not isinstance(inst.value.type, IntType):
                    self.report(inst, "switch value must be an integer")
                for c, _ in inst.cases:
                    if c.type != inst.value.type:
                        self.report(inst, "switch case type does not match the condition")
            elif isinstance(inst, I.CallBase):
                self.check_call(inst)

    def check_call(self, call: I.CallBase) -> None:
        ft = call.ftype
        n = len(ft.params)
        if len(call.args) < n or (len(call.args) > n and not ft.vararg):
            self.report(call, f"call has {len(call.args)} arguments, '{ft}' takes {n}")
        for k, (a, p) in enumerate(zip(call.args, ft.params)):
            if a.type != p:
                self.report(call, f"argument {k} has type '{a.type}', the callee expects '{p}'")
        callee_ty = call.callee.type
        if not isinstance(callee_ty, PointerType):
            self.report(call, "callee is not a pointer")
        elif callee_ty.pointee is not None and callee_ty.pointee != ft:
            self.report(call, f"callee has type '{callee_ty}', not a pointer to '{ft}'")

    # -- statepoints --------------------------------------------------------------------------
    def statepoints(self) -> None:
        for inst in self.fn.instructions():
            if not isinstance(inst, I.CallBase):
                continue
            kind = base_name(inst.callee_name)
            if kind == STATEPOINT:
                self.check_statepoint(inst)
            elif kind == RELOCATE and isinstance(inst, I.Call):
                self.check_relocate(inst)
            elif kind == RESULT and isinstance(inst, I.Call):
                self.check_result(inst)

    def check_statepoint(self, call: I.CallBase) -> None:
        if self.fn.gc is None:
            self.report(call, "gc.statepoint in a function without a 'gc' attribute (the collector must be named)")
        try:
            sp = self.view(call)
        except VerifyError as e:
            self.report(call, e.message)
            return
        if sp.form is StatepointForm.MODERN and sp.gc_start is not None:
            self.report(call, "gc.statepoint mixes inline transition/deopt/gc arguments with operand bundles")
        if sp.flags & ~3:
            self.report(call, f"gc.statepoint flags {sp.flags} has bits outside the known mask 3")
        if sp.num_patch_bytes is not None and sp.num_patch_bytes < 0:
            self.report(call, "gc.statepoint number of patch bytes must be positive")
        attrs = resolve_attrs(call.fn_attrs, getattr(self.fn, "module", None))
        if any(not a.is_string and a.kind in _MEMORY_LIMITING for a in attrs):
            self.report(
                call,
                "gc.statepoint must read and write all memory to preserve reordering restrictions "
                "required by safepoint semantics",
            )
        tty = sp.target_type
        if not isinstance(sp.target.type, PointerType):
            self.report(call, "gc.statepoint call target must be a pointer to a function")
        elif tty is not None:
            self.check_target_args(call, sp, tty)
        for v in sp.gc_args:
            if _pointer_of(v.type) is None:
                self.report(
                    call, f"gc.statepoint GC pointer argument {_describe(v)} is not a pointer or a vector of pointers"
                )
        for user in self.token_users(call):
            if not (
                isinstance(user, I.Call) and (is_relocate_name(user.callee_name) or is_result_name(user.callee_name))
            ):
                self.report(user, "the statepoint token may only be used by gc.relocate and gc.result")

    def check_target_args(self, call, sp: Statepoint, tty: FunctionType) -> None:
        n = len(tty.params)
        got = len(sp.call_args)
        if got < n or (got > n and not tty.vararg):
            self.report(call, f"gc.statepoint says {got} call arguments but the target '{tty}' takes {n}")
            return
        if tty.vararg and tty.ret != VOID:
            self.report(call, "gc.statepoint of a vararg function must return void")
        for k, (a, p) in enumerate(zip(sp.call_args, tty.params)):
            if a.type != p:
                self.report(call, f"gc.statepoint call argument {k} has type '{a.type}', the target expects '{p}'")

    def view(self, call: I.CallBase) -> Statepoint:
        """``Statepoint.of(call)``, decoded once per statepoint (its relocates and result ask again)."""
        got = self._views.get(id(call))
        if got is None:
            try:
                got = Statepoint.of(call)
            except VerifyError as e:
                got = e
            self._views[id(call)] = got
        if isinstance(got, VerifyError):
            raise got
        return got

    def token_users(self, call) -> list[I.Instruction]:
        """The other instructions of the function that read ``call``, in function order (its use list)."""
        return [u for u in in_function_order(u for u in call.users if u.function is self.fn) if u is not call]

    def check_relocate(self, call: I.Call) -> None:
        if len(call.args) != 3:
            self.report(call, "gc.relocate takes (token, i32 base, i32 derived)")
            return
        sp_call = token_statepoint(call.args[0])
        if sp_call is None:
            self.report(call, "gc.relocate must be tied to a statepoint (its token or a statepoint's landingpad)")
            return
        try:
            sp = self.view(sp_call)
        except VerifyError:
            return  # reported at the statepoint
        for which, idx in (("base", call.args[1]), ("derived", call.args[2])):
            if not hasattr(idx, "value"):
                self.report(call, f"gc.relocate {which} index must be a constant")
                return
            try:
                sp.gc_position(idx.value)
            except VerifyError as e:
                self.report(call, f"gc.relocate {which} index: {e.message}")
                return
        base = sp.gc_pointer(call.args[1].value)
        derived = sp.gc_pointer(call.args[2].value)
        dptr, bptr, rptr = _pointer_of(derived.type), _pointer_of(base.type), _pointer_of(call.type)
        if dptr is None or bptr is None:
            self.report(call, "gc.relocate: relocated values must be pointers or vectors of pointers")
            return
        if isinstance(call.type, VectorType) != isinstance(derived.type, VectorType):
            self.report(call, "gc.relocate: vector relocates to vector and pointer to pointer")
        elif rptr is None or rptr.addrspace != dptr.addrspace:
            self.report(call, "gc.relocate: its type must be a pointer in the derived pointer's address space")
        if is_gc_pointer(dptr) != is_gc_pointer(bptr):
            self.report(call, "gc.relocate: base and derived pointers must be in the same address space")

    def check_result(self, call: I.Call) -> None:
        if len(call.args) != 1:
            self.report(call, "gc.result takes one token")
            return
        tok = call.args[0]
        if not Statepoint.is_statepoint(tok):
            self.report(call, "gc.result must take the token of a statepoint")
            return
        try:
            sp = self.view(tok)
        except VerifyError:
            return
        tty = sp.target_type
        if tty is not None and tty.ret != call.type:
            self.report(call, f"gc.result type '{call.type}' does not match the target's return type '{tty.ret}'")


def _pointer_of(ty) -> PointerType | None:
    """The pointer type of a pointer or of a vector of pointers' lanes, else None."""
    if isinstance(ty, VectorType):
        ty = ty.element
    return ty if isinstance(ty, PointerType) else None


def _block_name(fn: Function, b: BasicBlock) -> str:
    return f"%{b.name}" if b.name is not None else f"#{fn.blocks.index(b)}"


def _describe(v) -> str:
    return f"'{print_operand(v)}'"


__all__ = ["Problem", "check_module", "verify_function", "verify_module"]
