"""``shadow-stack-gc-lowering``: gcroot slots become fields of a stack entry linked into a chain.

For every function with ``gc "shadow-stack"`` that calls ``@llvm.gcroot`` this pass does
what LLVM 14's ``llc`` does with the two IR passes it runs back to back:

* ``gc-lowering`` (InitRoots): each root alloca that is not already stored to near the
  start of the entry block gets ``store null`` right after it;
* ``shadow-stack-gc-lowering``: the roots move into one ``%gc_stackentry.<F>`` frame
  alloca; a per-function ``@__gc_<F>`` FrameMap constant ``{NumRoots, NumMeta, Meta[]}``
  is described by the frame; the frame is pushed onto ``@llvm_gc_root_chain`` on entry
  and popped before every ``ret`` and ``resume``; if the function may throw, calls that
  may throw become ``invoke``s unwinding to a ``gc_cleanup`` block that pops and resumes.

Names of the new values, blocks and types follow LLVM's uniquing (a per-function
counter for values and blocks, a per-module counter for struct type names), so the
printed result reads like ``llc -O0 -stop-after=shadow-stack-gc-lowering``'s: LLVM 14's for
typed-pointer IR, LLVM 19's for opaque-pointer IR.
"""

from __future__ import annotations

from ..errors import GCToyError
from ..ir.instructions import (
    Alloca,
    Call,
    Cast,
    GetElementPtr,
    Invoke,
    LandingPad,
    Load,
    Phi,
    Resume,
    Ret,
    Store,
)
from ..ir.module import Module, resolve_attrs
from ..ir.names import is_numbered
from ..ir.types import I8, I32, ArrayType, FunctionType, PointerType, StructBody, StructType, Type
from ..ir.values import (
    BasicBlock,
    Constant,
    ConstantAggregate,
    ConstantExpr,
    ConstantInt,
    ConstantNull,
    Function,
    GlobalVariable,
    NamedType,
    ZeroInitializer,
)
from .registry import register

GCROOT = "llvm.gcroot"
STRATEGY = "shadow-stack"
ROOT_CHAIN = "llvm_gc_root_chain"
#: x86-64 Linux: what ``getDefaultPersonalityFn`` picks for C-like code.
DEFAULT_PERSONALITY = "__gcc_personality_v0"
PTR_ALIGN = 8


class ShadowStackError(GCToyError):
    """A gcroot use that the shadow-stack lowering cannot handle."""


def _i32(v: int) -> ConstantInt:
    return ConstantInt(I32, v)


I8P = PointerType(I8)


# ---------------------------------------------------------------------------
# naming


class _TypeNames:
    """LLVM's struct-type naming: a clash gets ``.<N>`` from one counter per context."""

    def __init__(self, module: Module):
        self.module = module
        self.counter = 0

    def create(self, name: str, elements: tuple[Type, ...] | None) -> NamedType:
        final = name
        if final in self.module.types:
            while True:
                final = f"{name}.{self.counter}"
                self.counter += 1
                if final not in self.module.types:
                    break
        nt = NamedType(final, StructBody(elements))
        self.module.types[final] = nt
        return nt


class _LocalNames:
    """A function's value symbol table: a clash gets a number from one counter."""

    def __init__(self, fn: Function):
        self.used: set[str] = set()
        self.last = 0
        for a in fn.args:
            self._note(a.name)
        for b in fn.blocks:
            self._note(b.name)
            for i in b.instructions:
                self._note(i.name)

    def _note(self, name: str | None) -> None:
        if name is not None and not is_numbered(name):
            self.used.add(name)

    def unique(self, base: str) -> str:
        name = base
        if name in self.used:
            while True:
                self.last += 1
                name = f"{base}{self.last}"
                if name not in self.used:
                    break
        self.used.add(name)
        return name

    def free(self, name: str | None) -> None:
        if name is not None:
            self.used.discard(name)


# ---------------------------------------------------------------------------
# helpers


def _has_attr(attrs, module: Module | None, kind: str) -> bool:
    return any(a.kind == kind and a.style == "plain" for a in resolve_attrs(tuple(attrs), module))


def _strip_casts(v):
    while True:
        if isinstance(v, Cast) and v.opcode in ("bitcast", "addrspacecast"):
            v = v.value
        elif isinstance(v, ConstantExpr) and v.opcode in ("bitcast", "addrspacecast"):
            v = v.operands[0]
        else:
            return v


def _is_gcroot(inst) -> bool:
    return isinstance(inst, Call) and inst.callee_name == GCROOT


def _is_null(c) -> bool:
    if isinstance(c, (ConstantNull, ZeroInitializer)):
        return True
    if isinstance(c, ConstantExpr) and c.opcode in ("bitcast", "addrspacecast"):
        return _is_null(c.operands[0])
    return False


def _call_does_not_throw(call: Call, module: Module) -> bool:
    if _has_attr(call.fn_attrs, module, "nounwind"):
        return True
    callee = call.called_function
    if callee is None:
        return False
    if callee.name.startswith("llvm.") and not callee.name.startswith("llvm.experimental.gc.statepoint"):
        return True  # intrinsics are nounwind (llvm.gcroot included)
    return _has_attr(callee.fn_attrs, module, "nounwind")


def _collect_roots(fn: Function) -> list[tuple[Call, Alloca]]:
    """The gcroot calls with their allocas, in block order, from every block as LLVM collects them.

    A root named outside the entry block is lowered as LLVM lowers it: its frame slot is
    set up in the entry block with the others (and its ``store null`` stays where
    gc-lowering put it, right after its alloca)."""
    roots = []
    for block in fn.blocks:
        for inst in block.instructions:
            if not _is_gcroot(inst):
                continue
            if len(inst.args) != 2:
                raise ShadowStackError(f"@{fn.name}: llvm.gcroot takes two operands")
            slot = _strip_casts(inst.args[0])
            if not isinstance(slot, Alloca) or slot.parent is None:
                raise ShadowStackError(f"@{fn.name}: llvm.gcroot operand is not an alloca")
            if not isinstance(slot.allocated_type, PointerType):
                raise ShadowStackError(f"@{fn.name}: llvm.gcroot slot %{slot.name} does not hold a pointer")
            if not isinstance(inst.args[1], Constant):
                raise ShadowStackError(f"@{fn.name}: llvm.gcroot metadata is not a constant")
            roots.append((inst, slot))
    return roots


# ---------------------------------------------------------------------------
# gc-lowering's InitRoots


def _could_become_safe_point(inst) -> bool:
    if isinstance(inst, (Alloca, GetElementPtr, Store, Load)):
        return False
    return not _is_gcroot(inst)


def init_roots(fn: Function, roots: list[tuple[Call, Alloca]]) -> None:
    """Store null into every root not already stored to before the first possible safe point.

    A root whose alloca is already followed by a ``store null`` into it counts as
    initialised too, so that running this twice (``lower-gc-barriers``, then
    ``shadow-stack-gc-lowering``, which does llc's gc-lowering step itself) adds nothing
    for an alloca outside the entry block either."""
    insts = fn.entry.instructions
    i = 0
    while i < len(insts) and isinstance(insts[i], Alloca):
        i += 1
    inited = set()
    while i < len(insts) and not _could_become_safe_point(insts[i]):
        inst = insts[i]
        if isinstance(inst, Store):
            target = _strip_casts(inst.pointer)
            if isinstance(target, Alloca):
                inited.add(id(target))
        i += 1
    for _, root in roots:
        if id(root) not in inited and not _null_stored_next(root):
            root.parent.insert_after(root, Store(ConstantNull(root.allocated_type), root, align=PTR_ALIGN))
        inited.add(id(root))


def _null_stored_next(root: Alloca) -> bool:
    """True if the instruction after ``root`` stores null into it."""
    insts = root.parent.instructions
    k = insts.index(root) + 1
    if k >= len(insts) or not isinstance(insts[k], Store):
        return False
    store = insts[k]
    return _strip_casts(store.pointer) is root and _is_null(store.value)


# ---------------------------------------------------------------------------
# the lowering


class _ModuleState:
    def __init__(self, module: Module):
        self.module = module
        self.type_names = _TypeNames(module)
        self.frame_map = self.type_names.create("gc_map", (I32, I32)).ref
        se = self.type_names.create("gc_stackentry", None)
        se.body.elements = (PointerType(se.ref), PointerType(self.frame_map))
        self.stack_entry = se.ref
        self.head = self._root_chain(PointerType(self.stack_entry))

    def _root_chain(self, ty: PointerType) -> GlobalVariable:
        gv = self.module.get_global(ROOT_CHAIN)
        if gv is None:
            return self.module.add_global(GlobalVariable(ROOT_CHAIN, ty, ConstantNull(ty), linkage="linkonce"))
        if gv.is_declaration and gv.linkage in (None, "external"):
            if gv.value_type != ty:
                raise ShadowStackError(f"@{ROOT_CHAIN} is declared with type {gv.value_type}, not {ty}")
            gv.initializer = ConstantNull(ty)
            gv.linkage = "linkonce"
        return gv


def _frame_map(st: _ModuleState, fn: Function, roots) -> Constant:
    num_meta = 0
    meta: list[Constant] = []
    for i, (call, _) in enumerate(roots):
        c = call.args[1]
        if not _is_null(c):
            num_meta = i + 1
        if c.type != I8P:
            c = ConstantExpr(I8P, "bitcast", (c,))
        meta.append(c)
    meta = meta[:num_meta]
    arr_ty = ArrayType(num_meta, I8P)
    arr = ConstantAggregate(arr_ty, tuple(meta)) if num_meta else ZeroInitializer(arr_ty)
    header = ConstantAggregate(st.frame_map, (_i32(len(roots)), _i32(num_meta)))
    map_ty = st.type_names.create(f"gc_map.{num_meta}", (st.frame_map, arr_ty)).ref
    init = ConstantAggregate(map_ty, (header, arr))
    gv = GlobalVariable(f"__gc_{fn.name}", map_ty, init, constant=True, linkage="internal")
    st.module.add_global(gv)
    return ConstantExpr(
        PointerType(st.frame_map), "getelementptr", (gv, _i32(0), _i32(0)), source_type=map_ty, inbounds=True
    )


def _gep(names: _LocalNames, ty, frame, idx: list[int], base: str) -> GetElementPtr:
    return GetElementPtr(ty, frame, [_i32(i) for i in idx], name=names.unique(base))


def _pop(st: _ModuleState, names: _LocalNames, se_ty, frame, block: BasicBlock, before) -> None:
    nxt = _gep(names, se_ty, frame, [0, 0, 0], "gc_frame.next")
    saved = Load(PointerType(st.stack_entry), nxt, align=PTR_ALIGN, name=names.unique("gc_savedhead"))
    for inst in (nxt, saved, Store(saved, st.head, align=PTR_ALIGN)):
        block.insert_before(before, inst)


def _exit_point(block: BasicBlock):
    """The instruction a pop goes before: the ret/resume, or a musttail call just before a ret."""
    term = block.terminator
    if not isinstance(term, (Ret, Resume)):
        return None
    insts = block.instructions
    if isinstance(term, Ret) and len(insts) >= 2:
        prev = insts[-2]
        if isinstance(prev, Call) and prev.tail == "musttail":
            return prev
    return term


def _split_before(fn: Function, block: BasicBlock, at, name: str) -> BasicBlock:
    """Move ``at`` and what follows into a new block right after ``block`` (as SplitBlock does)."""
    new = BasicBlock(name)
    new.parent = fn
    fn.blocks.insert(fn.blocks.index(block) + 1, new)
    k = block.instructions.index(at)
    moved = block.instructions[k:]
    del block.instructions[k:]
    for inst in moved:
        new.append(inst)
    for succ in new.successors:
        for phi in succ.phis():
            assert isinstance(phi, Phi)
            phi.incoming = [(v, new if b is block else b) for v, b in phi.incoming]
    return new


def _handle_exceptions(st: _ModuleState, fn: Function, names: _LocalNames, se_ty, frame) -> None:
    module = st.module
    if _has_attr(fn.fn_attrs, module, "nounwind"):
        return
    calls = [
        i
        for i in fn.instructions()
        if isinstance(i, Call) and i.tail != "musttail" and not _call_does_not_throw(i, module)
    ]
    if not calls:
        return
    cleanup = fn.add_block(names.unique("gc_cleanup"))
    exn_ty = StructType((I8P, I32))
    if fn.personality is None:
        pers = module.get_or_declare(DEFAULT_PERSONALITY, FunctionType(I32, (), vararg=True))
        fn.personality = pers
    lpad = LandingPad(exn_ty, cleanup=True, name=names.unique("cleanup.lpad"))
    cleanup.append(lpad)
    resume = cleanup.append(Resume(lpad))
    for call in reversed(calls):
        block = call.parent
        split = _split_before(fn, block, call, names.unique((call.name or "") + ".noexc"))
        inv = Invoke(
            call.ftype,
            call.callee,
            list(call.args),
            split,
            cleanup,
            arg_attrs=list(call.arg_attrs),
            ret_attrs=call.ret_attrs,
            fn_attrs=call.fn_attrs,
            cc=call.cc,
            bundles=list(call.bundles),
            name=names.unique(call.name) if call.name is not None else None,
        )
        block.append(inv)
        fn.replace_all_uses(call, inv)
        call.erase()
        names.free(call.name)
    _pop(st, names, se_ty, frame, cleanup, resume)


def lower_function(st: _ModuleState, fn: Function) -> bool:
    """Lower one shadow-stack function; False if it has no roots (left untouched)."""
    roots = _collect_roots(fn)
    if not roots:
        return False
    init_roots(fn, roots)
    # roots with metadata first, each group in block order
    roots = [r for r in roots if not _is_null(r[0].args[1])] + [r for r in roots if _is_null(r[0].args[1])]
    names = _LocalNames(fn)
    map_ptr = _frame_map(st, fn, roots)
    se_ty = st.type_names.create(
        f"gc_stackentry.{fn.name}", (st.stack_entry, *(a.allocated_type for _, a in roots))
    ).ref
    entry = fn.entry
    first = entry.instructions[0]
    frame = Alloca(se_ty, align=PTR_ALIGN, name=names.unique("gc_frame"))
    entry.insert(0, frame)
    ip = entry.instructions.index(first)
    while isinstance(entry.instructions[ip], Alloca):
        ip += 1
    anchor = entry.instructions[ip]
    head_ptr_ty = PointerType(st.stack_entry)
    cur = Load(head_ptr_ty, st.head, align=PTR_ALIGN, name=names.unique("gc_currhead"))
    map_slot = _gep(names, se_ty, frame, [0, 0, 1], "gc_frame.map")
    new = [cur, map_slot, Store(map_ptr, map_slot, align=PTR_ALIGN)]
    for i, (_, alloca) in enumerate(roots):
        slot = GetElementPtr(se_ty, frame, [_i32(0), _i32(1 + i)], name=alloca.name)
        alloca.name = None
        fn.replace_all_uses(alloca, slot)
        new.append(slot)
    for inst in new:
        entry.insert_before(anchor, inst)
    ip = entry.instructions.index(anchor)
    while isinstance(entry.instructions[ip], Store):
        ip += 1
    anchor = entry.instructions[ip]
    nxt = _gep(names, se_ty, frame, [0, 0, 0], "gc_frame.next")
    newhead = _gep(names, se_ty, frame, [0, 0], "gc_newhead")
    for inst in (nxt, newhead, Store(cur, nxt, align=PTR_ALIGN), Store(newhead, st.head, align=PTR_ALIGN)):
        entry.insert_before(anchor, inst)
    for block in list(fn.blocks):
        at = _exit_point(block)
        if at is not None:
            _pop(st, names, se_ty, frame, block, at)
    _handle_exceptions(st, fn, names, se_ty, frame)
    for call, alloca in roots:
        call.erase()
        alloca.erase()
    return True


@register("shadow-stack-gc-lowering")
def shadow_stack_gc_lowering(module: Module) -> None:
    """Lower ``llvm.gcroot`` in ``gc "shadow-stack"`` functions to an explicit shadow stack."""
    if not any(f.gc == STRATEGY for f in module.functions):
        return
    st = _ModuleState(module)
    for fn in list(module.functions):
        if fn.gc == STRATEGY and not fn.is_declaration:
            lower_function(st, fn)
