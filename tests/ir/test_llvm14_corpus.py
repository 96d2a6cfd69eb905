"""The hand-written IR corpora are what they claim to be, checked with LLVM 14's verifier.

* ``corpus/``         typed-pointer IR, accepted by ``opt -passes=verify``
* ``corpus_opaque/``  opaque-pointer IR, accepted by ``opt -opaque-pointers -passes=verify``
* ``corpus_legacy/``  oldest and middle statepoint forms (rejected by LLVM 14), each with an
                      ``X.modern.ll`` rewrite that LLVM 14 accepts
* ``seed_modern/``    hand conversions of the seeds' examples, accepted by LLVM 14
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gctoy.llvm_tools import LLVMTools, run_tool

HERE = Path(__file__).resolve().parent
CORPUS = sorted((HERE / "corpus").glob("*.ll"))
OPAQUE = sorted((HERE / "corpus_opaque").glob("*.ll"))
LEGACY_ALL = sorted((HERE / "corpus_legacy").glob("*.ll"))
LEGACY = [p for p in LEGACY_ALL if not p.name.endswith(".modern.ll")]
LEGACY_MODERN = [p for p in LEGACY_ALL if p.name.endswith(".modern.ll")]
SEED_MODERN = sorted((HERE / "seed_modern").glob("*.ll"))


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _verify(llvm: LLVMTools, path: Path, *flags: str) -> tuple[int, str]:
    result = run_tool(llvm.opt, [*flags, "-passes=verify", "-S", str(path), "-o", "/dev/null"])
    return result.returncode, result.stderr


def test_corpus_sizes() -> None:
    assert len(CORPUS) >= 45
    assert len(OPAQUE) >= 6
    assert sum(p.name.startswith("oldest_") for p in LEGACY) >= 4
    assert sum(p.name.startswith("middle_") for p in LEGACY) >= 4
    assert sum(p.name.startswith("sp_") for p in CORPUS) >= 5


@pytest.mark.parametrize("path", CORPUS + OPAQUE + LEGACY_ALL + SEED_MODERN, ids=_id)
def test_starts_with_a_description(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("; ") and len(first) > 10


@pytest.mark.parametrize("path", LEGACY, ids=_id)
def test_every_legacy_file_has_a_modern_twin(path: Path) -> None:
    assert path.with_name(path.name[: -len(".ll")] + ".modern.ll").is_file()


def test_opaque_corpus_has_no_statepoints() -> None:
    for path in OPAQUE:
        assert "gc.statepoint" not in path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize("path", CORPUS + LEGACY_MODERN + SEED_MODERN, ids=_id)
def test_llvm14_accepts_typed(llvm14: LLVMTools, path: Path) -> None:
    code, err = _verify(llvm14, path)
    assert code == 0, err


@pytest.mark.parametrize("path", OPAQUE, ids=_id)
def test_llvm14_accepts_opaque(llvm14: LLVMTools, path: Path) -> None:
    code, err = _verify(llvm14, path, "-opaque-pointers")
    assert code == 0, err


@pytest.mark.parametrize("path", LEGACY, ids=_id)
def test_llvm14_rejects_legacy_forms(llvm14: LLVMTools, path: Path) -> None:
    code, _ = _verify(llvm14, path)
    assert code != 0
