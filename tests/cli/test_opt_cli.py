"""``gctoy opt`` end to end, as a separate process: output, options, and errors without tracebacks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gctoy.llvm_tools import LLVMTools, run_opt

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "ir" / "corpus"
OPAQUE = REPO / "tests" / "ir" / "corpus_opaque"
LEGACY = REPO / "tests" / "ir" / "corpus_legacy"


def gctoy_opt(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m gctoy.cli opt ARGS`` in ``cwd``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run(
        [sys.executable, "-m", "gctoy.cli", "opt", *args],
        cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120, env=env,
    )


def write(dirpath: Path, name: str, text: str) -> str:
    (dirpath / name).write_text(text, encoding="utf-8")
    return name


def assert_clean_error(r: subprocess.CompletedProcess[str], prefix: str, fragment: str) -> None:
    """Exit 1, one ``prefix...: error: ...fragment...`` line on stderr, nothing on stdout, no traceback."""
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(prefix), lines[0]
    assert ": error: " in lines[0], lines[0]
    assert fragment in lines[0], lines[0]


# -- output ----------------------------------------------------------------------------------------


def test_S_prints_to_stdout(tmp_path: Path, llvm14: LLVMTools) -> None:
    src = CORPUS / "sp_modern_derived.ll"
    r = gctoy_opt("-passes=verify", "-S", str(src), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert "define i8 addrspace(1)* @interior(i8 addrspace(1)* %obj)" in r.stdout
    assert run_opt(llvm14.opt, ["-passes=verify", "-S"], r.stdout).returncode == 0


def test_o_writes_file(tmp_path: Path) -> None:
    src = CORPUS / "inst_loop.ll"
    r = gctoy_opt("-passes=verify", "-S", str(src), "-o", "out.ll", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    out = (tmp_path / "out.ll").read_text(encoding="utf-8")
    again = gctoy_opt("-passes=verify", "-S", "out.ll", cwd=tmp_path)
    assert again.stdout == out, "printing is a fixed point through the command line too"


def test_o_dash_is_stdout_and_default_pass_is_verify(tmp_path: Path) -> None:
    src = CORPUS / "inst_loop.ll"
    r1 = gctoy_opt("-S", str(src), "-o", "-", cwd=tmp_path)
    r2 = gctoy_opt("-passes=verify", "-S", str(src), cwd=tmp_path)
    assert r1.returncode == 0 and r1.stdout == r2.stdout != ""


def test_without_S_or_o_prints_nothing(tmp_path: Path) -> None:
    r = gctoy_opt("-passes=verify", str(CORPUS / "inst_loop.ll"), cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_stdin(tmp_path: Path) -> None:
    text = (CORPUS / "inst_arith.ll").read_text(encoding="utf-8")
    r = gctoy_opt("-S", "-", cwd=tmp_path, stdin=text)
    assert r.returncode == 0, r.stderr
    assert "define" in r.stdout


def test_opaque_pointers(tmp_path: Path, llvm19: LLVMTools) -> None:
    r = gctoy_opt("-S", "--opaque-pointers", str(CORPUS / "sp_modern_derived.ll"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ptr addrspace(1) %obj" in r.stdout
    assert "addrspace(1)*" not in r.stdout
    assert "@llvm.experimental.gc.statepoint.p0(" in r.stdout
    v = run_opt(llvm19.opt, ["-passes=verify", "-S"], r.stdout)
    assert v.returncode == 0, v.stderr


def test_opaque_input_prints_opaque_by_default(tmp_path: Path) -> None:
    r = gctoy_opt("-S", str(OPAQUE / "opaque_basics.ll"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ptr" in r.stdout and "*" not in r.stdout.replace("/*", "")


def test_typed_pointers_of_opaque_input_is_a_clean_error(tmp_path: Path) -> None:
    r = gctoy_opt("-S", "--typed-pointers", str(OPAQUE / "opaque_basics.ll"), cwd=tmp_path)
    assert_clean_error(r, str(OPAQUE / "opaque_basics.ll"), "opaque pointers")


@pytest.mark.parametrize("name", ["oldest_deopt_derived.ll", "middle_token_args_transition.ll"])
def test_statepoint_form_modern(tmp_path: Path, llvm14: LLVMTools, name: str) -> None:
    r = gctoy_opt("-S", "--statepoint-form=modern", str(LEGACY / name), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert '"gc-live"(' in r.stdout
    v = run_opt(llvm14.opt, ["-passes=verify", "-S"], r.stdout)
    assert v.returncode == 0, v.stderr


def test_statepoint_form_oldest_and_back(tmp_path: Path) -> None:
    r = gctoy_opt("-S", "--statepoint-form=oldest", str(CORPUS / "sp_modern_derived.ll"), "-o", "old.ll",
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    old = (tmp_path / "old.ll").read_text(encoding="utf-8")
    assert "call i32 (void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo" in old
    assert '"gc-live"' not in old
    back = gctoy_opt("-S", "--statepoint-form=modern", "old.ll", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    assert '"gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %gep)' in back.stdout


def test_statepoint_form_oldest_refuses_patch_bytes(tmp_path: Path) -> None:
    r = gctoy_opt("-S", "--statepoint-form=oldest", str(CORPUS / "sp_modern_patch_bytes.ll"), cwd=tmp_path)
    assert_clean_error(r, str(CORPUS / "sp_modern_patch_bytes.ll"), "patch bytes")


def test_unknown_statepoint_form_is_a_usage_error(tmp_path: Path) -> None:
    r = gctoy_opt("-S", "--statepoint-form=newest", str(CORPUS / "inst_loop.ll"), cwd=tmp_path)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "newest" in r.stderr


FRAGMENT = """define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) gc "statepoint-example" {
  %0 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %0, i32 0, i32 0)
  ret i8 addrspace(1)* %r
}
"""


def test_implicit_declarations_and_fix_numbering_leave_notes(tmp_path: Path, llvm14: LLVMTools) -> None:
    name = write(tmp_path, "frag.ll", FRAGMENT)
    plain = gctoy_opt("-S", name, cwd=tmp_path)
    assert_clean_error(plain, "frag.ll:2:3:", "instruction expected to be numbered '%1'")
    r = gctoy_opt("-S", "--implicit-declarations", "--fix-numbering", name, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    notes = r.stderr.strip().splitlines()
    assert all(re.match(r"frag\.ll:\d+:\d+: note: ", n) for n in notes), notes
    text = "\n".join(notes)
    assert "renumbered '%0' to '%1'" in text
    for sym in ("@foo", "@llvm.experimental.gc.statepoint.p0f_isVoidf", "@llvm.experimental.gc.relocate.p1i8"):
        assert f"'{sym}' was never declared" in text
    assert "declare void @foo()" in r.stdout
    v = run_opt(llvm14.opt, ["-passes=verify", "-S"], r.stdout)
    assert v.returncode == 0, v.stderr


def test_implicit_declarations_alone_still_needs_numbering(tmp_path: Path) -> None:
    name = write(tmp_path, "frag.ll", FRAGMENT)
    r = gctoy_opt("-S", "--implicit-declarations", name, cwd=tmp_path)
    assert_clean_error(r, "frag.ll:2:3:", "instruction expected to be numbered '%1'")


def test_keep_comments(tmp_path: Path) -> None:
    src = CORPUS / "sp_modern_derived.ll"
    with_comments = gctoy_opt("-S", "--keep-comments", str(src), cwd=tmp_path)
    without = gctoy_opt("-S", str(src), cwd=tmp_path)
    assert with_comments.returncode == 0 and without.returncode == 0
    marker = "the base must be reported even though only the derived pointer is used afterwards"
    assert marker in with_comments.stdout
    assert marker not in without.stdout
    source_comments = [ln.strip() for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip().startswith(";")]
    assert source_comments
    for comment in source_comments:
        assert comment in with_comments.stdout
        assert comment not in without.stdout


# -- errors -------------------------------------------------------------------------------------------

ERRORS = {
    "syntax": (
        "define i32 @f(i32 %x) {\nentry:\n  %y = add i32 %x 1\n  ret i32 %y\n}\n",
        "bad.ll:3:19:", "expected ','",
    ),
    "unterminated": (
        "define void @f() {\nentry:\n  ret void\n",
        "bad.ll:4:1:", "expected",
    ),
    "undefined value": (
        "define i32 @f() {\nentry:\n  %a = add i32 %b, 1\n  ret i32 %a\n}\n",
        "bad.ll:3:16:", "use of undefined value '%b'",
    ),
    "undefined global": (
        "define void @f() {\nentry:\n  call void @nowhere()\n  ret void\n}\n",
        "bad.ll:3:13:", "use of undefined value '@nowhere'",
    ),
    "type mismatch": (
        "define i32 @f(i64 %x) {\nentry:\n  %a = add i32 %x, 1\n  ret i32 %a\n}\n",
        "bad.ll:3:16:", "'%x' defined with type 'i64' but expected 'i32'",
    ),
    "use not dominated": (
        "define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n  %v = add i32 1, 2\n"
        "  br label %b\nb:\n  ret i32 %v\n}\n",
        "bad.ll:8:3:", "does not dominate",
    ),
    "phi without an entry for a predecessor": (
        "define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n  br label %b\nb:\n"
        "  %p = phi i32 [ 1, %a ]\n  ret i32 %p\n}\n",
        "bad.ll:7:8:", "phi",
    ),
    "phi after a non-phi": (
        "define i32 @f(i1 %c) {\nentry:\n  br label %b\nb:\n  %x = add i32 1, 1\n"
        "  %p = phi i32 [ 1, %entry ]\n  ret i32 %p\n}\n",
        "bad.ll:6:", "phi",
    ),
    "ret type": (
        "define i32 @f() {\nentry:\n  ret void\n}\n",
        "bad.ll:3:", "ret",
    ),
    "relocate index out of range": (
        "declare void @foo()\n"
        "declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)\n"
        "declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)\n"
        "define i8 addrspace(1)* @f(i8 addrspace(1)* %o) gc \"statepoint-example\" {\nentry:\n"
        "  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf("
        "i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ \"gc-live\"(i8 addrspace(1)* %o) ]\n"
        "  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 1)\n"
        "  ret i8 addrspace(1)* %r\n}\n",
        "bad.ll:7:", "index 1",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_error_is_one_clean_line(tmp_path: Path, case: str) -> None:
    text, prefix, fragment = ERRORS[case]
    name = write(tmp_path, "bad.ll", text)
    r = gctoy_opt("-passes=verify", "-S", name, cwd=tmp_path)
    assert_clean_error(r, prefix, fragment)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_llvm14_rejects_the_error_inputs_too(tmp_path: Path, case: str, llvm14: LLVMTools) -> None:
    """The error cases are errors for LLVM as well, not gctoy's inventions."""
    r = run_opt(llvm14.opt, ["-passes=verify", "-S", "-o", "/dev/null"], ERRORS[case][0])
    assert r.returncode != 0


def test_statepoint_outside_a_gc_function_is_rejected(tmp_path: Path, llvm14: LLVMTools) -> None:
    """LLVM 14: 'Enclosing function does not use GC.' — a statepoint needs a function with a gc name."""
    text = (
        "declare void @foo()\n"
        "declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)\n"
        "define void @f() {\nentry:\n"
        "  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf("
        "i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0)\n"
        "  ret void\n}\n"
    )
    llvm = run_opt(llvm14.opt, ["-passes=verify", "-S", "-o", "/dev/null"], text)
    assert llvm.returncode != 0 and "Enclosing function does not use GC" in llvm.stderr
    name = write(tmp_path, "nogc.ll", text)
    r = gctoy_opt("-passes=verify", "-S", name, cwd=tmp_path)
    assert_clean_error(r, "nogc.ll:5:", "gc")


def test_missing_file(tmp_path: Path) -> None:
    r = gctoy_opt("-S", "no-such-file.ll", cwd=tmp_path)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "error:" in r.stderr and "no-such-file.ll" in r.stderr
    assert "No such file" in r.stderr


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "bin.ll").write_bytes(b"define void @f() {\n\xff\xfe\n}\n")
    r = gctoy_opt("-S", "bin.ll", cwd=tmp_path)
    assert_clean_error(r, "bin.ll", "UTF-8")


def test_unknown_pass(tmp_path: Path) -> None:
    r = gctoy_opt("-passes=verify,frobnicate", "-S", str(CORPUS / "inst_loop.ll"), cwd=tmp_path)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stdout == ""
    assert "error:" in r.stderr
    assert "unknown pass name 'frobnicate'" in r.stderr
    assert "verify" in r.stderr.split("frobnicate", 1)[1], "the message lists the passes gctoy has"


def test_unknown_pass_is_reported_before_reading_bad_input(tmp_path: Path) -> None:
    name = write(tmp_path, "bad.ll", "this is not IR\n")
    r = gctoy_opt("-passes=frobnicate", "-S", name, cwd=tmp_path)
    assert r.returncode == 1
    assert "unknown pass name 'frobnicate'" in r.stderr


def test_unknown_command_and_help() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    bad = subprocess.run([sys.executable, "-m", "gctoy.cli", "frob"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "unknown command 'frob'" in bad.stderr and "Traceback" not in bad.stderr
    ok = subprocess.run([sys.executable, "-m", "gctoy.cli", "opt", "--help"], capture_output=True, text=True,
                        env=env)
    assert ok.returncode == 0
    for flag in ("-passes", "-S", "-o", "--opaque-pointers", "--typed-pointers", "--statepoint-form",
                 "--implicit-declarations", "--fix-numbering", "--keep-comments"):
        assert flag in ok.stdout


def test_console_script_matches_module(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("gctoy")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    src = str(CORPUS / "inst_loop.ll")
    a = subprocess.run([str(script), "opt", "-S", src], capture_output=True, text=True, cwd=tmp_path)
    b = gctoy_opt("-S", src, cwd=tmp_path)
    assert a.returncode == 0 and a.stdout == b.stdout


@pytest.mark.parametrize("status_of_input", ["good", "bad"])
def test_the_cycle_collector_pauses_for_opt_and_resumes(tmp_path: Path, monkeypatch, capsys, status_of_input: str) -> None:
    """`gctoy opt` runs without Python's cycle collector (see cli._BATCH_COMMANDS) and turns it back on after,
    also when the input is refused, so a caller of ``main`` in the same process keeps its collector."""
    import gc

    import gctoy.cli as cli

    seen: list[bool] = []
    real_parse = cli.parse_module

    def parse(*args, **kwargs):
        seen.append(gc.isenabled())
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(cli, "parse_module", parse)
    src = tmp_path / "in.ll"
    src.write_text("define void @f() {\n  ret void\n}\n" if status_of_input == "good" else "define void @f( {\n")
    assert gc.isenabled()
    status = cli.main(["opt", "-S", str(src)])
    capsys.readouterr()
    assert status == (0 if status_of_input == "good" else 1)
    assert seen == [False]
    assert gc.isenabled()


OPAQUE_RS4GC = """declare ptr addrspace(1) @make(ptr addrspace(1))

define ptr addrspace(1) @pair(ptr addrspace(1) %obj) gc "statepoint-example" {
entry:
  %new = call ptr addrspace(1) @make(ptr addrspace(1) %obj)
  store i8 1, ptr addrspace(1) %obj
  ret ptr addrspace(1) %new
}
"""


def _without_comments(text: str) -> str:
    return "\n".join(
        line for line in text.splitlines() if not line.startswith(("; ModuleID", "source_filename", "; Function Attrs"))
    ).strip()


def test_opaque_input_follows_llvm19_unless_a_release_is_named(tmp_path: Path, llvm19: LLVMTools) -> None:
    src = tmp_path / "in.ll"
    src.write_text(OPAQUE_RS4GC)
    theirs = run_opt(llvm19.opt, ["-S", "-passes=rewrite-statepoints-for-gc"], OPAQUE_RS4GC)
    assert theirs.returncode == 0, theirs.stderr
    ours = gctoy_opt("-S", "-passes=rewrite-statepoints-for-gc", "in.ll", cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert _without_comments(ours.stdout) == _without_comments(theirs.stdout)
    assert "memory(none)" in ours.stdout
    as14 = gctoy_opt("-S", "-passes=rewrite-statepoints-for-gc<llvm=14>", "in.ll", cwd=tmp_path)
    assert as14.returncode == 0, as14.stderr
    assert "memory(none)" not in as14.stdout and "nounwind readnone" in as14.stdout
