"""``lower-gc-barriers``: turn ``llvm.gcread`` / ``llvm.gcwrite`` into code, as the function's strategy says.

For a strategy without custom barriers this is what LLVM 14's ``gc-lowering`` does (``llc
-stop-after=gc-lowering`` prints the same function bodies): ``gcwrite(v, obj, p)`` becomes
``store v, p, align 8``, ``gcread(obj, p)`` becomes a ``load`` from ``p`` that takes the
call's name, and, if the strategy initialises roots, every pointer alloca named by
``llvm.gcroot`` gets ``store null`` right after it unless the entry block already stores to
it before anything that could become a safe point. As in LLVM 14 and 19, that includes the
roots of ``shadow-stack`` functions (whose own lowering runs later) and roots named by a
``gcroot`` call outside the entry block (valid IR for LLVM and gctoy, though seed 003 asks
for the entry block).

Two strategies of gctoy's own replace the default:

``gctoy-cardmark`` (custom write barrier): the store, then a card mark. The heap is cut into
cards of ``2**CARD_SHIFT`` = 512 bytes; the byte ``@gctoy_card_table[i]`` is set to
``CARD_DIRTY`` when an object whose field 0 lies in card ``i`` is written to::

    i = (ptrtoint obj - HEAP_BASE) >> CARD_SHIFT      HEAP_BASE = 0x10000000 (gctoy.emu.image)
    i = i <u CARD_COUNT ? i : CARD_COUNT              objects outside the heap (a global,
    @gctoy_card_table[i] = 1                            a stack slot) mark the spare last byte

``CARD_COUNT`` = 4096 cards cover 2 MiB, the two 1 MiB semispaces of gctoy's runtime
(gctoy.runtime.heap.DEFAULT_SEMISPACE); the table has one more byte, the overflow card, so
the barrier needs no branch. A generational collector would scan only dirty cards for
old-to-young pointers.

``gctoy-readbarrier`` (custom read barrier): the load, then the to-space check of a copying
collector. gctoy's object header word at ``p - 8`` is ``nfields << 1 | 1`` for a live object
and, once the collector has copied the object, the forwarding address (tag bit 0)::

    r    = load p                       ; the reference the program asked for
    h    = r == null ? &@gctoy_rb_null_header + 8 : r
    word = load (h - 8)                 ; header word (null reads a constant live header)
    x    = (word & 1) == 0 ? inttoptr word : r

so the program never holds a pointer to an object that has moved (Baker's to-space invariant).

Functions without a ``gc`` attribute are left alone (the verifier rejects barriers there);
an unknown collector name is an error. The output is valid LLVM 14 IR (typed or opaque).
"""

from __future__ import annotations

from ..errors import GCToyError
from ..ir.gcroot_rules import GCREAD, GCROOT, GCWRITE, strip_pointer_casts
from ..ir.instructions import Alloca, BinaryOp, Call, Cast, GetElementPtr, ICmp, Load, Select, Store
from ..ir.module import Module
from ..ir.types import I8, I64, ArrayType, PointerType, Type
from ..ir.names import is_numbered
from ..ir.values import ConstantInt, ConstantNull, Function, GlobalVariable, Value, ZeroInitializer
from ..strategy import GCStrategy, get_strategy
from .registry import register
from .naming import NameUniquer
from .shadow_stack_lowering import init_roots

PTR_ALIGN = 8
# The runtime's facts, restated here because passes sit below the runtime in the import order
# (tests check them against gctoy.emu.image and gctoy.runtime.heap):
HEAP_BASE = 0x1000_0000
DEFAULT_SEMISPACE = 1 << 20
WORD = 8
OBJECT_TAG = 1
#: log2 of the card size in bytes (512-byte cards).
CARD_SHIFT = 9
#: cards covering the runtime's two default semispaces.
CARD_COUNT = (2 * DEFAULT_SEMISPACE) >> CARD_SHIFT
#: what a written card holds (clean cards are 0, the table starts zero-filled).
CARD_DIRTY = 1
CARD_TABLE = "gctoy_card_table"
NULL_HEADER = "gctoy_rb_null_header"


class BarrierLoweringError(GCToyError):
    """A barrier call the pass cannot lower (wrong operand count, a clashing global)."""


def _i64(v: int) -> ConstantInt:
    return ConstantInt(I64, v)


def _is_opaque(ty: Type) -> bool:
    return isinstance(ty, PointerType) and ty.pointee is None


def _byte_pointer(opaque: bool) -> PointerType:
    return PointerType(None) if opaque else PointerType(I8)


def _module_global(module: Module, name: str, ty: Type, init, constant: bool, opaque: bool) -> GlobalVariable:
    """The module's ``@name`` of type ``ty``, created if missing (its address a ``ptr`` in opaque IR)."""
    gv = module.get_global(name)
    if gv is None:
        gv = GlobalVariable(name, ty, init, constant=constant, align=8)
        if opaque:
            gv.type = PointerType(None)
        return module.add_global(gv)
    if gv.value_type != ty:
        raise BarrierLoweringError(f"@{name} exists with type {gv.value_type}; the barrier needs {ty}")
    return gv


class _Lowering:
    """Rewrites the barrier calls of one function."""

    def __init__(self, module: Module, fn: Function, strategy: GCStrategy):
        self.module, self.fn, self.strategy = module, fn, strategy
        self.names = NameUniquer(fn)

    def before(self, anchor, inst):
        anchor.parent.insert_before(anchor, inst)
        return inst

    def named(self, base: str) -> str | None:
        return self.names.unique(base)

    def run(self) -> bool:
        changed = False
        calls = [i for i in self.fn.instructions() if isinstance(i, Call) and i.callee_name in (GCREAD, GCWRITE)]
        for call in calls:
            want = 3 if call.callee_name == GCWRITE else 2
            if len(call.args) != want:
                raise BarrierLoweringError(
                    f"@{self.fn.name}: @{call.callee_name} takes {want} operands, this call has {len(call.args)}"
                )
            if call.callee_name == GCWRITE:
                if self.strategy.custom_write_barriers:
                    self.custom_write(call)
                else:
                    self.default_write(call)
            elif self.strategy.custom_read_barriers:
                self.custom_read(call)
            else:
                self.default_read(call)
            changed = True
        if self.strategy.init_roots:
            changed |= self.initialise_roots()
        return changed

    # -- LLVM's default lowering ---------------------------------------------------------------
    def default_write(self, call: Call) -> None:
        value, _obj, derived = call.args
        self.before(call, Store(value, derived, align=PTR_ALIGN))
        call.erase()

    def default_read(self, call: Call) -> None:
        _obj, derived = call.args
        load = self.before(call, Load(call.type, derived, align=PTR_ALIGN))
        self.take_name(call, load)

    def take_name(self, call: Call, new: Value) -> None:
        new.name, call.name = call.name, None
        self.fn.replace_all_uses(call, new)
        call.erase()

    def initialise_roots(self) -> bool:
        roots = []
        for inst in self.fn.instructions():  # every block: LLVM collects the roots of the whole function
            if isinstance(inst, Call) and inst.callee_name == GCROOT and inst.args:
                slot = strip_pointer_casts(inst.args[0])
                if isinstance(slot, Alloca) and isinstance(slot.allocated_type, PointerType):
                    roots.append((inst, slot))
        before = sum(len(b.instructions) for b in self.fn.blocks)
        init_roots(self.fn, roots)
        return sum(len(b.instructions) for b in self.fn.blocks) != before

    # -- gctoy-cardmark ------------------------------------------------------------------------
    def card_table(self, opaque: bool) -> GlobalVariable:
        ty = ArrayType(CARD_COUNT + 1, I8)
        return _module_global(self.module, CARD_TABLE, ty, ZeroInitializer(ty), constant=False, opaque=opaque)

    def custom_write(self, call: Call) -> None:
        value, obj, derived = call.args
        table = self.card_table(_is_opaque(derived.type))
        b = self.before
        b(call, Store(value, derived, align=PTR_ALIGN))
        addr = b(call, Cast("ptrtoint", obj, I64, name=self.named("card.addr")))
        off = b(call, BinaryOp("sub", addr, _i64(HEAP_BASE), name=self.named("card.off")))
        idx = b(call, BinaryOp("lshr", off, _i64(CARD_SHIFT), name=self.named("card.idx")))
        inside = b(call, ICmp("ult", idx, _i64(CARD_COUNT), name=self.named("card.inheap")))
        sel = b(call, Select(inside, idx, _i64(CARD_COUNT), name=self.named("card.index")))
        card = b(call, GetElementPtr(table.value_type, table, [_i64(0), sel], inbounds=True, name=self.named("card")))
        b(call, Store(ConstantInt(I8, CARD_DIRTY), card, align=1))
        call.erase()

    # -- gctoy-readbarrier ---------------------------------------------------------------------
    def null_header(self, opaque: bool) -> GlobalVariable:
        return _module_global(self.module, NULL_HEADER, I64, _i64(OBJECT_TAG), constant=True, opaque=opaque)

    def custom_read(self, call: Call) -> None:
        _obj, derived = call.args
        ref_ty = call.type
        opaque = _is_opaque(ref_ty)
        i8p = _byte_pointer(opaque)
        i64p = PointerType(None) if opaque else PointerType(I64)
        base = call.name if call.name and not is_numbered(call.name) else "rb"
        b = self.before
        n = self.named
        ref = b(call, Load(ref_ty, derived, align=PTR_ALIGN, name=n(f"{base}.ref")))
        is_null = b(call, ICmp("eq", ref, ConstantNull(ref_ty), name=n(f"{base}.isnull")))

        def cast(v: Value, to: Type, name: str) -> Value:
            return v if opaque or v.type == to else b(call, Cast("bitcast", v, to, name=n(f"{base}.{name}")))

        fake = cast(self.null_header(opaque), i8p, "nullhdr")
        fake_obj = b(call, GetElementPtr(I8, fake, [_i64(WORD)], name=n(f"{base}.nullobj")))
        obj = b(call, Select(is_null, fake_obj, cast(ref, i8p, "bytes"), name=n(f"{base}.obj")))
        hdr_at = b(call, GetElementPtr(I8, obj, [_i64(-WORD)], name=n(f"{base}.hdraddr")))
        hdr_ptr = cast(hdr_at, i64p, "hdrptr")
        word = b(call, Load(I64, hdr_ptr, align=PTR_ALIGN, name=n(f"{base}.hdr")))
        tag = b(call, BinaryOp("and", word, _i64(OBJECT_TAG), name=n(f"{base}.tag")))
        moved = b(call, ICmp("eq", tag, _i64(0), name=n(f"{base}.moved")))
        fwd = b(call, Cast("inttoptr", word, ref_ty, name=n(f"{base}.fwd")))
        result = b(call, Select(moved, fwd, ref))
        self.take_name(call, result)


@register("lower-gc-barriers")
def lower_gc_barriers(module: Module) -> None:
    """Lower gcread/gcwrite (and initialise frame roots) in every function with a ``gc`` attribute."""
    for fn in list(module.functions):
        if fn.is_declaration or fn.gc is None:
            continue
        _Lowering(module, fn, get_strategy(fn.gc)).run()


__all__ = [
    "CARD_COUNT",
    "CARD_DIRTY",
    "CARD_SHIFT",
    "CARD_TABLE",
    "NULL_HEADER",
    "BarrierLoweringError",
    "lower_gc_barriers",
]
