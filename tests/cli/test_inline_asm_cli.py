"""Inline asm calls: `gctoy opt` reads and prints them as LLVM does; `gctoy llc` refuses them with one located error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gctoy.llvm_tools import LLVMTools, run_opt

REPO = Path(__file__).resolve().parents[2]

ASM = """define i64 @f(i64 %x) {
  call void asm sideeffect "nop", "~{dirflag},~{fpsr},~{flags}"()
  %y = call i64 asm "mov $0, $1", "=r,r"(i64 %x)
  %z = call i64 asm sideeffect inteldialect "lea $0, [$1 + 1]", "=r,r,~{dirflag}"(i64 %y)
  ret i64 %z
}
"""


def gctoy(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "gctoy", *args], capture_output=True, text=True, timeout=120,
                          check=False, env=env)


def _body(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("define"))
    return lines[start:start + 6]


@pytest.mark.parametrize("pointers", ["--typed-pointers", "--opaque-pointers"])
def test_opt_prints_inline_asm_as_written(tmp_path: Path, pointers: str) -> None:
    src = tmp_path / "asm.ll"
    src.write_text(ASM)
    r = gctoy("opt", "-S", pointers, str(src))
    assert r.returncode == 0, r.stderr
    assert _body(r.stdout) == ASM.splitlines()


def test_llvm_reads_the_printed_inline_asm(tmp_path: Path, llvm14: LLVMTools) -> None:
    src = tmp_path / "asm.ll"
    src.write_text(ASM)
    r = gctoy("opt", "-S", str(src))
    checked = run_opt(llvm14.opt, ["-passes=verify", "-S"], r.stdout)
    assert checked.returncode == 0, checked.stderr
    assert _body(checked.stdout) == ASM.splitlines()


@pytest.mark.parametrize("target", ["x86-64", "x86-32"])
def test_llc_refuses_inline_asm_at_its_line(tmp_path: Path, target: str) -> None:
    src = tmp_path / "asm.ll"
    src.write_text(ASM)
    r = gctoy("llc", "--target", target, str(src))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr == f"{src}:2:3: error: inline asm is not supported by gctoy llc\n"
