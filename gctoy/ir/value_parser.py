"""Parsing values inside a function: local names (``%x``, ``%0``) with their numbering, forward
references resolved when the function ends, basic-block labels, and typed operands.
"""

from __future__ import annotations

from .constant_parser import ConstantParser
from .lexer import Token
from .types import LABEL, LabelType, MetadataType, Type
from .values import Argument, BasicBlock, Function, Value


class ForwardLocal(Value):
    """A local used before its definition; replaced when the function ends."""

    def __init__(self, name: str, type: Type, offset: int):
        self.name = name
        self.type = type
        self.offset = offset


class ValueParser(ConstantParser):
    """Local values and operands (over the constant parser); the state of the function being read."""

    def __init__(
        self, text: str, filename: str, implicit_declarations: bool, fix_numbering: bool, opaque: bool = False
    ) -> None:
        super().__init__(text, filename, implicit_declarations, opaque)
        self.fix_numbering = fix_numbering
        # per-function state
        self.locals: dict[str, Value] = {}
        self.forward: dict[str, ForwardLocal] = {}
        self.blocks: dict[str, BasicBlock] = {}
        self.block_first_ref: dict[str, int] = {}
        self.slot = 0
        self._fixups: list[tuple[ForwardLocal, Value]] = []

    def define_local(self, name: str | None, value: Value, offset: int) -> None:
        """Define ``%name`` as ``value`` (the next number when unnamed), resolving earlier uses of it."""
        if name is None or name.isdigit():
            expected = self.slot
            if name is not None and (self.slot_number_too_long(name) or int(name) != expected):
                kind = (
                    "argument"
                    if isinstance(value, Argument)
                    else ("label" if isinstance(value, BasicBlock) else "instruction")
                )
                if not self.fix_numbering:
                    raise self.err(f"{kind} expected to be numbered '%{expected}'", offset)
                line, col = self.src.position(offset)
                self.module.notes.append(
                    f"{self.src.filename}:{line}:{col}: note: renumbered '%{name}' to '%{expected}' "
                    f"(unnamed values are numbered in order, and an unnamed entry block takes a number too)"
                )
            self.slot += 1
            value.name = None
            if name is None:
                # With fix_numbering the source's own numbers name values; implicit slots stay private.
                name = f"<slot {expected}>" if self.fix_numbering else str(expected)
        else:
            value.name = name
        if name in self.locals:
            raise self.err(f"multiple definition of local value named '%{name}'", offset)
        self.locals[name] = value
        fwd = self.forward.pop(name, None)
        if fwd is not None:
            if fwd.type != value.type:
                raise self.err(f"'%{name}' defined with type '{value.type}' but expected '{fwd.type}'", offset)
            self._fixups.append((fwd, value))

    def resolve_function(self, fn: Function) -> None:
        """At the end of a function: every forward use must have been defined; replace them."""
        if self.forward:
            name, fwd = min(self.forward.items(), key=lambda kv: kv[1].offset)
            raise self.err(f"use of undefined value '%{name}'", fwd.offset)
        fixups = self._fixups
        self._fixups = []
        if fixups:
            mapping = {id(f): v for f, v in fixups}
            for inst in fn.instructions():
                for op in inst.operands:
                    if isinstance(op, ForwardLocal):
                        inst.replace_uses_of(op, mapping[id(op)])

    def local_ref(self, tok: Token, ty: Type) -> Value:
        """``%x`` used as a value of type ``ty`` (a placeholder until it is defined)."""
        name = self.local_name(tok)
        v = self.locals.get(name)
        if v is not None:
            if v.type != ty:
                raise self.err(f"'%{name}' defined with type '{v.type}' but expected '{ty}'", tok[2])
            return v
        if isinstance(ty, LabelType):
            return self.block_ref(name, tok[2])
        fwd = self.forward.get(name)
        if fwd is None:
            fwd = ForwardLocal(name, ty, tok[2])
            self.forward[name] = fwd
        elif fwd.type != ty:
            raise self.err(f"'%{name}' defined with type '{ty}' but expected '{fwd.type}'", tok[2])
        return fwd

    def block_ref(self, name: str, offset: int) -> BasicBlock:
        """The block called ``name``, made on its first mention."""
        b = self.blocks.get(name)
        if b is None:
            if name in self.locals:
                raise self.err(f"'%{name}' is not a basic block", offset)
            b = BasicBlock(None if name.isdigit() else name)
            self.blocks[name] = b
            self.forward[name] = ForwardLocal(name, LABEL, offset)
        return b

    def label(self) -> BasicBlock:
        """``label %bb``: the block."""
        self.expect("label")
        tok = self.expect_kind("LOCAL", "basic block name")
        name = self.local_name(tok)
        v = self.locals.get(name)
        if v is not None:
            if not isinstance(v, BasicBlock):
                raise self.err(f"'%{name}' is not a basic block", tok[2])
            return v
        return self.block_ref(name, tok[2])

    # -- values ------------------------------------------------------------------------
    def typed_value(self) -> Value:
        """``T v``: a type and a value of it."""
        ty = self.type_()
        return self.value(ty)

    def value(self, ty: Type) -> Value:
        """A value of type ``ty``: a local or a constant."""
        tok = self.peek()
        if tok[0] == "PTRTYPE":
            self.split_pointer_type()
            tok = self.peek()
        if tok[0] == "LOCAL":
            self.next()
            if isinstance(ty, MetadataType):
                raise self.err("metadata operands of gctoy's subset must be constants or '!' references")
            return self.local_ref(tok, ty)
        return self.constant(ty)
