"""The ``gctoy`` command: LLVM-style tools over gctoy's IR (``gctoy opt ...``).

Errors in the user's input are printed as ``file:line:col: error: message``
and exit with status 1; gctoy never shows a traceback for bad input.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
from typing import NoReturn

from .command_support import add_disable_verify, follow_input_release, format_error, module_is_opaque
from .errors import GCToyError
from .fileio import OutputClosed, OutputError, write_output
from .inputs import read_text_input
from .ir import parse_module, print_module
from .ir.statepoint import convert_statepoints
from .ir.verifier import check_module
from .llc_command import cmd_llc
from .llvm_flags import CommandLineError, LLVMFlags, split_llvm_flags
from .run_command import cmd_run
from .stackmap.command import cmd_readobj


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one error line and a short usage line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            unknown = message.removeprefix("unrecognized arguments: ").split()[0]
            message = f"unknown option '{unknown}'"
        print(
            f"{self.prog}: error: {message}\n"
            f"usage: {self.prog} [-passes=P1,P2] [-S] [-o OUT] [options] [IN.ll]  ({self.prog} -h lists them)",
            file=sys.stderr,
        )
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
  -disable-builtin=NAME    the C library function NAME is not taken for the known one (a call of it is
                           no GC leaf); RS4GC reads it, and place-safepoints<llvm=19> as LLVM 19 does
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
    p.add_argument(
        "-passes", "--passes", dest="passes", default=None, help="comma-separated pass pipeline (default: verify)"
    )
    p.add_argument("-S", dest="emit", action="store_true", help="print the module as IR text")
    p.add_argument("-o", dest="output", help="write the output here instead of standard output")
    ptr = p.add_mutually_exclusive_group()
    ptr.add_argument(
        "--typed-pointers",
        dest="opaque",
        action="store_false",
        help="print typed pointers such as 'i8 addrspace(1)*' (LLVM <= 14; the default)",
    )
    ptr.add_argument(
        "--opaque-pointers",
        dest="opaque",
        action="store_true",
        help="print opaque pointers 'ptr addrspace(1)' (LLVM >= 15)",
    )
    p.set_defaults(opaque=None)
    p.add_argument(
        "--statepoint-form",
        choices=["oldest", "middle", "modern"],
        help="rewrite every gc.statepoint into this historical signature",
    )
    p.add_argument(
        "--implicit-declarations",
        action="store_true",
        help="declare functions and globals that are used but never declared (seed fragments)",
    )
    p.add_argument("--fix-numbering", action="store_true", help="accept %%N names out of sequence and renumber them")
    p.add_argument("--keep-comments", action="store_true", help="keep the input's comments in the output")
    add_disable_verify(p)
    rs = p.add_argument_group("rewrite-statepoints-for-gc options (gctoy's own)")
    rs.add_argument(
        "--rs4gc-non-relocating",
        action="store_true",
        help="for a collector that never moves objects: record live values, relocate nothing",
    )
    rs.add_argument(
        "--rs4gc-alloca-roots",
        action="store_true",
        help="list allocas holding GC pointers in every statepoint's gc-live bundle (gctoy extension)",
    )
    return p


def _with_pass_options(pipeline: str, flags: LLVMFlags, args) -> str:
    """Attach the LLVM flags (and gctoy's RS4GC flags) to each pass of the pipeline that reads them."""
    extra = {
        "rewrite-statepoints-for-gc": flags.pass_options("rewrite-statepoints-for-gc"),
        "place-safepoints": flags.pass_options("place-safepoints"),
    }
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


def _after_input_check(pipeline: str) -> str:
    """The pipeline without its leading plain ``verify`` passes: they would check the module the input
    check has just passed, unchanged (``-passes=verify`` then costs one verification, not two)."""
    from .passes import split_top_level

    entries = [e.strip() for e in split_top_level(pipeline)]
    while entries and entries[0] == "verify":
        entries.pop(0)
    return ",".join(entries)


def _pipeline(args, flags: LLVMFlags) -> str:
    """``-passes=`` or the legacy pass flags (not both, as LLVM's opt says), else ``verify``."""
    if flags.legacy_passes and args.passes is not None:
        raise CommandLineError(
            f"cannot specify passes both with -passes= and as legacy pass flags (-{flags.legacy_passes[0]})"
        )
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
        parser.error(
            "-rs4gc-remat-derived-at-uses=true is not supported: gctoy's rewrite-statepoints-for-gc "
            "never rematerializes derived pointers at their uses (use =false)"
        )
    try:
        pipeline = _with_pass_options(_pipeline(args, flags), flags, args)
    except CommandLineError as e:
        parser.error(str(e))
    name = args.input
    filename = "<stdin>" if name == "-" else name
    try:
        if flags.values.get("safepoint-ir-verifier-print-only"):
            pipeline = ",".join(
                "verify-safepoints<print-only>"
                if e in ("verify<safepoint-ir>", "verify-safepoints", "verify-safepoint-ir")
                else e
                for e in (x.strip() for x in pipeline.split(","))
            )
        parse_pipeline(pipeline)
        text = read_text_input(name)
        module = parse_module(
            text, filename, implicit_declarations=args.implicit_declarations, fix_numbering=args.fix_numbering
        )
        for note in module.notes:
            print(note, file=sys.stderr)
        if not args.disable_verify:
            check_module(module)
            if not args.statepoint_form:
                pipeline = _after_input_check(pipeline)
        if args.statepoint_form:
            convert_statepoints(module, args.statepoint_form)
        if pipeline:
            run(module, follow_input_release(pipeline, module))
        opaque = bool(args.opaque) if args.opaque is not None else module_is_opaque(module)
        out = print_module(module, opaque=opaque, comments=args.keep_comments)
    except GCToyError as e:
        print(format_error(e, filename), file=sys.stderr)
        return 1
    if (args.emit or args.output) and not flags.values.get("disable-output"):
        write_output(out, args.output)
    return 0


def cmd_gcinfo_x86(argv: list[str]) -> int:
    """``gctoy gcinfo-x86``: CoreCLR x86 GC info (imported on use, so other commands start faster)."""
    from .gcinfo_command import cmd_gcinfo_x86 as command

    return command(argv)


COMMANDS = {"opt": cmd_opt, "llc": cmd_llc, "run": cmd_run, "readobj": cmd_readobj, "gcinfo-x86": cmd_gcinfo_x86}


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


#: commands that build a whole module once and exit: Python's cycle collector is paused while they run.
#: The IR is a graph of cycles (an instruction and its block, a value and its users) that stays alive to
#: the end, so the collector's passes over it find almost nothing and cost about a fifth of the time.
_BATCH_COMMANDS = frozenset({"opt", "llc"})


def _run_command(name: str, cmd, argv: list[str]) -> int:
    """Run one command; write errors, a closed pipe and usage errors become exit statuses."""
    paused = name in _BATCH_COMMANDS and gc.isenabled()
    if paused:
        gc.disable()
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
    finally:
        if paused:
            gc.enable()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gctoy`` console script; returns the exit status (see ``EXIT_*``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(
            "usage: gctoy <command> [options]\n\ncommands:\n"
            "  opt      parse LLVM IR, run passes (-passes=verify,...), print IR (-S)\n"
            "  readobj  print an object's stack map as llvm-readobj --stackmap does\n"
            "  gcinfo-x86  dump (gcdump text) or encode CoreCLR x86 GC info\n"
            "  llc      lower IR to x86-64 assembly with its stack map (--target x86-32: with CoreCLR GC info)\n"
            "  run      run IR (or an llc-compiled object) on the emulated machine under the moving collector\n\n"
            "'gctoy <command> --help' describes a command.\n"
            "exit status: 0 ok, 1 error in the input or the run, 2 usage error, 141 output pipe closed."
        )
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


def entry() -> None:
    """The ``gctoy`` program (console script and ``python -m gctoy.cli``): :func:`main`, then exit.

    Before exiting, what is left is frozen (``gc.freeze``): the module just printed is millions of
    objects in reference cycles, and the collector would trace them all at exit only to free
    memory the exit frees anyway (more than a second on a 50k-line file).
    """
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    entry()
