"""A view over ``gc.statepoint`` calls in all three historical signatures, and conversion between them.

The three forms (see chapter 02 of the book)::

    oldest (seed 001)   i32 statepoint(target, #call, flags, call args..., #deopt, deopt..., gc...)
                        index:        0       1      2      3...
    middle (seed 004)   token statepoint(id, #patch, target, #call, flags, call args...,
                                         #transition, transition..., #deopt, deopt..., gc...)
                        index:       0   1       2       3      4      5...
    modern (LLVM 12+)   token statepoint(id, #patch, target, #call, flags, call args..., i32 0, i32 0)
                          [ "gc-transition"(...), "deopt"(...), "gc-live"(gc...) ]

``gc.relocate(token, base, derived)`` names its pointers by *position*: an
absolute argument index of the statepoint in the two older forms (so the first
GC pointer of a call with no arguments is 7 in the middle form, 4 in the
oldest), an index into the ``gc-live`` bundle in the modern form.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeGuard

from ..errors import VerifyError
from . import instructions as I
from .intrinsics import (
    DEFAULT_STATEPOINT_ID,
    RELOCATE,
    RESULT,
    base_name,
    is_relocate_name,
    is_result_name,
    is_statepoint_name,
)
from .order import in_function_order
from .types import I32, I64, TOKEN, FloatType, FunctionType, PointerType, Type, mangle
from .values import Argument, Attribute, BasicBlock, ConstantInt, Function, Value


class StatepointForm(enum.Enum):
    """The three historical signatures of ``llvm.experimental.gc.statepoint``."""

    OLDEST = "oldest"
    MIDDLE = "middle"
    MODERN = "modern"


@dataclass
class Statepoint:
    """The parts of one ``gc.statepoint`` call or invoke, whatever its form."""

    call: I.CallBase
    form: StatepointForm
    id: int | None
    num_patch_bytes: int | None
    target: Value
    call_args: list[Value]
    flags: int
    transition_args: list[Value]
    deopt_args: list[Value]
    gc_args: list[Value]
    #: argument index of the first GC pointer in the older forms (None in the modern form)
    gc_start: int | None

    # -- recognising -------------------------------------------------------------
    @staticmethod
    def is_statepoint(inst: object) -> TypeGuard[I.CallBase]:
        """True for a call or invoke of ``llvm.experimental.gc.statepoint.*``."""
        return isinstance(inst, I.CallBase) and is_statepoint_name(inst.callee_name)

    @classmethod
    def of(cls, call: I.CallBase) -> "Statepoint":
        """Decode a statepoint call; raises VerifyError when its operands do not fit any form."""
        if not cls.is_statepoint(call):
            raise VerifyError("not a call to llvm.experimental.gc.statepoint")
        args = call.args
        loc = _loc(call)

        def count(k: int, what: str) -> int:
            if k >= len(args):
                raise VerifyError(f"gc.statepoint has too few arguments: missing {what} at index {k}", loc)
            v = args[k]
            # the intrinsic's fixed parameters (ID i64, patch bytes, #call args and flags i32: LLVM's
            # verifier says "Intrinsic has incorrect argument type!" otherwise); the counts in the
            # variadic part may be any integer
            fixed = (
                {0: I64, 1: I32, 3: I32, 4: I32}.get(k) if args and not isinstance(args[0].type, PointerType) else None
            )
            if not isinstance(v, ConstantInt) or (fixed is not None and v.type != fixed):
                want = str(fixed) if fixed is not None else "integer"
                raise VerifyError(f"gc.statepoint {what} (argument {k}) must be a constant {want}, found '{v!r}'", loc)
            if v.value < 0:
                raise VerifyError(f"gc.statepoint {what} (argument {k}) must not be negative", loc)
            return v.value

        def take(k: int, n: int, what: str) -> list[Value]:
            if k + n > len(args):
                raise VerifyError(
                    f"gc.statepoint says it has {n} {what} but only {max(0, len(args) - k)} arguments follow", loc
                )
            return list(args[k : k + n])

        if args and isinstance(args[0].type, PointerType):
            # oldest: target, #call, flags, call args, #deopt, deopt, gc
            ncall = count(1, "number of call arguments")
            flags = count(2, "flags")
            call_args = take(3, ncall, "call arguments")
            ndeopt = count(3 + ncall, "number of deopt arguments")
            deopt = take(4 + ncall, ndeopt, "deopt arguments")
            start = 4 + ncall + ndeopt
            return cls(
                call, StatepointForm.OLDEST, None, None, args[0], call_args, flags, [], deopt, list(args[start:]), start
            )
        ident = count(0, "ID")
        patch = count(1, "number of patch bytes")
        if len(args) < 3:
            raise VerifyError("gc.statepoint has too few arguments: missing the call target", loc)
        target = args[2]
        ncall = count(3, "number of call arguments")
        flags = count(4, "flags")
        call_args = take(5, ncall, "call arguments")
        ntrans = count(5 + ncall, "number of transition arguments")
        trans = take(6 + ncall, ntrans, "transition arguments")
        ndeopt = count(6 + ncall + ntrans, "number of deopt arguments")
        deopt = take(7 + ncall + ntrans, ndeopt, "deopt arguments")
        start = 7 + ncall + ntrans + ndeopt
        inline_gc = list(args[start:])
        bundles = {b.tag: b.inputs for b in call.bundles}
        has_bundles = any(t in bundles for t in ("gc-live", "deopt", "gc-transition"))
        legacy_inline = ntrans or ndeopt or inline_gc
        if has_bundles or (not legacy_inline and call.type == TOKEN):
            return cls(
                call,
                StatepointForm.MODERN,
                ident,
                patch,
                target,
                call_args,
                flags,
                trans + list(bundles.get("gc-transition", [])),
                deopt + list(bundles.get("deopt", [])),
                inline_gc + list(bundles.get("gc-live", [])),
                start if legacy_inline else None,
            )
        return cls(call, StatepointForm.MIDDLE, ident, patch, target, call_args, flags, trans, deopt, inline_gc, start)

    # -- positions -----------------------------------------------------------------
    def gc_pointer(self, index: int) -> Value:
        """The GC pointer a ``gc.relocate`` index names, in this statepoint's form."""
        pos = self.gc_position(index)
        return self.gc_args[pos]

    def gc_position(self, index: int) -> int:
        """Turn a relocate index into a position in ``gc_args`` (raises VerifyError if outside)."""
        pos = index if self.gc_start is None else index - self.gc_start
        if not 0 <= pos < len(self.gc_args):
            where = (
                "the gc-live bundle"
                if self.gc_start is None
                else f"the GC pointer arguments (indices {self.gc_start}..{self.gc_start + len(self.gc_args) - 1})"
            )
            raise VerifyError(f"gc.relocate index {index} is outside {where}", _loc(self.call))
        return pos

    def relocate_index(self, position: int, form: StatepointForm | None = None) -> int:
        """The relocate index of ``gc_args[position]`` in ``form`` (default: this statepoint's)."""
        form = form or self.form
        if form is StatepointForm.MODERN:
            return position
        if form is StatepointForm.OLDEST:
            return 4 + len(self.call_args) + len(self.deopt_args) + position
        return 7 + len(self.call_args) + len(self.transition_args) + len(self.deopt_args) + position

    # -- users ---------------------------------------------------------------------------
    def relocates(self) -> list["GCRelocate"]:
        """The ``gc.relocate`` calls tied to this statepoint (normal and exceptional paths), in
        function order: the users of its token (and of its landing pad's), not a walk over the function."""
        call = self.call
        tokens: list[Value] = [call]
        if isinstance(call, I.Invoke) and _first_unwinding_statepoint(call.unwind) is call:
            tokens += _landing_pads(call.unwind)
        found = [
            u
            for token in tokens
            for u in token.users
            if isinstance(u, I.Call) and is_relocate_name(u.callee_name) and u.args and u.args[0] is token
        ]
        return [GCRelocate(inst, self) for inst in in_function_order(found)]

    def result(self) -> I.Call | None:
        """The ``gc.result`` call, if any (the first in function order)."""
        call = self.call
        found = [
            u
            for u in call.users
            if isinstance(u, I.Call) and is_result_name(u.callee_name) and u.args and u.args[0] is call
        ]
        return in_function_order(found)[0] if found else None

    @property
    def is_gc_transition(self) -> bool:
        """Flags bit 0: the call crosses into code the GC does not manage."""
        return bool(self.flags & 1)

    @property
    def target_type(self) -> FunctionType | None:
        """The called function's type."""
        ty = self.target.type
        if isinstance(ty, PointerType) and isinstance(ty.pointee, FunctionType):
            return ty.pointee
        attrs = self.call.arg_attrs[self.target_arg_index] if self.call.arg_attrs else ()
        for a in attrs:
            if a.kind == "elementtype" and isinstance(a.type, FunctionType):
                return a.type
        return None

    @property
    def target_arg_index(self) -> int:
        """Argument index of the call target: 0 (oldest) or 2."""
        return 0 if self.form is StatepointForm.OLDEST else 2


@dataclass
class GCRelocate:
    """A ``gc.relocate`` call resolved against its statepoint."""

    call: I.Call
    statepoint: Statepoint

    @property
    def base_index(self) -> int:
        """The base operand index as written."""
        return _const(self.call.args[1], self.call, "base index")

    @property
    def derived_index(self) -> int:
        """The derived operand index as written."""
        return _const(self.call.args[2], self.call, "derived index")

    @property
    def base(self) -> Value:
        """The base pointer relocated."""
        return self.statepoint.gc_pointer(self.base_index)

    @property
    def derived(self) -> Value:
        """The derived pointer relocated (== base for a plain pointer)."""
        return self.statepoint.gc_pointer(self.derived_index)


def token_statepoint(token: Value, unwinds: dict[int, I.Invoke] | None = None) -> I.CallBase | None:
    """The statepoint a relocate's token names: the call itself, or the invoke whose landing pad this is.

    ``unwinds`` (from :func:`statepoint_unwind_map`) saves a scan of the function per question."""
    if Statepoint.is_statepoint(token):
        return token
    if isinstance(token, I.LandingPad) and token.parent is not None:
        if unwinds is None:
            return _first_unwinding_statepoint(token.parent)
        return unwinds.get(id(token.parent))
    return None


def _landing_pads(block: BasicBlock) -> list[I.LandingPad]:
    """The landing pads at the head of ``block`` (after its phis)."""
    out = []
    for inst in block.instructions:
        if isinstance(inst, I.LandingPad):
            out.append(inst)
        elif not isinstance(inst, I.Phi):
            break
    return out


def _first_unwinding_statepoint(block: BasicBlock) -> I.Invoke | None:
    """The first (in function order) statepoint invoke that unwinds to ``block``, from the block's users."""
    invokes = [u for u in block.users if isinstance(u, I.Invoke) and u.unwind is block and Statepoint.is_statepoint(u)]
    return in_function_order(invokes)[0] if invokes else None


def statepoint_unwind_map(fn: Function) -> dict[int, I.Invoke]:
    """id(landing pad block) -> the statepoint invoke unwinding to it."""
    out: dict[int, I.Invoke] = {}
    for b in fn.blocks:
        t = b.terminator
        if Statepoint.is_statepoint(t) and isinstance(t, I.Invoke):
            out.setdefault(id(t.unwind), t)
    return out


def statepoints(fn: Function) -> list[Statepoint]:
    """Every statepoint in a function, in order."""
    return [Statepoint.of(i) for i in fn.instructions() if Statepoint.is_statepoint(i)]


def _const(v: Value, call, what: str) -> int:
    if not isinstance(v, ConstantInt):
        raise VerifyError(f"gc.relocate {what} must be a constant", _loc(call))
    return v.value


def _loc(inst) -> str | None:
    return source_location(inst)


def source_location(inst) -> str | None:
    """``file:line:col`` of a parsed instruction (None for one built in memory)."""
    loc = getattr(inst, "loc", None)
    if not loc:
        return None
    fn = inst.function
    mod = getattr(fn, "module", None) if fn is not None else None
    filename = getattr(mod, "filename", None) or "<input>"
    return f"{filename}:{loc[0]}:{loc[1]}"


# ---------------------------------------------------------------------------
# Conversion between forms


def convert_statepoints(module, form: StatepointForm | str) -> int:
    """Rewrite every statepoint of the module into ``form``, in place; returns how many changed.

    Relocation indices are renumbered so that every ``gc.relocate`` still names
    the same (base, derived) pair, and the intrinsic declarations get the
    signature of the new form.  Raises VerifyError when the target form cannot
    express something (the oldest form has no ID, patch bytes or GC transition).
    """
    form = StatepointForm(form)
    todo = [sp for fn in module.definitions() for sp in statepoints(fn) if sp.form is not form]
    for sp in todo:  # check everything first: a refusal leaves the module untouched
        _check_expressible(sp, form)
    for sp in todo:
        _convert_one(module, sp, form)
    return len(todo)


def _check_expressible(sp: Statepoint, form: StatepointForm) -> None:
    """Raise VerifyError if ``form`` cannot say what this statepoint says."""
    if form is not StatepointForm.OLDEST:
        return
    loc = _loc(sp.call)
    if sp.transition_args or sp.is_gc_transition:
        raise VerifyError("the oldest statepoint form has no GC transition arguments", loc)
    if sp.num_patch_bytes:
        raise VerifyError("the oldest statepoint form has no patch bytes", loc)
    if sp.flags & 2:
        raise VerifyError("the oldest statepoint form has no deopt-lowering flag (flags bit 1)", loc)
    if isinstance(sp.call, I.Invoke):
        raise VerifyError("the oldest statepoint form (LLVM 3.6) has no invoke statepoints", loc)


def _i32(v: int) -> ConstantInt:
    return ConstantInt(I32, v)


def _convert_one(module, sp: Statepoint, form: StatepointForm) -> None:
    call = sp.call
    relocs = [(r, sp.gc_position(r.base_index), sp.gc_position(r.derived_index)) for r in sp.relocates()]
    result = sp.result()
    target_ty = sp.target.type
    if form is StatepointForm.OLDEST:
        if sp.id not in (None, 0, DEFAULT_STATEPOINT_ID):
            module.notes.append(f"statepoint ID {sp.id} dropped: the oldest form has no ID")
        args = [
            sp.target,
            _i32(len(sp.call_args)),
            _i32(sp.flags),
            *sp.call_args,
            _i32(len(sp.deopt_args)),
            *sp.deopt_args,
            *sp.gc_args,
        ]
        params: tuple[Type, ...] = (target_ty, I32, I32)
        token_ty: Type = I32
        bundles: list[I.OperandBundle] = []
    else:
        ident = DEFAULT_STATEPOINT_ID if sp.id is None else sp.id
        head = [
            ConstantInt(I64, ident),
            _i32(sp.num_patch_bytes or 0),
            sp.target,
            _i32(len(sp.call_args)),
            _i32(sp.flags),
            *sp.call_args,
        ]
        params = (I64, I32, target_ty, I32, I32)
        if form is StatepointForm.MIDDLE:
            args = [
                *head,
                _i32(len(sp.transition_args)),
                *sp.transition_args,
                _i32(len(sp.deopt_args)),
                *sp.deopt_args,
                *sp.gc_args,
            ]
            bundles = []
            token_ty = call.type if sp.form is StatepointForm.MIDDLE else TOKEN
        else:
            args = [*head, _i32(0), _i32(0)]
            bundles = []
            if sp.deopt_args:
                bundles.append(I.OperandBundle("deopt", list(sp.deopt_args)))
            if sp.transition_args:
                bundles.append(I.OperandBundle("gc-transition", list(sp.transition_args)))
            if sp.gc_args:
                bundles.append(I.OperandBundle("gc-live", list(sp.gc_args)))
            token_ty = TOKEN
    others = [b for b in call.bundles if b.tag not in ("gc-live", "deopt", "gc-transition")]
    ftype = FunctionType(token_ty, params, True)
    old_attrs = call.arg_attrs
    call.args = args
    k_old = sp.target_arg_index
    k_new = 0 if form is StatepointForm.OLDEST else 2
    new_attrs: list[tuple[Attribute, ...]] = [() for _ in args]
    call.arg_attrs = new_attrs
    if old_attrs and k_old < len(old_attrs):
        call.arg_attrs[k_new] = old_attrs[k_old]
    call.bundles = others + bundles
    call.ftype = ftype
    call.type = token_ty
    _retype_declaration(call.called_function, ftype, form)
    new_sp = Statepoint.of(call)
    for r, bpos, dpos in relocs:
        r.call.args[1] = _i32(new_sp.relocate_index(bpos))
        r.call.args[2] = _i32(new_sp.relocate_index(dpos))
        _retype_token_user(module, r.call, r.call.args[0].type, form)
    if result is not None:
        _retype_token_user(module, result, token_ty, form)


def _retype_declaration(fn: Function | None, ftype: FunctionType, form: StatepointForm) -> None:
    if fn is None:
        return
    fn.ftype = ftype
    opaque = isinstance(fn.type, PointerType) and fn.type.is_opaque  # a function's type is a pointer
    fn.type = PointerType(ftype, fn.addrspace) if not opaque else fn.type
    immarg = (Attribute("immarg"),)
    if form is StatepointForm.OLDEST:
        attrs: list[tuple[Attribute, ...]] = [(), (), ()]
    else:
        attrs = [immarg, immarg, (), immarg, immarg]
    fn.args = [Argument(t, None, a) for t, a in zip(ftype.params, attrs)]
    for a in fn.args:
        a.parent = fn


_READNONE = (Attribute("nounwind"), Attribute("readnone"))


def _retype_token_user(module, call: I.Call, token_ty: Type, form: StatepointForm) -> None:
    """Give a gc.relocate/gc.result call and its declaration the signature and name of ``form``."""
    ft = call.ftype
    new = FunctionType(ft.ret, (token_ty, *ft.params[1:]), ft.vararg)
    call.ftype = new
    old_fn = call.called_function
    if old_fn is None:
        return
    name = _canonical_name(old_fn.name, new, form)
    fn = module.get_function(name)
    if fn is not None and fn is not old_fn and fn.ftype != new:
        raise VerifyError(f"'@{name}' is already declared with another type")
    if fn is None:
        # rename the old declaration when nothing else calls it, else declare anew
        fn = old_fn if not _has_other_users(module, old_fn, call) else module.add_function(Function(name, new))
        module.rename(fn, name)
    if fn.ftype != new or fn.fn_attrs != _READNONE:
        fn.ftype = new
        if not fn.type.is_opaque:
            fn.type = PointerType(new, fn.addrspace)
        immarg = () if form is StatepointForm.OLDEST else (Attribute("immarg"),)
        fn.args = [Argument(t, None, () if k == 0 else immarg) for k, t in enumerate(new.params)]
        for a in fn.args:
            a.parent = fn
        fn.fn_attrs = _READNONE
    call.callee = fn
    if old_fn is not fn and not _has_other_users(module, old_fn, None):
        module.remove_function(old_fn)


def _canonical_name(name: str, ftype: FunctionType, form: StatepointForm) -> str:
    base = base_name(name)
    suffix = mangle(ftype.ret)
    if base == RESULT and form is StatepointForm.OLDEST:
        family = (
            "ptr" if isinstance(ftype.ret, PointerType) else ("float" if isinstance(ftype.ret, FloatType) else "int")
        )
        return f"{RESULT}.{family}.{suffix}"
    return f"{base or RELOCATE}.{suffix}"


def _has_other_users(module, fn: Function, except_call) -> bool:
    """True if a call in one of the module's functions other than ``except_call`` calls ``fn`` (its use list)."""
    return any(
        u is not except_call
        and isinstance(u, I.CallBase)
        and u.callee is fn
        and getattr(u.function, "_in_module", None) is module
        for u in fn.users
    )


def target_attrs(target_type: Type, call_type: FunctionType) -> tuple[Attribute, ...]:
    """The attributes of a new statepoint's target argument: ``elementtype(<call type>)`` when it is a ``ptr``.

    With opaque pointers the target's function type is no longer in its pointer type; LLVM (15 and
    later) requires it on the argument, and reads the call's signature from it."""
    if isinstance(target_type, PointerType) and target_type.is_opaque:
        return (Attribute("elementtype", type=call_type, style="paren"),)
    return ()
