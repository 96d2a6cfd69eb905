"""The compiled program as the trace recorder sees it: instructions, labels, frames and statepoints by address."""

from __future__ import annotations

from gctoy.codegen.frame_ra import RegisterFrame
from gctoy.emu.disasm import Insn, disassemble
from gctoy.emu.image import CODE_BASE
from gctoy.ir.instructions import Phi
from gctoy.runtime.collector import Slot
from gctoy.runtime.stackwalk import Frame, SiteTable
from gctoy.runtime.trace_views import DisasmLine, Marker

#: The mnemonics of calls (a call inside the focus window is stepped over).
CALL_MNEMONICS = ("call",)


def frame_slot_names(frame) -> dict[int, str]:
    """rsp offset -> what the word holds, for the words of one frame below the return address."""
    names: dict[int, str] = {}
    if isinstance(frame, RegisterFrame):
        cfa = frame.stack_size + 8
        for reg in frame.saved:
            names[cfa + frame.save_offset(reg)] = f"saved {reg}"
    else:
        names[frame.stack_size - 8] = "saved rbp"
    for off in frame.spill_slots:
        names[off] = "deopt spill slot"
    for alloca in frame.allocas:
        names[frame.alloca(alloca)] = f"alloca %{alloca.name}"
    for value in frame.values:  # a slot several values take in turn is named after the first
        names.setdefault(frame.slot(value), f"%{value.name}")
        if isinstance(value, Phi) and not isinstance(frame, RegisterFrame):
            names[frame.shadow(value)] = f"shadow of %{value.name}"
    return names


class TraceCode:
    """The compiled program's code: instructions, labels, frames and statepoints, by address."""

    def __init__(self, compiled, table: SiteTable, stub_names: dict[int, str]) -> None:
        image = compiled.image
        self.insns: list[Insn] = disassemble(image.code, CODE_BASE, image.arch)
        self.index = {insn.address: k for k, insn in enumerate(self.insns)}
        self.labels: dict[int, list[str]] = {}
        end = self.end = CODE_BASE + len(image.code)
        for name, address in sorted(image.symbols.items(), key=lambda kv: (kv[1], kv[0])):
            if CODE_BASE <= address < end:
                self.labels.setdefault(address, []).append(name)
        self.functions = sorted(compiled.functions, key=lambda f: f.address)
        self.stub_names = stub_names
        self.table = table
        self.statepoint_label: dict[int, str] = {}  # return address -> label
        for fn in compiled.functions:
            for label in fn.statepoint_labels:
                self.statepoint_label[image.address_of(label)] = label
        self.slot_names = {fn.name: frame_slot_names(fn.frame) for fn in compiled.functions}
        #: addresses where a function's frame is set up (after the prologue, before an epilogue)
        self.body: set[int] = set()
        starts = [f.address for f in self.functions] + [end]
        for fn, next_start in zip(self.functions, starts[1:]):
            self.body |= self._body_of(fn, next_start)

    def _body_of(self, fn, end: int) -> set[int]:
        """The addresses of ``fn``'s instructions between its prologue and its epilogues."""
        first = self.index[fn.address]
        insns = [i for i in self.insns[first:] if i.address < end]
        frame = fn.frame
        if isinstance(frame, RegisterFrame):
            epilogue = len(frame.saved) + (1 if frame.size else 0)  # add rsp, N; pop ...; then ret
        else:
            epilogue = 1  # leave; then ret
        body = set(range(fn.prologue_instructions, len(insns)))
        for k, insn in enumerate(insns):
            if insn.mnemonic == "ret":
                body -= set(range(k - epilogue, k + 1))
        return {insns[k].address for k in body}

    def in_body(self, pc: int) -> bool:
        """Whether ``pc`` is where its function's frame is complete (rsp + stack size is the return address)."""
        return pc in self.body

    def slot_text(self, slot: Slot | None, frame_sp: int, function: str) -> str:
        """A slot as the views print it: ``[rsp+40] %node3``, a register name, or ``constant``."""
        if slot is None:
            return "constant"
        if isinstance(slot, str):
            return slot
        off = slot - frame_sp
        name = self.slot_names.get(function, {}).get(off, "")
        return f"[rsp+{off}] {name}".rstrip()

    def slot_in_frames(self, slot: Slot, frames: list[Frame]) -> str:
        """``slot_text`` for a slot of any of the walked frames (named after the frame's function)."""
        for fr in frames:
            if isinstance(slot, int) and fr.sp <= slot < fr.sp + fr.site.function.stack_size:
                prefix = "" if fr is frames[0] else f"{fr.site.name}: "
                return prefix + self.slot_text(slot, fr.sp, fr.site.name)
        return slot if isinstance(slot, str) else f"[{slot:#x}]"

    def function_at(self, pc: int):
        """The compiled function whose code holds ``pc`` (None outside the code)."""
        found = None
        for fn in self.functions:
            if fn.address <= pc:
                found = fn
        return found if pc < self.end else None

    def call_before(self, return_address: int) -> Insn | None:
        """The call instruction that returns to ``return_address``."""
        k = self.index.get(return_address)
        return self.insns[k - 1] if k else None

    def callee_of(self, call: Insn) -> str:
        """The native or function a direct call goes to."""
        try:
            target = int(call.op_str, 0)
        except ValueError:
            return call.op_str
        if target in self.stub_names:
            return self.stub_names[target]
        return self.labels.get(target, [f"{target:#x}"])[0]

    def window(self, center: int, marker: Marker, radius: int) -> tuple[DisasmLine, ...]:
        """The instructions around the one at ``center``, that one marked."""
        k = self.index[center]
        lines = []
        for insn in self.insns[max(0, k - radius) : k + radius + 1]:
            nxt = insn.address + insn.size
            is_call = insn.mnemonic in CALL_MNEMONICS
            lines.append(
                DisasmLine(
                    insn.address,
                    insn.bytes.hex(" "),
                    insn.text,
                    tuple(self.labels.get(insn.address, ())),
                    marker if insn.address == center else "",
                    self.statepoint_label.get(nxt) if is_call else None,
                    self.callee_of(insn) if is_call else None,
                )
            )
        return tuple(lines)
