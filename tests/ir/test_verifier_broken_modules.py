"""Modules that ``gctoy llc``/``run``/``opt`` must refuse before lowering: each is refused by gctoy's
verifier with the expected message *and* by LLVM 14's ``opt -passes=verify`` (the oracle for validity),
and a repaired twin of each is accepted by both."""
from __future__ import annotations

import pytest

from broken_modules import CASES
from gctoy.ir import parse_module
from gctoy.ir.verifier import verify_module
from gctoy.llvm_tools import run_opt


def gctoy_problems(text: str) -> list[str]:
    return [p.message for p in verify_module(parse_module(text, "t.ll"))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gctoy_refuses_the_broken_module(name: str) -> None:
    broken, _, fragment = CASES[name]
    found = gctoy_problems(broken)
    assert any(fragment in m for m in found), found


@pytest.mark.parametrize("name", sorted(CASES))
def test_gctoy_accepts_the_repaired_module(name: str) -> None:
    _, repaired, _ = CASES[name]
    assert gctoy_problems(repaired) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_llvm14_agrees(llvm14, name: str) -> None:
    broken, repaired, _ = CASES[name]
    refused = run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], broken)
    assert refused.returncode != 0, f"LLVM 14 accepts the {name} case"
    accepted = run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], repaired)
    assert accepted.returncode == 0, accepted.stderr
