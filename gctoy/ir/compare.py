"""Structural equality of modules: same entities, same types, same operands, same names.

Local values are compared by *position* (argument index, or block and
instruction index), so two modules that differ only in how unnamed values are
numbered compare equal, while a changed operand, type, flag or name does not.
"""

from __future__ import annotations

from . import instructions as I
from .attr_order import sort_attrs
from .module_base import ModuleBase
from .values import Argument, BasicBlock, Constant, Function, GlobalValue, Value, resolve_attrs


def module_key(m: ModuleBase) -> tuple:
    """A hashable description of everything in the module that printing preserves."""
    h = m.header
    return (
        (h.source_filename, h.datalayout, h.triple),
        tuple((nt.name, nt.body.elements, nt.body.packed) for nt in m.types.values()),
        tuple(_global_key(g) for g in m.globals),
        tuple(_function_key(f, m) for f in m.functions),
        tuple((md.name, md.text, md.distinct) for md in m.metadata),
    )


def _global_key(g) -> tuple:
    return (
        g.name,
        g.value_type,
        _const_key(g.initializer) if g.initializer is not None else None,
        g.constant,
        g.linkage,
        g.thread_local,
        g.addrspace,
        g.align,
        g.qualifiers,
        g.section,
    )


def _const_key(c: Value):
    if isinstance(c, GlobalValue):
        return ("@", c.name)
    if isinstance(c, Constant):
        fields = getattr(c, "__dataclass_fields__", None)
        if fields:
            return (type(c).__name__,) + tuple(
                tuple(_const_key(e) for e in v) if isinstance(v, tuple) else v for v in (getattr(c, f) for f in fields)
            )
    return ("?", repr(c))


def _fn_attr_set(attrs, m) -> tuple:
    """Function attributes as a set: group references resolved, LLVM's order (numbering is layout)."""
    return sort_attrs([a for a in resolve_attrs(attrs, m) if a.style != "group"])


def _function_key(f: Function, m: ModuleBase | None = None) -> tuple:
    pos: dict[int, tuple] = {}
    for i, a in enumerate(f.args):
        pos[id(a)] = ("arg", i)
    for bi, b in enumerate(f.blocks):
        pos[id(b)] = ("block", bi)
        for ii, inst in enumerate(b.instructions):
            pos[id(inst)] = ("inst", bi, ii)

    def op(v: Value):
        if isinstance(v, (Argument, BasicBlock, I.Instruction)):
            return pos.get(id(v), ("foreign", v.name))
        return _const_key(v)

    blocks = []
    for b in f.blocks:
        insts = []
        for inst in b.instructions:
            extra = {
                k: v
                for k, v in vars(inst).items()
                if k
                not in (
                    "parent",
                    "loc",
                    "ops",
                    "incoming",
                    "args",
                    "callee",
                    "bundles",
                    "value",
                    "default",
                    "cases",
                    "normal",
                    "unwind",
                    "comments_before",
                    "comment_after",
                    "legacy_pointer_syntax",
                    "_users",
                )
            }
            if "fn_attrs" in extra:
                extra["fn_attrs"] = _fn_attr_set(extra["fn_attrs"], m)
            for k in ("ret_attrs", "arg_attrs"):
                if k in extra:
                    extra[k] = _sorted_lists(extra[k])
            insts.append(
                (
                    type(inst).__name__,
                    inst.name,
                    inst.type,
                    tuple(op(o) for o in inst.operands),
                    tuple(sorted((k, repr(v)) for k, v in extra.items())),
                    tuple(b.tag for b in getattr(inst, "bundles", [])),
                )
            )
        blocks.append((b.name, tuple(insts)))
    return (
        f.name,
        f.ftype,
        tuple((a.name, sort_attrs(a.attrs)) for a in f.args),
        f.linkage,
        f.cc,
        f.gc,
        sort_attrs(f.ret_attrs),
        _fn_attr_set(f.fn_attrs, m),
        f.qualifiers,
        _const_key(f.personality) if f.personality is not None else None,
        f.addrspace,
        f.section,
        f.align,
        tuple(f.metadata),
        tuple(blocks),
    )


def _sorted_lists(attrs):
    """Return or argument attributes in LLVM's order (a list of lists for arguments)."""
    if attrs and isinstance(next(iter(attrs)), (tuple, list)):
        return tuple(sort_attrs(a) for a in attrs)
    return sort_attrs(attrs)
