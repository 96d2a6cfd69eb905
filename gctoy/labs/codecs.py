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
the methods and the same gcdump text. Last, :func:`stress_run` compiles an x86-32 program whose GC
info the student's encoders write and runs it under GC stress (``gctoy.runtime.run32``, a
collection at every call into the runtime, the heap verifier after each) with the student's
decoders reading that GC info at every stack walk: a codec that misreads an offset sends the
collector to the wrong stack slot.
"""

from __future__ import annotations

import contextlib
import functools
import random
import sys
from collections.abc import Callable, Iterator

from ..coreclr import codecs as _codecs
from ..coreclr.gcdump import gcdump as _gcdump_text
from ..coreclr import method as _method
from ..coreclr.header import decode_header, encode_header
from . import LabFailure, LabReport, call_student
from .codecs_methods import sample_methods

__all__ = [
    "check",
    "UNSIGNED_VALUES",
    "SIGNED_VALUES",
    "sample_methods",
    "student_codecs",
    "stress_run",
    "STRESS_PROGRAM",
]

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


# --------------------------------------------------------------------------- the GC-stress run

_P = "i8 addrspace(1)*"
_PP = f"{_P} addrspace(1)*"

#: An x86-32 program for the stress run: a pointer in an alloca of 4 (untracked slots, the first
#: written as the Signed 95, two bytes) and in one of 24 (a method longer than 127 bytes: Unsigned
#: code offsets of two bytes), an interior pointer, and a chain of frames each holding a box;
#: compiled with EBP frames (negative offsets) and with ESP frames (the pointer tables' pushes and pops)
STRESS_PROGRAM = f"""
declare {_P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @interior(i64 %k) {{
entry:
  %o = call {_P} @gc_alloc(i64 4, i64 0)
  %b = bitcast {_P} %o to i64 addrspace(1)*
  %f = getelementptr i64, i64 addrspace(1)* %b, i64 %k
  store i64 4242, i64 addrspace(1)* %f
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %f
  ret i64 %v
}}

define {_P} @deep(i64 %n, {_P} %keep) {{
entry:
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %down
bottom:
  call void @gc_collect()
  ret {_P} %keep
down:
  %box = call {_P} @gc_alloc(i64 2, i64 2)
  %slot = getelementptr i8, {_P} %box, i64 8
  %pslot = bitcast {_P} %slot to {_PP}
  store {_P} %keep, {_PP} %pslot
  %n1 = sub i64 %n, 1
  %r = call {_P} @deep(i64 %n1, {_P} %box)
  %again = load {_P}, {_PP} %pslot
  %same = icmp eq {_P} %again, %keep
  %t = select i1 %same, {_P} %r, {_P} null
  ret {_P} %t
}}

define i64 @locals(i64 %k) {{
entry:
  %arr = alloca [4 x {_P}]
  %o = call {_P} @gc_alloc(i64 1, i64 0)
  %ob = bitcast {_P} %o to i64 addrspace(1)*
  store i64 %k, i64 addrspace(1)* %ob
  %s2 = getelementptr [4 x {_P}], [4 x {_P}]* %arr, i64 0, i64 2
  store {_P} %o, {_P}* %s2
  call void @gc_collect()
  %o2 = load {_P}, {_P}* %s2
  %ob2 = bitcast {_P} %o2 to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %ob2
  ret i64 %v
}}

define i64 @wide(i64 %k) {{
entry:
  %arr = alloca [24 x {_P}]
  %o = call {_P} @gc_alloc(i64 1, i64 0)
  %ob = bitcast {_P} %o to i64 addrspace(1)*
  store i64 %k, i64 addrspace(1)* %ob
  %s2 = getelementptr [24 x {_P}], [24 x {_P}]* %arr, i64 0, i64 20
  store {_P} %o, {_P}* %s2
  call void @gc_collect()
  %o2 = load {_P}, {_P}* %s2
  %ob2 = bitcast {_P} %o2 to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %ob2
  ret i64 %v
}}

define i64 @main() {{
entry:
  %l = call i64 @locals(i64 31)
  call void @print_i64(i64 %l)
  %w = call i64 @wide(i64 32)
  call void @print_i64(i64 %w)
  %a = call i64 @interior(i64 1)
  call void @print_i64(i64 %a)
  %leaf = call {_P} @gc_alloc(i64 1, i64 0)
  %lb = bitcast {_P} %leaf to i64 addrspace(1)*
  store i64 99, i64 addrspace(1)* %lb
  %top = call {_P} @deep(i64 4, {_P} %leaf)
  %isnull = icmp eq {_P} %top, null
  %flag = zext i1 %isnull to i64
  call void @print_i64(i64 %flag)
  %v = load i64, i64 addrspace(1)* %lb
  call void @print_i64(i64 %v)
  ret i64 7
}}
"""

STRESS_FRAMES = ("ebp", "esp")


class _Watched:
    """One of the student's codecs, with the first answer that differs from gctoy's remembered."""

    def __init__(self, name: str, student: Callable, reference: Callable) -> None:
        self.name, self.student, self.reference = name, student, reference
        self.calls = 0
        self.first_wrong: tuple[tuple, object, object] | None = None

    def __call__(self, *args):
        self.calls += 1
        got = self.student(*args)
        if self.first_wrong is None:
            try:
                want = self.reference(*args)
            except Exception as error:  # gctoy's codec refuses the input: an earlier misread led here
                want = error
            if got != want:
                self.first_wrong = (args, got, want)
        return got

    def explain(self) -> str:
        if self.first_wrong is None:
            return ""
        args, got, want = self.first_wrong
        if self.name.startswith("encode"):
            why = (_why_unsigned if self.name == "encode_unsigned" else _why_signed)(args[0], got)
            return f"\n  The first wrong answer: {why}"
        data, offset = (args + (0,))[:2]
        return (
            f"\n  The first wrong answer: {self.name}({_hex(bytes(data[offset : offset + 6]))}..., offset {offset}) "
            f"gave {got!r}; the format reads {want!r}."
        )


@functools.cache
def _reference_run(frame: str) -> tuple[list[int], int]:
    """What :data:`STRESS_PROGRAM` prints and returns under GC stress with gctoy's own codecs."""
    from ..ir import parse_module
    from ..runtime.run32 import run_module32

    done = run_module32(parse_module(STRESS_PROGRAM), gc="semispace", stress=True, verify=True, frame=frame)
    return list(done.printed), done.result


def stress_run(enc_u: Callable, dec_u: Callable, enc_s: Callable, dec_s: Callable) -> list[str]:
    """Compile :data:`STRESS_PROGRAM` to x86-32 with the student's encoders writing its GC info, and run it
    under GC stress (a collection at every call into the runtime) with the student's decoders reading
    that GC info at every stack walk, and the heap verifier after every collection."""
    import gctoy.codegen.gcinfo32  # noqa: F401  (loaded now, so that student_codecs reaches them)
    import gctoy.coreclr.gcrefs as gcrefs
    import gctoy.coreclr.section  # noqa: F401
    from ..ir import parse_module
    from ..runtime.run32 import run_module32

    lines = []
    for frame in STRESS_FRAMES:
        reference = _reference_run(frame)
        watched = [
            _Watched("encode_unsigned", enc_u, _ENCODE_UNSIGNED),
            _Watched("decode_unsigned", dec_u, _DECODE_UNSIGNED),
            _Watched("encode_signed", enc_s, _ENCODE_SIGNED),
            _Watched("decode_signed", dec_s, _DECODE_SIGNED),
        ]
        intro = (
            f"With your codecs in gctoy's x86-32 GC-info encoder (when the program is compiled, {frame.upper()} "
            "frames) and decoder (at every stack walk), the lab's program"
        )
        gcrefs.forget_decoded_methods()
        try:
            with student_codecs(*watched):
                result = run_module32(
                    parse_module(STRESS_PROGRAM), gc="semispace", stress=True, verify=True, frame=frame
                )
        except LabFailure:
            raise
        except Exception as error:  # a blob the decoder cannot read, a wrong root, a heap the verifier rejects
            raise LabFailure(
                f"{intro} failed under GC stress: {type(error).__name__}: {error}"
                + "".join(w.explain() for w in watched)
            ) from None
        finally:
            gcrefs.forget_decoded_methods()
        if (list(result.printed), result.result) != reference:
            raise LabFailure(
                f"{intro} printed {result.printed} and returned {result.result} under GC stress, but "
                f"{reference[0]} and {reference[1]} with gctoy's codecs: a root was read from the wrong "
                "place, so the collector moved an object and left a stale pointer behind."
                + "".join(w.explain() for w in watched)
            )
        calls = sum(w.calls for w in watched)
        lines.append(
            f"x86-32 under GC stress ({frame.upper()} frames): {result.stats.gc.collections} collections, "
            f"roots found through your codecs ({calls} calls), heap verified after each, output {result.printed}"
        )
    return lines


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
    lines += stress_run(encode_unsigned, decode_unsigned, encode_signed, decode_signed)
    return LabReport("gctoy.labs.codecs", lines)
