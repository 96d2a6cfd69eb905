"""What the chapters use to compare gctoy with LLVM 14, in one place.

Every function works where LLVM is not installed (Binder, conda): it then says so in its result
instead of failing, so a chapter goes on and shows gctoy's side alone. LLVM's tools are found
through :mod:`gctoy.llvm_tools` (``GCTOY_LLVM_PATH`` applies).
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import tempfile

from gctoy.llvm_tools import tool_path

__all__ = [
    "NO_LLVM",
    "opt14_path",
    "llvm14_verdict",
    "opt14",
    "reprinted",
    "compare_with_opt14",
    "safepoint_verifier_report",
]

#: what a comparison says where LLVM 14's opt is not installed
NO_LLVM = "(LLVM 14's opt is not installed: nothing to compare with)"


def opt14_path() -> str | None:
    """LLVM 14's ``opt``, or None where it is not installed."""
    return tool_path("opt", 14)


def llvm14_verdict(ir_text: str) -> str:
    """LLVM 14's verifier on some IR text: 'accepted', or its first error line."""
    opt = opt14_path()
    if opt is None:
        return "(LLVM 14's opt is not installed)"
    done = subprocess.run([opt, "-passes=verify", "-S", "-o", "/dev/null", "-"],
                          input=ir_text, capture_output=True, text=True)
    if done.returncode == 0:
        return "accepted"
    return done.stderr.splitlines()[0].removeprefix(opt + ": ")


def opt14(ir_text: str, *args: str) -> str:
    """LLVM 14's opt with ``args`` on some IR text: the module it prints (RuntimeError with its message)."""
    opt = opt14_path()
    if opt is None:
        raise RuntimeError(NO_LLVM)
    done = subprocess.run([opt, *args, "-S", "-o", "-", "-"], input=ir_text, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return done.stdout


def reprinted(ir_text: str) -> str:
    """The module as LLVM 14 prints it, without the two header lines that name the input file."""
    lines = opt14(ir_text, "-passes=verify").splitlines()
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
    done = subprocess.run([opt, "-passes=verify<safepoint-ir>", "-safepoint-ir-verifier-print-only",
                           "-disable-output", "-"], input=ir_text, capture_output=True, text=True)
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


# --- LLVM 14's llc: the machine code and the stack map of some IR (chapter 02 and later) ---------

__all__ += ["NO_LLC", "not_installed", "llc14_path", "llc14_asm", "llc14_stackmap", "llc14_disassembly"]

#: what the llc helpers say where LLVM 14's llc is not installed
NO_LLC = "(LLVM 14's llc is not installed)"


def not_installed(result: str) -> bool:
    """Whether a helper's result is its sentence saying that a tool is not installed (``NO_LLVM``,
    ``NO_LLC``, ...), not the tool's output: every such sentence is in parentheses."""
    return result.startswith("(") and "not installed" in result.partition(")")[0]


def llc14_path() -> str | None:
    """LLVM 14's ``llc``, or None where it is not installed."""
    return tool_path("llc", 14)


def _llc14(ir_text: str, args: tuple[str, ...], out: str) -> None:
    """Run llc (``-O2`` unless ``args`` name an ``-O`` level) on ``ir_text``, writing ``out``."""
    opt_level = () if any(a.startswith("-O") for a in args) else ("-O2",)
    done = subprocess.run([llc14_path(), *opt_level, *args, "-o", out, "-"], input=ir_text,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)


def llc14_asm(ir_text: str, *args: str) -> str:
    """The x86-64 assembly LLVM 14's llc (``-O2`` and ``args``) makes of some IR; ``NO_LLC`` where llc
    is not installed (RuntimeError with llc's message if it refuses the IR)."""
    if llc14_path() is None:
        return NO_LLC
    with tempfile.TemporaryDirectory(prefix="gctoy-llc14-") as tmp:
        out = os.path.join(tmp, "module.s")
        _llc14(ir_text, args, out)
        with open(out, encoding="utf-8") as f:
            return f.read()


def _with_object(ir_text: str, args: tuple[str, ...], tool: list[str] | None, missing: str) -> str:
    """Compile ``ir_text`` to an object file with llc and run ``tool`` (argv without the file) on it."""
    if llc14_path() is None:
        return NO_LLC
    if tool is None:
        return missing
    with tempfile.TemporaryDirectory(prefix="gctoy-llc14-") as tmp:
        obj = os.path.join(tmp, "module.o")
        _llc14(ir_text, ("-filetype=obj", *args), obj)
        done = subprocess.run([*tool, obj], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout


def llc14_stackmap(ir_text: str, *args: str) -> str:
    """``llvm-readobj --stackmap`` of the object LLVM 14's llc (``-O2`` and ``args``) makes of some IR;
    a sentence in parentheses where llc or llvm-readobj is not installed."""
    readobj = tool_path("llvm-readobj", 14)
    return _with_object(ir_text, args, None if readobj is None else [readobj, "--stackmap"],
                        "(LLVM 14's llvm-readobj is not installed)")


def llc14_disassembly(ir_text: str, *args: str) -> str:
    """``objdump -d --no-show-raw-insn`` (GNU binutils) of the object LLVM 14's llc (``-O2`` and ``args``)
    makes of some IR; a sentence in parentheses where llc or objdump is not installed."""
    objdump = shutil.which("objdump")
    return _with_object(ir_text, args, None if objdump is None else [objdump, "-d", "--no-show-raw-insn"],
                        "(objdump is not installed)")
