"""Finding LLVM's tools by release (``opt``, ``llc``, ``llvm-readobj``, ``lli``, ...) and running them.

One finder for the tests, the benchmarks and the book's helpers. A tool counts as LLVM ``N``'s
only if its ``--version`` says ``LLVM version N``. Where it looks:

* normally: Debian's versioned directory ``/usr/lib/llvm-N/bin``, then ``NAME-N`` and ``NAME``
  on ``PATH``;
* when the environment variable ``GCTOY_LLVM_PATH`` is set: only the directories it lists
  (separated like ``PATH``), each for ``NAME-N`` then ``NAME``. ``GCTOY_LLVM_PATH=`` (set and
  empty) hides every LLVM tool, which is how a test shows what happens on a machine without LLVM.

Standard library only: it needs neither Jupyter nor the rest of gctoy.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = [
    "ENV_PATH",
    "LLVMTools",
    "TOOL_NAMES",
    "find_lli",
    "find_llvm",
    "find_tool",
    "hidden_environment",
    "run_opt",
    "run_tool",
    "tool_major_version",
    "tool_path",
]

#: the environment variable that replaces the search path (empty: no LLVM at all)
ENV_PATH = "GCTOY_LLVM_PATH"
#: the tools every differential test of a release needs
TOOL_NAMES = ("opt", "llc", "llvm-readobj")


@dataclass(frozen=True)
class LLVMTools:
    """Paths of one LLVM release's `opt`, `llc` and `llvm-readobj`."""

    version: int
    opt: Path
    llc: Path
    llvm_readobj: Path


@cache
def _version_of(path: str, mtime_ns: int) -> int | None:
    """The major version ``path --version`` prints (cached per file and modification time)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"LLVM version (\d+)", out)
    return int(match.group(1)) if match else None


def tool_major_version(path: Path | str) -> int | None:
    """The major version a tool prints for `--version`, or None if it does not say."""
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        return None
    return _version_of(str(path), mtime)


def _which(name: str, directories: list[str]) -> Path | None:
    """The first executable file ``name`` in ``directories``."""
    for directory in directories:
        candidate = Path(directory or ".") / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _candidates(name: str, version: int) -> list[Path]:
    """Where ``name`` of LLVM ``version`` may be, in the order they are tried."""
    configured = os.environ.get(ENV_PATH)
    found: list[Path] = []
    if configured is not None:
        for directory in (d for d in configured.split(os.pathsep) if d):
            for file_name in (f"{name}-{version}", name):
                hit = _which(file_name, [directory])
                if hit is not None:
                    found.append(hit)
        return found
    found.append(Path(f"/usr/lib/llvm-{version}/bin") / name)
    path_dirs = os.environ.get("PATH", os.defpath).split(os.pathsep)
    for file_name in (f"{name}-{version}", name):
        hit = _which(file_name, path_dirs)
        if hit is not None:
            found.append(hit)
    return found


def find_tool(name: str, version: int) -> Path | None:
    """Locate one tool of LLVM `version` (see the module docstring for where), or None."""
    for candidate in _candidates(name, version):
        if candidate.is_file() and os.access(candidate, os.X_OK) and tool_major_version(candidate) == version:
            return candidate
    return None


def tool_path(name: str, version: int) -> str | None:
    """`find_tool` as a string (ready for ``subprocess`` and messages), or None: what the chapters use."""
    found = find_tool(name, version)
    return None if found is None else str(found)


def _where() -> str:
    """Where the finder looked, for messages."""
    configured = os.environ.get(ENV_PATH)
    if configured is None:
        return ""
    return f" in {ENV_PATH}={configured!r}" if configured else f" ({ENV_PATH} is empty: LLVM hidden)"


def find_llvm(version: int) -> tuple[LLVMTools | None, str]:
    """All three tools of LLVM `version`, or None and a sentence saying what is missing."""
    found = {name: find_tool(name, version) for name in TOOL_NAMES}
    opt, llc, llvm_readobj = found["opt"], found["llc"], found["llvm-readobj"]
    if opt is None or llc is None or llvm_readobj is None:
        missing = [name for name, path in found.items() if path is None]
        reason = (
            f"LLVM {version} not installed: {', '.join(missing)} not found{_where()} (apt-get install llvm-{version})"
        )
        return None, reason
    tools = LLVMTools(version=version, opt=opt, llc=llc, llvm_readobj=llvm_readobj)
    return tools, ""


def find_lli(version: int = 14) -> tuple[Path | None, str]:
    """LLVM `version`'s `lli` (found and checked like the other tools), or None and why not."""
    path = find_tool("lli", version)
    if path is None:
        return None, f"lli of LLVM {version} not found{_where()} (apt-get install llvm-{version})"
    return path, ""


def hidden_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of `environ` (default: this process's) in which the finder sees no LLVM tool."""
    env = dict(os.environ if environ is None else environ)
    env[ENV_PATH] = ""
    return env


def run_tool(
    path: Path | str, args: list[str], input_text: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run an LLVM tool with text on stdin; stdout and stderr are captured as text."""
    return subprocess.run([str(path), *args], input=input_text, capture_output=True, text=True, timeout=timeout)


def run_opt(opt_path: Path | str, args: list[str], input_text: str) -> subprocess.CompletedProcess[str]:
    """Run `opt` on IR text given on stdin, e.g. `run_opt(llvm14.opt, ["-passes=verify", "-S"], ir)`."""
    return run_tool(opt_path, args, input_text)
