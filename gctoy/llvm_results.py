"""LLVM's results for the chapters: computed by LLVM where it is installed, read from a store otherwise.

A chapter that compares gctoy with LLVM 14 (``llc`` objects, ``llvm-readobj`` text) must still run
where LLVM is not installed (Binder, conda). Every LLVM result a chapter uses is therefore kept in
``gctoy/llvm_results/<chapter>/``, named by what was asked (tool, flags, input) through a SHA-256
key:

    <name>-<key>.o      an object made by ``llc -filetype=obj``
    <name>-<key>.txt    the text a tool printed (``llvm-readobj --stackmap``, ``llc`` assembly)
    <name>-<key>.json   a tool's exit status with its standard output (and, for :meth:`LLVMResults.run`,
                        what it wrote to standard error before any crash report, with the tool's path
                        replaced by its name, so that the answer is the same on every machine)

Where LLVM 14 is installed the tools run, and their answer must equal the stored one (a chapter
that changes what it asks LLVM fails until the store is refreshed with ``GCTOY_STORE_LLVM_RESULTS=1``,
which writes the new answers). Where it is not, the stored answers are used and
:meth:`LLVMResults.status` says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import GCToyError
from .llvm_tools import tool_path

__all__ = ["LLVMResults", "StoredResultError", "ToolRun", "STORE", "REFRESH_ENV", "stored_line"]

#: where the stored answers live (inside the package, so that a copied chapter still finds them)
STORE = Path(__file__).resolve().parent / "llvm_results"
#: set to 1 to (re)write the stored answers from the installed LLVM
REFRESH_ENV = "GCTOY_STORE_LLVM_RESULTS"


def stored_line(version: int = 14) -> str:
    """What a chapter's cell prints before it shows a stored answer of LLVM ``version`` (not installed here)."""
    return f"LLVM {version} not installed: showing the stored result"


class StoredResultError(GCToyError):
    """A stored LLVM answer is missing, or differs from what the installed LLVM now answers."""


@dataclass(frozen=True)
class ToolAnswer:
    """What one run of a tool answered: its exit status and standard output."""

    returncode: int
    stdout: str


@dataclass(frozen=True)
class ToolRun:
    """What one run of a tool answered: its exit status, standard output, and what it said on standard error."""

    returncode: int
    stdout: str
    stderr: str


#: where a crashing LLVM tool's report (the bug-report request, then the stack dump) begins on stderr
_CRASH_REPORT = ("PLEASE submit a bug report", "Stack dump:")


def _said(stderr: str, path: str, name: str) -> str:
    """A tool's stderr without its crash report, its path written as its name (the same on every machine)."""
    lines = []
    for line in stderr.splitlines(keepends=True):
        if line.startswith(_CRASH_REPORT):
            break
        lines.append(line.replace(path, name))
    return "".join(lines)


def _key(*parts: str | bytes) -> str:
    """A short SHA-256 key of everything that decides a tool's answer."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


class LLVMResults:
    """LLVM 14's ``llc`` and ``llvm-readobj`` for one chapter, with the stored answers as a fallback."""

    def __init__(self, chapter: str, version: int = 14) -> None:
        self.chapter = chapter
        self.version = version
        self.llc = tool_path("llc", version)
        self.readobj = tool_path("llvm-readobj", version)
        self.opt = tool_path("opt", version)
        self.store = STORE / chapter
        self.work = Path(tempfile.mkdtemp(prefix=f"gctoy-{chapter}-"))
        self.refresh = os.environ.get(REFRESH_ENV) == "1"

    @property
    def installed(self) -> bool:
        """Whether LLVM's tools run here (else the stored answers are shown)."""
        return self.llc is not None and self.readobj is not None

    def runs(self, *tools: str) -> bool:
        """Whether all of ``tools`` ("llc", "opt", "llvm-readobj"; default: all three) run here."""
        paths = {"llc": self.llc, "opt": self.opt, "llvm-readobj": self.readobj}
        return all(paths[tool] is not None for tool in tools or paths)

    def status(self) -> str:
        """One line for the chapter: which tools run, or that the stored answers are shown."""
        if self.installed:
            return f"llc: {self.llc}  llvm-readobj: {self.readobj}"
        return (
            f"{stored_line(self.version)}s in the cells below "
            f"(made by LLVM {self.version}'s llc and llvm-readobj, kept with gctoy)"
        )

    def announce(self, *tools: str) -> None:
        """Print :func:`stored_line` where one of ``tools`` (default: all) is not installed; nothing where they run.

        A cell that shows LLVM's answer calls it first, so that a reader without LLVM knows that the
        answer below was stored with gctoy, not computed on their machine.
        """
        if not self.runs(*tools):
            print(stored_line(self.version))

    # ------------------------------------------------------------------ the stored answers

    def _stored(self, filename: str, fresh: bytes | None) -> bytes:
        """The stored bytes of ``filename``, checked against (or, when refreshing, replaced by) ``fresh``."""
        path = self.store / filename
        if fresh is not None and self.refresh:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_bytes() != fresh:
                path.write_bytes(fresh)
            return fresh
        if not path.exists():
            raise StoredResultError(
                f"no stored LLVM result {path.relative_to(STORE.parent)}; run the chapter where LLVM "
                f"{self.version} is installed with {REFRESH_ENV}=1 to store it"
            )
        stored = path.read_bytes()
        if fresh is not None and fresh != stored:
            raise StoredResultError(
                f"LLVM {self.version} now answers differently from the stored {path.relative_to(STORE.parent)}; "
                f"refresh the store with {REFRESH_ENV}=1"
            )
        return stored

    # ------------------------------------------------------------------ the tools

    def llc_object(self, ir_text: str, name: str, *flags: str) -> Path:
        """``llc -O2 -filetype=obj FLAGS`` of ``ir_text`` as ``WORK/name.o`` (made, or copied from the store)."""
        source = self.work / f"{name}.ll"
        source.write_text(ir_text, encoding="utf-8")
        obj = self.work / f"{name}.o"
        fresh = None
        if self.llc is not None:
            # run in the working folder on a relative name: the object then records "name.ll" as its
            # source file, not a temporary path, and the same input always gives the same bytes
            subprocess.run(
                [self.llc, "-O2", "-filetype=obj", *flags, source.name, "-o", obj.name], cwd=self.work, check=True
            )
            fresh = obj.read_bytes()
        data = self._stored(f"{name}-{_key('llc-obj', *flags, ir_text)}.o", fresh)
        if fresh is None:
            obj.write_bytes(data)
        return obj

    def readobj_stackmap(self, obj: Path | str) -> str:
        """What ``llvm-readobj --stackmap`` prints for an object, from "LLVM StackMap Version" on."""
        obj = Path(obj)
        data = obj.read_bytes()
        fresh = None
        if self.readobj is not None:
            text = subprocess.run(
                [self.readobj, "--stackmap", str(obj)], capture_output=True, text=True, check=True
            ).stdout
            fresh = text[text.index("LLVM StackMap Version") :].encode("utf-8")
        return self._stored(f"{obj.stem}-{_key('readobj-stackmap', data)}.txt", fresh).decode("utf-8")

    def llc_text(self, ir_text: str, name: str, *flags: str) -> ToolAnswer:
        """``llc FLAGS -o -`` of ``ir_text``: its exit status and the assembly it printed."""
        fresh = None
        if self.llc is not None:
            done = subprocess.run([self.llc, *flags, "-", "-o", "-"], input=ir_text, capture_output=True, text=True)
            fresh = json.dumps({"returncode": done.returncode, "stdout": done.stdout}, indent=1).encode("utf-8")
        raw = self._stored(f"{name}-{_key('llc-text', *flags, ir_text)}.json", fresh)
        answer = json.loads(raw)
        return ToolAnswer(answer["returncode"], answer["stdout"])

    def run(self, tool: str, args: list[str] | tuple[str, ...], stdin: str, name: str | None = None) -> ToolRun:
        """``tool ARGS`` (``opt`` or ``llc``) with ``stdin`` as its input: what it answered.

        Its standard error is kept up to a crash report, with the tool's path written as its name
        (``opt: <stdin>:3:3: error: ...``). Stored as ``<name>-<key>.json`` (``name`` defaults to the tool).
        """
        path = {"llc": self.llc, "opt": self.opt}[tool]
        fresh = None
        if path is not None:
            done = subprocess.run([path, *args], input=stdin, capture_output=True, text=True)
            answer = {"returncode": done.returncode, "stdout": done.stdout, "stderr": _said(done.stderr, path, tool)}
            fresh = json.dumps(answer, indent=1).encode("utf-8")
        raw = self._stored(f"{name or tool}-{_key('run', tool, *args, stdin)}.json", fresh)
        answer = json.loads(raw)
        return ToolRun(answer["returncode"], answer["stdout"], answer["stderr"])

    def objects(self) -> list[Path]:
        """The objects made (or restored) so far, sorted by name."""
        return sorted(self.work.glob("*.o"))

    def cleanup(self) -> None:
        """Remove the chapter's working folder."""
        shutil.rmtree(self.work, ignore_errors=True)
