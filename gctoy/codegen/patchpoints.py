"""``llvm.experimental.stackmap`` and ``llvm.experimental.patchpoint`` on x86-64: a record where they stand.

Both write a StackMap v3 record whose instruction offset is the *start* of the site (a label
placed before it), with the record's ID and one location per live value (no header constants,
unlike a statepoint's record):

* ``stackmap(id, shadow, live...)`` makes no call: ``shadow`` bytes of NOPs follow the label,
  room a runtime may overwrite later;
* ``patchpoint(id, nbytes, target, nargs, args..., live...)`` calls ``target`` (none when it is
  ``null``) with the first ``nargs`` arguments, inside a region of ``nbytes`` bytes padded with
  NOPs. With ``anyregcc`` the arguments are not passed in the C registers: the record lists
  the result's register (rax) and every argument's location before the live values, and the
  callee finds them there.

A recorded operand that is the address of a global or a function (under casts, or a constant GEP
of one) is no immediate for llc: it builds the address in a register before the site and records
a Register location (never a spill slot, unlike a statepoint's deopt value). gctoy does the same,
one free register per distinct address.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..emu import nops
from ..ir import instructions as I
from ..ir.statepoint import Statepoint, StatepointForm
from ..ir.values import ConstantNull, Function, InlineAsm, Poison, Undef, Value
from ..stackmap import Location, LocationKind
from .dag_values import fold_cast
from .addresses import constant_address, signed
from .codegen_error import located
from .floats import argument_registers
from .frame import ARG_REGISTERS, DWARF, CodegenError, Frame, is_spilled_deopt, is_wide, size_of, spilled_deopt_values
from .limits import check_patch_bytes
from .records import PendingRecord, has_value, int_constant, strip_casts

STACKMAP = "llvm.experimental.stackmap"
PATCHPOINT_PREFIX = "llvm.experimental.patchpoint."
#: the ID llc gives the record of a call with a "deopt" bundle that is not a statepoint
DEOPT_BUNDLE_ID = 0xABCDEF0F
#: registers a site's global or function address operands may be built in, in llc's order of preference
#: (r10 last: the spare register that builds a far offset)
SITE_REGISTERS = ("rax", "rdx", "rcx", "rsi", "rdi", "r8", "r9", "r11", "r10")
#: the longest sequence gctoy emits for a patchpoint call: movabs r11, imm64 (10) + call r11 (3)
_CALL_BYTES = 13


def stack_argument_bytes(arg: Value) -> int:
    """The bytes a ``webkit_jscc`` stack argument takes: 4 for i32/float and narrower, else 8."""
    from ..ir.types import FloatType, IntType

    ty = arg.type
    return 4 if (isinstance(ty, IntType) and ty.bits <= 32) or (isinstance(ty, FloatType) and ty.kind == "float") else 8


def is_stackmap_intrinsic(name: str | None) -> bool:
    """Whether a callee name is ``llvm.experimental.stackmap`` or one of the patchpoint intrinsics."""
    return name is not None and (name == STACKMAP or name.startswith(PATCHPOINT_PREFIX))


class StackMapIntrinsics:
    """The stackmap/patchpoint half of the x86-64 function lowering (mixed into it)."""

    fn: Function
    label: str
    lines: list[str]
    callees: list[str]
    records: list[PendingRecord]
    block_labels: dict[int, str]
    frame: Frame

    if TYPE_CHECKING:  # provided by the lowering class (lowering64.py, lowering_core.py, records.py)

        def emit(self, line: str) -> None: ...
        def load(self, dest: str, v: Value) -> None: ...
        def result(self, inst: I.Instruction, dest: str | None = None) -> None: ...
        def location(self, v: Value) -> Location: ...
        def prepare_args(self, args: list[Value]) -> None: ...
        def lower_statepoint(self, sp: Statepoint) -> None: ...
        def call_result(self, inst: I.Instruction) -> None: ...

    def _site_constant(self, inst: I.CallBase, k: int, what: str) -> int:
        value = int_constant(inst.args[k]) if k < len(inst.args) else None
        if value is not None and k == 0:
            value &= (1 << 64) - 1  # an ID is an unsigned 64-bit number
        if value is None or value < 0:
            raise CodegenError(f"@{inst.callee_name}: its {what} must be a non-negative integer constant")
        return value

    def _site_label(self, record_id: int, locations: list[Location]) -> None:

        label = f"{self.label}.sp{len(self.records)}"
        self.lines.append(f"{label}:")
        self.records.append(PendingRecord(record_id, label, tuple(locations)))

    def lower_stackmap_intrinsic(self, inst: I.CallBase) -> None:
        """A record (and its shadow NOPs) for a stackmap, or the call and record of a patchpoint."""
        record_id = self._site_constant(inst, 0, "ID")
        nbytes = self._site_constant(inst, 1, "number of bytes")
        check_patch_bytes(nbytes, f"@{self.fn.name}")
        if inst.callee_name == STACKMAP:
            live = list(inst.args[2:])
            self._site_label(record_id, self._site_locations(live, self._address_registers(inst, live, set())))
            if nbytes:
                self.emit(".byte " + ", ".join(f"0x{b:02x}" for b in nops(nbytes)))
            return
        nargs = self._site_constant(inst, 3, "number of call arguments")
        if 4 + nargs > len(inst.args):
            raise CodegenError(f"@{inst.callee_name} passes {nargs} call arguments but has only {len(inst.args) - 4}")
        target, args, live = inst.args[2], inst.args[4 : 4 + nargs], inst.args[4 + nargs :]
        anyreg = inst.cc == "anyregcc"
        recorded = [*args, *live] if anyreg else list(live)
        if inst.cc == "webkit_jscc":
            self._webkit_args(list(args))
        elif not anyreg:
            self.prepare_args(list(args))
        calls = not isinstance(strip_casts(target), ConstantNull)
        busy = self._argument_registers(inst, list(args)) | ({"r11"} if calls else set())
        locations = self._site_locations(recorded, self._address_registers(inst, recorded, busy))
        if anyreg and self.has_result(inst):
            locations.insert(0, Location(LocationKind.REGISTER, 8, 0, 0))  # rax (DWARF 0)
        self._site_label(record_id, locations)
        used = 0
        if calls:
            if nbytes < _CALL_BYTES:
                raise CodegenError(
                    f"@{inst.callee_name} has {nbytes} bytes for a call; gctoy's call sequence takes {_CALL_BYTES}"
                )
            self.load_call_target(target)
            self.emit("call r11")
            used = _CALL_BYTES
        if nbytes > used:
            self.emit(".byte " + ", ".join(f"0x{b:02x}" for b in nops(nbytes - used)))
        if self.has_result(inst):
            self.result(inst)

    def site_registers(self, inst: I.Instruction, needed: int) -> tuple[str, ...]:
        """Registers free for ``needed`` address operands of a site: every one that holds no value between
        instructions (the slot lowering keeps all values in slots; the register lowering narrows this)."""
        return SITE_REGISTERS

    def _argument_registers(self, inst: I.CallBase, args: list[Value]) -> set[str]:
        """The registers a patchpoint's call arguments sit in at the site (rax: a webkit_jscc first
        argument, or the count of vector arguments of a C call)."""
        if inst.cc == "anyregcc" or not args:
            return set()
        if inst.cc == "webkit_jscc":
            return {"rax"}
        if any(is_wide(a.type) for a in args):  # passed in pairs and through memory: keep them all out
            return {*ARG_REGISTERS, "rax"}
        places = {p for p in argument_registers(args) if isinstance(p, str)}
        vector = {"rax"} if any(p.startswith("xmm") for p in places) else set()
        return {p for p in places if not p.startswith("xmm")} | vector

    def _address_registers(self, inst: I.CallBase, values: list[Value], busy: set[str]) -> dict[tuple[int, int], str]:
        """Build each distinct global or function address among ``values`` in a free register before the
        site, as llc does: it records such an operand as a Register location and never spills one (llc
        runs out of registers when a site has too many of them; so does gctoy, at fewer)."""
        addresses: dict[tuple[int, int], Value] = {}
        for v in values:
            if is_spilled_deopt(v):  # an address: what a statepoint would spill as a deopt value
                base, offset = constant_address(v)
                addresses.setdefault((id(base), offset), v)
        if not addresses:
            return {}
        free = [r for r in self.site_registers(inst, len(addresses) + len(busy) + 1) if r not in busy]
        if "r10" in free and any(not -(1 << 31) <= signed(offset, 64) < (1 << 31) for _, offset in addresses):
            free.remove("r10")  # the spare that builds a far offset
        if len(addresses) > len(free):
            raise located(
                CodegenError(
                    f"@{inst.callee_name} records {len(addresses)} global or function addresses; gctoy llc has "
                    f"{len(free)} free registers for them here"
                ),
                inst,
            )
        out = {}
        for (key, v), reg in zip(addresses.items(), free):
            self.load(reg, v)
            out[key] = reg
        return out

    def _site_locations(self, values: list[Value], registers: dict[tuple[int, int], str]) -> list[Location]:
        """The record's location of each operand: an address in the register built for it, else where it is."""
        out = []
        for v in values:
            if is_spilled_deopt(v):
                base, offset = constant_address(v)
                out.append(Location(LocationKind.REGISTER, size_of(v.type), DWARF[registers[(id(base), offset)]], 0))
            else:
                out.append(self.location(v))
        return out

    def _webkit_args(self, args: list[Value]) -> None:
        """``webkit_jscc``: the first argument in rax, the others on the stack, an i32 in 4 bytes at a multiple
        of 4, an i64 in 8 bytes at a multiple of 8 (undef arguments are not stored)."""
        offset = 0
        for arg in args[1:]:
            size = 4 if stack_argument_bytes(arg) == 4 else 8
            offset = (offset + size - 1) // size * size
            if not isinstance(arg, (Undef, Poison)):
                self.load("rax", arg)
                self.emit(
                    f"mov {'dword' if size == 4 else 'qword'} ptr [rsp + {offset}], {'eax' if size == 4 else 'rax'}"
                )
            offset += size
        if args:
            self.load("rax", args[0])

    def call_site_method(self, inst: I.Instruction):
        """The lowering of a call site that is not a plain call: an invoke of a stackmap or patchpoint
        intrinsic, or a call with a ``deopt`` bundle (None: neither)."""
        if isinstance(inst, I.Invoke) and is_stackmap_intrinsic(inst.callee_name):
            return self._invoke_stackmap_intrinsic
        return self.deopt_call_method(inst)

    def _invoke_stackmap_intrinsic(self, inst: I.Invoke) -> None:
        self.lower_stackmap_intrinsic(inst)  # gctoy's runtime never unwinds: on to the normal destination
        self.emit(f"jmp {self.block_labels[id(inst.normal)]}")

    def deopt_call_method(self, inst: I.Instruction):
        """The lowering of a call or invoke with a ``deopt`` bundle that is no statepoint (None: not one).

        llc lowers such a call as a statepoint of its own: a record with ID 0xABCDEF0F (or the call's
        ``"statepoint-id"``), the call's calling convention, no flags, the deopt values and no GC pointers."""
        if not isinstance(inst, I.CallBase) or inst.bundle("deopt") is None or isinstance(inst.callee, InlineAsm):
            return None
        if (inst.callee_name or "").startswith("llvm."):
            return None
        return self._lower_deopt_call

    def _lower_deopt_call(self, inst: I.CallBase) -> None:
        ident = inst.string_attr("statepoint-id")
        patch = inst.string_attr("statepoint-num-patch-bytes")
        deopt = inst.bundle("deopt")
        assert deopt is not None  # deopt_call_method picks this lowering only for a call with a deopt bundle
        sp = Statepoint(
            inst,
            StatepointForm.MODERN,
            int(ident) if ident and ident.isdigit() else DEOPT_BUNDLE_ID,
            int(patch) if patch and patch.isdigit() else 0,
            inst.callee,
            list(inst.args),
            0,
            [],
            list(deopt.inputs),
            [],
            None,
        )
        if len(spilled_deopt_values(sp)) > len(self.frame.spill_slots):
            raise CodegenError(
                "the address of a function or global as a deopt value of a call that is not a "
                "statepoint is not supported by gctoy llc"
            )
        self.lower_statepoint(sp)
        self.call_result(inst)
        if isinstance(inst, I.Invoke):
            self.emit(f"jmp {self.block_labels[id(inst.normal)]}")

    def has_result(self, inst: I.CallBase) -> bool:
        """Whether the patchpoint returns a value to store."""

        return has_value(inst)

    def load_call_target(self, target: Value) -> None:
        """``movabs r11, <target>``: always the 10-byte form, so the call sequence has a fixed size."""
        number = int_constant(fold_cast(target))
        if number is not None:  # written as bytes: the assembler would pick a shorter mov for a small number
            code = [0x49, 0xBB, *(number & ((1 << 64) - 1)).to_bytes(8, "little")]
            self.emit(".byte " + ", ".join(f"0x{b:02x}" for b in code))
        else:
            function = strip_casts(target)
            if isinstance(function, Function):
                self.callees.append(function.name)  # a native when the module does not define it
            self.load("r11", target)
            if not self.lines[-1].lstrip().startswith("movabs"):
                raise CodegenError("a patchpoint target must be a constant address (a function or an integer)")


__all__ = ["PATCHPOINT_PREFIX", "STACKMAP", "StackMapIntrinsics", "is_stackmap_intrinsic"]
