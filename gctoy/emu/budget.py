"""Bounds on a guest run, and faults told in the guest's terms.

A run has a *budget*: at most so many guest instructions and so many seconds of wall-clock
time, counted from the moment it is started (`Machine.start_budget`) over every later
``run``/``step`` of the machine, however many breakpoints split it. The wall clock also
runs while the runtime's natives and collections execute (they call `Machine.check_budget`),
since a loop that calls the runtime spends most of its time there, not in guest code.

When the guest faults, the message names what went wrong as the program's author sees it:
the function the pc is in, a divide error, a stack overflow with the number of frames on the
stack, a read or write of an unmapped address.
"""

from __future__ import annotations

import bisect
import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from unicorn import UC_ERR_FETCH_PROT, Uc, UcError

from gctoy.emu.disasm import disassemble_one
from gctoy.emu.image import CODE_BASE, DATA_BASE, STACK_BASE, STACK_TOP
from gctoy.errors import EmulationFault

if TYPE_CHECKING:
    from gctoy.emu.image import Image

#: the instruction budget of ``gctoy run`` (``--max-instructions``)
DEFAULT_MAX_INSTRUCTIONS = 50_000_000
#: the wall-clock budget of ``gctoy run`` and of the notebooks' runs (``--max-seconds``)
DEFAULT_MAX_SECONDS = 60.0
#: bytes below the stack's lowest mapped address that count as running off its end
STACK_GUARD = 0x10000


class BudgetExceeded(EmulationFault):
    """The guest used up its instruction budget or its wall-clock budget."""

    def __init__(
        self, message: str, pc: int, disassembly: str = "", kind: Literal["instructions", "seconds"] = "instructions"
    ) -> None:
        super().__init__(message, pc, disassembly)
        self.kind = kind


@dataclass
class Budget:
    """The running budget of one machine: an absolute instruction count and a monotonic deadline."""

    max_instructions: int | None
    max_seconds: float | None
    instruction_limit: int | None  # the machine's instruction count at which the budget is spent
    deadline: float | None  # time.monotonic() at which the budget is spent

    @classmethod
    def start(cls, max_instructions: int | None, max_seconds: float | None, count: int) -> Budget:
        """A budget counted from now and from ``count`` instructions already executed."""
        if max_instructions is not None and max_instructions < 0:
            raise ValueError("the instruction budget must not be negative")
        if max_seconds is not None and not 0 < max_seconds < float("inf"):
            raise ValueError("the wall-clock budget must be a positive number of seconds")
        return cls(
            max_instructions,
            max_seconds,
            None if max_instructions is None else count + max_instructions,
            None if max_seconds is None else time.monotonic() + max_seconds,
        )

    def seconds_left(self) -> float | None:
        """Seconds until the deadline (never negative), or None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def out_of_time(self) -> bool:
        """Whether the deadline has passed."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def instructions_left(self, count: int) -> int | None:
        """Instructions still allowed at instruction count ``count``, or None without a limit."""
        return None if self.instruction_limit is None else max(0, self.instruction_limit - count)

    def time_error(self, pc: int, where: str, disassembly: str = "") -> BudgetExceeded:
        """The error for a spent wall-clock budget."""
        return BudgetExceeded(
            f"wall-clock budget of {self.max_seconds:g} s spent {where} (--max-seconds)", pc, disassembly, "seconds"
        )

    def instruction_error(self, pc: int, where: str, disassembly: str = "") -> BudgetExceeded:
        """The error for a spent instruction budget."""
        return BudgetExceeded(
            f"instruction budget of {self.max_instructions} instructions spent {where} (--max-instructions)",
            pc,
            disassembly,
            "instructions",
        )


class FunctionIndex:
    """Address -> the function (image symbol in the code) or native stub that contains it."""

    def __init__(self, symbols: dict[str, int], code_start: int, code_end: int, stubs: dict[int, str]) -> None:
        def is_function(name: str) -> bool:
            # a label "f.bb1" (gctoy's images name blocks so) belongs to the function "f"
            head = name.split(".")[0]
            return bool(head) and (head == name or head not in symbols)

        named = sorted((a, n) for n, a in symbols.items() if code_start <= a < code_end and is_function(n))
        self.starts = [a for a, _ in named]
        self.names = [n for _, n in named]
        self.code_end = code_end
        self.stubs = stubs

    def name_at(self, pc: int) -> str | None:
        """``@name`` of the function containing ``pc``, or None."""
        i = bisect.bisect_right(self.starts, pc) - 1
        if i < 0 or pc >= self.code_end:
            return None
        return f"@{self.names[i]}"

    def where(self, pc: int) -> str:
        """``in @f at pc 0x...`` (or just the pc outside every function)."""
        name = self.name_at(pc)
        return f"in {name} at pc {pc:#x}" if name else f"at pc {pc:#x} (outside the program's code)"


def count_return_addresses(stack: bytes, word: int, code: bytes, code_start: int) -> int:
    """How many stack words are return addresses into ``code`` (each preceded by a call instruction)."""
    fmt = "<Q" if word == 8 else "<I"
    end = code_start + len(code)
    count = 0
    for (value,) in struct.iter_unpack(fmt, stack[: len(stack) - len(stack) % word]):
        if not code_start + 2 <= value <= end:
            continue
        off = value - code_start
        if off >= 5 and code[off - 5] == 0xE8:  # call rel32
            count += 1
        elif any(off >= n and code[off - n] == 0xFF and (code[off - n + 1] >> 3) & 7 == 2 for n in (2, 3, 6, 7)):
            count += 1  # call r/m
    return count


#: interrupt vectors a guest can raise, as x86 names them
INTERRUPT_NAMES = {
    0: "divide error (a division by zero, or a quotient that does not fit)",
    1: "debug trap",
    4: "overflow trap (into)",
    5: "bound range exceeded",
    6: "invalid instruction (ud2: LLVM's unreachable or llvm.trap)",
    13: "general protection fault",
    14: "page fault",
}


def interrupt_message(intno: int, where: str) -> str:
    """A guest interrupt outside the native stubs, named."""
    name = INTERRUPT_NAMES.get(intno)
    if intno == 3:
        return f"interrupt 3 (int3) outside the native stubs {where}"
    if name is None:
        return f"interrupt {intno} {where}"
    return f"{name} {where} (interrupt {intno})"


class GuestBounds:
    """The Machine's budget and fault naming (a mixin: it uses the Machine's Unicorn engine)."""

    budget: Budget | None
    _functions: FunctionIndex | None
    # what the mixin uses of the Machine
    uc: Uc
    image: Image
    arch: str
    word: int
    stack_base: int
    heap_base: int | None
    heap_size: int
    _unmapped: tuple[str, int, int] | None
    pc: int
    sp: int
    instructions: int

    if TYPE_CHECKING:

        def read(self, address: int, size: int) -> bytes: ...
        def read_word(self, address: int) -> int: ...
        def stub_names(self) -> dict[int, str]: ...

    def _describe(self, address: int) -> str:
        """The instruction at ``address`` as text, or an empty string if unreadable."""
        try:
            insn = disassemble_one(bytes(self.uc.mem_read(address, 15)), address, self.arch)
        except UcError:
            try:
                insn = disassemble_one(bytes(self.uc.mem_read(address, 1)), address, self.arch)
            except UcError:
                return ""
        return insn.text if insn else ""

    def _fault(self, err: UcError, pc: int) -> EmulationFault:
        """An EmulationFault for a Unicorn error at ``pc``, in the guest's terms."""
        where = self.where(pc)
        message = f"{err} {where}"
        if self._unmapped is not None:
            kind, address, size = self._unmapped
            if kind == "write" and self.stack_base - STACK_GUARD <= address < self.stack_base:
                frames = count_return_addresses(
                    self.read(self.stack_base, STACK_TOP - self.stack_base), self.word, self.image.code, CODE_BASE
                )
                message = (
                    f"stack overflow after {frames} frames {where}: the {STACK_TOP - self.stack_base:#x}-byte "
                    f"stack is full ({kind} of {size} bytes at {address:#x}, below the stack)"
                )
            elif kind == "fetch":
                message = f"jump to unmapped address {address:#x} ({err})"
            else:
                message = f"{kind} of {size} bytes at unmapped address {address:#x} {where}"
        elif err.errno == UC_ERR_FETCH_PROT:
            message = f"jump to non-executable memory at {pc:#x} ({self._region(pc)})"
        return EmulationFault(message, pc, self._describe(pc))

    def _region(self, address: int) -> str:
        """Which part of the guest's memory ``address`` is in."""
        if self.heap_base is not None and self.heap_base <= address < self.heap_base + self.heap_size:
            return "the heap"
        if self.stack_base <= address < STACK_TOP:
            return "the stack"
        return "the data" if DATA_BASE <= address < STACK_BASE else "not code"

    # ----------------------------------------------------------------- budget

    def start_budget(self, max_instructions: int | None, max_seconds: float | None = None) -> None:
        """Bound every later run and step: at most ``max_instructions`` more instructions and
        ``max_seconds`` of wall-clock time from now (None: no bound); spent means BudgetExceeded."""
        self.budget = Budget.start(max_instructions, max_seconds, self.instructions)

    def stop_budget(self) -> None:
        """Run without bounds again."""
        self.budget = None

    def check_budget(self, where: str | None = None) -> None:
        """Raise BudgetExceeded when the wall-clock budget is spent (the runtime calls this in long work)."""
        if self.budget is not None and self.budget.out_of_time():
            raise self.budget.time_error(self.guest_pc(), f"{where + ' ' if where else ''}{self.where(self.pc)}")

    def guest_pc(self) -> int:
        """The pc, or inside a native stub the return address into the guest code that called it."""
        pc = self.pc
        if self._functions is None:
            self.where(pc)
        assert self._functions is not None  # `where` built the index
        if pc in self._functions.stubs or pc - 1 in self._functions.stubs:
            try:
                return self.read_word(self.sp)
            except EmulationFault:
                return pc
        return pc

    def _budget_spent(self) -> bool:
        limit = None if self.budget is None else self.budget.instruction_limit
        return limit is not None and self.instructions >= limit

    def where(self, pc: int) -> str:
        """``in @f at pc 0x...``: the function (or runtime stub) that holds ``pc``."""
        if self._functions is None:
            self._functions = FunctionIndex(
                self.image.symbols, CODE_BASE, CODE_BASE + len(self.image.code), self.stub_names()
            )
        stub = self._functions.stubs.get(pc, self._functions.stubs.get(pc - 1))
        if stub is not None:
            try:
                caller = self.read_word(self.sp)
            except EmulationFault:
                return f"in the runtime's @{stub}"
            name = self._functions.name_at(caller) or "outside the program's code"
            return f"in the runtime's @{stub}, called from {name} (return address {caller:#x})"
        return self._functions.where(pc)
