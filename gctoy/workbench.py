"""The workbench: a reader's own IR or assembly, through gctoy's pipeline, into panes a view can show.

Two modes, both computed here without Jupyter (``gctoy.widgets.workbench`` only renders them):

* **IR**: parse and verify the text, run the chosen passes (each stage's IR and its diff with the
  one before), lower to x86-64 (or to x86-32 with CoreCLR-style GC info), list the machine code
  with Capstone next to the bytes, link every stack-map record to its call, and run ``@main`` on
  Unicorn under the moving collector, recording the states a ``SafepointStepper`` shows.
* **assembly**: assemble the text with Keystone in a child process (time and memory limits, and
  only the directives that do not touch the file system), show each line's bytes and Capstone's
  reading of them, and single-step the code on Unicorn, recording the registers after each step.

Nothing here raises for bad input: every result carries at most one :class:`Problem` (the stage,
a message and, where one is known, the line and column in the reader's text: for a run that stops,
those of the IR instruction the guest was executing, see :mod:`gctoy.workbench_source`), and the
panes computed before the problem are kept.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from gctoy.errors import GCToyError, IRParseError
from gctoy.workbench_source import locate, run_place, statement_places

__all__ = [
    "PIPELINE_STEPS",
    "TARGETS",
    "Problem",
    "Stage",
    "CodeLine",
    "RecordLink",
    "RunOutcome",
    "IRResult",
    "AsmStep",
    "AsmResult",
    "run_ir",
    "run_assembly",
]

#: The pipeline steps a reader can pick, in the order they run, and what each runs.
PIPELINE_STEPS = {
    "place-safepoints": "place-safepoints",
    "rewrite-statepoints-for-gc": "rewrite-statepoints-for-gc",
    "verify-safepoints": "verify-safepoints",
    "shadow-stack lowering": "statepoints-to-gcroots,shadow-stack-gc-lowering",
}
TARGETS = ("x86-64", "x86-32")
#: bounds of one workbench run: the guest's instructions and wall-clock seconds, recorded states
MAX_INSTRUCTIONS = 2_000_000
MAX_SECONDS = 5.0
MAX_STATES = 200
MAX_ASM_STEPS = 500


@dataclass(frozen=True)
class Problem:
    """What stopped the workbench: the stage, the message, and the place in the reader's text."""

    stage: str
    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", column {self.column}" if self.column else "") + ": " if self.line else ""
        return f"{self.stage}: {where}{self.message}"


@dataclass(frozen=True)
class Stage:
    """The module after one step of the pipeline, and how it differs from the step before."""

    name: str
    ir: str
    diff: tuple[tuple[str, str], ...]  # (' ', '+' or '-', line)

    @property
    def changed(self) -> bool:
        return any(tag != " " for tag, _ in self.diff)


@dataclass(frozen=True)
class CodeLine:
    """One machine instruction (or data line): address, bytes, what it says, and its links."""

    address: int
    data: bytes
    text: str
    label: str = ""  # a symbol that starts here (function name, statepoint label)
    record: int | None = None  # the stack-map record whose call this is
    source_line: int | None = None  # assembly mode: the reader's line
    source: str = ""  # IR mode: the line of gctoy's assembly text that Keystone made these bytes from
    ir_loc: tuple[int, int] | None = None  # IR mode: (line, column) of the IR instruction lowered to it


@dataclass(frozen=True)
class RecordLink:
    """A stack-map record (or a GC-info call site) and the call it belongs to."""

    index: int
    function: str
    return_address: int
    call_address: int | None
    summary: str
    locations: tuple[str, ...]


@dataclass
class RunOutcome:
    printed: list[int] = field(default_factory=list)
    result: int | None = None
    collections: int = 0
    stats: str = ""
    trace: Any = None  # gctoy.runtime.trace.Trace for the stepper (x86-64 statepoint programs)


@dataclass
class IRResult:
    stages: list[Stage] = field(default_factory=list)
    code: list[CodeLine] = field(default_factory=list)
    records: list[RecordLink] = field(default_factory=list)
    gcinfo: str = ""  # x86-32: the GC info of each function, as gcdump text
    #: shadow-stack lowering: (function, the FrameMap global as IR) for each function with roots
    frame_maps: list[tuple[str, str]] = field(default_factory=list)
    run: RunOutcome | None = None
    problem: Problem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class AsmStep:
    """The machine after one instruction: where it was, what ran, the registers that changed."""

    index: int
    address: int
    text: str
    registers: dict[str, int]
    changed: tuple[str, ...]
    #: the words on top of the stack after the step: (address, value), from the stack pointer up
    stack: tuple[tuple[int, int], ...] = ()


#: how many stack words each assembly step records
STACK_WORDS = 8


@dataclass
class AsmResult:
    code: list[CodeLine] = field(default_factory=list)
    steps: list[AsmStep] = field(default_factory=list)
    stopped: str = ""
    problem: Problem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


# ----------------------------------------------------------------------------- helpers

_BUDGET_OPTION = re.compile(r" \(--max-(?:instructions|seconds)\)")
_AT = re.compile(r"^(?:[^:\s]+):(\d+):(\d+):\s*(?:error:\s*)?")


def _problem(stage: str, error: BaseException, source: str) -> Problem:
    if isinstance(error, IRParseError):
        return Problem(stage, error.message, error.line or None, error.column or None)
    message = _BUDGET_OPTION.sub("", str(error)) or type(error).__name__
    if not isinstance(error, GCToyError):
        message = f"{type(error).__name__}: {message}"
    at = _AT.match(message)
    if at:
        return Problem(stage, message[at.end() :], int(at.group(1)), int(at.group(2)))
    return Problem(stage, message, locate(message, source))


def _run_problem(error: BaseException, result: IRResult, functions: dict[int, str], source: str) -> Problem:
    """A run that stopped, at the reader's line of the instruction the guest was executing (for a spent
    budget, where the run was stopped); a message without such a place is located as any other."""
    code = [(line.address, len(line.data), line.ir_loc) for line in result.code]
    place = run_place(error, code, functions, source)
    if place is None:
        return _problem("run", error, source)
    message = str(error) or type(error).__name__
    if not isinstance(error, GCToyError):
        message = f"{type(error).__name__}: {message}"
    if getattr(error, "kind", None) in ("instructions", "seconds"):  # gctoy.emu.budget.BudgetExceeded
        message = _BUDGET_OPTION.sub("", message)  # the command's option names; the workbench has its own limits
        message = f"the run was stopped here (the instruction executing when the budget ran out): {message}"
    return Problem("run", message, place[0], place[1])


#: a replaced block of more (removed x added) line pairs than this is shown as its removed lines, then
#: its added ones: ndiff's pairing of similar lines costs that many comparisons, and more
FANCY_PAIRS = 10_000


def _ndiff(a: list[str], b: list[str]):
    """``difflib.ndiff``, without the pairing of similar lines in a big replaced block."""
    for tag, alo, ahi, blo, bhi in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag == "replace" and (ahi - alo) * (bhi - blo) <= FANCY_PAIRS:
            yield from difflib.ndiff(a[alo:ahi], b[blo:bhi])
        else:
            yield from (f"{' ' if tag == 'equal' else '-'} {line}" for line in a[alo:ahi] if tag != "insert")
            yield from (f"+ {line}" for line in b[blo:bhi] if tag in ("insert", "replace"))


def _diff(before: str, after: str) -> tuple[tuple[str, str], ...]:
    out = []
    for line in _ndiff(before.splitlines(), after.splitlines()):
        tag = line[:1]
        if tag in " +-":
            out.append((tag, line[2:]))
    return tuple(out)


def _disassemble(code: bytes, base: int, arch: str) -> list[tuple[int, bytes, str]]:
    from gctoy.emu.asm import detailed_disassembler

    cs = detailed_disassembler(arch)
    return [
        (insn.address, bytes(insn.bytes), f"{insn.mnemonic} {insn.op_str}".strip()) for insn in cs.disasm(code, base)
    ]


# ----------------------------------------------------------------------------- IR mode


def run_ir(
    text: str,
    steps: tuple[str, ...] | list[str] = ("rewrite-statepoints-for-gc", "verify-safepoints"),
    *,
    target: str = "x86-64",
    execute: bool = True,
    stress: bool = True,
    max_instructions: int = MAX_INSTRUCTIONS,
    max_seconds: float = MAX_SECONDS,
) -> IRResult:
    """Run the reader's IR through ``steps`` (keys of PIPELINE_STEPS), lower it for ``target`` and run it."""
    from gctoy.ir import parse_module, print_module
    from gctoy.passes import run as run_passes
    from gctoy.passes import verify

    result = IRResult()
    unknown = [s for s in steps if s not in PIPELINE_STEPS]
    if unknown or target not in TARGETS:
        what = f"unknown step(s) {unknown}" if unknown else f"unknown target {target!r}"
        result.problem = Problem("pipeline", f"{what}; choose from {list(PIPELINE_STEPS)} and {list(TARGETS)}")
        return result
    try:
        module = parse_module(text, "workbench.ll")
        verify(module)
    except Exception as error:  # noqa: BLE001 - every failure becomes the reader's message
        result.problem = _problem("parse", error, text)
        return result
    current = print_module(module)
    result.stages.append(Stage("input", current, _diff("", current)))
    for step in sorted(steps, key=list(PIPELINE_STEPS).index):
        try:
            run_passes(module, PIPELINE_STEPS[step])
        except Exception as error:  # noqa: BLE001
            result.problem = _problem(step, error, text)
            return result
        after = print_module(module)
        result.stages.append(Stage(step, after, _diff(current, after)))
        current = after
    prefix = "@__gc_"  # gctoy.runtime.shadowstack.FRAME_MAP_PREFIX, as printed
    result.frame_maps = [
        (line.split(" = ", 1)[0][len(prefix) :], line) for line in current.splitlines() if line.startswith(prefix)
    ]
    if target == "x86-32":
        _lower_x86_32(module, result, text, execute, stress, max_instructions, max_seconds)
    else:
        _lower_x86_64(module, result, text, execute, stress, max_instructions, max_seconds)
    return result


def _lower_x86_64(
    module, result: IRResult, source: str, execute: bool, stress: bool, max_instructions: int, max_seconds: float
) -> None:
    from gctoy.codegen import compile_module
    from gctoy.runtime.shadowstack import lower_for_shadow_stack
    from gctoy.stackmap import format_location

    try:
        lower_for_shadow_stack(module, convert_statepoints=False)
        compiled = compile_module(module)
    except Exception as error:  # noqa: BLE001
        result.problem = _problem("x86-64 lowering", error, source)
        return
    sites = []
    names = {f.address: f.name for f in compiled.functions}
    for fn_record, fn_records in compiled.stackmap.records_by_function():
        for rec in fn_records:
            locations = tuple(format_location(loc, compiled.stackmap.constants) for loc in rec.locations)
            sites.append(
                (
                    names.get(fn_record.address, "?"),
                    fn_record.address + rec.instruction_offset,
                    f"id {rec.id}, {len(rec.locations)} locations",
                    locations,
                )
            )
    _link_code(result, compiled, "x86_64", sites, "record")
    if execute:
        functions = {f.address: f.name for f in compiled.functions}
        _execute_x86_64(module, result, source, functions, stress, max_instructions, max_seconds)


def _link_code(result: IRResult, compiled, arch: str, sites, what: str) -> None:
    """The machine code of ``compiled`` as CodeLines, and ``sites`` (function, return address, summary,
    locations) as RecordLinks, each record linked to the call instruction that ends at its return address."""
    image = compiled.image
    base = image.address_of(compiled.functions[0].name) if compiled.functions else 0x400000
    labels = {address: name for name, address in image.symbols.items()}
    listing = _disassemble(image.code, base, arch)
    by_end = {address + len(data): address for address, data, _ in listing}
    # gctoy's own assembly text, line by line beside Keystone's bytes and Capstone's reading of them,
    # and the place in the reader's IR each line was lowered from
    sources = statement_places(compiled, len(listing))
    calls: dict[int, int] = {}
    for index, (function, ra, summary, locations) in enumerate(sites):
        call = by_end.get(ra)
        if call is not None:
            calls[call] = index
        result.records.append(RecordLink(index, function, ra, call, f"{what} {index}: {summary}", locations))
    result.code = [
        CodeLine(address, data, text, labels.get(address, ""), calls.get(address), source=source, ir_loc=place)
        for (address, data, text), (source, place) in zip(listing, sources)
    ]


def _execute_x86_64(
    module,
    result: IRResult,
    source: str,
    functions: dict[int, str],
    stress: bool,
    max_instructions: int,
    max_seconds: float,
) -> None:
    from gctoy.runtime.run import run_module
    from gctoy.runtime.trace import record_trace

    main = next((f for f in module.definitions() if f.name == "main"), None)
    if main is None:
        result.problem = Problem("run", "there is no @main to run (define i64 @main())", None)
        return
    outcome = RunOutcome()
    result.run = outcome
    if result.records:
        # one recorded run gives the stepper its states and the pane its output: the program is
        # compiled and run once (a failure is run again plainly below, for its message)
        try:
            trace = record_trace(
                module, stress=stress, max_states=MAX_STATES, max_instructions=max_instructions, max_seconds=max_seconds
            )
            outcome.printed, outcome.result = list(trace.printed), trace.result
            outcome.collections, outcome.stats, outcome.trace = trace.collections, trace.stats, trace
            return
        except Exception:  # noqa: BLE001
            pass
    try:
        done = run_module(
            module, stress=stress, verify=True, max_instructions=max_instructions, max_seconds=max_seconds
        )
        outcome.printed, outcome.result = list(done.printed), done.result
        outcome.collections, outcome.stats = done.stats.collections, done.stats.summary()
    except Exception as error:  # noqa: BLE001
        result.problem = _run_problem(error, result, functions, source)


def _lower_x86_32(
    module, result: IRResult, source: str, execute: bool, stress: bool, max_instructions: int, max_seconds: float
) -> None:
    from gctoy.coreclr.gcdump import gcdump
    from gctoy.coreclr.section import GCINFO_SECTION, read_gcinfo_section
    from gctoy.runtime.run32 import Runtime32
    from gctoy.runtime.stackwalk32 import compile_with_gcinfo

    try:
        compiled, roots = compile_with_gcinfo(module)
    except Exception as error:  # noqa: BLE001
        result.problem = _problem("x86-32 lowering", error, source)
        return
    image = compiled.image
    sites = [
        (fn.name, image.address_of(site.label), f"in {fn.name}, {site.pushed} bytes of arguments pushed", ())
        for fn in compiled.functions
        for site in fn.calls
    ]
    _link_code(result, compiled, "x86_32", sites, "call site")
    blobs = read_gcinfo_section(image.sections[GCINFO_SECTION])
    starts = {f.address: f.name for f in compiled.functions}
    result.gcinfo = "\n\n".join(f"@{starts.get(start, hex(start))}:\n{gcdump(blob)}" for start, _, blob in blobs)
    if not execute:
        return
    if not any(f.name == "main" for f in module.definitions()):
        result.problem = Problem("run", "there is no @main to run (define i64 @main())", None)
        return
    outcome = RunOutcome()
    result.run = outcome
    try:
        runtime = Runtime32(compiled, gc="semispace", stress=stress, verify=True, roots=roots)
        done = runtime.run("main", max_instructions, max_seconds=max_seconds)
        outcome.printed, outcome.result = list(done.printed), done.result
        outcome.collections, outcome.stats = done.stats.collections, done.stats.summary()
    except Exception as error:  # noqa: BLE001
        result.problem = _run_problem(error, result, {f.address: f.name for f in compiled.functions}, source)


# ----------------------------------------------------------------------------- assembly mode


def run_assembly(text: str, *, arch: str = "x86_64", max_steps: int = MAX_ASM_STEPS, timeout: float = 5.0) -> AsmResult:
    """Assemble the reader's text (Keystone in a child process) and single-step it on Unicorn."""
    from gctoy.emu.asm import DEFAULT_BASE, assemble_untrusted
    from gctoy.emu.image import Image
    from gctoy.emu.machine import Machine
    from gctoy.emu.source import directive_size, split_source

    result = AsmResult()
    if arch not in ("x86_64", "x86_32"):
        result.problem = Problem("assemble", f"unknown architecture {arch!r}; choose x86_64 or x86_32")
        return result
    try:
        code = assemble_untrusted(text, arch=arch, timeout=timeout)
    except Exception as error:  # noqa: BLE001
        result.problem = _assembly_problem(error, text, arch, timeout)
        return result
    if not code:
        result.problem = Problem("assemble", "the text assembles to no bytes: type some instructions")
        return result
    listing = _disassemble(code, DEFAULT_BASE, arch)
    # pair the reader's statements with Capstone's instructions by address (data directives take their
    # size); where the two stop agreeing, the remaining instructions are left without a line
    size_at = {a: len(d) for a, d, _ in listing}
    source_of: dict[int, int] = {}
    address = DEFAULT_BASE
    for line in split_source(text):
        if line.kind == "insn":
            if address not in size_at:
                break
            source_of[address] = line.number
            address += size_at[address]
        elif line.kind == "directive":
            size = directive_size(line, address)
            if size is None:
                break
            address += size
    result.code = [CodeLine(a, d, t, source_line=source_of.get(a)) for a, d, t in listing]
    machine = Machine(Image(code=code, arch=arch), arch=arch)
    machine.enter(DEFAULT_BASE)
    registers = dict(machine.regs())
    text_at = {a: t for a, _, t in listing}
    try:
        for index in range(max_steps):
            pc = machine.pc
            machine.run(max_instructions=1)
            now = dict(machine.regs())
            changed = tuple(name for name, value in now.items() if registers.get(name) != value)
            result.steps.append(AsmStep(index, pc, text_at.get(pc, "?"), now, changed, _stack_words(machine)))
            registers = now
            if machine.returned():
                result.stopped = f"returned after {index + 1} instructions; rax/eax = {machine.return_value():#x}"
                break
        else:
            result.stopped = f"stopped after {max_steps} instructions (the step limit)"
    except Exception as error:  # noqa: BLE001
        fault_pc = getattr(error, "pc", None)
        message = str(error)
        result.problem = Problem("run", message, source_of.get(fault_pc) if fault_pc is not None else None)
        result.stopped = f"fault after {len(result.steps)} instructions"
    finally:
        close = getattr(machine, "close", None)
        if close is not None:
            close()
    return result


def _stack_words(machine) -> tuple[tuple[int, int], ...]:
    """Up to STACK_WORDS words from the stack pointer up (fewer near the top of the stack)."""
    words = []
    for k in range(STACK_WORDS):
        address = machine.sp + k * machine.word
        try:
            words.append((address, machine.read_word(address)))
        except Exception:  # noqa: BLE001 - past the top of the stack
            break
    return tuple(words)


_LINE_PREFIX = re.compile(r"^line (\d+):\s*", re.I)


def _assembly_problem(error: BaseException, text: str, arch: str, timeout: float) -> Problem:
    """Keystone says *what* is wrong but not where: find the first line whose prefix fails."""
    message = str(error) or type(error).__name__
    match = _LINE_PREFIX.match(message)
    if match:
        return Problem("assemble", message[match.end() :], int(match.group(1)))
    if "did not finish" in message or "crashed" in message or "memory" in message:
        return Problem("assemble", message)
    return Problem("assemble", message, _first_failing_line(text, arch, min(timeout, 2.0)))


def _first_failing_line(text: str, arch: str, timeout: float) -> int | None:
    """Bisect the text's lines: the shortest prefix Keystone rejects ends at the line at fault."""
    from gctoy.emu.asm import assemble_untrusted

    lines = text.splitlines()

    def fails(n: int) -> bool:
        try:
            assemble_untrusted("\n".join(lines[:n]) + "\n", arch=arch, timeout=timeout)
            return False
        except Exception:  # noqa: BLE001 - any refusal counts
            return True

    low, high = 0, len(lines)  # prefix `low` passes (the empty text does), prefix `high` fails
    if not fails(high):
        return None  # fails only as a whole (an undefined label, say)
    for _ in range(16):
        if high - low <= 1:
            break
        mid = (low + high) // 2
        if fails(mid):
            high = mid
        else:
            low = mid
    return high


def summary_text(result: IRResult) -> str:
    """A one-line account of an IR run, for tests and for the widget's status line."""
    if result.problem is not None:
        return str(result.problem)
    run = result.run
    ran = f"; printed {run.printed}, {run.collections} collections" if run else ""
    return f"{len(result.stages) - 1} passes, {len(result.code)} instructions, {len(result.records)} records{ran}"


def main(argv: list[str] | None = None) -> int:
    """``python -m gctoy.workbench [--assembly] [--target T] [--steps A,B] FILE``: the workbench without
    Jupyter. Prints a summary, or the problem with its line; exit status 1 when there is a problem."""
    import argparse
    import sys

    from gctoy.inputs import InputError, read_text_input

    parser = argparse.ArgumentParser(
        prog="python -m gctoy.workbench", description=(main.__doc__ or "").partition("\n")[0]
    )
    parser.add_argument("input", help="a file of LLVM IR (or x86 assembly with --assembly); - for standard input")
    parser.add_argument("--assembly", action="store_true", help="assemble and single-step x86 assembly")
    parser.add_argument("--target", choices=TARGETS, default="x86-64")
    parser.add_argument(
        "--steps",
        default="rewrite-statepoints-for-gc,verify-safepoints",
        help=f"comma-separated pipeline steps, from: {', '.join(PIPELINE_STEPS)}",
    )
    args = parser.parse_args(argv)
    try:
        text = read_text_input(args.input)
    except InputError as error:
        print(error, file=sys.stderr)  # already "file:line:col: error: ..."
        return 1
    if args.assembly:
        asm = run_assembly(text, arch="x86_32" if args.target == "x86-32" else "x86_64")
        problem = asm.problem
        summary = f"{len(asm.code)} instructions; {asm.stopped}"
    else:
        steps = tuple(s for s in args.steps.split(",") if s)
        ir = run_ir(text, steps, target=args.target)
        problem = ir.problem
        summary = summary_text(ir)
    if problem is not None:
        name = "<stdin>" if args.input == "-" else args.input
        place = "".join(f":{n}" for n in (problem.line, problem.column if problem.line else None) if n)
        print(f"{name}{place}: error: {problem.stage}: {problem.message}", file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
