"""What RewriteStatepointsForGC strips from a module it changed: facts a moving collector breaks.

A pointer argument that was ``dereferenceable(16)`` or ``noalias`` before a statepoint may point
anywhere after one (the object moved), and a function marked ``readnone`` now contains
statepoints that may write the whole heap.  So, as LLVM does, every function loses those
attributes on pointer parameters and results and its memory attributes; every call in a
rewritten function loses them too; loads and stores keep only the metadata still true (a TBAA
tag that says the memory is immutable loses that flag) -- in every function with a body, GC
strategy or not, as in LLVM; and ``llvm.invariant.start`` calls go (their uses become ``undef``, ``poison`` from LLVM 15 on).
"""

from __future__ import annotations

import re

from ..ir import instructions as I
from ..ir.intrinsics import base_name
from ..ir.module import Module, resolve_attrs
from ..ir.types import PointerType, Type
from ..ir.values import Attribute, MetadataDef, Poison, Undef


_POINTER_ATTRS = frozenset(
    {"dereferenceable", "dereferenceable_or_null", "readnone", "readonly", "writeonly", "noalias", "nofree"}
)
MEMORY_FN_ATTRS = frozenset(
    {
        "readnone",
        "readonly",
        "writeonly",
        "argmemonly",
        "inaccessiblememonly",
        "inaccessiblemem_or_argmemonly",
        "nosync",
        "nofree",
        "memory",
    }
)
_KEPT_MEMORY_METADATA = frozenset({"tbaa", "range", "alias.scope", "nontemporal", "nonnull", "align", "type"})


def _strip(attrs, ty: Type | None, module: Module, fn_level: bool) -> tuple[Attribute, ...]:
    attrs = resolve_attrs(tuple(attrs), module) if any(a.style == "group" for a in attrs) else tuple(attrs)
    if fn_level:
        return tuple(a for a in attrs if a.is_string or a.kind not in MEMORY_FN_ATTRS)
    if not isinstance(ty, PointerType):
        return attrs
    return tuple(a for a in attrs if a.is_string or a.kind not in _POINTER_ATTRS)


def strip_invalid_attributes(module: Module, llvm: int = 14) -> None:
    """Drop attributes and metadata that claim facts a moving collector breaks (LLVM's stripping).

    ``llvm.invariant.start`` calls go too (their uses become ``undef``; ``poison`` from LLVM 15 on):
    memory a collector may move is not unchanging."""
    shared = _shared_metadata(module)
    for fn in module.functions:
        if base_name(fn.name) is not None or fn.name.startswith("llvm."):
            continue
        fn.ret_attrs = _strip(fn.ret_attrs, fn.ftype.ret, module, False)
        for a in fn.args:
            a.attrs = _strip(a.attrs, a.type, module, False)
        if any(
            a.style != "group" and not a.is_string and a.kind in MEMORY_FN_ATTRS
            for a in resolve_attrs(fn.fn_attrs, module)
        ):
            fn.fn_attrs = _strip(fn.fn_attrs, None, module, True)
        if fn.is_declaration:  # every body, with or without a GC strategy, as in LLVM
            continue
        invariant_starts = [
            inst
            for inst in fn.instructions()
            if isinstance(inst, I.Call) and (inst.callee_name or "").startswith("llvm.invariant.start")
        ]
        for start in invariant_starts:
            gone = Poison(start.type) if llvm >= 15 else Undef(start.type)
            for inst in fn.instructions():
                inst.replace_uses_of(start, gone)
            start.erase()
        for inst in fn.instructions():
            if isinstance(inst, I.CallBase):  # every call, gc.result and gc.relocate included
                inst.ret_attrs = _strip(inst.ret_attrs, inst.type, module, False)
                inst.arg_attrs = [_strip(at, a.type, module, False) for at, a in zip(inst.arg_attrs, inst.args)]
            inst.metadata = [
                (k, mutable_tbaa_tag(module, v, v not in shared) if k == "tbaa" else v) for k, v in inst.metadata
            ]
            if isinstance(inst, (I.Load, I.Store)):
                inst.metadata = [(k, v) for k, v in inst.metadata if k in _KEPT_MEMORY_METADATA or k == "dbg"]


def mutable_tbaa_tag(module: Module, ref: str, in_place: bool = False) -> str:
    """The TBAA access tag ``ref`` without its immutability flag (LLVM's createMutableTBAAAccessTag).

    An old-format tag is (base, access, offset[, immutable]), a new-format one (its access type
    starts with a node) is (base, access, offset, size[, immutable]).  A tag whose flag is set
    becomes the tag without it: an identical node when the module has one, else the same node
    rewritten when ``in_place`` (nothing else uses it: LLVM would print the new node in its place),
    else a new node."""
    nodes = {f"!{md.name}": md for md in module.metadata}
    tag = nodes.get(ref)
    ops = _operands(tag.text) if tag is not None and not tag.distinct else None
    if not ops or len(ops) < 3:
        return ref
    access = nodes.get(ops[1])
    new_format = access is not None and (_operands(access.text) or [""])[0][:2] not in ('!"', "")
    flag = 4 if new_format else 3
    if len(ops) <= flag or ops[flag].split()[-1] in ("0", "false"):
        return ref
    text = "!{" + ", ".join(ops[:flag]) + "}"
    for md in module.metadata:
        if md.text == text and not md.distinct:
            return f"!{md.name}"
    if in_place:
        assert tag is not None  # it has operands
        tag.text = text
        return ref
    n = max((int(md.name) for md in module.metadata if md.name.isdigit()), default=-1) + 1
    module.metadata.append(MetadataDef(str(n), text))
    return f"!{n}"


def _shared_metadata(module: Module) -> set[str]:
    """References (``!N``) used other than as an instruction's TBAA tag."""
    out: set[str] = set()
    for md in module.metadata:
        out.update(_REF.findall(md.text))
    for fn in module.functions:
        out.update(v for _, v in getattr(fn, "metadata", None) or ())
        for inst in fn.instructions() if not fn.is_declaration else ():
            out.update(v for k, v in inst.metadata if k != "tbaa")
    return out


_REF = re.compile(r"![0-9]+\b")


def _operands(text: str) -> list[str] | None:
    """The operands of a ``!{...}`` node's text, or None for any other metadata."""
    text = text.strip()
    if not (text.startswith("!{") and text.endswith("}")):
        return None
    out, depth, quoted, cur = [], 0, False, ""
    for ch in text[2:-1]:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "{(":
            depth += 1
        elif not quoted and ch in "})":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out
