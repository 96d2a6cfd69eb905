"""The call instructions: ``call`` and ``invoke`` (what they share is :class:`CallBase`), and the
operand bundles (``deopt``, ``gc-live``, ``gc-transition``) they carry."""

from __future__ import annotations

from dataclasses import dataclass

from .instruction_base import Instruction, swap_operands
from .types import FunctionType
from .uses import bundle_inputs, operand_list, operand_slot
from .values import Attribute, BasicBlock, Function, Value, find_string_attr, resolve_attrs


@dataclass
class OperandBundle:
    """``"tag"(T %v, ...)`` attached to a call or invoke (``deopt``, ``gc-live``, ``gc-transition``)."""

    tag: str
    inputs: list[Value]


class CallBase(Instruction):
    """What ``call`` and ``invoke`` share: callee, arguments, attributes, bundles."""

    callee = operand_slot("callee", doc="The called value (a function, or a pointer to one).")
    args = operand_list("args", doc="The call arguments.")
    bundles = operand_list("bundles", bundle_inputs, doc="The operand bundles; their inputs are operands.")

    def __init__(
        self,
        ftype: FunctionType,
        callee: Value,
        args: list[Value],
        *,
        arg_attrs: list[tuple[Attribute, ...]] | None = None,
        ret_attrs: tuple[Attribute, ...] = (),
        fn_attrs: tuple[Attribute, ...] = (),
        cc: str | None = None,
        bundles: list[OperandBundle] | None = None,
        name: str | None = None,
    ):
        super().__init__(ftype.ret, name)
        self.ftype = ftype
        self.callee = callee
        self.args = list(args)
        self.arg_attrs = list(arg_attrs) if arg_attrs is not None else [() for _ in args]
        self.ret_attrs = tuple(ret_attrs)
        self.fn_attrs = tuple(fn_attrs)
        self.cc = cc
        self.bundles = list(bundles or [])
        #: Set when the source spelled the callee type as a pointer (``call void ()* @f()``),
        #: the syntax of LLVM before 3.7.
        self.legacy_pointer_syntax = False

    @property
    def callee_name(self) -> str | None:
        """The name of a directly called function, else None."""
        return self.callee.name if isinstance(self.callee, Function) else None

    @property
    def called_function(self):
        """The directly called :class:`Function`, else None."""
        return self.callee if isinstance(self.callee, Function) else None

    def bundle(self, tag: str) -> OperandBundle | None:
        """The operand bundle with this tag, if any."""
        for b in self.bundles:
            if b.tag == tag:
                return b
        return None

    def string_attr(self, key: str) -> str | None:
        """A string attribute of the call site (``"statepoint-id"``), looking through groups."""
        fn = self.function
        mod = getattr(fn, "module", None) if fn is not None else None
        return find_string_attr(resolve_attrs(self.fn_attrs, mod), key)

    def _callish_operands(self) -> list[Value]:
        out: list[Value] = [self.callee, *self.args]
        for b in self.bundles:
            out += b.inputs
        return out

    def _callish_replace(self, old: Value, new: Value) -> int:
        n = 0
        if self.callee is old:
            self.callee, n = new, 1
        n += swap_operands(self.args, old, new)
        for k, b in enumerate(self.bundles):
            if any(v is old for v in b.inputs):  # a new bundle: another call may share this one
                inputs = list(b.inputs)
                n += swap_operands(inputs, old, new)
                self.bundles[k] = OperandBundle(b.tag, inputs)
        return n

    def replace_operands(self, mapping: dict[int, tuple[Value, Value]]) -> None:
        """Replace several operands at once, each bundle rebuilt once (a statepoint's gc-live list can be long)."""
        if id(self.callee) in mapping:
            self.callee = mapping[id(self.callee)][1]
        args = self.args
        for i, v in enumerate(args):
            if id(v) in mapping:
                args[i] = mapping[id(v)][1]
        for k, b in enumerate(self.bundles):
            if any(id(v) in mapping for v in b.inputs):  # a new bundle: another call may share this one
                self.bundles[k] = OperandBundle(b.tag, [mapping[id(v)][1] if id(v) in mapping else v for v in b.inputs])


class Call(CallBase):
    """``[tail] call [cc] T @f(args) [bundles]``."""

    opcode = "call"

    def __init__(self, ftype: FunctionType, callee: Value, args: list[Value], *, tail: str | None = None, **kw):
        super().__init__(ftype, callee, args, **kw)
        self.tail = tail  # None | "tail" | "musttail" | "notail"

    @property
    def operands(self) -> list[Value]:
        return self._callish_operands()

    def replace_uses_of(self, old: Value, new: Value) -> int:
        return self._callish_replace(old, new)


class Invoke(CallBase):
    """``invoke T @f(args) to label %normal unwind label %unwind``."""

    opcode = "invoke"
    is_terminator = True
    normal = operand_slot("normal", doc="The block reached when the callee returns.")
    unwind = operand_slot("unwind", doc="The block reached when the callee unwinds.")

    def __init__(
        self, ftype: FunctionType, callee: Value, args: list[Value], normal: BasicBlock, unwind: BasicBlock, **kw
    ):
        super().__init__(ftype, callee, args, **kw)
        self.normal = normal
        self.unwind = unwind

    @property
    def operands(self) -> list[Value]:
        return self._callish_operands() + [self.normal, self.unwind]

    def replace_operands(self, mapping: dict[int, tuple[Value, Value]]) -> None:
        super().replace_operands(mapping)
        for dest in ("normal", "unwind"):
            if id(getattr(self, dest)) in mapping:
                setattr(self, dest, mapping[id(getattr(self, dest))][1])

    def replace_uses_of(self, old: Value, new: Value) -> int:
        n = self._callish_replace(old, new)
        if self.normal is old:
            self.normal, n = new, n + 1
        if self.unwind is old:
            self.unwind, n = new, n + 1
        return n

    @property
    def successors(self) -> list[BasicBlock]:
        return [self.normal, self.unwind]
