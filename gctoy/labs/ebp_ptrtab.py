"""Lab (chapter 15): a decoder of the partially interruptible, EBP-frame pointer table.

The student writes ``decode_ebp_table(data, pos) -> (this_reg, sites)``: read the table that
starts at ``data[pos]`` up to its ``0xFF`` and return the register that holds ``this`` (or None)
and one :class:`Site` per call site, in order.  :func:`check` then

1. decodes tables that use every form of the encoding (tiny, small, medium ``FD``, medium with
   byrefs ``F9``, large ``FE``/``FA``, huge ``FB``, the ``this`` byte), written by gctoy's encoder
   (`gctoy.coreclr.ptrtab_ebp.encode_table`), and compares each call site with gctoy's decoder;
2. decodes the pointer table of every method of real GC-info blobs: a program compiled to x86-32
   with EBP frames and GC pointers kept in EBX/ESI/EDI across calls (`compile_with_gcinfo`), and
   finds each table where the runtime does (after the lifetime table);
3. plugs the decoder into the runtime: a program runs on Unicorn with a collection at every call
   into the runtime and the heap verifier on, and every EBP-frame lookup of the stack walker goes
   through the student's decoder.  It must print what it prints without any collection.

A wrong answer fails with :class:`gctoy.labs.LabFailure` and a message that names the entry (its
bytes and form), what was decoded, what the format says, and, for the usual slips (offsets not
accumulated, register bits mirrored, live and interior register bits swapped), why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from . import LabFailure, LabReport, call_student

__all__ = ["Site", "check", "expected_sites"]

NAME = "gctoy.labs.ebp_ptrtab"


class Site(NamedTuple):
    """One call site of the table: what is live at ``offset`` (the call's return address).

    ``regs``: the callee-saved registers (``"EDI"``, ``"ESI"``, ``"EBX"``) that hold GC pointers;
    ``interior_regs``: those of them that hold interior pointers (byrefs); ``pushed``: the pushed
    arguments that hold GC pointers, as ``(byte offset from ESP, interior)`` pairs.
    """

    offset: int
    regs: frozenset = frozenset()
    interior_regs: frozenset = frozenset()
    pushed: frozenset = frozenset()


def _normal_site(site: Any, where: str) -> Site:
    try:
        offset, regs, interior, pushed = site
        return Site(int(offset), frozenset(regs), frozenset(interior), frozenset((int(o), bool(i)) for o, i in pushed))
    except (TypeError, ValueError) as error:
        raise LabFailure(
            f"{where}: a site must be Site(offset, regs, interior_regs, pushed) with pushed a set of "
            f"(byte offset, interior) pairs; got {site!r} ({error})"
        ) from None


def _tables() -> list[tuple[str, Any]]:
    from gctoy.coreclr import ptrtab_ebp as ebp

    c, a = ebp.CallSite, ebp.ArgOffset
    return [
        ("tiny entries (0bsdDDDD)", ebp.EbpTable(calls=(c(5, ("ESI",)), c(9, ("EDI", "EBX")), c(24, ("EBX",))))),
        (
            "small entries (1DDDDDDD bsdAAAAA)",
            ebp.EbpTable(calls=(c(20, ("EDI",), arg_mask=0b11), c(140, ("ESI", "EBX"), arg_mask=0b10100))),
        ),
        (
            "medium entries (FD)",
            ebp.EbpTable(calls=(c(200, ("EBX",), arg_mask=0x1FF), c(600, ("EDI",), arg_mask=0xA05))),
        ),
        (
            "medium with byrefs (F9)",
            ebp.EbpTable(calls=(c(7, ("ESI", "EBX"), ("ESI",)), c(40, ("EDI",), arg_mask=0b110, byref_arg_mask=0b100))),
        ),
        (
            "large entries (FE)",
            ebp.EbpTable(calls=(c(5000, ("ESI",), arg_mask=1), c(5300, ("EDI", "EBX"), arg_mask=1 << 20))),
        ),
        (
            "large with byrefs (FA)",
            ebp.EbpTable(calls=(c(3000, ("EDI", "ESI"), ("EDI",), arg_mask=0x30000, byref_arg_mask=0x20000),)),
        ),
        (
            "huge entries (FB)",
            ebp.EbpTable(calls=(c(5, ("EBX",), arg_offsets=(a(0), a(8, True))), c(0x30, (), arg_offsets=(a(4),)))),
        ),
        ("a `this` byte first (0bsd0000)", ebp.EbpTable(this_reg="ESI", calls=(c(12, ("ESI",)),))),
        (
            "every form in one table",
            ebp.EbpTable(
                this_reg="EBX",
                calls=(
                    c(3, ("EBX",)),
                    c(30, ("ESI",), arg_mask=3),
                    c(300, ("EDI",), arg_mask=0x800),
                    c(310, ("EBX",), ("EBX",)),
                    c(10000, ("ESI",), arg_mask=2),
                    c(10010, ("EDI",), ("EDI",), 4, 4),
                    c(10020, (), arg_offsets=(a(12, True),)),
                ),
            ),
        ),
    ]


def expected_sites(data: bytes, pos: int) -> tuple[str | None, list[Site]]:
    """gctoy's reading of the table at ``data[pos]``, in the lab's shape."""
    from gctoy.coreclr import InfoHdr
    from gctoy.coreclr import ptrtab_ebp as ebp

    table, _, _ = ebp.decode_table(data, pos, InfoHdr(ebp_frame=True))
    sites = []
    for call in table.calls:
        if call.arg_offsets is not None:
            pushed = frozenset((a.offset, a.interior) for a in call.arg_offsets)
        else:
            pushed = frozenset((4 * i, bool(call.byref_arg_mask >> i & 1)) for i in range(32) if call.arg_mask >> i & 1)
        sites.append(Site(call.offset, frozenset(call.regs), frozenset(call.byref_regs), pushed))
    return table.this_reg, sites


_FORMS = (
    (0xFF, "end"),
    (0xFB, "huge (FB)"),
    (0xFA, "large with byrefs (FA)"),
    (0xFE, "large (FE)"),
    (0xFD, "medium (FD)"),
    (0xF9, "medium with byrefs (F9)"),
)
_MIRROR = {"EDI": "EBX", "EBX": "EDI", "ESI": "ESI"}


def _form(first: int) -> str:
    for byte, name in _FORMS:
        if first == byte:
            return name
    if first >= 0x80:
        return "small (1DDDDDDD bsdAAAAA)"
    return "`this` (0bsd0000)" if not first & 0x0F else "tiny (0bsdDDDD)"


def _call_entries(data: bytes, pos: int) -> list[tuple[int, int]]:
    from gctoy.coreclr import InfoHdr
    from gctoy.coreclr import ptrtab_ebp as ebp

    _, items, _ = ebp.decode_table(data, pos, InfoHdr(ebp_frame=True))
    return [(e.start, e.end) for e in items if e.kind == "call"]


def _hex(data: bytes) -> str:
    return " ".join(f"{b:02X}" for b in data)


def _why(got: Site, want: Site, index: int, want_all: list[Site]) -> str:
    """The usual slips, recognised from what the student decoded."""
    if got.offset != want.offset:
        delta = want.offset - (want_all[index - 1].offset if index else 0)
        if got.offset == delta:
            return (
                "You returned the entry's own code delta. Each entry stores the distance from the previous call "
                "site (the seed: 'delta coding (i.e. code delta means offset from previously mentioned code "
                "offset)'); the offset of a site is the running sum of all deltas so far, starting at 0."
            )
        return (
            "The code offset is wrong: check which bits hold the delta in this form, and that you add it to "
            "the running offset (deltas accumulate from 0)."
        )
    if got.regs == want.interior_regs and got.interior_regs == want.regs and got.regs != want.regs:
        return (
            "Live and interior registers are swapped. In the one-byte register field 0BSD0bsd of the FE, FA and "
            "FB forms the low three bits (bsd) say which registers are live, the high three (BSD) which of them "
            "hold interior pointers; in F9 the live bits are in the third byte (bsdAAAAA) and the interior bits "
            "in the fourth (iiiIIIII)."
        )
    if (
        got.regs == frozenset(_MIRROR[r] for r in want.regs)
        and got.regs != want.regs
        or (
            got.interior_regs == frozenset(_MIRROR[r] for r in want.interior_regs)
            and got.interior_regs != want.interior_regs
        )
    ):
        return (
            "EDI and EBX are mirrored. The three register bits are written 'bsd': the highest is EBX (4), then "
            "ESI (2), the lowest EDI (1), as in the seed's 'b indicates that register EBX ...'."
        )
    if got.regs != want.regs or got.interior_regs != want.interior_regs:
        return (
            "The registers are wrong: find the bsd bits of this form (tiny: bits 6-4 of the byte; small: the "
            "top three bits of the second byte; FD: the top three of the fourth; F9: the top three of the third, "
            "interior ones in the fourth; FE/FA/FB: the byte 0BSD0bsd)."
        )
    if got.pushed != want.pushed:
        return (
            "The pushed pointer arguments are wrong. Bit i of the argument mask is the DWORD at [ESP + 4*i] "
            "(the seed: 'bit 0x1 corresponds to the parameter at offset 0, bit 0x2 offset 4'), so report byte "
            "offset 4*i; in FD the mask is the second byte plus the high nibble of the third as bits 8-11; the FB "
            "form lists byte offsets (Unsigned) whose bit 0 marks an interior pointer."
        )
    return "The site differs from the format's reading."


def _compare(decoder: Callable, data: bytes, pos: int, what: str) -> int:
    """Run the student's decoder on one table; LabFailure unless it reads what gctoy reads. Returns the site count."""
    this_want, want = expected_sites(data, pos)
    result = call_student(decoder, f"decoding {what} (bytes {_hex(data[pos : pos + 24])}...)", bytes(data), pos)
    try:
        this_got, got_raw = result
        got_raw = list(got_raw)
    except (TypeError, ValueError):
        raise LabFailure(f"{what}: decode_ebp_table must return (this_reg, sites), got {result!r}") from None
    got = [_normal_site(s, f"{what}, site {i}") for i, s in enumerate(got_raw)]
    if this_got != this_want:
        raise LabFailure(
            f"{what}: this_reg is {this_got!r}, but the table says {this_want!r}.\n"
            "A first byte of the form 0bsd0000 (low nibble zero, so it cannot be a tiny call entry, whose delta is "
            "never 0) says which register holds `this` (EBX 0x40, ESI 0x20, EDI 0x10); it is not a call site. "
            "Without it this_reg is None."
        )
    spans = _call_entries(data, pos)
    for index, (g, w) in enumerate(zip(got, want)):
        if g != w:
            start, end = spans[index]
            raise LabFailure(
                f"{what}: call site {index}, bytes {_hex(data[start:end])} (the {_form(data[start])} form):\n"
                f"  you decoded  {_show(g)}\n  the format says {_show(w)}\n{_why(g, w, index, want)}"
            )
    if len(got) != len(want):
        raise LabFailure(
            f"{what}: you decoded {len(got)} call sites, the table has {len(want)} (bytes {_hex(data[pos : pos + 40])}). "
            "Read entries until the 0xFF end byte; each form has a fixed length (tiny 1, small 2, FD 4, F9 4, "
            "FE 10, FA 14 bytes; FB 14 plus its table size), and a leading `this` byte is not a call site."
        )
    return len(want)


def _show(site: Site) -> str:
    pushed = ", ".join(f"[ESP+{o}]{' interior' if i else ''}" for o, i in sorted(site.pushed)) or "none"
    return (
        f"offset {site.offset:#x}, regs {sorted(site.regs)}, interior {sorted(site.interior_regs)}, "
        f"pushed pointers: {pushed}"
    )


def _program(seed: int) -> str:
    from gctoy.runtime.generated_programs import generated_program

    return generated_program(seed)


def _blobs(text: str) -> list[tuple[str, bytes, int]]:
    """(method, blob, pointer-table offset) of every method of ``text`` compiled with EBP frames and GC registers."""
    from gctoy.codegen.x86_32 import compile_module32
    from gctoy.coreclr import encode
    from gctoy.codegen.gcinfo32 import module_gcinfo
    from gctoy.coreclr.gcrefs import decoded_method
    from gctoy.ir import parse_module

    compiled = compile_module32(parse_module(text), frame="ebp", interruptible="never", gc_registers=3)
    out = []
    for name, info in module_gcinfo(compiled).items():
        blob = encode(info)
        out.append((name, blob, decoded_method(blob).pointer_table.start))
    return out


def _student_scan(decoder: Callable) -> Callable:
    """A replacement for ptrtab_ebp.scan that answers from the student's decoder (the runtime's query)."""
    from gctoy.coreclr.entries import PushedArg, PtrTableState

    def scan(data, offset, hdr, cur_offs, **_ignored):
        this_reg, sites = call_student(decoder, "the stack walker asked about a frame", bytes(data), offset)
        for site in sites:
            site = _normal_site(site, "in the stack walk")
            if site.offset == cur_offs:
                return PtrTableState(
                    live_regs=site.regs,
                    interior_regs=site.interior_regs,
                    pushed_args=tuple(PushedArg("ESP", o, i) for o, i in sorted(site.pushed)),
                    this_reg=this_reg,
                )
        return PtrTableState(this_reg=this_reg)

    return scan


def _run_with(decoder: Callable, text: str) -> tuple[Any, Any]:
    from gctoy.coreclr import ptrtab_ebp
    from gctoy.ir import parse_module
    from gctoy.runtime.run32 import run_module32

    reference = run_module32(parse_module(text))
    original = ptrtab_ebp.scan
    ptrtab_ebp.scan = _student_scan(decoder)
    try:
        result = run_module32(
            parse_module(text),
            gc="semispace",
            stress=True,
            verify=True,
            frame="ebp",
            interruptible="never",
            gc_registers=3,
        )
    except LabFailure:
        raise
    except Exception as error:
        raise LabFailure(
            f"With your decoder in the stack walker, the program failed under GC stress: {type(error).__name__}: "
            f"{error}\nA register or argument your decoder reports as a pointer does not hold one, or one it misses "
            "was not updated when its object moved."
        ) from None
    finally:
        ptrtab_ebp.scan = original
    return reference, result


def check(
    decoder: Callable, *, tables: bool = True, seeds: Iterable[int] = (11,), run_seed: int | None = 11
) -> LabReport:
    """Check ``decoder(data, pos) -> (this_reg, sites)`` against gctoy's decoder and in the runtime.

    ``tables``: decode the hand-made tables of every form; ``seeds``: the generated programs whose
    methods' tables are decoded; ``run_seed``: the program run on Unicorn with the decoder in the
    stack walker (None: no run).
    """
    from gctoy.coreclr import InfoHdr
    from gctoy.coreclr import ptrtab_ebp as ebp

    lines = []
    sites = 0
    hdr = InfoHdr(ebp_frame=True)
    hand_made = _tables() if tables else []
    for what, table in hand_made:
        data = b"\x00\x11" + ebp.encode_table(table, hdr)  # the table is not at offset 0 in a blob either
        sites += _compare(decoder, data, 2, f"table with {what}")
    if hand_made:
        lines.append(f"{len(hand_made)} tables written by gctoy's encoder, every form: {sites} call sites read right")
    blobs = real_sites = 0
    for seed in seeds:
        for name, blob, pos in _blobs(_program(seed)):
            real_sites += _compare(decoder, blob, pos, f"@{name} of generated program {seed} (table at byte {pos})")
            blobs += 1
    if blobs:
        lines.append(f"{blobs} GC-info blobs of compiled methods: {real_sites} call sites read right")
    if run_seed is not None:
        reference, result = _run_with(decoder, _program(run_seed))
        if result.printed != reference.printed:
            raise LabFailure(
                f"With your decoder in the stack walker, generated program {run_seed} printed {result.printed[:4]}... "
                f"under GC stress instead of {reference.printed[:4]}...: a pointer held in a register was not "
                "updated when its object moved."
            )
        lines.append(
            f"generated program {run_seed} on Unicorn with your decoder in the stack walker: "
            f"{result.stats.collections} collections, output as without GC"
        )
    return LabReport(NAME, lines)
