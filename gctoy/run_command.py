"""``gctoy run``: run a program on the emulated machine under the moving collector."""

from __future__ import annotations

import argparse
import sys
from typing import TypedDict

from .command_support import (
    add_disable_verify,
    add_gc_registers,
    add_regalloc,
    driver_module,
    gc_registers_for,
    read_module,
    report_failure,
)
from .errors import GCToyError
from .inputs import TEXT_INPUT_LIMIT, InputError, decode_text, read_bytes_input

#: the first bytes of an ELF file: ``gctoy run -`` reads an object, anything else on standard input is IR
ELF_MAGIC = b"\x7fELF"


class _Budget(TypedDict):
    """The bounds of a run, passed on to the runtime (None: unbounded)."""

    max_instructions: int | None
    max_seconds: float | None


def cmd_run(argv: list[str]) -> int:
    """``gctoy run``: run a program on the emulated machine under the moving collector."""
    p = _run_parser()
    args = p.parse_args(argv)
    args.gc_registers = gc_registers_for(p, args)
    if args.max_instructions < 0 or not 0 <= args.max_seconds < float("inf"):
        p.error("--max-instructions and --max-seconds take a number that is not negative (0: no limit)")
    budget: _Budget = {"max_instructions": args.max_instructions or None, "max_seconds": args.max_seconds or None}
    try:
        result = _run(args, budget)
    except (OSError, GCToyError) as e:
        return report_failure(e, args.input)
    for value in result.printed:
        print(value)
    print(f"result: {result.result}")
    print(result.stats.summary(), file=sys.stderr)
    return 0


def _run_parser() -> argparse.ArgumentParser:
    """The options of ``gctoy run``."""
    p = argparse.ArgumentParser(
        prog="gctoy run",
        description="Run @main on Unicorn under gctoy's moving "
        "collector: IR is lowered by gctoy (after RS4GC when it has no statepoints "
        "yet); an ELF object made by llc -filetype=obj runs with LLVM's stack map.",
    )
    p.add_argument("input", help="a .ll file, or an ELF object file (.o) made by llc from statepoint IR")
    p.add_argument(
        "--entry",
        default="main",
        help="the function to run (default: main); it must be defined as 'i64 ()': no parameters, an i64 result",
    )
    p.add_argument("--gc", choices=["semispace", "none"], default="semispace", help="the collector")
    p.add_argument("--stress", action="store_true", help="collect at every statepoint that reaches the runtime")
    p.add_argument(
        "--verify-heap", action="store_true", help="check the heap and the poisoned from-space after every collection"
    )
    p.add_argument("--place-safepoints", action="store_true", help="for IR: run place-safepoints before RS4GC")
    p.add_argument("--implicit-declarations", action="store_true", help="declare what the input leaves undeclared")
    p.add_argument("--trace", action="store_true", help="describe each collection on standard error")
    p.add_argument(
        "--design",
        choices=["statepoint", "shadow-stack"],
        default="statepoint",
        help="for IR: how the collector finds roots; shadow-stack turns RS4GC's statepoints into "
        "gcroot slots (statepoints-to-gcroots) and lowers them (shadow-stack-gc-lowering). "
        'Functions with gc "shadow-stack" are lowered either way',
    )
    p.add_argument(
        "--target",
        choices=["x86-64", "x86-32"],
        default="x86-64",
        help="x86-32: lower the IR as written (no statepoints) with CoreCLR's JIT32 conventions and "
        "find roots through its x86 GC info",
    )
    add_gc_registers(p)
    from .emu.budget import DEFAULT_MAX_INSTRUCTIONS, DEFAULT_MAX_SECONDS

    p.add_argument(
        "--max-instructions",
        type=int,
        default=DEFAULT_MAX_INSTRUCTIONS,
        metavar="N",
        help=f"stop with an error after N guest instructions (default {DEFAULT_MAX_INSTRUCTIONS}; 0: no limit)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=DEFAULT_MAX_SECONDS,
        metavar="S",
        help=f"stop with an error after S seconds of wall-clock time, runtime calls and collections "
        f"included (default {DEFAULT_MAX_SECONDS:g}; 0: no limit)",
    )
    add_regalloc(p)
    add_disable_verify(p)
    return p


def _run(args: argparse.Namespace, budget: _Budget):
    """Read the input the way ``--target`` and its file type ask, and run it (errors pass through)."""
    from .runtime.run import gc_strategy_warning, run_module, run_object, trace_collection
    from .runtime.shadowstack import lower_for_shadow_stack

    def on_collect(runtime, done) -> None:
        print(trace_collection(runtime, done), file=sys.stderr)

    hook = on_collect if args.trace else None

    if args.target == "x86-32":
        from .runtime.run32 import run_module32, trace_collection32

        module = read_module(args.input, args.implicit_declarations, not args.disable_verify, args.entry)
        return run_module32(
            module,
            gc=args.gc,
            stress=args.stress,
            verify=args.verify_heap,
            entry=args.entry,
            gc_registers=args.gc_registers,
            **budget,
            on_collect=(lambda rt, done: print(trace_collection32(rt, done), file=sys.stderr)) if args.trace else None,
        )
    text = None
    if not args.input.endswith(".ll"):
        data = read_bytes_input(args.input, what="an object")
        if args.input != "-" or data.startswith(ELF_MAGIC):
            return run_object(
                data,
                gc=args.gc,
                stress=args.stress,
                verify=args.verify_heap,
                entry=args.entry,
                on_collect=hook,
                **budget,
            )
        if len(data) > TEXT_INPUT_LIMIT:
            raise InputError("<stdin>", f"input is larger than the {TEXT_INPUT_LIMIT >> 20} MiB limit of IR text")
        text = decode_text(data, args.input)  # IR on standard input
    module = driver_module(
        args.input, args.place_safepoints, args.implicit_declarations, not args.disable_verify, args.entry, text
    )
    lower_for_shadow_stack(module, convert_statepoints=args.design == "shadow-stack")
    warning = gc_strategy_warning(module) if args.gc != "none" else None
    if warning:
        print(f"{args.input}: warning: {warning}", file=sys.stderr)
    return run_module(
        module,
        gc=args.gc,
        stress=args.stress,
        verify=args.verify_heap,
        entry=args.entry,
        on_collect=hook,
        regalloc=args.regalloc,
        gc_registers=args.gc_registers,
        **budget,
    )
