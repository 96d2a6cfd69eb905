"""gctoy.llvm_results: LLVM's answers for the chapters, from the tools or from the store."""

from __future__ import annotations

import pytest

import gctoy.llvm_results as lr
from gctoy.llvm_results import LLVMResults, StoredResultError
from gctoy.stackmap import read_stackmap

IR = """declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)

define i8 addrspace(1)* @keep(i8 addrspace(1)* %p) gc "statepoint-example" {
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 7, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %p) ]
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  ret i8 addrspace(1)* %r
}
"""


@pytest.fixture
def store(tmp_path, monkeypatch):
    """An empty store of answers in place of the package's."""
    monkeypatch.setattr(lr, "STORE", tmp_path / "llvm_results")
    return tmp_path / "llvm_results"


def stored_once(monkeypatch, llvm14) -> tuple[bytes, str]:
    """Store the object and the llvm-readobj text of IR with the real tools; return both."""
    monkeypatch.setenv(lr.REFRESH_ENV, "1")
    results = LLVMResults("t")
    obj = results.llc_object(IR, "keep")
    text = results.readobj_stackmap(obj)
    monkeypatch.delenv(lr.REFRESH_ENV)
    return obj.read_bytes(), text


def test_without_llvm_the_stored_answers_are_used(store, monkeypatch, llvm14):
    data, text = stored_once(monkeypatch, llvm14)
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")
    results = LLVMResults("t")
    assert not results.installed and "not installed" in results.status()
    obj = results.llc_object(IR, "keep")
    assert obj.read_bytes() == data
    assert results.readobj_stackmap(obj) == text
    assert read_stackmap(obj).records[0].id == 7
    assert text.startswith("LLVM StackMap Version: 3")


def test_the_same_input_gives_the_same_object(store, monkeypatch, llvm14):
    data, _ = stored_once(monkeypatch, llvm14)
    again = LLVMResults("t").llc_object(IR, "keep")  # checked against the store: equal, no error
    assert again.read_bytes() == data


def test_a_missing_answer_is_an_error_that_says_how_to_store_it(store, monkeypatch):
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")
    with pytest.raises(StoredResultError, match="GCTOY_STORE_LLVM_RESULTS=1"):
        LLVMResults("t").llc_object(IR, "keep")


def test_an_answer_that_changed_is_an_error(store, monkeypatch, llvm14):
    stored_once(monkeypatch, llvm14)
    (stored,) = (store / "t").glob("keep-*.o")
    stored.write_bytes(stored.read_bytes() + b"\0")
    with pytest.raises(StoredResultError, match="answers differently"):
        LLVMResults("t").llc_object(IR, "keep")


def test_the_package_store_holds_the_chapters_answers():
    assert sorted(p.name for p in lr.STORE.iterdir()) == ["ch03", "ch07", "ch08", "ch10", "ch11", "ch12"]
    assert any(lr.STORE.glob("ch07/*.o")) and any(lr.STORE.glob("ch07/*.txt")) and any(lr.STORE.glob("ch08/*.json"))
    for chapter in ("ch03", "ch10", "ch11", "ch12"):
        assert any(lr.STORE.glob(f"{chapter}/*.json")), chapter


UNKNOWN_GC = 'define void @f() gc "no-such-gc" {\n  ret void\n}\n'
BAD_IR = "define void @f() {\n  %x = add i32 1\n  ret void\n}\n"


def test_a_run_keeps_what_the_tool_said_without_its_crash_report_or_path(store, monkeypatch, llvm14):
    monkeypatch.setenv(lr.REFRESH_ENV, "1")
    results = LLVMResults("t")
    crashed = results.run("llc", ["-o", "-", "-"], UNKNOWN_GC)
    assert crashed.returncode != 0 and crashed.stdout == ""
    assert crashed.stderr == "LLVM ERROR: unsupported GC: no-such-gc\n"  # no "PLEASE submit", no stack dump
    rejected = results.run("opt", ["-passes=verify", "-S", "-o", "-", "-"], BAD_IR)
    assert rejected.returncode == 1 and rejected.stderr.startswith("opt: <stdin>:3:3: error:")
    assert str(llvm14.opt) not in rejected.stderr
    accepted = results.run("opt", ["-passes=verify", "-S", "-o", "-", "-"], IR)
    assert accepted.returncode == 0 and "define i8 addrspace(1)* @keep" in accepted.stdout
    monkeypatch.delenv(lr.REFRESH_ENV)
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")
    hidden = LLVMResults("t")
    assert not hidden.runs("opt") and not hidden.runs()
    assert hidden.run("llc", ["-o", "-", "-"], UNKNOWN_GC) == crashed
    assert hidden.run("opt", ["-passes=verify", "-S", "-o", "-", "-"], BAD_IR) == rejected
    with pytest.raises(StoredResultError, match="GCTOY_STORE_LLVM_RESULTS=1"):
        hidden.run("opt", ["-passes=verify", "-S", "-o", "-", "-"], IR + "\n")  # another input: not stored


def test_announce_prints_the_stored_line_only_where_a_tool_is_missing(monkeypatch, capsys, llvm14):
    LLVMResults("t").announce()
    assert capsys.readouterr().out == ""
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")
    hidden = LLVMResults("t")
    hidden.announce("opt")
    assert capsys.readouterr().out == "LLVM 14 not installed: showing the stored result\n"
    assert hidden.status().startswith(lr.stored_line())
