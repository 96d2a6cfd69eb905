"""Lab (chapter 13): the Unsigned and Signed number encodings of CoreCLR's x86 GC info.

The student writes four functions with the contracts of `gctoy.coreclr.codecs`::

    encode_unsigned(value) -> bytes             0 <= value <= 0xFFFFFFFF, shortest form
    decode_unsigned(data, offset=0) -> (value, next_offset)
    encode_signed(value) -> bytes               -2**31 <= value <= 2**31 - 1, shortest form
    decode_signed(data, offset=0) -> (value, next_offset)

`check` compares them with gctoy's codecs on boundary and random values (byte for byte, and
decoding in the middle of a buffer), then plugs them into gctoy's real GC-info encoder and
decoder -- every module of `gctoy.coreclr` that writes or reads an Unsigned, a Signed or a UDelta
calls the student's functions for the duration of the check -- and writes and reads the GC info
of a few methods: the blobs must be byte-identical to gctoy's, and decoding them must give back
the methods and the same gcdump text.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import Callable, Iterator

from ..coreclr import codecs as _codecs
from ..coreclr.gcdump import gcdump as _gcdump_text
from ..coreclr import method as _method
from ..coreclr.header import InfoHdr, decode_header, encode_header
from ..coreclr.info_tables import Lifetime, UntrackedSlot
from ..coreclr.ptrtab_ebp import CallSite, EbpTable
from ..coreclr.ptrtab_esp import Call, EspTable, Pop, Push
from ..coreclr.ptrtab_full import FullTable, PushPtr, RegDead, RegLive
from ..coreclr.ptrtab_full import Pop as FullPop
from . import LabFailure, LabReport, call_student

__all__ = ["check", "UNSIGNED_VALUES", "SIGNED_VALUES", "sample_methods", "student_codecs"]

# gctoy's own codecs, bound now: `student_codecs` replaces the module attributes while it runs
_ENCODE_UNSIGNED = _codecs.encode_unsigned
_DECODE_UNSIGNED = _codecs.decode_unsigned
_ENCODE_SIGNED = _codecs.encode_signed
_DECODE_SIGNED = _codecs.decode_signed

_BOUNDARY_UNSIGNED = (
    0,
    1,
    63,
    64,
    127,
    128,
    129,
    255,
    0x123,
    0x1234,
    16383,
    16384,
    (1 << 21) - 1,
    1 << 21,
    (1 << 28) - 1,
    1 << 28,
    2**31 - 1,
    2**31,
    0xFFFFFFFF,
)
_BOUNDARY_SIGNED = (
    0,
    1,
    -1,
    8,
    -4,
    -17,
    63,
    -63,
    64,
    -64,
    65,
    -65,
    100,
    -100,
    127,
    -127,
    128,
    -128,
    8191,
    -8191,
    8192,
    -8192,
    (1 << 20) - 1,
    -(1 << 20),
    2**31 - 1,
    -(2**31),
    -(2**31 - 1),
)


def _random_values(seed: int, low: int, high: int, count: int) -> tuple[int, ...]:
    rng = random.Random(seed)
    # spread over every length: a random bit width, then a random value of that width
    out = []
    for _ in range(count):
        bits = rng.randint(1, 32)
        out.append(max(low, min(high, rng.getrandbits(bits) * rng.choice((1, -1) if low < 0 else (1,)))))
    return tuple(out)


UNSIGNED_VALUES = _BOUNDARY_UNSIGNED + _random_values(13, 0, 0xFFFFFFFF, 60)
SIGNED_VALUES = _BOUNDARY_SIGNED + _random_values(14, -(2**31), 2**31 - 1, 60)


def _hex(data: object) -> str:
    if isinstance(data, (bytes, bytearray)):
        return " ".join(f"{b:02X}" for b in data) or "(no bytes)"
    return repr(data)


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
SOS_HEADER = bytes.fromhex("D4 8C C7 AA 93 F3 40 05")


# --------------------------------------------------------------------------- plugging in


@contextlib.contextmanager
def student_codecs(
    encode_unsigned: Callable | None = None,
    decode_unsigned: Callable | None = None,
    encode_signed: Callable | None = None,
    decode_signed: Callable | None = None,
) -> Iterator[int]:
    """Within the block, every ``gctoy.coreclr`` module calls the given functions instead of its own.

    Yields the number of module attributes replaced. ``codecs`` itself is patched too, so UDelta
    (an Unsigned added to a running value) goes through the student's Unsigned.
    """
    import gctoy.coreclr as package

    wanted = {
        name: fn
        for name, fn in (
            ("encode_unsigned", encode_unsigned),
            ("decode_unsigned", decode_unsigned),
            ("encode_signed", encode_signed),
            ("decode_signed", decode_signed),
        )
        if fn is not None
    }
    originals = {
        "encode_unsigned": _ENCODE_UNSIGNED,
        "decode_unsigned": _DECODE_UNSIGNED,
        "encode_signed": _ENCODE_SIGNED,
        "decode_signed": _DECODE_SIGNED,
    }
    # the modules already loaded: the encoder and decoder the check runs import all they use up front
    modules = [
        module
        for name, module in sorted(sys.modules.items())
        if module is not None and (name == package.__name__ or name.startswith(package.__name__ + "."))
    ]
    saved = []
    try:
        for module in modules:
            for name, fn in wanted.items():
                if getattr(module, name, None) is originals[name]:
                    saved.append((module, name))
                    setattr(module, name, fn)
        yield len(saved)
    finally:
        for module, name in saved:
            setattr(module, name, originals[name])


# --------------------------------------------------------------------------- the checks


def _why_unsigned(value: int, got: object) -> str:
    want = _ENCODE_UNSIGNED(value)
    lines = [f"encode_unsigned({value}) gave {_hex(got)}; the format writes {_hex(want)}."]
    if isinstance(got, (bytes, bytearray)):
        if len(want) > 1 and got and got[0] == (value & 0x7F) | 0x80:
            lines.append(
                "The groups are in the wrong order: an Unsigned stores the MOST significant 7-bit group "
                "first (seed 002: 'The bytes are stored most- to least-significant'), unlike LEB128."
            )
        elif len(got) != len(want):
            lines.append(
                f"Each byte carries 7 bits of the value; {value} needs {len(want)} byte(s), and the "
                "encoder writes the shortest form."
            )
        elif got and any(b & 0x80 for b in got[-1:]) or any(not b & 0x80 for b in got[:-1]):
            lines.append("Bit 7 (0x80) is set on every byte except the last: it means 'another byte follows'.")
    return "\n".join(lines)


def _why_signed(value: int, got: object) -> str:
    want = _ENCODE_SIGNED(value)
    lines = [f"encode_signed({value}) gave {_hex(got)}; the format writes {_hex(want)}."]
    if isinstance(got, (bytes, bytearray)) and got:
        try:
            read, end = _DECODE_SIGNED(bytes(got))
            lines.append(
                f"gctoy's decoder (CoreCLR's rule) reads your bytes as {read}"
                + ("" if end == len(got) else f", and stops after {end} of them")
                + "."
            )
        except Exception as error:  # noqa: BLE001 - any malformed encoding is explained the same way
            lines.append(f"gctoy's decoder cannot read your bytes: {error}.")
        magnitude = abs(value)
        if len(got) == 1 and 64 <= magnitude <= 127:
            lines.append(
                "The first byte of a Signed has bit 7 for 'more' and bit 6 for the sign, so it holds only 6 bits "
                f"of magnitude (0..63); {value} needs 7, so it takes two bytes: that is the format (seed 002: "
                "'One byte can thus encode the numbers -63 (0x7f) to 63 (0x3F)'), not a quirk of one encoder."
            )
        elif value < 0 and not got[0] & 0x40:
            lines.append(
                "The sign is bit 6 (0x40) of the FIRST byte; the magnitude is stored, not the two's "
                "complement (-4 is the magnitude 4 with the sign bit set)."
            )
        elif value >= 0 and got[0] & 0x40:
            lines.append(
                "Bit 6 (0x40) of the first byte is the sign: a non-negative value must leave it clear, "
                "so its top group may use only bits 5..0."
            )
    return "\n".join(lines)


def _check_encoder(
    name: str, student: Callable, values: tuple[int, ...], reference: Callable, why: Callable[[int, object], str]
) -> int:
    for value in values:
        got = call_student(student, f"encoding {value}", value)
        if not isinstance(got, (bytes, bytearray)):
            raise LabFailure(f"{name}({value}) must return bytes, not {type(got).__name__} ({got!r}).")
        if bytes(got) != reference(value):
            raise LabFailure(why(value, got))
    return len(values)


def _check_decoder(name: str, student: Callable, values: tuple[int, ...], reference: Callable) -> int:
    checked = 0
    for i, value in enumerate(values):
        data = reference(value)
        prefix = bytes([0xFF, 0x80, 0xC1][: i % 3])  # junk before: the decoder must start at offset
        suffix = bytes([0x85, 0x7F])  # more bytes after: it must stop at the right one
        buffer = prefix + data + suffix
        result = call_student(
            student, f"decoding {_hex(data)} at offset {len(prefix)} of {_hex(buffer)}", buffer, len(prefix)
        )
        if not (isinstance(result, tuple) and len(result) == 2):
            raise LabFailure(f"{name} must return a pair (value, next_offset), got {result!r}.")
        got, end = result
        if got != value:
            raise LabFailure(
                f"{name}({_hex(buffer)}, offset={len(prefix)}) read {got!r}; the bytes {_hex(data)} hold {value}."
                + (
                    "\nThe sign is bit 6 of the first byte only; the magnitude is 6 bits from the first byte, then 7 "
                    "from each following byte, most significant first, and the result is negated when the sign "
                    "bit is set."
                    if name == "decode_signed"
                    else "\nEach byte gives 7 bits, most significant first: value = value << 7 | (byte & 0x7F), "
                    "until a byte without bit 7."
                )
            )
        if end != len(prefix) + len(data):
            raise LabFailure(
                f"{name}({_hex(buffer)}, offset={len(prefix)}) returned next_offset {end}; the number ends after "
                f"{len(data)} byte(s), at offset {len(prefix) + len(data)}. The last byte of a number is the first "
                "one without bit 7 (0x80), and next_offset is the index just after it."
            )
        checked += 1
    return checked


def _check_in_gctoy(enc_u: Callable, dec_u: Callable, enc_s: Callable, dec_s: Callable) -> list[str]:
    methods = sample_methods()
    expected = [(what, m, _method.encode(m), _gcdump_text(_method.encode(m))) for what, m in methods]
    header_ref = decode_header(SOS_HEADER, 5)
    total = 0
    with student_codecs(encode_unsigned=enc_u, encode_signed=enc_s) as patched:
        for what, m, blob, _ in expected:
            mine = call_student(_method.encode, f"gctoy's encoder wrote the GC info of {what} with your encoders", m)
            if mine != blob:
                first = next((i for i, (a, b) in enumerate(zip(mine, blob)) if a != b), min(len(mine), len(blob)))
                raise LabFailure(
                    f"With your encoders plugged in, gctoy wrote the GC info of {what} as {len(mine)} bytes; its "
                    f"own codecs write {len(blob)}. The first difference is at byte {first:#x}: yours "
                    f"{_hex(mine[first : first + 4])}, gctoy's {_hex(blob[first : first + 4])}."
                )
            total += len(blob)
        if encode_header(header_ref[0], 5) != SOS_HEADER:
            raise LabFailure(
                "With your encoders plugged in, the SOS sample header of chapter 13 is not written "
                f"as {_hex(SOS_HEADER)}: its trailing untracked count is an Unsigned."
            )
    with student_codecs(decode_unsigned=dec_u, decode_signed=dec_s):
        for what, m, blob, dump in expected:
            back = call_student(_method.decode, f"gctoy's decoder read the GC info of {what} with your decoders", blob)
            if back != m:
                diff = [
                    name
                    for name in ("method_size", "header", "epilogs", "untracked", "lifetimes", "pointer_table")
                    if getattr(back, name) != getattr(m, name)
                ]
                raise LabFailure(
                    f"With your decoders plugged in, gctoy read the GC info of {what} ({len(blob)} bytes) wrongly: "
                    f"{', '.join(diff)} differ. For example {diff[0]}: {getattr(back, diff[0])!r}\n"
                    f"  should be {getattr(m, diff[0])!r}."
                )
            if call_student(_gcdump_text, f"printing {what} with gcdump", blob) != dump:
                raise LabFailure(f"With your decoders plugged in, gcdump prints {what} differently.")
        if call_student(decode_header, "reading the SOS header", SOS_HEADER, 5) != header_ref:
            raise LabFailure("With your decoders plugged in, the SOS sample header of chapter 13 reads differently.")
    counts = {
        "untracked": sum(len(m.untracked) for _, m in methods),
        "lifetimes": sum(len(m.lifetimes) for _, m in methods),
    }
    return [
        f"{len(methods)} methods' GC info ({total} bytes) written with your encoders: identical to gctoy's; "
        f"your encoders stood in for gctoy's in {patched} places",
        f"the same blobs read back with your decoders: {len(methods)} headers, {counts['untracked']} untracked "
        f"slots, {counts['lifetimes']} lifetimes, every pointer table and gcdump line as gctoy reads them",
    ]


def check(
    encode_unsigned: Callable[[int], bytes],
    decode_unsigned: Callable[..., tuple[int, int]],
    encode_signed: Callable[[int], bytes],
    decode_signed: Callable[..., tuple[int, int]],
) -> LabReport:
    """Grade the four codecs: against gctoy's, then inside gctoy's GC-info encoder and decoder."""
    for name, fn in (
        ("encode_unsigned", encode_unsigned),
        ("decode_unsigned", decode_unsigned),
        ("encode_signed", encode_signed),
        ("decode_signed", decode_signed),
    ):
        if getattr(fn, "__module__", None) == _codecs.__name__:
            raise LabFailure(
                f"{name} is gctoy's own function ({_codecs.__name__}.{fn.__name__}): the lab asks for "
                "yours. Define it in the lab cell (gctoy's codecs are what yours are compared with)."
            )
    n_eu = _check_encoder("encode_unsigned", encode_unsigned, UNSIGNED_VALUES, _ENCODE_UNSIGNED, _why_unsigned)
    n_du = _check_decoder("decode_unsigned", decode_unsigned, UNSIGNED_VALUES, _ENCODE_UNSIGNED)
    n_es = _check_encoder("encode_signed", encode_signed, SIGNED_VALUES, _ENCODE_SIGNED, _why_signed)
    n_ds = _check_decoder("decode_signed", decode_signed, SIGNED_VALUES, _ENCODE_SIGNED)
    for value in UNSIGNED_VALUES:
        data = call_student(encode_unsigned, f"encoding {value}", value)
        if call_student(decode_unsigned, f"decoding {_hex(data)}", data, 0) != (value, len(data)):
            raise LabFailure(f"decode_unsigned(encode_unsigned({value})) does not give back ({value}, {len(data)}).")
    for value in SIGNED_VALUES:
        data = call_student(encode_signed, f"encoding {value}", value)
        if call_student(decode_signed, f"decoding {_hex(data)}", data, 0) != (value, len(data)):
            raise LabFailure(f"decode_signed(encode_signed({value})) does not give back ({value}, {len(data)}).")
    lines = [
        f"Unsigned: {n_eu} values (0 .. 2**32-1) encoded byte for byte as gctoy does, {n_du} decoded "
        "from the middle of a buffer",
        f"Signed: {n_es} values (-2**31 .. 2**31-1, with 63/64 and -64/-65) encoded as gctoy does, "
        f"{n_ds} decoded from the middle of a buffer",
        f"round trips: {len(UNSIGNED_VALUES) + len(SIGNED_VALUES)} values through your encoder and decoder",
    ]
    lines += _check_in_gctoy(encode_unsigned, decode_unsigned, encode_signed, decode_signed)
    return LabReport("gctoy.labs.codecs", lines)
