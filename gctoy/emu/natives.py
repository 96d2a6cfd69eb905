"""Native calls: Python functions the guest calls through ``int3`` stubs in the stub page.

A native stub (STUB_SIZE bytes, one per registered name):

    STUB_BASE + 16*i:   cc            int3        -> hook: read args, call fn, set rax/eax
                        c3 | c2 nn nn ret [nn]    (jit32 callee pops its stack arguments)
                        cc ...        padding

The interrupt hook fires only when an interrupt happens, so natives cost nothing while the guest
runs its own code.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from unicorn import Uc

from gctoy.emu.budget import FunctionIndex, GuestBounds, interrupt_message
from gctoy.emu.image import STUB_BASE, STUB_PAGE_SIZE, STUB_SIZE, stub_address
from gctoy.errors import EmulationFault

if TYPE_CHECKING:
    from gctoy.emu.counter import NativeBlockCounter, PythonBlockCounter

#: The calling conventions each architecture's natives and calls may use (the first is the default).
CONVENTIONS = {"x86_64": ("sysv",), "x86_32": ("cdecl", "jit32")}
SYSV_ARGS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
JIT32_ARGS = ("ecx", "edx")


@dataclass(frozen=True)
class Native:
    """A Python function the guest calls through a stub."""

    name: str
    fn: Callable[..., int | None]
    address: int
    nargs: int
    convention: str


def flush_translations(uc: Uc) -> None:
    """Drop Unicorn's translated blocks, so code hooks and stubs changed since are seen."""
    uc.ctl_flush_tb()  # type: ignore[attr-defined]  # missing from Unicorn's type information


def positional_count(fn: Callable) -> int:
    """How many positional parameters ``fn`` takes."""
    params = inspect.signature(fn).parameters.values()
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


class NativeCalls(GuestBounds):
    """The Machine's native stubs (a mixin: it uses the Machine's engine, registers and counter)."""

    convention: str
    counter: NativeBlockCounter | PythonBlockCounter
    natives: dict[str, Native]
    _natives_by_address: dict[int, Native]
    _natives_signed: dict[int, bool]
    _block_insns: dict[tuple[int, int], int]
    _functions: FunctionIndex | None
    _pending: BaseException | None
    _ret_reg: int
    _mask: int

    if TYPE_CHECKING:

        def reg(self, name: str) -> int: ...
        def signed(self, value: int) -> int: ...

    def register_native(
        self,
        name: str,
        fn: Callable[..., int | None],
        nargs: int | None = None,
        convention: str | None = None,
        signed_args: bool = True,
    ) -> int:
        """Serve calls to ``name`` with ``fn(*args)``; returns the stub address.

        If the image declared ``name`` among its natives, the stub sits where the code
        already calls it; otherwise the next free stub slot is used. ``fn`` receives the
        guest's argument words (signed unless ``signed_args`` is false); its return value
        goes to rax/eax (None leaves 0).
        """
        if name in self.image.natives:
            address = stub_address(self.image.natives.index(name))
        elif name in self.natives:
            address = self.natives[name].address
        else:
            used = {n.address for n in self.natives.values()}
            index = len(self.image.natives)
            while stub_address(index) in used:
                index += 1
            address = stub_address(index)
        count = positional_count(fn) if nargs is None else nargs
        conv = convention or self.convention
        if conv not in CONVENTIONS[self.arch]:
            raise EmulationFault(f"calling convention {conv!r} is not one of {self.arch}'s", self.pc)
        popped = self.word * max(0, count - len(JIT32_ARGS)) if conv == "jit32" else 0
        ret = b"\xc3" if popped == 0 else b"\xc2" + popped.to_bytes(2, "little")
        self.uc.mem_write(address, (b"\xcc" + ret).ljust(STUB_SIZE, b"\xcc"))
        native = Native(name, fn, address, count, conv)
        self.natives[name] = native
        self._natives_by_address[address] = native
        self._natives_signed[address] = signed_args
        self._block_insns.clear()
        self._describe_stubs()
        self._functions = None
        flush_translations(self.uc)
        return address

    def _describe_stubs(self) -> None:
        """Tell the block counter how the stub page decodes."""
        self.counter.set_range(1, STUB_BASE, self.read(STUB_BASE, STUB_PAGE_SIZE), self.arch)

    def stub_names(self) -> dict[int, str]:
        """The registered natives' names by stub address."""
        return {n.address: n.name for n in self.natives.values()}

    def native_address(self, name: str) -> int:
        """Where the stub of a registered native lives."""
        return self.natives[name].address

    def _native_args(self, native: Native) -> list[int]:
        """The arguments of a native call, read at the stub's int3 (sp -> return address)."""
        sp, word, count = self.sp, self.word, native.nargs
        if native.convention == "sysv":
            regs = [self.reg(r) for r in SYSV_ARGS[:count]]
            return regs + [self.read_word(sp + word * (1 + i)) for i in range(count - len(regs))]
        if native.convention == "cdecl":
            return [self.read_word(sp + word * (1 + i)) for i in range(count)]
        # jit32: ecx, edx, then the rest pushed left to right, so the last one is nearest sp.
        regs = [self.reg(r) for r in JIT32_ARGS[:count]]
        rest = count - len(regs)
        return regs + [self.read_word(sp + word * (rest - i)) for i in range(rest)]

    def _on_interrupt(self, uc: Uc, intno: int, _user) -> None:
        """An int3 in the stub page is a native call; anything else is a fault."""
        site = self.pc - 1
        native = self._natives_by_address.get(site) if intno == 3 else None
        if native is None:
            at = site if intno == 3 else self.pc
            self._pending = EmulationFault(interrupt_message(intno, self.where(at)), at, self._describe(at))
            uc.emu_stop()
            return
        if self.budget is not None and self.budget.out_of_time():
            self._pending = self.budget.time_error(self.guest_pc(), self.where(site))
            uc.emu_stop()
            return
        args = self._native_args(native)
        if self._natives_signed.get(site, True):
            args = [self.signed(a) for a in args]
        try:
            result = native.fn(*args)
        except BaseException as err:  # surfaced by the caller of emu_start
            self._pending = err
            uc.emu_stop()
            return
        uc.reg_write(self._ret_reg, (result or 0) & self._mask)
