"""Lab of chapter 07: a parser of the StackMap v3 section, checked against ``llvm-readobj --stackmap``.

The student writes ``parse_stackmap(data: bytes) -> gctoy.stackmap.StackMap``: the header, the
function records, the constant pool and every record with its locations and live-outs, with the
format's padding rules.  :func:`check` runs it on several real sections:

* objects made by LLVM 14's ``llc`` (a stackmap, an ``anyregcc`` patchpoint with live-outs, and
  statepoints with deopt values, derived pointers, a vector of pointers and a large constant).
  Where LLVM 14 is installed ``llc`` and ``llvm-readobj`` run; elsewhere the objects and the text
  stored with gctoy (``gctoy.llvm_results``, chapter ``ch07``) are used;
* sections written by gctoy's own code generator and encoder, with gctoy's printer of gctoy's
  parse as the text to match (the chapter shows that printer equal to ``llvm-readobj``).

Then :func:`stress_run` loads an ``llc``-compiled object (chapter 09's list program, run through
RS4GC; made here where LLVM 14 is installed, stored with gctoy otherwise) with the student's parse
of its ``.llvm_stackmaps`` in place of gctoy's, and runs it under GC stress with the heap verifier:
the runtime's stack walk finds each frame's record and reads the base and derived slots from the
student's locations, so a misread location relocates the wrong stack word.

The student's result is printed with gctoy's ``format_stackmap`` and must give ``llvm-readobj``'s
text.  When it does not, the check walks the fields in file order and names the first one that
differs, with its byte offset in the section, both values and what that kind of mistake usually
means (most often: a record read from the wrong place because a padding rule was missed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..stackmap import StackMap, format_stackmap, parse, read_stackmap_section
from ..stackmap.format import record_size
from . import LabFailure, LabReport, call_student

__all__ = ["check", "samples", "Sample", "first_difference", "stress_object", "stress_run"]


@dataclass(frozen=True)
class Sample:
    """One section to parse: where it comes from, its bytes and the text ``llvm-readobj`` prints for it."""

    name: str
    origin: str
    data: bytes
    text: str


# --------------------------------------------------------------------------- the sections

#: LLVM-only input: a stackmap (register, alloca, constants, a large constant), an anyregcc patchpoint
#: (the only kind of record with live-outs) and a statepoint with a deopt value and an alloca in gc-live
LLVM_KINDS = """\
declare void @foo()
declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)

define i64 @smap(i64 %x, i64 %y) {
entry:
  %a = alloca i64
  store i64 %x, i64* %a
  %s = add i64 %x, %y
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 11, i32 0, i64 %s, i64* %a, i64 3, i64 -1, i64 4294967296, i32 -7)
  %r = add i64 %s, 1
  ret i64 %r
}

define i64 @ppoint(i64 %x, i64 %y) {
entry:
  %s = add i64 %x, %y
  %t = mul i64 %x, %y
  call anyregcc void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 12, i32 15, i8* null, i32 1, i64 %s)
  %r = add i64 %t, %s
  ret i64 %r
}

define i8 addrspace(1)* @sp_alloca(i8 addrspace(1)* %p, i64 %v) gc "statepoint-example" {
entry:
  %slot = alloca i8 addrspace(1)*
  store i8 addrspace(1)* %p, i8 addrspace(1)** %slot
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 99, i32 0, void ()* @foo, i32 0, i32 2, i32 0, i32 0) [ "deopt"(i64 %v), "gc-live"(i8 addrspace(1)* %p, i8 addrspace(1)** %slot) ]
  %p.rel = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %q = load i8 addrspace(1)*, i8 addrspace(1)** %slot
  ret i8 addrspace(1)* %p.rel
}
"""

#: statepoints that both LLVM 14 and gctoy compile: two functions, three records with 9, 7 and 4 locations
STATEPOINTS = """\
declare void @foo()
declare void @bar(i64)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64 immarg, i32 immarg, void (i64)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)

define i8 addrspace(1)* @one(i8 addrspace(1)* %p, i64 %n) gc "statepoint-example" {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %t1 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i64 %n, i32 -3), "gc-live"(i8 addrspace(1)* %p, i8 addrspace(1)* %d) ]
  %p1 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 0)
  %d1 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 1)
  %t2 = call token (i64, i32, void (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64 2, i32 0, void (i64)* @bar, i32 1, i32 0, i64 %n, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %p1, i8 addrspace(1)* %d1) ]
  %p2 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 0)
  %d2 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 1)
  store i8 1, i8 addrspace(1)* %d2
  ret i8 addrspace(1)* %p2
}

define void @two() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 3, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i64 12345678901) ]
  ret void
}
"""

#: LLVM-only: a vector of two references, recorded as 16-byte locations
VECTOR = """\
declare <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token, i32 immarg, i32 immarg)

define <2 x i8 addrspace(1)*> @vec(<2 x i8 addrspace(1)*> %v) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 5, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(<2 x i8 addrspace(1)*> %v) ]
  %v.rel = call coldcc <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %tok, i32 0, i32 0)
  ret <2 x i8 addrspace(1)*> %v.rel
}
"""


def _encoder_sample() -> StackMap:
    """Records that gctoy's code generator never writes: live-outs in even and odd numbers, then more records."""
    from ..stackmap import LiveOut, Location, LocationKind, StackMapRecord, StkSizeRecord

    reg, const = LocationKind.REGISTER, LocationKind.CONSTANT
    records = (
        StackMapRecord(21, 8, 0, (Location(reg, 8, 3, 0),), (LiveOut(0, 8), LiveOut(7, 8))),
        StackMapRecord(22, 16, 0, (Location(reg, 8, 12, 0), Location(const, 8, 0, -2)), (LiveOut(6, 8),)),
        StackMapRecord(23, 24, 0, (Location(LocationKind.INDIRECT, 8, 6, -24),), ()),
    )
    return StackMap(3, (StkSizeRecord(0x401000, 40, 2), StkSizeRecord(0x402000, 8, 1)), (), records)


def samples() -> list[Sample]:
    """The sections the lab is checked on, with the ``llvm-readobj --stackmap`` text of each."""
    from ..codegen import compile_module
    from ..ir import parse_module
    from ..llvm_results import LLVMResults
    from ..stackmap import emit

    llvm = LLVMResults("ch07")
    origin = "LLVM 14's llc, llvm-readobj run here" if llvm.installed else "LLVM 14's llc, stored llvm-readobj text"
    out = []
    try:
        for name, ir in (("lab-kinds", LLVM_KINDS), ("lab-statepoints", STATEPOINTS + VECTOR)):
            obj = llvm.llc_object(ir, name)
            out.append(Sample(f"{name}.o", origin, read_stackmap_section(obj), llvm.readobj_stackmap(obj)))
    finally:
        llvm.cleanup()
    own = "gctoy's code generator, gctoy's printer"
    compiled = emit(compile_module(parse_module(STATEPOINTS)).stackmap)
    out.append(Sample("gctoy: the statepoints", own, compiled, format_stackmap(parse(compiled))))
    encoded = emit(_encoder_sample())
    out.append(
        Sample(
            "gctoy: records with live-outs",
            "gctoy's encoder, gctoy's printer",
            encoded,
            format_stackmap(parse(encoded)),
        )
    )
    return out


# --------------------------------------------------------------------------- comparing field by field


def _fields(sm: Any) -> Iterator[tuple[str, Any, str]]:
    """(field name as the annotated hex dump names it, value, what it is) in file order; counts come first."""
    yield "Version", sm.version, "the version byte"
    yield "NumFunctions", len(sm.functions), "the number of function records"
    yield "NumConstants", len(sm.constants), "the number of large constants"
    yield "NumRecords", len(sm.records), "the number of records"
    for i, fn in enumerate(sm.functions):
        yield f"fn[{i}].FunctionAddress", fn.address, "a function's address"
        yield f"fn[{i}].StackSize", fn.stack_size, "a function's stack size"
        yield f"fn[{i}].RecordCount", fn.record_count, "a function's record count"
    for i, constant in enumerate(sm.constants):
        yield f"constant[{i}]", constant, "a large constant"
    for r, record in enumerate(sm.records):
        p = f"rec[{r}]"
        yield f"{p}.PatchPointID", record.id, "the record's ID"
        yield f"{p}.InstructionOffset", record.instruction_offset, "the record's instruction offset"
        yield f"{p}.Reserved", record.flags, "the record's flags (reserved) field"
        yield f"{p}.NumLocations", len(record.locations), "the number of locations"
        for n, loc in enumerate(record.locations, start=1):
            q = f"{p}.loc#{n}"
            yield f"{q}.Type", int(loc.kind), "a location's kind"
            yield f"{q}.Size", loc.size, "a location's size"
            yield f"{q}.DwarfRegNum", loc.dwarf_reg, "a location's DWARF register"
            yield f"{q}.Value", loc.offset_or_small_constant, "a location's offset or constant"
        yield f"{p}.NumLiveOuts", len(record.live_outs), "the number of live-outs"
        for n, live in enumerate(record.live_outs, start=1):
            yield f"{p}.liveout#{n}.DwarfRegNum", live.dwarf_reg, "a live-out's DWARF register"
            yield f"{p}.liveout#{n}.Size", live.size, "a live-out's size"


def _offsets(data: bytes) -> dict[str, int]:
    """Byte offset of each field of the section, under the names :func:`_fields` uses."""
    from ..viz.stackmap import annotated_hexdump

    offsets: dict[str, int] = {}
    for row in annotated_hexdump(data):
        name = row.field
        for value_name in (".Offset", ".SmallConstant", ".ConstantIndex"):
            if ".loc#" in name and name.endswith(value_name):
                name = name[: -len(value_name)] + ".Value"
        offsets.setdefault(name, row.offset)
    return offsets


def first_difference(data: bytes, given: Any) -> tuple[str, int, Any, Any, str] | None:
    """The first field (name, byte offset, value given, value in the section, what it is) that differs."""
    expected = parse(data)
    offsets = _offsets(data)
    theirs = _fields(expected)
    for (name, value, what), (_, given_value, _) in zip(theirs, _fields(given)):
        if value != given_value:
            return name, offsets.get(name, -1), given_value, value, what
    return None


def _misplaced_record(r: int, sm: StackMap) -> str:
    """Why record ``r`` (r >= 1) is misread when the records before it are right."""
    prev = sm.records[r - 1]
    n, m = len(prev.locations), len(prev.live_outs)
    return (
        f"Record {r - 1} came out right, so record {r} was read from the wrong offset. Every record is "
        "padded twice to an 8-byte boundary: after its locations (4 zero bytes when NumLocations is "
        "odd) and after its live-outs (4 zero bytes when NumLiveOuts is even, counting the 4-byte "
        f"padding+NumLiveOuts header). Record {r - 1} has {n} locations and {m} live-outs, so it "
        f"takes {record_size(n, m)} bytes."
    )


def _hint(name: str, given: Any, expected: Any, sm: StackMap) -> str:
    """What a first difference at ``name`` usually means."""
    if name.endswith(".NumLiveOuts") or ".liveout#" in name:
        r = int(name[4 : name.index("]")])
        n = len(sm.records[r].locations)
        pad = "4 zero bytes here, because NumLocations" if n % 2 else "no bytes here, because NumLocations"
        return (
            "The live-out part starts after the locations padded to an 8-byte boundary "
            f"({pad} = {n} is {'odd' if n % 2 else 'even'}: 16 + 12 x {n} = {16 + 12 * n}), then a u16 of "
            "padding, then the u16 NumLiveOuts."
        )
    if name.startswith("rec[") and name.endswith(".PatchPointID"):
        r = int(name[4 : name.index("]")])
        if r > 0:
            return _misplaced_record(r, sm)
        return (
            "The first record starts right after the function records (24 bytes each) and the "
            "constants (8 bytes each), which follow the 16-byte header."
        )
    if name.startswith("constant["):
        return "The constants start right after the function records, each a u64."
    if name.endswith(".Value"):
        if isinstance(given, int) and isinstance(expected, int) and given - expected == 2**32:
            return (
                "The field is a signed 32-bit integer (i32): a stack offset such as -8 is stored as "
                "0xfffffff8. (llvm-readobj prints a Constant as unsigned, but the field itself is signed.)"
            )
        return "The last 4 bytes of a location are an i32: an offset, a small constant or a pool index."
    if ".loc#" in name:
        return (
            "A location is 12 bytes: u8 kind, u8 reserved, u16 size, u16 DWARF register, u16 reserved, "
            "i32 offset or constant."
        )
    if name.startswith("fn["):
        return "A function record is three u64 fields: address, stack size, record count."
    if name.endswith((".InstructionOffset", ".Reserved", ".NumLocations")):
        return "A record header is u64 ID, u32 instruction offset, u16 flags (reserved), u16 NumLocations."
    return "The header is u8 version, u8 and u16 reserved, then u32 NumFunctions, NumConstants, NumRecords."


def _prefix(data: bytes, count: int) -> bytes:
    """The section cut after its first ``count`` records (every field kept at its byte offset)."""
    from ..stackmap import StkSizeRecord, emit

    sm = parse(data)
    left = count
    functions = []
    for fn in sm.functions:
        kept = min(fn.record_count, left)
        left -= kept
        functions.append(StkSizeRecord(fn.address, fn.stack_size, kept))
    return emit(StackMap(sm.version, tuple(functions), sm.constants, sm.records[:count]))


def _run(parse_stackmap: Callable[[bytes], Any], data: bytes, what: str) -> tuple[Any, LabFailure | None]:
    """The student's result, or the LabFailure of a crash (a skeleton's LabFailure is raised at once)."""
    try:
        return call_student(parse_stackmap, what, data), None
    except LabFailure as failure:
        if failure.__cause__ is None:
            raise
        return None, failure


def _explain(parse_stackmap: Callable[[bytes], Any], sample: Sample) -> LabFailure:
    """Find the first record the student misreads (parsing ever longer prefixes of the section) and say why."""
    expected = parse(sample.data)
    where = f"the section {sample.name} ({sample.origin})"
    for count in range(1, len(expected.records) + 1):
        data = sample.data if count == len(expected.records) else _prefix(sample.data, count)
        cut = "" if count == len(expected.records) else f" cut after its first {count} record(s)"
        given, crash = _run(parse_stackmap, data, f"parsing {where}{cut}")
        if crash is not None:
            start = _offsets(data).get(f"rec[{count - 1}].PatchPointID", -1)
            why = (
                _misplaced_record(count - 1, expected)
                if count > 1
                else "The first record starts right after the 16-byte header, the function records (24 bytes "
                "each) and the constants (8 bytes each)."
            )
            return LabFailure(
                f"parse_stackmap fails on {where}{cut}.\n  {crash}\n  The crash comes while "
                f"reading record {count - 1}, which starts at byte {start:#06x}.\n  {why}"
            )
        problem = _looks_like_a_stackmap(given)
        if problem:
            return LabFailure(f"parse_stackmap on {sample.name}: {problem}.")
        difference = first_difference(data, given)
        if difference is not None:
            name, offset, got, want, what = difference
            return LabFailure(
                f"parse_stackmap misreads {where}{cut}.\n"
                f"  First difference at byte {offset:#06x}, field {name} ({what}): you read {got!r}, "
                f"llvm-readobj reads {want!r}.\n"
                f"  {_hint(name, got, want, expected)}"
            )
    given, crash = _run(parse_stackmap, sample.data, f"parsing {where}")
    return crash or LabFailure(f"parse_stackmap misreads {where}.")


def _first_line_difference(ours: str, theirs: str) -> str:
    for n, (a, b) in enumerate(zip(ours.splitlines(), theirs.splitlines()), start=1):
        if a != b:
            return f"line {n}: llvm-readobj prints {b.strip()!r}, your parse prints {a.strip()!r}"
    return f"llvm-readobj prints {len(theirs.splitlines())} lines, your parse {len(ours.splitlines())}"


def _looks_like_a_stackmap(value: Any) -> str | None:
    """Why ``value`` cannot be compared as a StackMap (None when it can)."""
    try:
        list(_fields(value))
    except (AttributeError, TypeError, ValueError) as error:
        return (
            f"it returned a {type(value).__name__}, which is not shaped like gctoy.stackmap.StackMap "
            f"({error}); build the result from StackMap, StkSizeRecord, StackMapRecord, Location and LiveOut"
        )
    return None


# --------------------------------------------------------------------------- the GC-stress run


def stress_object() -> tuple[bytes, str]:
    """Chapter 09's list program (a derived pointer live across its calls) through RS4GC and LLVM 14's
    ``llc``: the object's bytes and where they come from (llc run here, or the object stored with gctoy)."""
    from ..llvm_results import LLVMResults
    from ..runtime.trace import LIST3, prepare_module

    llvm = LLVMResults("ch07")
    try:
        obj = llvm.llc_object(str(prepare_module(LIST3)), "lab-stress")
        data = obj.read_bytes()
    finally:
        llvm.cleanup()
    return data, "LLVM 14's llc, run here" if llvm.installed else "LLVM 14's llc, the object stored with gctoy"


def _stress_failure(what: str, section: bytes, given: Any, origin: str) -> LabFailure:
    intro = (
        "With your parse of its stack map plugged into the runtime's stack walk, chapter 09's list program "
        f"(compiled by {origin}) {what}"
    )
    difference = None if _looks_like_a_stackmap(given) else first_difference(section, given)
    if difference is None:
        return LabFailure(intro)
    name, offset, got, want, kind = difference
    return LabFailure(
        f"{intro}\n  The collector found its roots where your parse says they are. First difference at byte "
        f"{offset:#06x}, field {name} ({kind}): you read {got!r}, llvm-readobj reads {want!r}.\n"
        f"  {_hint(name, got, want, parse(section))}"
    )


def stress_run(parse_stackmap: Callable[[bytes], Any]) -> tuple[str, int, int]:
    """Load an llc-compiled object with the student's parse of its ``.llvm_stackmaps`` in place of gctoy's,
    and run it under GC stress with the heap verifier: the stack walk finds each frame's record by return
    address and reads the base and derived slots from its locations.

    Returns (where the object comes from, collections, slots rewritten); raises LabFailure when the run
    fails or prints other numbers than with gctoy's parse.
    """
    from dataclasses import replace

    from ..runtime.elfload import STACKMAP_SECTION, load_object
    from ..runtime.run import Runtime

    data, origin = stress_object()
    loaded = load_object(data)
    section = loaded.image.sections[STACKMAP_SECTION]  # as the loader relocated it: the functions' addresses
    with Runtime(loaded, stress=True, verify=True) as runtime:
        reference = runtime.run()
    given, crash = _run(parse_stackmap, section, "parsing the stack map of chapter 09's list program")
    if crash is not None:
        raise _explain(parse_stackmap, Sample("chapter 09's list program", origin, section, ""))
    try:
        with Runtime(replace(loaded, stackmap=given), stress=True, verify=True) as runtime:
            result = runtime.run()
    except LabFailure:
        raise
    except Exception as error:  # a stack walk that finds no record, a heap the verifier rejects, a wild read
        raise _stress_failure(
            f"failed under GC stress: {type(error).__name__}: {error}", section, given, origin
        ) from None
    if (result.printed, result.result) != (reference.printed, reference.result):
        raise _stress_failure(
            f"printed {result.printed} and returned {result.result} under GC stress, but {reference.printed} and "
            f"{reference.result} with gctoy's parse.",
            section,
            given,
            origin,
        )
    return origin, result.stats.gc.collections, result.stats.gc.slots_moved


# --------------------------------------------------------------------------- the check


def check(parse_stackmap: Callable[[bytes], Any], sections: list[Sample] | None = None) -> LabReport:
    """Run ``parse_stackmap`` on every sample section and compare it with ``llvm-readobj``, field by field."""
    sections = samples() if sections is None else sections
    totals = {"functions": 0, "constants": 0, "records": 0, "locations": 0, "live-outs": 0}
    padded_locations = padded_live_outs = 0
    origins: dict[str, int] = {}
    for sample in sections:
        expected = parse(sample.data)
        given, crash = _run(parse_stackmap, sample.data, f"parsing the section {sample.name}")
        if crash is not None or _looks_like_a_stackmap(given) or first_difference(sample.data, given) is not None:
            raise _explain(parse_stackmap, sample)
        try:
            text = format_stackmap(given)
        except Exception as error:  # a value of the wrong type inside the right shape
            raise LabFailure(
                f"gctoy's printer cannot print your parse of {sample.name}: {type(error).__name__}: {error}"
            ) from None
        if text != sample.text:
            raise LabFailure(
                f"parse_stackmap on {sample.name} ({sample.origin}): the fields match but the text "
                f"does not; {_first_line_difference(text, sample.text)}"
            )
        origins[sample.origin] = origins.get(sample.origin, 0) + 1
        totals["functions"] += len(expected.functions)
        totals["constants"] += len(expected.constants)
        totals["records"] += len(expected.records)
        for record in expected.records:
            totals["locations"] += len(record.locations)
            totals["live-outs"] += len(record.live_outs)
            padded_locations += len(record.locations) % 2
            padded_live_outs += 1 - len(record.live_outs) % 2
    lines = [f"{len(sections)} sections, equal to llvm-readobj --stackmap field by field:"]
    lines += [f"  {count} from {origin}" for origin, count in origins.items()]
    lines.append(", ".join(f"{count} {what}" for what, count in totals.items()))
    lines.append(
        f"padding read correctly after the locations of {padded_locations} records "
        f"and after the live-outs of {padded_live_outs}"
    )
    origin, collections, moved = stress_run(parse_stackmap)
    lines.append(
        f"your parse as the runtime's stack map for chapter 09's list program ({origin}): GC stress, "
        f"{collections} collections, {moved} root and derived slots rewritten, heap verified after each, "
        "same output as with gctoy's parse"
    )
    return LabReport("stackmap_parser", lines)
