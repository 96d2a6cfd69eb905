"""Finding and running the real LLVM tools that the differential tests use as an oracle."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

TOOL_NAMES = ("opt", "llc", "llvm-readobj")


@dataclass(frozen=True)
class LLVMTools:
    """Paths of one LLVM release's `opt`, `llc` and `llvm-readobj`."""

    version: int
    opt: Path
    llc: Path
    llvm_readobj: Path


def tool_major_version(path: Path | str) -> int | None:
    """The major version a tool prints for `--version`, or None if it does not say."""
    try:
        out = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"LLVM version (\d+)", out)
    return int(match.group(1)) if match else None


def find_tool(name: str, version: int) -> Path | None:
    """Locate one tool of LLVM `version`: Debian's versioned directory, then `name-N`, then `name` on PATH."""
    candidates = [Path(f"/usr/lib/llvm-{version}/bin") / name]
    for on_path in (f"{name}-{version}", name):
        found = shutil.which(on_path)
        if found:
            candidates.append(Path(found))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            if tool_major_version(candidate) == version:
                return candidate
    return None


def find_llvm(version: int) -> tuple[LLVMTools | None, str]:
    """All three tools of LLVM `version`, or None and a sentence saying what is missing."""
    found = {name: find_tool(name, version) for name in TOOL_NAMES}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        reason = (
            f"LLVM {version} not installed: {', '.join(missing)} not found "
            f"(apt-get install llvm-{version})"
        )
        return None, reason
    tools = LLVMTools(
        version=version,
        opt=found["opt"],
        llc=found["llc"],
        llvm_readobj=found["llvm-readobj"],
    )
    return tools, ""


def run_tool(
    path: Path | str, args: list[str], input_text: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run an LLVM tool with text on stdin; stdout and stderr are captured as text."""
    return subprocess.run(
        [str(path), *args],
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_opt(
    opt_path: Path | str, args: list[str], input_text: str
) -> subprocess.CompletedProcess[str]:
    """Run `opt` on IR text given on stdin, e.g. `run_opt(llvm14.opt, ["-passes=verify", "-S"], ir)`."""
    return run_tool(opt_path, args, input_text)
