"""The methods whose GC info the codec lab (gctoy.labs.codecs) writes and reads with the student's codecs."""

from __future__ import annotations

from ..coreclr import method as _method
from ..coreclr.header import InfoHdr
from ..coreclr.info_tables import Lifetime, UntrackedSlot
from ..coreclr.ptrtab_ebp import CallSite, EbpTable
from ..coreclr.ptrtab_esp import Call, EspTable, Pop, Push
from ..coreclr.ptrtab_full import FullTable, PushPtr, RegDead, RegLive
from ..coreclr.ptrtab_full import Pop as FullPop

__all__ = ["sample_methods"]


# --------------------------------------------------------------------------- the methods of part 3


def sample_methods() -> list[tuple[str, _method.MethodGCInfo]]:
    """A few methods whose GC info uses every Unsigned, Signed and UDelta of the format."""
    return [
        ("chapter 14's method (EBP frame)", _chapter14_method()),
        ("a 0x1234-byte EBP method", _big_ebp_method()),
        ("an EBP-less method", _esp_method()),
        ("a fully interruptible method", _fully_interruptible_method()),
    ]


def _chapter14_method() -> _method.MethodGCInfo:
    """Chapter 14's example: an EBP frame with untracked slots, a lifetime and two call sites."""
    ebp = InfoHdr(
        prolog_size=6,
        epilog_size=4,
        ebp_frame=True,
        ebp_saved=True,
        esi_saved=True,
        edi_saved=True,
        arg_count=1,
        frame_size=4,
    )
    chapter14 = _method.MethodGCInfo.create(
        0x50,
        ebp,
        epilogs=(0x2A, 0x4C),
        untracked=(UntrackedSlot(-8), UntrackedSlot(8)),
        lifetimes=(Lifetime(12, 0x0A, 0x22),),
        pointer_table=EbpTable(
            calls=(CallSite(0x14, regs=("ESI",)), CallSite(0x22, regs=("EDI", "ESI"), arg_mask=0b1))
        ),
    )
    return chapter14


def _big_ebp_method() -> _method.MethodGCInfo:
    """A large EBP method: multi-byte offsets, interior and pinned slots, a GS cookie."""
    big_ebp = InfoHdr(
        prolog_size=9,
        epilog_size=5,
        ebp_frame=True,
        ebp_saved=True,
        ebx_saved=True,
        arg_count=2,
        frame_size=40,
        gs_cookie_offset=0x90,
    )
    big = _method.MethodGCInfo.create(
        0x1234,
        big_ebp,
        epilogs=(0x800, 0x122F),
        # deltas 8, 64 (two Signed bytes), 3 (with the interior flag) and a negative one
        untracked=(
            UntrackedSlot(-8),
            UntrackedSlot(-72),
            UntrackedSlot(-76, interior=True),
            UntrackedSlot(12),
            UntrackedSlot(-0x9C, pinned=True),
        ),
        lifetimes=(Lifetime(0x10, 0x20, 0x1F0), Lifetime(0x84, 0x300, 0x11F0, interior=True)),
        pointer_table=EbpTable(
            calls=(
                CallSite(0x40, regs=("EBX",)),
                CallSite(0x700, regs=("EDI",), arg_mask=0b101),
                CallSite(0x1100, regs=("ESI", "EDI")),
            )
        ),
    )
    return big


def _esp_method() -> _method.MethodGCInfo:
    """An EBP-less method whose pointer table tracks pushes and pops."""
    esp = InfoHdr(prolog_size=4, epilog_size=3, esi_saved=True, edi_saved=True, arg_count=3, frame_size=70)
    esp_method = _method.MethodGCInfo.create(
        0x2C0,
        esp,
        epilogs=(0x2BD,),
        untracked=tuple(UntrackedSlot(4 * i) for i in (0, 1, 2, 17, 66)),
        lifetimes=(Lifetime(0xC, 0x30, 0x250),),
        pointer_table=EspTable(
            events=(
                Push(0x40, gc=True),
                Push(0x41),
                Call(0x46, arg_cnt=2, regs=("ESI",)),
                Push(0x1A0, gc=True),
                Call(0x1A6, arg_cnt=1),
                Push(0x200),
                Pop(0x210),
            )
        ),
    )
    return esp_method


def _fully_interruptible_method() -> _method.MethodGCInfo:
    """A fully interruptible EBP method: register lifetimes and a pushed pointer."""
    full_hdr = InfoHdr(prolog_size=3, epilog_size=2, ebp_frame=True, ebp_saved=True, interruptible=True, arg_count=0)
    full = _method.MethodGCInfo.create(
        0x400,
        full_hdr,
        epilogs=(0x3FE,),
        pointer_table=FullTable(
            events=(
                RegLive(0x05, "EAX"),
                RegLive(0x09, "ESI"),
                RegDead(0x90, "EAX"),
                PushPtr(0x1F0, 0),
                FullPop(0x1F8, 1),
                RegDead(0x3F0, "ESI"),
            )
        ),
    )
    return full


#: chapter 13's SOS header (version 5): a shortcut, six fixups and a trailing Unsigned
