"""The ``gctoy`` command: LLVM-style tools over gctoy's IR (``gctoy opt ...``).

Errors in the user's input are printed as ``file:line:col: error: message``
and exit with status 1; gctoy never shows a traceback for bad input.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import NoReturn, TypedDict

from .errors import GCToyError, IRParseError, VerifyError
from .fileio import OutputClosed, OutputError, write_output
from .inputs import InputError, read_text_input
from .ir import parse_module, print_module
from .ir.statepoint import convert_statepoints
from .ir.verifier import check_module
from .llvm_flags import CommandLineError, LLVMFlags, split_llvm_flags
from .stackmap.command import cmd_readobj


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one error line and a short usage line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            unknown = message.removeprefix("unrecognized arguments: ").split()[0]
            message = f"unknown option '{unknown}'"
        print(f"{self.prog}: error: {message}\n"
              f"usage: {self.prog} [-passes=P1,P2] [-S] [-o OUT] [options] [IN.ll]  ({self.prog} -h lists them)",
              file=sys.stderr)
        sys.exit(EXIT_USAGE)


_LLVM_FLAGS_HELP = """LLVM's options, spelled as LLVM spells them (-name, -name=value; booleans take =true/=false):
place-safepoints:
  -spp-no-entry            no poll at function entry
  -spp-no-backedge         no polls on loop backedges
  -spp-no-call             calls do not count as safepoints when deciding backedge polls
  -spp-all-backedges       poll on every backedge, even of counted loops or loops with calls
  -spp-split-backedge      put backedge polls in a new block on the latch->header edge
  -spp-counted-loop-trip-width=N
                           loops whose trip count fits in N bits need no backedge poll (default 32)
rewrite-statepoints-for-gc:
  -spp-rematerialization-threshold=N
                           recompute a derived pointer after a statepoint when its chain costs
                           less than N (default 6)
  -spp-print-liveset       print each call's live GC pointers (standard error)
  -spp-print-liveset-size  print the number of live GC pointers at each call
  -spp-print-base-pointers print the (derived, base) pairs of each function
  -rs4gc-clobber-non-live  store null into the slot of each value not live at a statepoint
  -rs4gc-allow-statepoint-with-no-deopt-info=false
                           leave calls without a "deopt" bundle alone
  -rs4gc-remat-derived-at-uses=false
                           LLVM 16+'s flag; gctoy never rematerializes at uses, so only =false
verify<safepoint-ir>:
  -safepoint-ir-verifier-print-only
                           print LLVM's report of every function to standard error instead of
                           failing on the first illegal use
opt:
  -opaque-pointers=0|1     print typed (0) or opaque (1) pointers
  -disable-output          run the passes, print nothing
  -enable-new-pm=0|1       accepted; legacy pass flags (-rewrite-statepoints-for-gc,
                           -place-safepoints, -verify, ...) run the pass of that name"""


# Built once per process (parsing leaves a parser as it was), for in-process callers of main().
@functools.cache
def _opt_parser() -> argparse.ArgumentParser:
    p = _OneLineParser(
        prog="gctoy opt",
        description="Parse LLVM IR, run passes, print IR (like LLVM's opt).",
        epilog=_LLVM_FLAGS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", nargs="?", default="-", help="input .ll file ('-' or none: standard input)")
    p.add_argument("-passes", "--passes", dest="passes", default=None,
                   help="comma-separated pass pipeline (default: verify)")
    p.add_argument("-S", dest="emit", action="store_true", help="print the module as IR text")
    p.add_argument("-o", dest="output", help="write the output here instead of standard output")
    ptr = p.add_mutually_exclusive_group()
    ptr.add_argument("--typed-pointers", dest="opaque", action="store_false",
                     help="print typed pointers such as 'i8 addrspace(1)*' (LLVM <= 14; the default)")
    ptr.add_argument("--opaque-pointers", dest="opaque", action="store_true",
                     help="print opaque pointers 'ptr addrspace(1)' (LLVM >= 15)")
    p.set_defaults(opaque=None)
    p.add_argument("--statepoint-form", choices=["oldest", "middle", "modern"],
                   help="rewrite every gc.statepoint into this historical signature")
    p.add_argument("--implicit-declarations", action="store_true",
                   help="declare functions and globals that are used but never declared (seed fragments)")
    p.add_argument("--fix-numbering", action="store_true",
                   help="accept %%N names out of sequence and renumber them")
    p.add_argument("--keep-comments", action="store_true", help="keep the input's comments in the output")
    _add_disable_verify(p)
    rs = p.add_argument_group("rewrite-statepoints-for-gc options (gctoy's own)")
    rs.add_argument("--rs4gc-non-relocating", action="store_true",
                    help="for a collector that never moves objects: record live values, relocate nothing")
    rs.add_argument("--rs4gc-alloca-roots", action="store_true",
                    help="list allocas holding GC pointers in every statepoint's gc-live bundle (gctoy extension)")
    return p


def _add_regalloc(p: argparse.ArgumentParser) -> None:
    """The ``--regalloc`` / ``--no-regalloc`` flag of ``gctoy llc`` and ``gctoy run``."""
    p.add_argument("--regalloc", action=argparse.BooleanOptionalAction, default=True,
                   help="x86-64: keep values in registers (linear scan; GC pointers live across a statepoint in "
                   "callee-saved registers, recorded as Register locations, or in spill slots), the default; "
                   "--no-regalloc gives every value a stack slot (functions with vector, i128 or aggregate "
                   "values always get slots)")


#: GC pointers kept in callee-saved registers when --gc-registers is not given: none on x86-64 (llc 14's
#: default spills every gc-live value), ESI and EDI on x86-32 (as the JIT homes them; see frame32.DEFAULT_HOMES)
DEFAULT_GC_REGISTERS = {"x86-64": 0, "x86-32": 2}


def _add_gc_registers(p: argparse.ArgumentParser) -> None:
    """``--gc-registers N`` (x86-64 also by llc's name, ``-max-registers-for-gc-values=N``)."""
    p.add_argument("--gc-registers", "-max-registers-for-gc-values", dest="gc_registers", type=int, default=None,
                   metavar="N", help="GC pointers in callee-saved registers across calls instead of stack slots. "
                   "x86-64: up to N gc-live values per statepoint (default 0, as llc's "
                   "-max-registers-for-gc-values); x86-32: up to N (0-3) per function in ESI/EDI/EBX (default 2); "
                   "the stack walk finds them in the callees' save slots")


def _gc_registers(p: argparse.ArgumentParser, args) -> int:
    """The ``--gc-registers`` value for the chosen target (its default, or an error for a bad N)."""
    if args.gc_registers is None:
        return DEFAULT_GC_REGISTERS[args.target]
    top = 3 if args.target == "x86-32" else None
    if args.gc_registers < 0 or (top is not None and args.gc_registers > top):
        p.error(f"--gc-registers takes 0 to {top} for x86-32" if top is not None
                else "--gc-registers takes a number that is not negative")
    return args.gc_registers


def _add_disable_verify(p: argparse.ArgumentParser) -> None:
    """``-disable-verify``: skip the structural verifier that checks the input before anything else runs."""
    p.add_argument("-disable-verify", "--disable-verify", dest="disable_verify", action="store_true",
                   help="do not verify the input module first (as LLVM's flag; invalid IR may then be "
                   "miscompiled or crash the tool)")


def _with_pass_options(pipeline: str, flags: LLVMFlags, args) -> str:
    """Attach the LLVM flags (and gctoy's RS4GC flags) to each pass of the pipeline that reads them."""
    extra = {"rewrite-statepoints-for-gc": flags.pass_options("rewrite-statepoints-for-gc"),
             "place-safepoints": flags.pass_options("place-safepoints")}
    if args.rs4gc_non_relocating:
        extra["rewrite-statepoints-for-gc"].append("non-relocating")
    if args.rs4gc_alloca_roots:
        extra["rewrite-statepoints-for-gc"].append("alloca-roots")
    from .passes import split_pass, split_top_level

    parts = []
    for entry in split_top_level(pipeline):
        name, opts = split_pass(entry)
        if extra.get(name):
            entry = f"{name}<{';'.join(([opts] if opts else []) + extra[name])}>"
        parts.append(entry)
    return ",".join(parts)


def _pipeline(args, flags: LLVMFlags) -> str:
    """``-passes=`` or the legacy pass flags (not both, as LLVM's opt says), else ``verify``."""
    if flags.legacy_passes and args.passes is not None:
        raise CommandLineError("cannot specify passes both with -passes= and as legacy pass flags "
                               f"(-{flags.legacy_passes[0]})")
    if flags.legacy_passes:
        return ",".join(flags.legacy_passes)
    return args.passes if args.passes is not None else "verify"


def cmd_opt(argv: list[str]) -> int:
    """``gctoy opt``: parse, run passes, print."""
    from .passes import REGISTRY, parse_pipeline, run

    parser = _opt_parser()
    try:
        rest, flags = split_llvm_flags(argv, set(REGISTRY))
    except CommandLineError as e:
        parser.error(str(e))
    args = parser.parse_args(rest)
    if "opaque-pointers" in flags.values and args.opaque is None:
        args.opaque = bool(flags.values["opaque-pointers"])
    if flags.values.get("rs4gc-remat-derived-at-uses"):
        parser.error("-rs4gc-remat-derived-at-uses=true is not supported: gctoy's rewrite-statepoints-for-gc "
                     "never rematerializes derived pointers at their uses (use =false)")
    try:
        pipeline = _with_pass_options(_pipeline(args, flags), flags, args)
    except CommandLineError as e:
        parser.error(str(e))
    name = args.input
    filename = "<stdin>" if name == "-" else name
    try:
        if flags.values.get("safepoint-ir-verifier-print-only"):
            pipeline = ",".join("verify-safepoints<print-only>"
                                if e in ("verify<safepoint-ir>", "verify-safepoints", "verify-safepoint-ir") else e
                                for e in (x.strip() for x in pipeline.split(",")))
        parse_pipeline(pipeline)
        text = read_text_input(name)
        module = parse_module(text, filename, implicit_declarations=args.implicit_declarations,
                              fix_numbering=args.fix_numbering)
        for note in module.notes:
            print(note, file=sys.stderr)
        if not args.disable_verify:
            check_module(module)
        if args.statepoint_form:
            convert_statepoints(module, args.statepoint_form)
        run(module, pipeline)
        opaque = bool(args.opaque) if args.opaque is not None else _module_is_opaque(module)
        out = print_module(module, opaque=opaque, comments=args.keep_comments)
    except GCToyError as e:
        print(_format_error(e, filename), file=sys.stderr)
        return 1
    if (args.emit or args.output) and not flags.values.get("disable-output"):
        write_output(out, args.output)
    return 0


def _module_is_opaque(module) -> bool:
    """Print a module in the pointer style it was written in."""
    from .ir.printer import uses_opaque_pointers

    return uses_opaque_pointers(module)


def _format_error(e: GCToyError, filename: str) -> str:
    """``file:line:col: error: message`` where the error knows its place, else ``file: error: message``."""
    if isinstance(e, (IRParseError, InputError)):
        return str(e)
    if isinstance(e, VerifyError):
        return str(e) if e.location else f"{filename}: error: {e.message}"
    return f"{filename}: error: {e}"


def _read_module(path: str, implicit: bool, verify: bool = True, entry: str | None = None):
    """Parse IR for ``llc``/``run``, verify it (unless ``-disable-verify``), check its declarations of the
    runtime's functions and (for ``run``) the entry function against the guest ABI."""
    from .runtime.guest_abi import check_entry, check_runtime_declarations

    text = read_text_input(path)
    module = parse_module(text, path, implicit_declarations=implicit)
    for note in module.notes:
        print(note, file=sys.stderr)
    if verify:
        check_module(module)
    check_runtime_declarations(module, text, path)
    if entry is not None:
        check_entry(module, entry, text, path)
    return module


def _driver_module(path: str, place_safepoints: bool, implicit: bool, verify: bool = True,
                   entry: str | None = None):
    """Read IR for ``llc``/``run`` (see _read_module): a module still in the abstract machine model (calls, no
    statepoints) gets ``rewrite-statepoints-for-gc`` first (and ``place-safepoints`` if asked)."""
    from .ir.statepoint import statepoints
    from .passes import run
    from .passes.rewrite_statepoints import STATEPOINT_STRATEGIES

    module = _read_module(path, implicit, verify, entry)
    gc_functions = [f for f in module.definitions() if f.gc in STATEPOINT_STRATEGIES]
    if gc_functions and not any(statepoints(f) for f in gc_functions):
        run(module, ("place-safepoints," if place_safepoints else "") + "rewrite-statepoints-for-gc")
    return module


def _failed(e: OSError | GCToyError, path: str) -> int:
    """Report an unreadable input or bad input on standard error, as ``file: error: ...``; exit status 1."""
    if isinstance(e, OSError):
        print(f"{path}: error: {e.strerror or e}", file=sys.stderr)
    else:
        print(_format_error(e, path), file=sys.stderr)
    return 1


def _code_parts(compiled) -> list[str]:
    """The ``.text`` and (if any) ``.data`` parts of a compiled module's assembly listing."""
    parts = ["\t.text", compiled.asm_text.rstrip()]
    if compiled.data_text.strip():
        parts += ["", "\t.data", compiled.data_text.rstrip()]
    return parts


def _write_lines(parts: list[str], output: str | None) -> int:
    """Write the lines to ``output`` (a path; ``-`` or None: standard output); exit status 0."""
    write_output("\n".join(parts) + "\n", output)
    return 0


def cmd_llc(argv: list[str]) -> int:
    """``gctoy llc``: lower IR to x86-64 assembly with its stack map (like LLVM's llc)."""
    p = argparse.ArgumentParser(prog="gctoy llc", description="Lower LLVM IR to x86-64 assembly text, "
                                "with the stack map that describes each statepoint.")
    p.add_argument("input", help="input .ll file")
    p.add_argument("-o", dest="output", help="write the assembly here instead of standard output")
    p.add_argument("--place-safepoints", action="store_true", help="run place-safepoints before RS4GC")
    p.add_argument("--implicit-declarations", action="store_true", help="declare what the input leaves undeclared")
    p.add_argument("--target", choices=["x86-64", "x86-32"], default="x86-64",
                   help="x86-32: lower the IR as written with CoreCLR's JIT32 conventions and print each "
                   "method's x86 GC info (bytes and gcdump text) instead of a stack map")
    p.add_argument("--frame", choices=["auto", "ebp", "esp"], default="auto",
                   help="x86-32 only: EBP frames, EBP-less frames, or the code generator's choice")
    _add_gc_registers(p)
    _add_regalloc(p)
    _add_disable_verify(p)
    args = p.parse_args(argv)
    args.gc_registers = _gc_registers(p, args)
    if args.target == "x86-32":
        return _llc_x86_32(args)
    from .codegen import compile_module
    from .stackmap import format_stackmap

    try:
        module = _driver_module(args.input, args.place_safepoints, args.implicit_declarations,
                                not args.disable_verify)
        from .passes import run

        run(module, "lower-gc-barriers")  # llc's gc-lowering: barriers become code, frame roots start null
        compiled = compile_module(module, regalloc=args.regalloc, gc_registers=args.gc_registers)
        from .codegen.gcmap import emit_gcmaps

        gcmaps = emit_gcmaps(compiled)
    except (OSError, GCToyError) as e:
        return _failed(e, args.input)
    parts = _code_parts(compiled)
    if gcmaps.text:
        parts += ["", "\t.data", "# GC metadata: the seed's compact __gcmap_<function> tables", gcmaps.text.rstrip()]
    if compiled.stackmap.records:
        from .stackmap import emit

        data = emit(compiled.stackmap)
        parts += ["", '\t.section .llvm_stackmaps,"a"', "__LLVM_StackMaps:"]
        parts += ["\t.byte " + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) for i in range(0, len(data), 16)]
        parts += ["", "# the section above, as llvm-readobj --stackmap prints it (function addresses are",
                  "# those of gctoy's image):"]
        parts += ["# " + line for line in format_stackmap(compiled.stackmap).splitlines()]
    return _write_lines(parts, args.output)


def _llc_x86_32(args) -> int:
    """``gctoy llc --target x86-32``: JIT32 assembly, then every method's GC-info blob and its gcdump text."""
    from .codegen.gcinfo32 import module_gcinfo
    from .codegen.symbols import mangle
    from .codegen.x86_32 import compile_module32
    from .coreclr import encode, gcdump

    try:
        module = _read_module(args.input, args.implicit_declarations, not args.disable_verify)
        compiled = compile_module32(module, frame=args.frame, gc_registers=args.gc_registers)
        infos = module_gcinfo(compiled)
    except (OSError, GCToyError) as e:
        return _failed(e, args.input)
    parts = _code_parts(compiled)
    parts += ["", '\t.section .gcinfo_x86,"a"', "# CoreCLR x86 GC info (version 5), one blob per method"]
    for name, info in infos.items():
        blob = encode(info)
        parts += ["", f"__gcinfo_{mangle(name)}:"]
        parts += ["\t.byte " + ", ".join(f"0x{b:02x}" for b in blob[i:i + 16]) for i in range(0, len(blob), 16)]
        parts += ["# " + line if line else "#" for line in gcdump(blob).splitlines()]
    return _write_lines(parts, args.output)


class _Budget(TypedDict):
    """The bounds of a run, passed on to the runtime (None: unbounded)."""

    max_instructions: int | None
    max_seconds: float | None


def cmd_run(argv: list[str]) -> int:
    """``gctoy run``: run a program on the emulated machine under the moving collector."""
    p = argparse.ArgumentParser(prog="gctoy run", description="Run @main on Unicorn under gctoy's moving "
                                "collector: IR is lowered by gctoy (after RS4GC when it has no statepoints "
                                "yet); an ELF object made by llc -filetype=obj runs with LLVM's stack map.")
    p.add_argument("input", help="a .ll file, or an ELF object file (.o) made by llc from statepoint IR")
    p.add_argument("--entry", default="main", help="the function to run (default: main); it must be defined "
                   "as 'i64 ()': no parameters, an i64 result")
    p.add_argument("--gc", choices=["semispace", "none"], default="semispace", help="the collector")
    p.add_argument("--stress", action="store_true", help="collect at every statepoint that reaches the runtime")
    p.add_argument("--verify-heap", action="store_true", help="check the heap and the poisoned from-space "
                   "after every collection")
    p.add_argument("--place-safepoints", action="store_true", help="for IR: run place-safepoints before RS4GC")
    p.add_argument("--implicit-declarations", action="store_true", help="declare what the input leaves undeclared")
    p.add_argument("--trace", action="store_true", help="describe each collection on standard error")
    p.add_argument("--design", choices=["statepoint", "shadow-stack"], default="statepoint",
                   help="for IR: how the collector finds roots; shadow-stack turns RS4GC's statepoints into "
                   "gcroot slots (statepoints-to-gcroots) and lowers them (shadow-stack-gc-lowering). "
                   "Functions with gc \"shadow-stack\" are lowered either way")
    p.add_argument("--target", choices=["x86-64", "x86-32"], default="x86-64",
                   help="x86-32: lower the IR as written (no statepoints) with CoreCLR's JIT32 conventions and "
                   "find roots through its x86 GC info")
    _add_gc_registers(p)
    from .emu.budget import DEFAULT_MAX_INSTRUCTIONS, DEFAULT_MAX_SECONDS

    p.add_argument("--max-instructions", type=int, default=DEFAULT_MAX_INSTRUCTIONS, metavar="N",
                   help=f"stop with an error after N guest instructions (default {DEFAULT_MAX_INSTRUCTIONS}; "
                   "0: no limit)")
    p.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS, metavar="S",
                   help=f"stop with an error after S seconds of wall-clock time, runtime calls and collections "
                   f"included (default {DEFAULT_MAX_SECONDS:g}; 0: no limit)")
    _add_regalloc(p)
    _add_disable_verify(p)
    args = p.parse_args(argv)
    args.gc_registers = _gc_registers(p, args)
    if args.max_instructions < 0 or not 0 <= args.max_seconds < float("inf"):
        p.error("--max-instructions and --max-seconds take a number that is not negative (0: no limit)")
    budget: _Budget = {"max_instructions": args.max_instructions or None, "max_seconds": args.max_seconds or None}
    from .runtime.run import gc_strategy_warning, run_module, run_object, trace_collection
    from .runtime.shadowstack import lower_for_shadow_stack

    def on_collect(runtime, done) -> None:
        print(trace_collection(runtime, done), file=sys.stderr)

    hook = on_collect if args.trace else None

    try:
        if args.target == "x86-32":
            from .runtime.run32 import run_module32, trace_collection32

            module = _read_module(args.input, args.implicit_declarations, not args.disable_verify, args.entry)
            result = run_module32(module, gc=args.gc, stress=args.stress, verify=args.verify_heap, entry=args.entry,
                                  gc_registers=args.gc_registers, **budget,
                                  on_collect=(lambda rt, done: print(trace_collection32(rt, done), file=sys.stderr))
                                  if args.trace else None)
        elif args.input.endswith(".ll"):
            module = _driver_module(args.input, args.place_safepoints, args.implicit_declarations,
                                    not args.disable_verify, args.entry)
            lower_for_shadow_stack(module, convert_statepoints=args.design == "shadow-stack")
            warning = gc_strategy_warning(module) if args.gc != "none" else None
            if warning:
                print(f"{args.input}: warning: {warning}", file=sys.stderr)
            result = run_module(module, gc=args.gc, stress=args.stress, verify=args.verify_heap, entry=args.entry,
                                on_collect=hook, regalloc=args.regalloc, gc_registers=args.gc_registers, **budget)
        else:
            result = run_object(args.input, gc=args.gc, stress=args.stress, verify=args.verify_heap,
                                entry=args.entry, on_collect=hook, **budget)
    except (OSError, GCToyError) as e:
        return _failed(e, args.input)
    for value in result.printed:
        print(value)
    print(f"result: {result.result}")
    print(result.stats.summary(), file=sys.stderr)
    return 0


def cmd_gcinfo_x86(argv: list[str]) -> int:
    """``gctoy gcinfo-x86``: CoreCLR x86 GC info (imported on use, so other commands start faster)."""
    from .gcinfo_command import cmd_gcinfo_x86 as command

    return command(argv)


COMMANDS = {"opt": cmd_opt, "llc": cmd_llc, "run": cmd_run, "readobj": cmd_readobj,
            "gcinfo-x86": cmd_gcinfo_x86}


#: Exit statuses of every command: the input and the run were fine; the input or the run failed
#: (bad IR, object, blob or JSON; an unreadable input; an unwritable output; a fault in the run);
#: the command line itself is wrong (unknown command or option, a missing argument, an option
#: value of the wrong form); interrupted (Ctrl-C); the reader of standard output went away.
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141


def _silence_stdout() -> None:
    """Point the real standard output at /dev/null, so the flush at exit cannot fail again."""
    out = sys.stdout
    if out is not sys.__stdout__ or out is None:
        return  # captured (tests): nothing is flushed at exit
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _run_command(name: str, cmd, argv: list[str]) -> int:
    """Run one command; write errors, a closed pipe and usage errors become exit statuses."""
    try:
        status = cmd(argv)
        sys.stdout.flush()
        return status
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except (OutputClosed, BrokenPipeError):
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OutputError as e:
        print(e, file=sys.stderr)
        _silence_stdout()
        return EXIT_ERROR
    except OSError as e:  # standard output failed while a command printed, or another I/O error
        where = e.filename if e.filename is not None else "<stdout>"
        print(f"gctoy {name}: error: {where}: {e.strerror or e}", file=sys.stderr)
        _silence_stdout()
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gctoy`` console script; returns the exit status (see ``EXIT_*``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: gctoy <command> [options]\n\ncommands:\n"
              "  opt      parse LLVM IR, run passes (-passes=verify,...), print IR (-S)\n"
              "  readobj  print an object's stack map as llvm-readobj --stackmap does\n"
              "  gcinfo-x86  dump (gcdump text) or encode CoreCLR x86 GC info\n"
              "  llc      lower IR to x86-64 assembly with its stack map (--target x86-32: with CoreCLR GC info)\n"
              "  run      run IR (or an llc-compiled object) on the emulated machine under the moving collector\n\n"
              "'gctoy <command> --help' describes a command.\n"
              "exit status: 0 ok, 1 error in the input or the run, 2 usage error, 141 output pipe closed.")
        return EXIT_OK if argv else EXIT_USAGE
    if argv[0] == "--version":
        from . import __version__

        print(f"gctoy {__version__}")
        return EXIT_OK
    cmd = COMMANDS.get(argv[0])
    if cmd is None:
        print(f"gctoy: error: unknown command '{argv[0]}' (try: {', '.join(COMMANDS)})", file=sys.stderr)
        return EXIT_USAGE
    return _run_command(argv[0], cmd, argv[1:])


if __name__ == "__main__":
    sys.exit(main())
