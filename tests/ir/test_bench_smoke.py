"""The parse/print benchmark's input is valid IR, and gctoy keeps within its speed target.

``bench/bench_ir_parse_print.py`` times gctoy against ``opt`` on modules from
``random_ir.module_of_lines``; here a small module of that generator must be accepted by LLVM 14
and round-trip through gctoy, and parse + print of a 50k-line module must take less than 15x
``opt -passes=verify -S`` on the same file (best of a few runs each, ``opt`` as a whole process).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import LLVMTools, run_tool
from random_ir import module_of_lines

TARGET_RATIO = 15.0


def test_generator_is_reproducible_and_sized() -> None:
    a = module_of_lines(2000, seed=5)
    assert a == module_of_lines(2000, seed=5)
    assert a != module_of_lines(2000, seed=6)
    assert 2000 <= a.count("\n") <= 2000 + 200


def test_small_bench_module_is_valid_ir(llvm14: LLVMTools, tmp_path: Path) -> None:
    text = module_of_lines(3000, seed=2024)
    for construct in ("gc.statepoint", "gc.relocate", " phi ", "getelementptr", "%struct.S", "store "):
        assert construct in text
    path = tmp_path / "small.ll"
    path.write_text(text, encoding="utf-8")
    r = run_tool(llvm14.opt, ["-passes=verify", "-S", str(path), "-o", "/dev/null"])
    assert r.returncode == 0, r.stderr
    m = parse_module(text, str(path))
    assert parse_module(print_module(m), "<printed>") == m


def _best_cpu(repeat: int, fn) -> float:
    """Best CPU time (user + system) of ``fn()`` in this process: steady on a busy machine."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _opt_cpu(opt: Path, args: list[str]) -> float:
    """CPU time (user + system) of one ``opt`` process, from the kernel's accounting of the child."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only execs
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execv(str(opt), [str(opt), *args])
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_utime + usage.ru_stime


def test_parse_print_50k_lines_within_15x_opt(llvm14: LLVMTools, tmp_path: Path) -> None:
    """CPU time against CPU time, so that other work on the machine does not decide the verdict."""
    text = module_of_lines(50_000, seed=2024)
    path = tmp_path / "big.ll"
    path.write_text(text, encoding="utf-8")
    opt_time = min(_opt_cpu(llvm14.opt, ["-passes=verify", "-S", str(path), "-o", str(tmp_path / "out.ll")])
                   for _ in range(3))
    ours = _best_cpu(2, lambda: print_module(parse_module(text, str(path))))
    ratio = ours / opt_time
    print(f"parse+print {ours:.2f} s CPU, opt {opt_time:.3f} s CPU, {ratio:.1f}x")
    assert ratio < TARGET_RATIO, (
        f"gctoy parse+print of {text.count(chr(10))} lines: {ours:.2f} s CPU = {ratio:.1f}x opt "
        f"({opt_time:.3f} s CPU); target < {TARGET_RATIO:.0f}x")
