"""The partially interruptible pointer table of an EBP-less frame (``interruptible = 0``, ``ebpFrame = 0``).

Without a frame pointer, locals live at offsets from the *initial* ESP, so the unwinder must know
how many bytes of outgoing arguments are pushed at any code offset. This table therefore records
every push and pop, and the *interesting* call sites (something live in a callee-saved register,
or a pending pointer argument, or a callee that pops arguments). A code offset without a call
entry is a "boring" call site: nothing live. The running code offset starts at 0; 0xFF ends it.

    byte                    meaning                                              code delta
    000DDDDD                push one DWORD                                       D
    00100000 u              push u DWORDs (read by the VM, never written)        0
    01000000 u              skip                                                 u
    0100DDDD                small skip (a call's first delta part)               D
    01CCDDDD  CC=1..3       pop CC DWORDs (also: a call popping CC, no pointers) D
    1PPPPPPP  P=0..79       call pattern P: argCnt, regMask, argMask, delta      table
    1101RRRR DDCCCMMM       call: regs RRRR, argCnt CCC, argMask MMM             {6,8,10,12}[DD]
    1110RRRR u u            call: regs RRRR, argCnt u, argMask u                 0
    11110000 u              interior mask for the next call: low 4 bits regs, the rest args
    111101RR                `this` is in EDI / ESI / EBX / EBP
    11111000 b DW DW DW DW  "fat" call: b = PBSDpbsd, delta, argCnt, count, byte size,
                            then count Unsigned ESP offsets of pending pointers (bit 0: interior)
    11111111                end
    0x21-0x3F, 0xF1-0xF3, 0xF9-0xFE: reserved

Register masks use bits EDI 1, ESI 2, EBX 4, EBP 8. ``argMask`` bit i is the pending argument at
``[ESP + 4*i]`` *after* the call returned and popped its own ``argCnt`` DWORDs -- the arguments
pushed for an outer call that is still being set up::

        push eax         ; a pointer argument for f       pending: [a]
        push 5           ; ... and an int                 pending: [a, 5]
        call g           ; g takes nothing                at g's return: [ESP+0]=5, [ESP+4]=a
                         ;                                -> argMask = 0b10
        push ebx         ; g's result, a pointer          pending: [a, 5, r]
        call f           ; f pops 3 (argCnt 3)            pending: [] -> argMask 0

The description (`EspTable`) is what the JIT knows: pushes (pointer or not), pops, *kills* (the
pointers of a caller-pop call die but stay on the stack -- no bytes), call sites with their
``argCnt`` and live callee-saved registers, and `this`. `encode_table` models the pending pushes
the way the JIT does (``PendingArgsStack``) to derive each call's masks, then picks the form in
the JIT's order: an uninteresting call (fewer than 4 args popped, nothing live) becomes a pop or
a small skip; else a call pattern (after a skip of the remainder); else the ``D0`` form; else
``E0``; more than 32 pending DWORDs with pointers among them need the fat ``F8`` form.

The bytes cannot say whether a pushed DWORD was a pointer until a call reports it, so
`decode_table` returns the canonical description (`canonical` of what was encoded): a push is a
pointer iff some call reports it; a kill sits right after the last call that still reported the
pointers it kills; a call that reports nothing and pops one DWORD is a `Pop`; a call that reports
nothing, pops nothing and has no code delta is gone, and so is one whose small skip the next
call's encoding would start with anyway. Reserved codes are a `DecodeError` there; `scan`
follows the release VM by default (0x21-0x3F read as 0x20, 0xF1-0xF3 as 0xF0, 0xF9-0xFB as 0xF8,
0xFC-0xFE end the table), or rejects them with ``strict=True``.
"""

from __future__ import annotations

from .ptrtab_esp_decode import decode_table
from .ptrtab_esp_encode import encode_table
from .ptrtab_esp_model import CALLEE_SAVED, MASK_BITS, MAX_PENDING, Call, EspEvent, EspTable, Kill, Pop, Push, ThisReg
from .ptrtab_esp_raise import canonical
from .ptrtab_esp_scan import scan

__all__ = [
    "CALLEE_SAVED",
    "MASK_BITS",
    "MAX_PENDING",
    "Call",
    "EspEvent",
    "EspTable",
    "Kill",
    "Pop",
    "Push",
    "ThisReg",
    "canonical",
    "decode_table",
    "encode_table",
    "scan",
]
