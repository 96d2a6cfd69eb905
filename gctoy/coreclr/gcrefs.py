"""Which GC references a frame holds at a code offset: the x86 runtime's ``EnumGcRefs``.

Given a method's GC info, a code offset in it and (optionally) the machine state, `gc_refs_at`
lists the live references the runtime would report, in its order: registers and pushed
arguments from the pointer table, then untracked slots, then tracked slots whose lifetime covers
the offset. Each reference names its location (a register, or an address expression such as
``[EBP-08H]`` / ``[ESP+10H]``) and, when EBP/ESP are known, its absolute address.

Frame picture (the modern JIT; addresses grow upwards)::

      EBP frame                               EBP-less frame
    | incoming args    | EBP+8 ...          | incoming args      |
    | return address   | EBP+4              | return address     | initial ESP + stackSize
    | saved EBP        | <- EBP             | saved EDI/ESI/...  |
    | saved EDI/ESI/EBX| EBP-4 ...          | locals             | initial ESP + 0 ...
    | locals           |                    |--------------------| <- initial ESP
    |------------------| <- initial ESP     | pushed outgoing    |
    | pushed outgoing  |                    | args (pushedSize)  | <- ESP
    | args             | <- ESP

    stackSize = 4 * (frameSize + number of saved registers, EBP included)

The rules (facts: EnumGcRefs):

* In the prolog or an epilog nothing is reported. The prolog is ``offset < prologSize``; an
  epilog is ``start < offset < start + epilogSize`` -- strictly, so an epilog's first byte is body.
* Fully interruptible tables: registers are looked up at ``offset - 1`` for frames that are not
  the active (leaf) frame -- the caller's registers are those live *before* its call -- and at
  ``offset`` for the active frame. EAX/ECX/EDX are reported only for the active frame. Pending
  pushed argument ``i`` lives at ``first - 4*i`` where ``first`` is ``initial ESP - 4``.
* Partially interruptible tables are only valid at call sites (return addresses); registers come
  from the call site's masks -- callee-saved only, reported EDI, ESI, EBX, EBP -- and arguments
  at ``[ESP + 4*i]``.
* ``argBase`` is EBP for EBP frames, otherwise ``ESP + pushedSize`` (the initial ESP).
  Untracked slots live at ``argBase + offset``; in double-aligned frames offsets at or above
  ``stackSize - 4`` are incoming arguments at ``EBP + (offset - (stackSize - 4))``.
* Lifetimes are looked up at ``offset`` for the active frame and at ``offset - 1`` otherwise
  (at a return address a variable may already be dead); the slot is ``EBP - offset`` or
  ``argBase + offset``. The classic runtime (``legacy=True``) reads bit 1 as `this`, not pinned.
* When execution is aborted in this frame (an exception passing through), only the register
  holding ``this`` is reported from the pointer table.

Not modelled: funclet frames (a parent of a running funclet reports nothing), the classic
handler shadow-SP slots, and the incoming varargs found through the VASigCookie.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..errors import GCToyError
from .entries import PtrTableState
from .header import CURRENT_VERSION, InfoHdr
from .method import DecodedMethod, MethodGCInfo, decode_with_entries, encode, pointer_table_module

SCRATCH_REGS = frozenset({"EAX", "ECX", "EDX"})
#: The order the runtime reports live registers of a fully interruptible frame in (facts §9.2).
INTERRUPTIBLE_REPORT_ORDER = ("EAX", "ECX", "EDX", "EBX", "EBP", "ESI", "EDI")
#: At a call site of a partially interruptible frame only callee-saved registers can hold GC
#: pointers (the call mask's ``pbsd`` bits, seed 002 "RegMask"), reported in this order (facts §9.3).
CALL_SITE_REPORT_ORDER = ("EDI", "ESI", "EBX", "EBP")


#: Where a live reference is: a register, a pushed argument, an untracked slot or a tracked one.
RefKind = Literal["register", "pushed-arg", "untracked", "lifetime"]
#: the part of a method a code offset is in, as the runtime sees it
CodeRegion = Literal["prolog", "epilog", "body"]


@dataclass(frozen=True)
class GCRef:
    """One live GC reference of a frame."""

    kind: RefKind
    location: str  # register name, or an address expression like "[EBP-08H]"
    address: int | None = None  # the slot's address when the frame registers are known
    interior: bool = False
    pinned: bool = False
    value: int | None = None  # the register's or slot's contents when known


# --------------------------------------------------------------------------- frame arithmetic


def saved_regs_count(hdr: InfoHdr) -> int:
    """Callee-saved registers the prolog pushes, EBP included."""
    return sum((hdr.edi_saved, hdr.esi_saved, hdr.ebx_saved, hdr.ebp_saved))


def stack_size(hdr: InfoHdr) -> int:
    """The VM's ``stackSize``: locals plus saved registers (EBP included), in bytes."""
    return 4 * (hdr.frame_size + saved_regs_count(hdr))


def localloc_sp_offset(hdr: InfoHdr) -> int:
    """How far below EBP a localloc frame keeps its initial ESP (``GetLocallocSPOffset``)."""
    excl_fp = saved_regs_count(hdr) - (1 if hdr.ebp_frame or hdr.double_align else 0)
    return 4 * (excl_fp + (1 if hdr.sync_start_offset else 0) + 1)


def _loc(base: str, disp: int) -> str:
    return f"[{base}{'-' if disp < 0 else '+'}{abs(disp):02X}H]"


@lru_cache(maxsize=512)
def _decoded(data: bytes, version: int, legacy: bool) -> DecodedMethod:
    """Decoded blobs, remembered: a stack walker asks about the same few methods again and again."""
    return decode_with_entries(data, version, legacy=legacy)


def forget_decoded_methods() -> None:
    """Empty the memory of decoded blobs (a lab that swaps the decoders in and out needs them decoded afresh)."""
    _decoded.cache_clear()


def decoded_method(data: bytes, version: int = CURRENT_VERSION, *, legacy: bool = False) -> DecodedMethod:
    """`decode_with_entries` of a blob, remembered (a stack walker decodes the same methods at every collection)."""
    return _decoded(bytes(data), version, legacy)


def _as_decoded(info_or_bytes: MethodGCInfo | bytes, version: int, legacy: bool) -> tuple[DecodedMethod, bytes]:
    data = (
        encode(info_or_bytes, version, legacy=legacy)
        if isinstance(info_or_bytes, MethodGCInfo)
        else bytes(info_or_bytes)
    )
    return _decoded(data, version, legacy), data


def code_region(info: MethodGCInfo, code_offset: int) -> tuple[CodeRegion, int]:
    """The runtime's view of ``code_offset``: ``("prolog", n)``, ``("epilog", n bytes in)`` or ``("body", 0)``."""
    h = info.header
    if code_offset < h.prolog_size:
        return "prolog", code_offset
    for start in info.epilogs:
        if start < code_offset < start + h.epilog_size:
            return "epilog", code_offset - start
    return "body", 0


def _scan(
    decoded: DecodedMethod, data: bytes, cur_offs: int, regs_offs: int | None, partial_arg_info: bool
) -> PtrTableState:
    """Ask the pointer-table module what is live at ``cur_offs`` (registers at ``regs_offs``).

    Only the fully interruptible table takes options: the register offset of the curOffs-1 rule
    and the classic partial argument info; the partially interruptible tables describe call sites
    and are always asked at the return address.
    """
    hdr = decoded.info.header
    start = decoded.pointer_table.start
    module = pointer_table_module(hdr)
    if hdr.interruptible:
        return module.scan(data, start, hdr, cur_offs, regs_offs=regs_offs, partial_arg_info=partial_arg_info)
    return module.scan(data, start, hdr, cur_offs)


def pushed_arg_size(
    info_or_bytes: MethodGCInfo | bytes, code_offset: int, *, version: int = CURRENT_VERSION, legacy: bool = False
) -> int:
    """Bytes of outgoing arguments pushed at ``code_offset`` (``GetPushedArgSize``); 0 in EBP partial tables."""
    decoded, data = _as_decoded(info_or_bytes, version, legacy)
    hdr = decoded.info.header
    return _scan(decoded, data, code_offset, None, legacy and hdr.ebp_frame).pushed_bytes


def initial_esp(
    info_or_bytes: MethodGCInfo | bytes,
    code_offset: int,
    *,
    esp: int | None = None,
    ebp: int | None = None,
    version: int = CURRENT_VERSION,
    legacy: bool = False,
) -> int:
    """ESP as the prolog left it: ``ESP + pushedSize`` (EBP-less), ``EBP - (stackSize - 4)`` (EBP frame)."""
    decoded, data = _as_decoded(info_or_bytes, version, legacy)
    hdr = decoded.info.header
    if hdr.ebp_frame and not hdr.localloc:
        if ebp is None:
            raise GCToyError("initial_esp of an EBP frame needs ebp")
        return ebp - (stack_size(hdr) - 4)
    if esp is None:
        raise GCToyError("initial_esp of this frame needs esp")
    return esp + _scan(decoded, data, code_offset, None, legacy and hdr.ebp_frame).pushed_bytes


def return_address_slot(
    info_or_bytes: MethodGCInfo | bytes,
    code_offset: int,
    *,
    esp: int | None = None,
    ebp: int | None = None,
    version: int = CURRENT_VERSION,
    legacy: bool = False,
) -> int:
    """Where the return address is: ``EBP + 4`` in EBP frames, ``initial ESP + stackSize`` otherwise."""
    decoded, _ = _as_decoded(info_or_bytes, version, legacy)
    hdr = decoded.info.header
    if hdr.ebp_frame or hdr.double_align:
        if ebp is None:
            raise GCToyError("the return address of a frame with EBP needs ebp")
        return ebp + 4
    return initial_esp(info_or_bytes, code_offset, esp=esp, version=version, legacy=legacy) + stack_size(hdr)


# --------------------------------------------------------------------------- EnumGcRefs


def gc_refs_at(
    info_or_bytes: MethodGCInfo | bytes,
    code_offset: int,
    *,
    active_frame: bool,
    regs: Mapping[str, int] | None = None,
    esp: int | None = None,
    ebp: int | None = None,
    read_dword: Callable[[int], int] | None = None,
    execution_aborted: bool = False,
    version: int = CURRENT_VERSION,
    legacy: bool = False,
) -> list[GCRef]:
    """The live GC references at ``code_offset``, in the order the runtime reports them.

    ``regs`` maps register names to values (``ESP``/``EBP`` there stand in for ``esp``/``ebp``);
    ``read_dword`` reads guest memory, used for slot values and for a localloc frame's saved ESP.
    Pending arguments of a fully interruptible localloc EBP frame hang off that saved ESP, shown
    as ``SP0`` in their location. ``legacy`` reads a classic blob: no argTabOffset, absolute
    untracked offsets, partial argument info in EBP frames and lifetime bit 1 as `this`.
    """
    if not isinstance(code_offset, int) or isinstance(code_offset, bool) or code_offset < 0:
        raise GCToyError(f"code_offset must be a non-negative integer, got {code_offset!r}")
    decoded, data = _as_decoded(info_or_bytes, version, legacy)
    info = decoded.info
    hdr = info.header
    if code_offset > info.method_size:  # the VM's _ASSERTE(scanOffs <= info->methodSize)
        raise GCToyError(f"code offset {code_offset:#x} is past the method's end (method size {info.method_size:#x})")
    regs = dict(regs or {})
    esp = esp if esp is not None else regs.get("ESP")
    ebp = ebp if ebp is not None else regs.get("EBP")
    if code_region(info, code_offset)[0] != "body":
        return []

    def slot(kind: RefKind, base: str, base_value: int | None, disp: int, interior: bool, pinned: bool) -> GCRef:
        address = None if base_value is None else (base_value + disp) & 0xFFFF_FFFF
        value = read_dword(address) if read_dword is not None and address is not None else None
        return GCRef(kind, _loc(base, disp), address, interior, pinned, value)

    def reg(name: str, interior: bool) -> GCRef:
        return GCRef("register", name, None, interior, False, regs.get(name))

    out: list[GCRef] = []
    partial = legacy and hdr.ebp_frame
    if hdr.interruptible:
        regs_offs = code_offset - 1 if not active_frame and code_offset > 0 else code_offset
        state = _scan(decoded, data, code_offset, regs_offs, partial)
    else:
        state = _scan(decoded, data, code_offset, None, partial)
    pushed = state.pushed_bytes
    if execution_aborted:
        if state.this_reg is not None:
            out.append(reg(state.this_reg, False))
    else:
        out += [reg(name, name in state.interior_regs) for name in _live_registers(state, hdr, active_frame)]
        out += _pushed_args(state, hdr, esp, ebp, read_dword, slot)
    # Untracked slots: argBase + offset (double-aligned frames: incoming args are EBP-based).
    if hdr.ebp_frame:
        base, base_value, bias = "EBP", ebp, 0
    else:
        base, base_value, bias = "ESP", esp, pushed
    remap = stack_size(hdr) - 4
    for u in info.untracked:
        if hdr.double_align and u.offset >= remap:
            out.append(slot("untracked", "EBP", ebp, u.offset - remap, u.interior, u.pinned))
        else:
            out.append(slot("untracked", base, base_value, bias + u.offset, u.interior, u.pinned))
    # Lifetimes: the query offset follows the curOffs-1 rule for frames that are not the leaf.
    query = code_offset if active_frame or execution_aborted else code_offset - 1
    for life in info.lifetimes:
        if life.begin > query:
            break
        if query < life.end:
            pinned = life.pinned and not legacy
            disp = -life.offset if hdr.ebp_frame else bias + life.offset
            out.append(slot("lifetime", base, base_value, disp, life.interior, pinned))
    return out


def _live_registers(state: PtrTableState, hdr: InfoHdr, active_frame: bool) -> list[str]:
    """The registers holding live references, in the runtime's report order (scratch ones only in the
    active frame of a fully interruptible method)."""
    if hdr.interruptible:
        names = [r for r in INTERRUPTIBLE_REPORT_ORDER if active_frame or r not in SCRATCH_REGS]
    else:
        names = list(CALL_SITE_REPORT_ORDER)
    return [name for name in names if name in state.live_regs]


def _pushed_args(
    state: PtrTableState, hdr: InfoHdr, esp: int | None, ebp: int | None, read_dword: Callable[[int], int] | None, slot
) -> list[GCRef]:
    """The pending outgoing arguments holding GC pointers."""
    out = []
    for arg in state.pushed_args:
        if arg.base == "ESP":
            out.append(slot("pushed-arg", "ESP", esp, arg.offset, arg.interior, False))
            continue
        # "PENDING": slot i of the outgoing area, at first - 4*i with first = initial ESP - 4.
        if not hdr.ebp_frame:
            out.append(slot("pushed-arg", "ESP", esp, state.pushed_bytes - 4 - 4 * arg.offset, arg.interior, False))
        elif hdr.localloc:
            saved_at = None if ebp is None else ebp - localloc_sp_offset(hdr)
            sp0 = read_dword(saved_at) if read_dword is not None and saved_at is not None else None
            out.append(slot("pushed-arg", "SP0", sp0, -4 - 4 * arg.offset, arg.interior, False))
        else:
            out.append(slot("pushed-arg", "EBP", ebp, -stack_size(hdr) - 4 * arg.offset, arg.interior, False))
    return out
