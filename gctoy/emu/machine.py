"""A Unicorn x86 machine that runs an Image: calls, runs, steps, breakpoints and native stubs.

Speed is the design constraint. Unicorn runs guest code at hundreds of millions of
instructions per second, but a Python hook on every instruction costs ~300x. So in run mode:

* instructions are counted per basic block (``UC_HOOK_BLOCK``), by a machine-code callback
  on x86-64 hosts and a Python one elsewhere (see counter.py); a stop inside a block gives
  back the instructions after the stop pc;
* breakpoints and ``until`` addresses are code hooks whose range is the single address;
* native calls trap with ``int3`` in a stub page and are served by the interrupt hook,
  which fires only when an interrupt happens.

Native stubs are in natives.py.

The frame Machine.enter builds (x86-64 SysV; x86-32 pushes its stack arguments the same way):

    higher addresses
    | stack arg n-1   |
    | ...             |
    | stack arg 0     |  <- 16-byte aligned (SysV)
    | RETURN_TRAP     |  <- rsp at the first instruction of the callee
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from unicorn import (
    UC_ARCH_X86,
    UC_ERR_FETCH_UNMAPPED,
    UC_HOOK_CODE,
    UC_HOOK_INTR,
    UC_HOOK_MEM_FETCH_UNMAPPED,
    UC_HOOK_MEM_READ_UNMAPPED,
    UC_HOOK_MEM_WRITE_UNMAPPED,
    UC_MEM_FETCH_UNMAPPED,
    UC_MEM_READ_UNMAPPED,
    UC_MEM_WRITE_UNMAPPED,
    UC_MODE_32,
    UC_MODE_64,
    UC_PROT_EXEC,
    UC_PROT_READ,
    UC_PROT_WRITE,
    Uc,
    UcError,
)
from unicorn import x86_const as X

from gctoy.emu.budget import Budget, FunctionIndex
from gctoy.emu.counter import make_counter
from gctoy.emu.disasm import disassemble
from gctoy.emu.image import (
    CODE_BASE,
    DATA_BASE,
    HEAP_BASE,
    RETURN_TRAP,
    SECTION_BASE,
    STACK_BASE,
    STACK_TOP,
    STUB_BASE,
    STUB_PAGE_SIZE,
    Image,
)
from gctoy.emu.natives import CONVENTIONS, JIT32_ARGS, SYSV_ARGS, Native, NativeCalls, flush_translations
from gctoy.errors import EmulationFault

PAGE = 0x1000

_REGS_64 = {
    "rax": X.UC_X86_REG_RAX,
    "rbx": X.UC_X86_REG_RBX,
    "rcx": X.UC_X86_REG_RCX,
    "rdx": X.UC_X86_REG_RDX,
    "rsi": X.UC_X86_REG_RSI,
    "rdi": X.UC_X86_REG_RDI,
    "rbp": X.UC_X86_REG_RBP,
    "rsp": X.UC_X86_REG_RSP,
    **{f"r{n}": getattr(X, f"UC_X86_REG_R{n}") for n in range(8, 16)},
    "rip": X.UC_X86_REG_RIP,
    "rflags": X.UC_X86_REG_EFLAGS,
}
_REGS_32 = {
    "eax": X.UC_X86_REG_EAX,
    "ebx": X.UC_X86_REG_EBX,
    "ecx": X.UC_X86_REG_ECX,
    "edx": X.UC_X86_REG_EDX,
    "esi": X.UC_X86_REG_ESI,
    "edi": X.UC_X86_REG_EDI,
    "ebp": X.UC_X86_REG_EBP,
    "esp": X.UC_X86_REG_ESP,
    "eip": X.UC_X86_REG_EIP,
    "eflags": X.UC_X86_REG_EFLAGS,
}


class StopReason(enum.Enum):
    """Why a run stopped."""

    RETURNED = "returned"  # the called function returned to RETURN_TRAP
    BREAKPOINT = "breakpoint"
    UNTIL = "until"
    LIMIT = "limit"  # max_instructions executed
    STEP = "step"


@dataclass(frozen=True)
class Stop:
    """The end of one run: the reason, the pc and the instructions executed by that run."""

    reason: StopReason
    pc: int
    instructions: int


def _align(n: int, to: int = PAGE) -> int:
    """``n`` rounded up to a multiple of ``to`` (at least one page)."""
    return max(to, (n + to - 1) // to * to)


class ClosedEngine:
    """Stands in for the Unicorn engine of a closed machine: every use is an `EmulationFault`."""

    def __getattr__(self, name: str) -> object:
        raise EmulationFault("the machine is closed (Machine.close released its engine)", 0)


#: an image symbol naming the start of its thread-local block (``%fs`` points there)
TLS_SYMBOL = "__tls_block"


class Machine(NativeCalls):
    """An x86-64 or x86-32 Unicorn machine with an Image loaded at the fixed bases."""

    def __init__(
        self,
        image: Image,
        arch: str | None = None,
        convention: str | None = None,
        stack_size: int = STACK_TOP - STACK_BASE,
        heap_size: int = 0,
        native_counting: bool = True,
    ) -> None:
        self.image = image
        self.arch = arch or image.arch
        if self.arch not in CONVENTIONS:
            raise EmulationFault(f"unknown architecture {self.arch!r}", 0)
        self.convention = convention or CONVENTIONS[self.arch][0]
        if self.convention not in CONVENTIONS[self.arch]:
            raise EmulationFault(f"calling convention {self.convention!r} is not one of {self.arch}'s", 0)
        self.bits = 64 if self.arch == "x86_64" else 32
        self.word = self.bits // 8
        self._mask = (1 << self.bits) - 1
        self._regs = _REGS_64 if self.bits == 64 else _REGS_32
        self._pc_reg = self._regs["rip" if self.bits == 64 else "eip"]
        self._sp_reg = self._regs["rsp" if self.bits == 64 else "esp"]
        self._ret_reg = self._regs["rax" if self.bits == 64 else "eax"]
        self.uc = Uc(UC_ARCH_X86, UC_MODE_64 if self.bits == 64 else UC_MODE_32)
        self.stack_base = STACK_TOP - _align(stack_size)
        self.heap_base = HEAP_BASE if heap_size else None
        self.heap_size = _align(heap_size) if heap_size else 0
        self._map_image()
        self.natives: dict[str, Native] = {}
        self._natives_by_address: dict[int, Native] = {}
        self.breakpoints: set[int] = set()
        self._bp_hooks: dict[int, int] = {}
        self._block_insns: dict[tuple[int, int], int] = {}
        self._stop_reason: StopReason | None = None
        self._stop_pc = 0
        self._skip_once: int | None = None
        self._breaks_enabled = True
        self._until: int | None = None
        self._pending: BaseException | None = None
        self._unmapped: tuple[str, int, int] | None = None
        self._natives_signed: dict[int, bool] = {}
        self.budget: Budget | None = None
        self._functions: FunctionIndex | None = None
        self.counter = make_counter(self.uc, self._insns_in, native=native_counting)
        self.counter.set_range(0, CODE_BASE, image.code, self.arch)
        self._describe_stubs()
        self.uc.hook_add(UC_HOOK_INTR, self._on_interrupt)
        self.uc.hook_add(
            UC_HOOK_MEM_READ_UNMAPPED | UC_HOOK_MEM_WRITE_UNMAPPED | UC_HOOK_MEM_FETCH_UNMAPPED,
            self._on_unmapped,
        )
        self.reset_registers()
        self.uc.reg_write(self._pc_reg, RETURN_TRAP)

    # ----------------------------------------------------------------- lifetime

    def close(self) -> None:
        """Release the Unicorn engine (guest memory, translated code) now; the machine cannot run after.

        Unicorn's hooks hold the engine in a reference cycle, so without `close` its memory (the
        heap's semispaces included) waits for Python's cycle collector. Closing twice is harmless.
        """
        engine = self.uc
        if isinstance(engine, ClosedEngine):
            return
        self.uc = ClosedEngine()  # type: ignore[assignment]  # a stand-in for Uc that raises on every use
        self._block_insns.clear()
        # Unicorn's own finalizer closes the engine once; calling it now is what the cycle
        # collector would do later (a Unicorn without it is left to the collector).
        finalizer = getattr(engine, "_Uc__finalizer", None)
        if finalizer is not None:
            finalizer()

    @property
    def closed(self) -> bool:
        """Whether `close` released the engine."""
        return isinstance(self.uc, ClosedEngine)

    def __enter__(self) -> Machine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- memory map

    def _map_image(self) -> None:
        """Map code, data, sections, stub page, stack and heap at their fixed bases."""
        image, uc = self.image, self.uc
        uc.mem_map(CODE_BASE, _align(len(image.code)), UC_PROT_READ | UC_PROT_EXEC)
        uc.mem_write(CODE_BASE, image.code)
        uc.mem_map(DATA_BASE, _align(image.data_extent), UC_PROT_READ | UC_PROT_WRITE)
        uc.mem_write(DATA_BASE, image.data)
        if image.sections:
            addresses = image.section_addresses
            end = max(addresses[n] + len(b) for n, b in image.sections.items())
            uc.mem_map(SECTION_BASE, _align(end - SECTION_BASE), UC_PROT_READ)
            for name, blob in image.sections.items():
                uc.mem_write(addresses[name], blob)
        uc.mem_map(STUB_BASE, STUB_PAGE_SIZE, UC_PROT_READ | UC_PROT_EXEC)
        uc.mem_write(STUB_BASE, b"\xcc" * STUB_PAGE_SIZE)
        uc.mem_map(self.stack_base, STACK_TOP - self.stack_base, UC_PROT_READ | UC_PROT_WRITE)
        if self.heap_base is not None:
            uc.mem_map(self.heap_base, self.heap_size, UC_PROT_READ | UC_PROT_WRITE)
        tls = image.symbols.get(TLS_SYMBOL)
        if tls is not None and self.arch == "x86_64":
            # thread-local storage: %fs points at the image's thread-local block
            from unicorn.x86_const import UC_X86_REG_FS_BASE

            uc.reg_write(UC_X86_REG_FS_BASE, tls)

    def read(self, address: int, size: int) -> bytes:
        """Guest memory bytes; an unmapped address raises EmulationFault."""
        try:
            return bytes(self.uc.mem_read(address, size))
        except UcError:
            raise EmulationFault(f"host read of {size} bytes at unmapped {address:#x}", self.pc) from None

    def write(self, address: int, data: bytes) -> None:
        """Write guest memory (ignores page protections, as a debugger does)."""
        try:
            self.uc.mem_write(address, bytes(data))
        except UcError:
            raise EmulationFault(f"host write of {len(data)} bytes at unmapped {address:#x}", self.pc) from None
        if address < CODE_BASE + len(self.image.code) and address + len(data) > CODE_BASE:
            self._block_insns.clear()
            self.counter.set_range(0, CODE_BASE, self.read(CODE_BASE, len(self.image.code)), self.arch)
            flush_translations(self.uc)

    def read_u64(self, address: int) -> int:
        """An unsigned 64-bit little-endian word."""
        return struct.unpack("<Q", self.read(address, 8))[0]

    def read_u32(self, address: int) -> int:
        """An unsigned 32-bit little-endian word."""
        return struct.unpack("<I", self.read(address, 4))[0]

    def read_word(self, address: int) -> int:
        """A machine word (8 bytes on x86-64, 4 on x86-32)."""
        return self.read_u64(address) if self.bits == 64 else self.read_u32(address)

    def write_u64(self, address: int, value: int) -> None:
        """Store an unsigned 64-bit word."""
        self.write(address, struct.pack("<Q", value & (2**64 - 1)))

    def write_word(self, address: int, value: int) -> None:
        """Store a machine word."""
        self.write(address, (value & self._mask).to_bytes(self.word, "little"))

    def stack_words(self, n: int) -> list[tuple[int, int]]:
        """The ``n`` words at the stack pointer upwards, as (address, value) pairs."""
        sp = self.sp
        top = STACK_TOP
        return [(a, self.read_word(a)) for a in range(sp, min(top, sp + n * self.word), self.word)]

    # ----------------------------------------------------------------- registers

    @property
    def pc(self) -> int:
        """The program counter."""
        return self.uc.reg_read(self._pc_reg)

    @pc.setter
    def pc(self, value: int) -> None:
        self.uc.reg_write(self._pc_reg, value)

    @property
    def sp(self) -> int:
        """The stack pointer."""
        return self.uc.reg_read(self._sp_reg)

    @sp.setter
    def sp(self, value: int) -> None:
        self.uc.reg_write(self._sp_reg, value)

    def reg(self, name: str) -> int:
        """One register by name (``rax`` ... ``r15``, ``rip``; ``eax`` ... ``eip`` in 32-bit mode)."""
        try:
            return self.uc.reg_read(self._regs[name])
        except KeyError:
            raise EmulationFault(f"no register {name!r} on {self.arch}", self.pc) from None

    def set_reg(self, name: str, value: int) -> None:
        """Write one register by name."""
        if name not in self._regs:
            raise EmulationFault(f"no register {name!r} on {self.arch}", self.pc)
        self.uc.reg_write(self._regs[name], value & self._mask)

    def regs(self) -> dict[str, int]:
        """A snapshot of the general registers, pc and flags, in a fixed order."""
        return {name: self.uc.reg_read(uc_reg) for name, uc_reg in self._regs.items()}

    def reset_registers(self) -> None:
        """Zero the general registers and flags (flags keep the reserved bit 1)."""
        for name, uc_reg in self._regs.items():
            if name not in ("rip", "eip"):
                self.uc.reg_write(uc_reg, 0x2 if name.endswith("flags") else 0)
        self.sp = STACK_TOP

    def signed(self, value: int) -> int:
        """``value`` read as a two's-complement machine word."""
        value &= self._mask
        return value - (1 << self.bits) if value >> (self.bits - 1) else value

    # ----------------------------------------------------------------- natives

    # ----------------------------------------------------------------- hooks

    @property
    def instructions(self) -> int:
        """Guest instructions executed so far (counted per block, corrected at stops)."""
        return self.counter.count

    @instructions.setter
    def instructions(self, value: int) -> None:
        self.counter.count = value

    def _insns_in(self, start: int, size: int) -> int:
        """How many instructions decode in ``[start, start + size)`` (cached per block)."""
        key = (start, size)
        count = self._block_insns.get(key)
        if count is None:
            count = len(disassemble(bytes(self.uc.mem_read(start, size)), start, self.arch))
            self._block_insns[key] = count
        return count

    def _on_stop_hook(self, uc: Uc, address: int, _size: int, _user) -> None:
        """A code hook on one address (breakpoint or until): stop before the instruction."""
        if self._skip_once == address:
            self._skip_once = None
            return
        if address == self._until:
            self._stop_reason = StopReason.UNTIL
        elif self._breaks_enabled and address in self.breakpoints:
            self._stop_reason = StopReason.BREAKPOINT
        else:
            return
        self._stop_pc = address
        uc.emu_stop()

    def _on_unmapped(self, uc: Uc, access: int, address: int, size: int, _value: int, _user) -> bool:
        """Remember the unmapped access so the fault can name it."""
        kind = {
            UC_MEM_READ_UNMAPPED: "read",
            UC_MEM_WRITE_UNMAPPED: "write",
            UC_MEM_FETCH_UNMAPPED: "fetch",
        }.get(access, "access")
        self._unmapped = (kind, address, size)
        return False

    def _ensure_stop_hook(self, address: int) -> None:
        """Install the single-address code hook for ``address`` once."""
        if address not in self._bp_hooks:
            self._bp_hooks[address] = self.uc.hook_add(UC_HOOK_CODE, self._on_stop_hook, begin=address, end=address)
            flush_translations(self.uc)  # code translated before the hook existed must see it

    def add_breakpoint(self, address: int) -> None:
        """Stop runs before the instruction at ``address`` executes."""
        self.breakpoints.add(address)
        self._ensure_stop_hook(address)

    def remove_breakpoint(self, address: int) -> None:
        """Forget a breakpoint and delete its hook, so the address runs at full speed again."""
        self.breakpoints.discard(address)
        self._drop_stop_hook(address)

    def _drop_stop_hook(self, address: int) -> None:
        """Delete the code hook of ``address`` unless a breakpoint still needs it."""
        if address in self.breakpoints or address not in self._bp_hooks:
            return
        self.uc.hook_del(self._bp_hooks.pop(address))
        flush_translations(self.uc)  # translated blocks still call the deleted hook

    # ----------------------------------------------------------------- running

    def symbol(self, name_or_address: str | int) -> int:
        """An address from a symbol name (or an address passed through)."""
        if isinstance(name_or_address, int):
            return name_or_address
        return self.image.address_of(name_or_address)

    def enter(self, function: str | int, *args: int) -> None:
        """Set up a call of ``function(*args)`` returning to RETURN_TRAP; pc at its entry."""
        self.reset_registers()
        words = [a & self._mask for a in args]
        if self.convention == "sysv":
            in_regs, on_stack = words[:6], words[6:]
            for reg, value in zip(SYSV_ARGS, in_regs):
                self.set_reg(reg, value)
        elif self.convention == "jit32":
            in_regs, on_stack = words[:2], list(reversed(words[2:]))
            for reg, value in zip(JIT32_ARGS, in_regs):
                self.set_reg(reg, value)
        else:
            on_stack = words
        sp = (STACK_TOP - 64 - self.word * len(on_stack)) & -16
        for i, value in enumerate(on_stack):
            self.write_word(sp + self.word * i, value)
        sp -= self.word
        self.write_word(sp, RETURN_TRAP)
        self.sp = sp
        self.pc = self.symbol(function)

    def call(self, function: str | int, *args: int, max_instructions: int | None = None) -> int:
        """Run ``function(*args)`` to its return and give rax/eax (breakpoints are ignored)."""
        self.enter(function, *args)
        self._breaks_enabled = False
        try:
            stop = self.run(max_instructions=max_instructions)
        finally:
            self._breaks_enabled = True
        if stop.reason is not StopReason.RETURNED:
            raise EmulationFault(
                f"{function} did not return within {max_instructions} instructions",
                stop.pc,
                self._describe(stop.pc),
            )
        return self.uc.reg_read(self._ret_reg)

    def returned(self) -> bool:
        """Whether the last call has returned to RETURN_TRAP."""
        return self.pc == RETURN_TRAP

    def return_value(self) -> int:
        """rax/eax."""
        return self.uc.reg_read(self._ret_reg)

    def run(self, until: int | str | None = None, max_instructions: int | None = None) -> Stop:
        """Run from pc until the call returns, a breakpoint, ``until``, or ``max_instructions``."""
        start_count = self.instructions
        if self.pc == RETURN_TRAP:
            return Stop(StopReason.RETURNED, RETURN_TRAP, 0)
        self._until = self.symbol(until) if until is not None else None
        if self._until is not None:
            self._ensure_stop_hook(self._until)
        limits = [] if max_instructions is None else [start_count + max_instructions]
        if self.budget is not None and self.budget.instruction_limit is not None:
            limits.append(self.budget.instruction_limit)
        self.counter.limit = min(limits) if limits else None
        # Resuming from a breakpoint must execute the instruction it stopped before.
        self._skip_once = self.pc
        try:
            reason = self._run_blocks()
        finally:
            if self._until is not None:
                self._drop_stop_hook(self._until)
            self._until = None
            self.counter.limit = None
            self._skip_once = None
        if reason is StopReason.LIMIT and self._budget_spent():
            assert self.budget is not None  # spent implies set
            raise self.budget.instruction_error(self.pc, self.where(self.pc), self._describe(self.pc))
        return Stop(reason, self.pc, self.instructions - start_count)

    def _emulate(self, count: int = 0) -> None:
        """One emu_start from pc, turning Unicorn errors and hook errors into exceptions."""
        self._stop_reason = None
        self._unmapped = None
        self._pending = None
        self.counter.block = (0, 0)
        pc = self.pc
        if count:
            # Unicorn plants its instruction counter while translating; blocks translated by
            # an earlier uncounted run would ignore it (and counted blocks would slow later runs).
            flush_translations(self.uc)
        left = None if self.budget is None else self.budget.seconds_left()
        timeout = 0 if left is None else max(1, int(left * 1_000_000))
        try:
            self.uc.emu_start(pc, RETURN_TRAP, timeout=timeout, count=count)
        except UcError as err:
            fault_pc = self.pc
            if err.errno == UC_ERR_FETCH_UNMAPPED and fault_pc == RETURN_TRAP:
                return
            self._correct_partial_block(fault_pc)
            raise self._fault(err, fault_pc) from None
        finally:
            if count:
                flush_translations(self.uc)
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._correct_partial_block(self.pc)
            raise pending
        if (
            self._stop_reason is None
            and self.pc != RETURN_TRAP
            and self.budget is not None
            and self.budget.out_of_time()
        ):
            self._correct_partial_block(self.pc)
            raise self.budget.time_error(self.pc, self.where(self.pc), self._describe(self.pc))

    def _correct_partial_block(self, pc: int) -> None:
        """A block was counted whole on entry; give back the instructions from pc to its end."""
        start, size = self.counter.block
        if self.counter.enabled and start <= pc < start + size:
            self.instructions -= self._insns_in(pc, start + size - pc)

    def _run_blocks(self) -> StopReason:
        """The run loop: block-counted emulation, then an exact tail if the limit splits a block."""
        self.counter.limit_hit = False
        self._emulate()
        if self.counter.misses:
            raise EmulationFault("executed code outside the image and the stub page", self.pc, self._describe(self.pc))
        if self._stop_reason is not None:
            self._correct_partial_block(self.pc)
            return self._stop_reason
        if self.pc == RETURN_TRAP:
            return StopReason.RETURNED
        limit = self.counter.limit
        if self.counter.limit_hit and limit is not None:
            remaining = limit - self.instructions
            if remaining > 0:
                start = self.pc
                self.counter.enabled = False
                try:
                    self._emulate(count=remaining)
                except EmulationFault as fault:
                    self.instructions += self._insns_in(start, fault.pc - start) if fault.pc > start else 0
                    raise
                finally:
                    self.counter.enabled = True
                if self._stop_reason is not None:
                    self.instructions += self._insns_in(start, self.pc - start) if self.pc > start else 0
                    return self._stop_reason
                self.instructions += remaining
            return StopReason.RETURNED if self.pc == RETURN_TRAP else StopReason.LIMIT
        raise EmulationFault("emulation stopped for no known reason", self.pc, self._describe(self.pc))

    def step(self) -> Stop:
        """Execute exactly one instruction (for stepping widgets; slow by design)."""
        if self.pc == RETURN_TRAP:
            return Stop(StopReason.RETURNED, RETURN_TRAP, 0)
        if self._budget_spent():
            assert self.budget is not None  # spent implies set
            raise self.budget.instruction_error(self.pc, self.where(self.pc), self._describe(self.pc))
        self.check_budget()
        self.counter.enabled = False
        self._skip_once = self.pc
        try:
            self._emulate(count=1)
        finally:
            self.counter.enabled = True
            self._skip_once = None
        self.instructions += 1
        reason = StopReason.RETURNED if self.pc == RETURN_TRAP else StopReason.STEP
        return Stop(reason, self.pc, 1)
