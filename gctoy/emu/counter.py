"""Counting executed guest instructions per basic block without a Python call per block.

A Python ``UC_HOOK_BLOCK`` callback costs about half a microsecond: on a 4-instruction loop
that caps the emulator near 8 M instructions/s, against well over 1000 M/s with no hook.
So on x86-64 hosts the block hook is a few bytes of machine code (assembled here with
Keystone and checked with Capstone like any other gctoy code), registered with Unicorn's C
API, that does the arithmetic itself:

    n = prefix[end - lo] - prefix[start - lo]     prefix[k] = instruction starts before lo + k

``prefix`` comes from a linear sweep of the code with Capstone, one table per executable
range (the image's code and the stub page). The state block the hook reads and writes,
one 64-bit word per field:

    +0   count       instructions counted so far
    +8   enabled     0 while single-stepping (Unicorn counts those itself)
    +16  limit       stop (uc_emu_stop) before a block that would pass it
    +24  limit_hit   set when that happened
    +32  last_addr   the block being executed (for partial-block corrections)
    +40  last_size
    +48  misses      blocks outside every table (should stay 0)
    +56  emu_stop    address of uc_emu_stop
    +64  lo0, hi0, prefix0   range 0
    +88  lo1, hi1, prefix1   range 1

Elsewhere (or if executable memory cannot be had) :class:`PythonBlockCounter` does the same
job with a Python callback: correct, just slower.
"""

from __future__ import annotations

import ctypes
import mmap
import platform
import sys
from collections.abc import Callable

from unicorn import UC_HOOK_BLOCK, Uc

from gctoy.emu.disasm import disassemble

NO_LIMIT = 2**64 - 1

_HOOK_TEXT = """
hook:
    cmp qword ptr [rcx + 8], 0
    je .Lret
    mov edx, edx
    lea r8, [rsi + rdx]
    mov r9, qword ptr [rcx + 64]
    cmp rsi, r9
    jb .Lrange1
    cmp r8, qword ptr [rcx + 72]
    ja .Lrange1
    mov r10, qword ptr [rcx + 80]
    jmp .Lcount
.Lrange1:
    mov r9, qword ptr [rcx + 88]
    cmp rsi, r9
    jb .Lmiss
    cmp r8, qword ptr [rcx + 96]
    ja .Lmiss
    mov r10, qword ptr [rcx + 104]
.Lcount:
    sub r8, r9
    mov rax, rsi
    sub rax, r9
    mov r11d, dword ptr [r10 + r8*4]
    sub r11d, dword ptr [r10 + rax*4]
    mov rax, qword ptr [rcx]
    add rax, r11
    cmp rax, qword ptr [rcx + 16]
    ja .Lstop
    mov qword ptr [rcx], rax
    mov qword ptr [rcx + 32], rsi
    mov qword ptr [rcx + 40], rdx
.Lret:
    ret
.Lmiss:
    add qword ptr [rcx + 48], 1
    ret
.Lstop:
    mov qword ptr [rcx + 24], 1
    sub rsp, 8
    call qword ptr [rcx + 56]
    add rsp, 8
    ret
"""


class _State(ctypes.Structure):
    _fields_ = [
        ("count", ctypes.c_uint64),
        ("enabled", ctypes.c_uint64),
        ("limit", ctypes.c_uint64),
        ("limit_hit", ctypes.c_uint64),
        ("last_addr", ctypes.c_uint64),
        ("last_size", ctypes.c_uint64),
        ("misses", ctypes.c_uint64),
        ("emu_stop", ctypes.c_void_p),
        ("lo0", ctypes.c_uint64),
        ("hi0", ctypes.c_uint64),
        ("prefix0", ctypes.c_void_p),
        ("lo1", ctypes.c_uint64),
        ("hi1", ctypes.c_uint64),
        ("prefix1", ctypes.c_void_p),
    ]


def prefix_table(code: bytes, base: int, arch: str) -> list[int]:
    """prefix[k] = how many instructions start in ``code[:k]`` (a linear sweep that resyncs).

    The same code is often counted by many machines (one per run): the table is remembered."""
    key = (bytes(code), base, arch)
    table = _PREFIX_CACHE.get(key)
    if table is None:
        table = _prefix_table(key[0], base, arch)
        if len(_PREFIX_CACHE) >= 64:
            _PREFIX_CACHE.pop(next(iter(_PREFIX_CACHE)))
        _PREFIX_CACHE[key] = table
    return table


_PREFIX_CACHE: dict[tuple[bytes, int, str], list[int]] = {}


def _prefix_table(code: bytes, base: int, arch: str) -> list[int]:
    starts = bytearray(len(code) + 1)
    offset = 0
    while offset < len(code):
        insns = disassemble(code[offset:], base + offset, arch)
        for insn in insns:
            starts[insn.address - base] = 1
        offset += sum(i.size for i in insns)
        if offset < len(code):
            starts[offset] = 1  # an undecodable byte: count it as one "instruction" and go on
            offset += 1
    table, running = [0] * (len(code) + 1), 0
    for k in range(len(code) + 1):
        table[k] = running
        running += starts[k]
    return table


_page: tuple[mmap.mmap, int] | None = None
_page_failed = False


def _native_hook_address() -> int | None:
    """The address of the machine-code hook (made once per process), or None if unavailable."""
    global _page, _page_failed
    if _page is not None:
        return _page[1]
    if _page_failed or sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        from gctoy.emu.asm import assemble

        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        code = assemble(_HOOK_TEXT, "x86_64", address, check=True)
        page.write(code)
    except (OSError, ValueError, PermissionError):
        _page_failed = True
        return None
    _page = (page, address)
    return address


class NativeBlockCounter:
    """Block counting by a machine-code UC_HOOK_BLOCK callback; exact, near full speed."""

    native = True

    def __init__(self, uc: Uc, hook_address: int) -> None:
        from unicorn.unicorn_py3.unicorn import uclib

        self.state = _State(limit=NO_LIMIT, enabled=1)
        self.state.emu_stop = ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p).value
        self._tables: list[ctypes.Array | None] = [None, None]
        handle = ctypes.c_size_t()
        status = uclib.uc_hook_add(
            uc._uch,
            ctypes.byref(handle),
            UC_HOOK_BLOCK,
            ctypes.c_void_p(hook_address),
            ctypes.cast(ctypes.pointer(self.state), ctypes.c_void_p),
            ctypes.c_uint64(1),
            ctypes.c_uint64(0),
        )
        if status != 0:
            raise OSError(f"uc_hook_add failed with status {status}")
        self.handle = handle.value

    def set_range(self, slot: int, base: int, code: bytes, arch: str) -> None:
        """Describe one executable range (slot 0 or 1) by its bytes."""
        table = prefix_table(code, base, arch)
        array = (ctypes.c_uint32 * len(table))(*table)
        self._tables[slot] = array
        setattr(self.state, f"lo{slot}", base)
        setattr(self.state, f"hi{slot}", base + len(code))
        setattr(self.state, f"prefix{slot}", ctypes.addressof(array))

    count = property(lambda self: self.state.count, lambda self, v: setattr(self.state, "count", v))
    enabled = property(lambda self: bool(self.state.enabled), lambda self, v: setattr(self.state, "enabled", int(v)))
    limit_hit = property(
        lambda self: bool(self.state.limit_hit), lambda self, v: setattr(self.state, "limit_hit", int(v))
    )
    misses = property(lambda self: self.state.misses)

    @property
    def limit(self) -> int | None:
        """The instruction count not to pass, or None."""
        return None if self.state.limit == NO_LIMIT else self.state.limit

    @limit.setter
    def limit(self, value: int | None) -> None:
        self.state.limit = NO_LIMIT if value is None else value

    @property
    def block(self) -> tuple[int, int]:
        """(address, size) of the last block counted."""
        return self.state.last_addr, self.state.last_size

    @block.setter
    def block(self, value: tuple[int, int]) -> None:
        self.state.last_addr, self.state.last_size = value


class PythonBlockCounter:
    """Block counting by a Python UC_HOOK_BLOCK callback (the portable fallback)."""

    native = False

    def __init__(self, uc: Uc, insns_in: Callable[[int, int], int]) -> None:
        self.count = 0
        self.enabled = True
        self.limit: int | None = None
        self.limit_hit = False
        self.misses = 0
        self.block = (0, 0)
        self._insns_in = insns_in
        self.handle = uc.hook_add(UC_HOOK_BLOCK, self._on_block)

    def set_range(self, slot: int, base: int, code: bytes, arch: str) -> None:
        """Nothing to precompute: blocks are decoded on first sight."""

    def _on_block(self, uc: Uc, address: int, size: int, _user) -> None:
        if not self.enabled:
            return
        n = self._insns_in(address, size)
        if self.limit is not None and self.count + n > self.limit:
            self.limit_hit = True
            uc.emu_stop()
            return
        self.count += n
        self.block = (address, size)


def make_counter(uc: Uc, insns_in: Callable[[int, int], int], native: bool = True):
    """The fastest block counter this host allows (``native=False`` forces the Python one)."""
    address = _native_hook_address() if native else None
    if address is not None:
        try:
            return NativeBlockCounter(uc, address)
        except OSError:
            pass
    return PythonBlockCounter(uc, insns_in)
