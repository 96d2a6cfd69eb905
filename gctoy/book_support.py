"""What the chapters use to compare gctoy with LLVM 14, in one place.

Every function works where LLVM is not installed (Binder, conda). Given a chapter's
:class:`gctoy.llvm_results.LLVMResults` as ``results``, the functions that run ``opt`` or ``llc`` take
LLVM's answer from the tool where it is installed (checked against the answer stored with gctoy) and
from the store where it is not, so the chapter shows LLVM's side everywhere (its cell first prints
``results.announce()``'s line). Without ``results`` they say in their result that LLVM is not installed,
and the chapter shows gctoy's side alone. LLVM's tools are found through :mod:`gctoy.llvm_tools`
(``GCTOY_LLVM_PATH`` applies).
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import tempfile

from gctoy.llvm_results import LLVMResults, ToolRun
from gctoy.llvm_tools import tool_path

__all__ = [
    "NO_LLVM",
    "opt14_path",
    "llvm14_verdict",
    "opt14",
    "reprinted",
    "compare_with_opt14",
    "safepoint_verifier_report",
    "llvm_error",
]

#: what a comparison says where LLVM 14's opt is not installed
NO_LLVM = "(LLVM 14's opt is not installed: nothing to compare with)"


def opt14_path() -> str | None:
    """LLVM 14's ``opt``, or None where it is not installed."""
    return tool_path("opt", 14)


def _run(tool: str, args: list[str], ir_text: str, results: LLVMResults | None) -> ToolRun:
    """``tool ARGS`` (LLVM 14's opt or llc) on some IR text on stdin: through ``results`` (the tool, or the
    stored answer) if given, else the tool itself (RuntimeError with NO_LLVM / NO_LLC where it is missing).
    On stderr the tool's path is written as its name."""
    if results is not None:
        return results.run(tool, args, ir_text)
    path = opt14_path() if tool == "opt" else llc14_path()
    if path is None:
        raise RuntimeError(NO_LLVM if tool == "opt" else NO_LLC)
    done = subprocess.run([path, *args], input=ir_text, capture_output=True, text=True)
    return ToolRun(done.returncode, done.stdout, done.stderr.replace(path, tool))


def llvm_error(stderr: str) -> str:
    """The first 'LLVM ERROR: ...' line a tool wrote to stderr, or '(no LLVM ERROR line)'."""
    return next((line for line in stderr.splitlines() if line.startswith("LLVM ERROR")), "(no LLVM ERROR line)")


def llvm14_verdict(ir_text: str, results: LLVMResults | None = None) -> str:
    """LLVM 14's verifier on some IR text: 'accepted', or its first error line."""
    if results is None and opt14_path() is None:
        return "(LLVM 14's opt is not installed)"
    done = _run("opt", ["-passes=verify", "-S", "-o", "/dev/null", "-"], ir_text, results)
    if done.returncode == 0:
        return "accepted"
    return done.stderr.splitlines()[0].removeprefix("opt: ")


def opt14(ir_text: str, *args: str, results: LLVMResults | None = None) -> str:
    """LLVM 14's opt with ``args`` on some IR text: the module it prints (RuntimeError with its message)."""
    done = _run("opt", [*args, "-S", "-o", "-", "-"], ir_text, results)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return done.stdout


def reprinted(ir_text: str, results: LLVMResults | None = None) -> str:
    """The module as LLVM 14 prints it, without the two header lines that name the input file."""
    lines = opt14(ir_text, "-passes=verify", results=results).splitlines()
    return "\n".join(line for line in lines if not line.startswith(("; ModuleID", "source_filename")))


def compare_with_opt14(source: str, ours: str, *opt_args: str) -> str:
    """'same text' if LLVM 14's opt (with ``opt_args``) turns ``source`` into ``ours``, else a unified diff."""
    if opt14_path() is None:
        return NO_LLVM
    theirs, mine = reprinted(opt14(source, *opt_args)), reprinted(ours)
    if theirs == mine:
        return "same text"
    return "\n".join(difflib.unified_diff(theirs.splitlines(), mine.splitlines(), "LLVM 14", "gctoy", lineterm=""))


def _use_key(text: str) -> str:
    """'%c' for '%c = icmp ...', 'store' for 'store i8 ...' (an instruction as LLVM prints it)."""
    text = text.strip()
    return text.split(" = ")[0] if text.startswith("%") and " = " in text else text.split()[0]


def safepoint_verifier_report(ir_text: str) -> tuple[dict[str, list[tuple[str, str]]], str]:
    """LLVM 14's SafepointIRVerifier in print-only mode: {function: [(value, use), ...]} and its raw report."""
    opt = opt14_path()
    if opt is None:
        raise RuntimeError(NO_LLVM)
    done = subprocess.run(
        [opt, "-passes=verify<safepoint-ir>", "-safepoint-ir-verifier-print-only", "-disable-output", "-"],
        input=ir_text,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    verdict: dict[str, list[tuple[str, str]]] = {}
    fn: str | None = None
    value = ""
    for line in done.stderr.splitlines():
        if line.startswith("Verifying gc pointers in function: "):
            fn = line.split(": ", 1)[1]
            verdict[fn] = []
        elif line.startswith("Def:"):
            value = _use_key(line[4:]) if " = " in line else line.split()[-1]
        elif line.startswith("Use:") and fn is not None:
            verdict[fn].append((value, _use_key(line[4:])))
    return verdict, done.stderr


# --- PlaceSafepoints (chapter 05): gctoy's pass and LLVM 14's, with gctoy's option names ---------------

__all__ += ["SPP_FLAGS", "spp_flags", "place_safepoints", "compare_place_safepoints_with_opt14"]

#: gctoy's ``place-safepoints<...>`` options and LLVM 14's (hidden) flags for the same thing
SPP_FLAGS = {
    "no-entry": "-spp-no-entry",
    "no-backedge": "-spp-no-backedge",
    "no-call": "-spp-no-call",
    "all-backedges": "-spp-all-backedges",
    "split-backedge": "-spp-split-backedge",
    "trip-width": "-spp-counted-loop-trip-width",
}


def spp_flags(options: str) -> list[str]:
    """'no-entry;trip-width=8' -> ['-spp-no-entry', '-spp-counted-loop-trip-width=8'] (KeyError: no LLVM flag)."""
    out = []
    for item in filter(None, options.split(";")):
        key, eq, value = item.partition("=")
        out.append(SPP_FLAGS[key] + eq + value)
    return out


def place_safepoints(ir_text: str, options: str = ""):
    """gctoy's PlaceSafepoints on some IR text (options as in 'no-entry;trip-width=8'): the module."""
    from gctoy.ir import parse_module
    from gctoy.passes import run

    module = parse_module(ir_text)
    run(module, "place-safepoints" + (f"<{options}>" if options else ""))
    return module


def compare_place_safepoints_with_opt14(source: str, options: str = "") -> str:
    """'same text' if LLVM 14's PlaceSafepoints (legacy pass manager, the same options as LLVM flags)
    prints what gctoy's does, else a unified diff; :data:`NO_LLVM` where LLVM 14 is not installed."""
    from gctoy.ir import print_module

    if opt14_path() is None:
        return NO_LLVM
    ours = print_module(place_safepoints(source, options))
    return compare_with_opt14(source, ours, "-enable-new-pm=0", "-place-safepoints", *spp_flags(options))


# --- the safepoint verifier (chapter 06): gctoy's verdict against LLVM 14's ---------------------------

__all__ += ["gctoy_safepoint_verdict", "compare_safepoint_verifiers"]


def gctoy_safepoint_verdict(module) -> dict[str, list[tuple[str, str]]]:
    """gctoy's find_unrelocated_uses, summarised like :func:`safepoint_verifier_report`:
    {function: [(value used, instruction that uses it), ...]}, a void instruction named by its opcode."""
    from gctoy.ir.analysis import LocalNames
    from gctoy.ir.types import VOID
    from gctoy.passes.verify_safepoints import find_unrelocated_uses

    verdict: dict[str, list[tuple[str, str]]] = {}
    for fn in module.definitions():
        names = LocalNames(fn)
        verdict[fn.name] = [
            (names(u.value), names(u.instruction) if u.instruction.type != VOID else u.instruction.opcode)
            for u in find_unrelocated_uses(fn)
        ]
    return verdict


def compare_safepoint_verifiers(module, show: bool = True) -> str:
    """LLVM 14's SafepointIRVerifier report on the module (if ``show``), then the line
    '-> gctoy and LLVM 14 agree: {...}'; AssertionError if the two verdicts differ;
    :data:`NO_LLVM` where LLVM 14 is not installed."""
    from gctoy.ir import print_module

    if opt14_path() is None:
        return NO_LLVM
    theirs, report = safepoint_verifier_report(print_module(module))
    ours = gctoy_safepoint_verdict(module)
    if ours != theirs:
        raise AssertionError(f"gctoy {ours} != LLVM 14 {theirs}\n{report}")
    return (report if show else "") + f"-> gctoy and LLVM 14 agree: {ours}"


# --- LLVM 14's code generator (llc): its output, and the IR it leaves after one of its IR passes ---

__all__ += ["NO_LLC", "llc14_path", "llc14", "llc14_ir_after", "compare_with_llc14", "compare_shadow_stack_lowering"]

#: what a comparison says where LLVM 14's llc (or the opt that reprints its IR) is not installed
NO_LLC = "(LLVM 14's llc is not installed: nothing to compare with)"
# --- LLVM 14's llc: the machine code and the stack map of some IR (chapter 02 and later) ---------

__all__ += ["not_installed", "llc14_asm", "llc14_stackmap", "llc14_disassembly"]


def not_installed(result: str) -> bool:
    """Whether a helper's result is its sentence saying that a tool is not installed (``NO_LLVM``,
    ``NO_LLC``, ...), not the tool's output: every such sentence is in parentheses."""
    return result.startswith("(") and "not installed" in result.partition(")")[0]


def llc14_path() -> str | None:
    """LLVM 14's ``llc``, or None where it is not installed."""
    return tool_path("llc", 14)


def llc14(ir_text: str, *flags: str, results: LLVMResults | None = None) -> tuple[int, str, str]:
    """LLVM 14's llc with ``flags`` on some IR text, output to stdout: (exit status, stdout, stderr).

    A failure of llc is part of the answer (a chapter may show LLVM rejecting a module): stderr then
    holds its message (up to a crash report, with llc's path written as ``llc``). Without ``results``,
    where llc is not installed this raises RuntimeError(NO_LLC).
    """
    done = _run("llc", [*flags, "-o", "-", "-"], ir_text, results)
    return done.returncode, done.stdout, done.stderr


def llc14_ir_after(ir_text: str, pass_name: str, results: LLVMResults | None = None) -> str:
    """The module as LLVM 14's llc leaves it after its IR pass ``pass_name`` (``-O0 -stop-after``).

    llc writes a MIR file; its IR part (between ``--- |`` and ``...``, indented by two spaces) is
    returned unindented. RuntimeError with llc's message if llc fails, NO_LLC where it is not installed.
    """
    status, mir, err = llc14(ir_text, "-O0", f"-stop-after={pass_name}", results=results)
    if status != 0:
        raise RuntimeError(err)
    _, start, rest = mir.partition("--- |\n")
    if not start:
        raise RuntimeError(f"no IR part in llc's MIR output after {pass_name}")
    ir_part = rest.partition("\n...")[0]
    return "\n".join(line[2:] if line.startswith("  ") else line for line in ir_part.splitlines()) + "\n"


def _without_target(text: str, results: LLVMResults | None) -> str:
    """Reprinted text without the ``target datalayout`` / ``target triple`` lines llc adds."""
    return "\n".join(line for line in reprinted(text, results).splitlines() if not line.startswith("target "))


def compare_with_llc14(source: str, ours: str, pass_name: str, results: LLVMResults | None = None) -> str:
    """'same text' if LLVM 14's llc, stopped after ``pass_name``, turns ``source`` into ``ours``, else a unified diff.

    Both modules are compared as LLVM 14's opt prints them, without the header lines and the target
    lines llc adds. Without ``results``, NO_LLC where llc or opt is not installed; llc's error as text if
    llc fails.
    """
    if results is None and (llc14_path() is None or opt14_path() is None):
        return NO_LLC
    try:
        theirs = _without_target(llc14_ir_after(source, pass_name, results), results)
    except RuntimeError as error:
        return f"(LLVM 14's llc failed: {str(error).strip()})"
    mine = _without_target(ours, results)
    if theirs == mine:
        return "same text"
    return "\n".join(difflib.unified_diff(theirs.splitlines(), mine.splitlines(), "LLVM 14", "gctoy", lineterm=""))


def compare_shadow_stack_lowering(source: str, ours: str, results: LLVMResults | None = None) -> str:
    """:func:`compare_with_llc14` for LLVM 14's ``shadow-stack-gc-lowering`` (the shadow stack's IR pass)."""
    return compare_with_llc14(source, ours, "shadow-stack-gc-lowering", results)


def _llc14(llc: str, ir_text: str, args: tuple[str, ...], out: str) -> None:
    """Run ``llc`` (``-O2`` unless ``args`` name an ``-O`` level) on ``ir_text``, writing ``out``."""
    opt_level = () if any(a.startswith("-O") for a in args) else ("-O2",)
    done = subprocess.run([llc, *opt_level, *args, "-o", out, "-"], input=ir_text, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)


def llc14_asm(ir_text: str, *args: str) -> str:
    """The x86-64 assembly LLVM 14's llc (``-O2`` and ``args``) makes of some IR; ``NO_LLC`` where llc
    is not installed (RuntimeError with llc's message if it refuses the IR)."""
    llc = llc14_path()
    if llc is None:
        return NO_LLC
    with tempfile.TemporaryDirectory(prefix="gctoy-llc14-") as tmp:
        out = os.path.join(tmp, "module.s")
        _llc14(llc, ir_text, args, out)
        with open(out, encoding="utf-8") as f:
            return f.read()


def _with_object(ir_text: str, args: tuple[str, ...], tool: list[str] | None, missing: str) -> str:
    """Compile ``ir_text`` to an object file with llc and run ``tool`` (argv without the file) on it."""
    llc = llc14_path()
    if llc is None:
        return NO_LLC
    if tool is None:
        return missing
    with tempfile.TemporaryDirectory(prefix="gctoy-llc14-") as tmp:
        obj = os.path.join(tmp, "module.o")
        _llc14(llc, ir_text, ("-filetype=obj", *args), obj)
        done = subprocess.run([*tool, obj], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout


def llc14_stackmap(ir_text: str, *args: str) -> str:
    """``llvm-readobj --stackmap`` of the object LLVM 14's llc (``-O2`` and ``args``) makes of some IR;
    a sentence in parentheses where llc or llvm-readobj is not installed."""
    readobj = tool_path("llvm-readobj", 14)
    return _with_object(
        ir_text, args, None if readobj is None else [readobj, "--stackmap"], "(LLVM 14's llvm-readobj is not installed)"
    )


def llc14_disassembly(ir_text: str, *args: str) -> str:
    """``objdump -d --no-show-raw-insn`` (GNU binutils) of the object LLVM 14's llc (``-O2`` and ``args``)
    makes of some IR; a sentence in parentheses where llc or objdump is not installed."""
    objdump = shutil.which("objdump")
    return _with_object(
        ir_text, args, None if objdump is None else [objdump, "-d", "--no-show-raw-insn"], "(objdump is not installed)"
    )
