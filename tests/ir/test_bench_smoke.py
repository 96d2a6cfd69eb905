"""The parse/print benchmark's input is valid IR that gctoy reads and writes back.

``bench/bench_ir_parse_print.py`` times gctoy against ``opt`` on modules from
``random_ir.module_of_lines`` (and checks the speed target, gctoy within 15x ``opt``); here a
small module of that generator must be accepted by LLVM 14 and round-trip through gctoy.
"""

from __future__ import annotations

from pathlib import Path

from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import LLVMTools, run_tool
from op_count import count_lines, growth
from random_ir import module_of_lines


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


def test_parse_print_work_grows_linearly() -> None:
    """Lines of gctoy run by parse + print per doubling of the module (measured x1.94; quadratic x4)."""
    texts = [module_of_lines(n, seed=2024) for n in (1000, 2000, 4000)]
    counts = [count_lines(lambda: print_module(parse_module(text, "gen.ll")))[1] for text in texts]
    assert all(g < 2.3 for g in growth(counts)), (counts, growth(counts))
