"""What the ``gctoy`` commands share: their common options, reading a module for ``llc``/``run``, and
reporting bad input as ``file:line:col: error: message``."""

from __future__ import annotations

import argparse
import sys

from .errors import GCToyError, IRParseError, VerifyError
from .fileio import write_output
from .inputs import InputError, read_text_input
from .ir import parse_module
from .ir.verifier import check_module


def add_regalloc(p: argparse.ArgumentParser) -> None:
    """The ``--regalloc`` / ``--no-regalloc`` flag of ``gctoy llc`` and ``gctoy run``."""
    p.add_argument(
        "--regalloc",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="x86-64: keep values in registers (linear scan; GC pointers live across a statepoint in "
        "callee-saved registers, recorded as Register locations, or in spill slots), the default; "
        "--no-regalloc gives every value a stack slot (functions with vector, i128 or aggregate "
        "values always get slots)",
    )


#: GC pointers kept in callee-saved registers when --gc-registers is not given: none on x86-64 (llc 14's
#: default spills every gc-live value), ESI and EDI on x86-32 (as the JIT homes them; see frame32.DEFAULT_HOMES)
DEFAULT_GC_REGISTERS = {"x86-64": 0, "x86-32": 2}


def add_gc_registers(p: argparse.ArgumentParser) -> None:
    """``--gc-registers N`` (x86-64 also by llc's name, ``-max-registers-for-gc-values=N``)."""
    p.add_argument(
        "--gc-registers",
        "-max-registers-for-gc-values",
        dest="gc_registers",
        type=int,
        default=None,
        metavar="N",
        help="GC pointers in callee-saved registers across calls instead of stack slots. "
        "x86-64: up to N gc-live values per statepoint (default 0, as llc's "
        "-max-registers-for-gc-values); x86-32: up to N (0-3) per function in ESI/EDI/EBX (default 2); "
        "the stack walk finds them in the callees' save slots",
    )


def gc_registers_for(p: argparse.ArgumentParser, args) -> int:
    """The ``--gc-registers`` value for the chosen target (its default, or an error for a bad N)."""
    if args.gc_registers is None:
        return DEFAULT_GC_REGISTERS[args.target]
    top = 3 if args.target == "x86-32" else None
    if args.gc_registers < 0 or (top is not None and args.gc_registers > top):
        p.error(
            f"--gc-registers takes 0 to {top} for x86-32"
            if top is not None
            else "--gc-registers takes a number that is not negative"
        )
    return args.gc_registers


def add_disable_verify(p: argparse.ArgumentParser) -> None:
    """``-disable-verify``: skip the structural verifier that checks the input before anything else runs."""
    p.add_argument(
        "-disable-verify",
        "--disable-verify",
        dest="disable_verify",
        action="store_true",
        help="do not verify the input module first (as LLVM's flag; invalid IR may then be "
        "miscompiled or crash the tool)",
    )


def module_is_opaque(module) -> bool:
    """Print a module in the pointer style it was written in."""
    from .ir.printer import uses_opaque_pointers

    return uses_opaque_pointers(module)


#: the passes whose rules differ between LLVM 14 and LLVM 19 (``<llvm=N>`` chooses)
RELEASE_PASSES = ("rewrite-statepoints-for-gc", "place-safepoints")


def follow_input_release(pipeline: str, module) -> str:
    """Opaque-pointer input is IR of LLVM 15 or later: its ``rewrite-statepoints-for-gc`` and
    ``place-safepoints`` follow LLVM 19's rules unless the pipeline names a release (``<llvm=14>``).
    Typed input keeps LLVM 14's."""
    from .passes import split_pass, split_top_level

    if not any(name in pipeline for name in RELEASE_PASSES) or not module_is_opaque(module):
        return pipeline
    parts = []
    for entry in split_top_level(pipeline):
        name, opts = split_pass(entry)
        given = [o.strip() for o in (opts or "").split(";") if o.strip()]
        if name in RELEASE_PASSES and not any(o.startswith("llvm=") for o in given):
            entry = f"{name}<{';'.join([*given, 'llvm=19'])}>"
        parts.append(entry)
    return ",".join(parts)


def format_error(e: GCToyError, filename: str) -> str:
    """``file:line:col: error: message`` where the error knows its place, else ``file: error: message``."""
    if isinstance(e, (IRParseError, InputError)):
        return str(e)
    if isinstance(e, VerifyError):
        return str(e) if e.location else f"{filename}: error: {e.message}"
    return f"{filename}: error: {e}"


def read_module(path: str, implicit: bool, verify: bool = True, entry: str | None = None, text: str | None = None):
    """Parse IR for ``llc``/``run``, verify it (unless ``-disable-verify``), check its declarations of the
    runtime's functions and (for ``run``) the entry function against the guest ABI. ``text``: the IR,
    already read from ``path``."""
    from .runtime.guest_abi import check_entry, check_runtime_declarations

    if text is None:
        text = read_text_input(path)
    module = parse_module(text, path, implicit_declarations=implicit)
    for note in module.notes:
        print(note, file=sys.stderr)
    if verify:
        check_module(module)
    check_gc_names(module)
    check_runtime_declarations(module, text, path)
    if entry is not None:
        check_entry(module, entry, text, path)
    return module


def check_gc_names(module) -> None:
    """Every definition's ``gc "name"`` names a registered strategy (llc looks each one up), else an error
    at that ``define``."""
    from .codegen.codegen_error import where
    from .ir.names import escape_string
    from .strategy import UnknownStrategyError, get_strategy, known_strategies

    for fn in module.definitions():
        if fn.gc is None:
            continue
        try:
            get_strategy(fn.gc)
        except UnknownStrategyError:
            raise VerifyError(
                f'unsupported GC: "{escape_string(fn.gc)}" (known strategies: {", ".join(known_strategies())})',
                where(fn),
            ) from None


def driver_module(
    path: str,
    place_safepoints: bool,
    implicit: bool,
    verify: bool = True,
    entry: str | None = None,
    text: str | None = None,
):
    """Read IR for ``llc``/``run`` (see read_module): a module still in the abstract machine model (calls, no
    statepoints) gets ``rewrite-statepoints-for-gc`` first (and ``place-safepoints`` if asked)."""
    from .ir.statepoint import statepoints
    from .passes import run
    from .passes.rewrite_statepoints import STATEPOINT_STRATEGIES

    module = read_module(path, implicit, verify, entry, text)
    gc_functions = [f for f in module.definitions() if f.gc in STATEPOINT_STRATEGIES]
    if gc_functions and not any(statepoints(f) for f in gc_functions):
        pipeline = ("place-safepoints," if place_safepoints else "") + "rewrite-statepoints-for-gc"
        run(module, follow_input_release(pipeline, module))
    return module


def report_failure(e: OSError | GCToyError, path: str) -> int:
    """Report an unreadable input or bad input on standard error, as ``file: error: ...``; exit status 1."""
    if isinstance(e, OSError):
        print(f"{path}: error: {e.strerror or e}", file=sys.stderr)
    else:
        print(format_error(e, path), file=sys.stderr)
    return 1


def code_parts(compiled) -> list[str]:
    """The ``.text`` and (if any) ``.data`` parts of a compiled module's assembly listing."""
    parts = ["\t.text", compiled.asm_text.rstrip()]
    if compiled.data_text.strip():
        parts += ["", "\t.data", compiled.data_text.rstrip()]
    return parts


def write_lines(parts: list[str], output: str | None) -> int:
    """Write the lines to ``output`` (a path; ``-`` or None: standard output); exit status 0."""
    write_output("\n".join(parts) + "\n", output)
    return 0
