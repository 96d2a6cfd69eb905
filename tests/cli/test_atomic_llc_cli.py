"""`gctoy llc` stores atomically as llc does (``mov``; ``xchg`` for seq_cst), lowers fences, and refuses
``cmpxchg`` and ``atomicrmw`` with one located error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

STORES = """define i64 @main() {
entry:
  %cell = alloca i64, align 8
  %byte = alloca i8, align 1
  store atomic i64 40, i64* %cell seq_cst, align 8
  fence seq_cst
  store atomic i8 2, i8* %byte release, align 1
  fence syncscope("singlethread") seq_cst
  fence acquire
  %a = load atomic i64, i64* %cell acquire, align 8
  %b = load atomic i8, i8* %byte seq_cst, align 1
  %c = zext i8 %b to i64
  %s = add i64 %a, %c
  ret i64 %s
}
"""

EXCHANGE = """define i32 @f(i32* %c, i32 %v) {
entry:
  %pair = cmpxchg i32* %c, i32 0, i32 %v seq_cst seq_cst
  %old = extractvalue { i32, i1 } %pair, 0
  ret i32 %old
}
"""


def gctoy(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "gctoy", *args], capture_output=True, text=True, timeout=120,
                          check=False, env=env)


def _body(asm: str) -> list[str]:
    lines = [line.strip() for line in asm.splitlines()]
    start = lines.index("main.bb0:")
    return lines[start:]


@pytest.mark.parametrize("regalloc", [[], ["--no-regalloc"]])
def test_llc_stores_with_mov_and_a_seq_cst_store_with_xchg(tmp_path: Path, regalloc: list[str]) -> None:
    src = tmp_path / "stores.ll"
    src.write_text(STORES)
    r = gctoy("llc", *regalloc, str(src), "-o", "-")
    assert r.returncode == 0, r.stderr
    body = _body(r.stdout)
    exchanges = [line for line in body if line.startswith("xchg")]
    assert len(exchanges) == 1 and re.fullmatch(r"xchg qword ptr \[\w+( \+ \d+)?\], rax", exchanges[0])
    assert any(re.fullmatch(r"mov byte ptr \[.*\], (al|2)", line) for line in body)
    assert body.count("mfence") == 1  # the system-wide seq_cst fence only


def test_run_gives_what_the_atomic_stores_wrote(tmp_path: Path) -> None:
    src = tmp_path / "stores.ll"
    src.write_text(STORES)
    r = gctoy("run", str(src))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "result: 42\n"


@pytest.mark.parametrize("target", ["x86-64", "x86-32"])
@pytest.mark.parametrize("regalloc", [[], ["--no-regalloc"]])
def test_llc_refuses_cmpxchg_at_its_line(tmp_path: Path, target: str, regalloc: list[str]) -> None:
    src = tmp_path / "cmpxchg.ll"
    src.write_text(EXCHANGE)
    r = gctoy("llc", "--target", target, *regalloc, str(src))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr == f"{src}:3:11: error: 'cmpxchg' is not supported by the {target} code generator\n"


def test_llc_refuses_atomicrmw_at_its_line(tmp_path: Path) -> None:
    src = tmp_path / "rmw.ll"
    src.write_text("define i32 @f(i32* %c, i32 %v) {\nentry:\n  %old = atomicrmw add i32* %c, i32 %v seq_cst\n"
                   "  ret i32 %old\n}\n")
    r = gctoy("llc", str(src))
    assert r.returncode == 1
    assert r.stderr == f"{src}:3:10: error: 'atomicrmw' is not supported by the x86-64 code generator\n"


def test_llc_refuses_an_atomic_store_wider_than_a_register(tmp_path: Path) -> None:
    src = tmp_path / "wide.ll"
    src.write_text("define void @f(i128* %p) {\nentry:\n  store atomic i128 1, i128* %p seq_cst, align 16\n"
                   "  ret void\n}\n")
    r = gctoy("llc", "--no-regalloc", str(src))
    assert r.returncode == 1
    assert r.stderr == f"{src}:3:3: error: an atomic store of i128 is not supported by the x86-64 code generator\n"
