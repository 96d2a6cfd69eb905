"""The EBP-less pointer table's description (what the JIT knows) and its stream of operations
(what the bytes say), with the checks and register masks the encoder, decoder and scan share.

The format itself is described in `gctoy.coreclr.ptrtab_esp`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..errors import DecodeError
from .codecs import U32_MAX
from .header import InfoHdr
from .tables import CALL_PATTERN_TABLE

#: Callee-saved registers by mask bit (bit 0 = EDI) and by the RR field of 0xF4-0xF7.
CALLEE_SAVED = ("EDI", "ESI", "EBX", "EBP")
#: Pending DWORDs this reader accepts (a bound of gctoy, not of the format: the JIT's deepest
#: outgoing-argument area is far smaller, and it keeps decoding of hostile bytes cheap).
MAX_PENDING = 4096
#: Pending DWORDs that fit the 32-bit argMask; deeper stacks with pointers use the fat form.
MASK_BITS = 32

#: The call patterns (argCnt, regMask, argMask, code delta) by row of the 0x80-0xCF codes.
PATTERNS = tuple((v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, v >> 24) for v in CALL_PATTERN_TABLE)


# --------------------------------------------------------------------------- description


@dataclass(frozen=True)
class Push:
    """At `offset`, one DWORD is pushed: a GC pointer if `gc` (an interior one if `interior`)."""

    offset: int
    gc: bool = False
    interior: bool = False


@dataclass(frozen=True)
class Pop:
    """At `offset`, `count` DWORDs are popped (``add esp, 4*count`` or ``pop reg``)."""

    offset: int
    count: int = 1


@dataclass(frozen=True)
class Kill:
    """At `offset`, the top `count` pending *pointers* die but stay on the stack (caller-pop calls)."""

    offset: int
    count: int


@dataclass(frozen=True)
class Call:
    """A call returning at `offset` that pops `arg_cnt` DWORDs; `regs` hold GC pointers across it."""

    offset: int
    arg_cnt: int = 0
    regs: tuple[str, ...] = ()
    interior_regs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ThisReg:
    """From here on `this` is known to be in `reg` (EDI, ESI, EBX or EBP)."""

    offset: int
    reg: str


EspEvent = Push | Pop | Kill | Call | ThisReg
EVENT_TYPES = (Push, Pop, Kill, Call, ThisReg)


@dataclass(frozen=True)
class EspTable:
    """An EBP-less partially interruptible pointer table: its events in code-offset order."""

    events: tuple[EspEvent, ...] = ()


# --------------------------------------------------------------------------- operations


#: What one operation is: a push, a pop-like entry (CC 0..3), a call, or `this`.
OpKind = Literal["push", "pop", "call", "this"]


@dataclass(frozen=True)
class Op:
    """One thing the bytes say: a push, a pop-like entry (CC 0..3), a call or `this`."""

    kind: OpKind
    offset: int  # code offset (for "this": unused)
    count: int = 0  # pop: CC; this: register index
    arg_cnt: int = 0
    regs: int = 0
    iregs: int = 0
    args: tuple[tuple[int, bool], ...] = ()  # live pending DWORDs: (index from ESP, interior)
    fat: bool = False
    at: int = field(default=0, compare=False)  # byte offset of the entry (for error messages)


class InvalidTable(Exception):
    """A rule of the format is broken; callers turn it into DecodeError or GCInfoEncodeError."""


def register_mask(names: tuple[str, ...], what: str) -> int:
    """The register mask (bit 0 = EDI) of callee-saved register `names`."""
    if not isinstance(names, tuple):
        raise InvalidTable(f"{what} must be a tuple of register names, got {names!r}")
    mask = 0
    for name in names:
        if name not in CALLEE_SAVED:
            raise InvalidTable(f"{what}: {name!r} is not a callee-saved register (EDI, ESI, EBX, EBP)")
        mask |= 1 << CALLEE_SAVED.index(name)
    return mask


def register_names(mask: int) -> tuple[str, ...]:
    """The callee-saved registers of register mask `mask`."""
    return tuple(name for i, name in enumerate(CALLEE_SAVED) if mask >> i & 1)


def checked_count(value: object, what: str, low: int = 0) -> int:
    """`value` if it is an integer in ``low..0xFFFFFFFF``, else `InvalidTable` naming `what`."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= U32_MAX:
        raise InvalidTable(f"{what} must be an integer in {low}..0xFFFFFFFF, got {value!r}")
    return value


def check_header(hdr: InfoHdr, data: bytes | None = None, offset: int = 0) -> str | None:
    """Why `hdr` (and `offset` into `data`) cannot have an EBP-less table, or None."""
    if data is not None and not (isinstance(offset, int) and 0 <= offset <= len(data)):
        return f"table offset {offset!r} is outside the {len(data)} bytes of data"
    if not isinstance(hdr, InfoHdr):
        return f"expected an InfoHdr, got {type(hdr).__name__}"
    if hdr.interruptible or hdr.ebp_frame:
        return "the header selects another pointer table (EBP-less tables need interruptible = ebp_frame = 0)"
    return None


def read_byte(data: bytes, pos: int) -> int:
    """The table byte at `pos`; a `DecodeError` past the end of the data."""
    if pos >= len(data):
        raise DecodeError(pos, "the EBP-less pointer table runs past the end of the data (no 0xFF)")
    return data[pos]
