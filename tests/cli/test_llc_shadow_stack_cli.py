"""`gctoy llc` lowers a gc "shadow-stack" function's roots itself, as llc's pipeline runs gc-lowering and then
shadow-stack-gc-lowering: the code links frames into `llvm_gc_root_chain` and each function gets its frame map
`__gc_<name>` (llc as the oracle); a gcroot under a strategy that keeps no frame roots is one located error."""

from __future__ import annotations

import re
import subprocess

from gctoy.cli import main

ROOTED = """declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)

define i8* @f() gc "shadow-stack" {
entry:
  %root = alloca i8*
  call void @llvm.gcroot(i8** %root, i8* null)
  %obj = call i8* @alloc(i64 16)
  store i8* %obj, i8** %root
  %again = call i8* @alloc(i64 16)
  %back = load i8*, i8** %root
  ret i8* %back
}
"""


def frame_map_words(asm: str) -> list[int]:
    """The two 32-bit words (root count, metadata count) after the `__gc_f:` label, as either tool writes them."""
    body = "\n".join(asm[asm.index("\n__gc_f:") + 1 :].splitlines()[1:3])
    words = [int(w, 0) for w in re.findall(r"\.long\s+(\S+)", body)]
    if not words:
        data = bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})", body.splitlines()[0]))
        words = [int.from_bytes(data[i : i + 4], "little") for i in (0, 4)]
    return words[:2]


def test_llc_lowers_shadow_stack_roots_as_llc_does(capsys, tmp_path, llvm14):
    src = tmp_path / "ss.ll"
    src.write_text(ROOTED)
    assert main(["llc", str(src)]) == 0, capsys.readouterr().err
    ours = capsys.readouterr().out
    theirs = subprocess.run([llvm14.llc, "-O0", str(src), "-o", "-"], capture_output=True, text=True, check=True)
    for asm in (ours, theirs.stdout):
        assert re.search(r"^llvm_gc_root_chain:", asm, re.M)
        assert "llvm_gc_root_chain" in asm[: asm.index("\n__gc_f:")]  # the code links the frame in and out
    assert frame_map_words(ours) == frame_map_words(theirs.stdout) == [1, 0]


def test_a_gcroot_under_a_statepoint_strategy_is_refused_at_its_line(capsys, tmp_path):
    src = tmp_path / "sp.ll"
    src.write_text(ROOTED.replace('gc "shadow-stack"', 'gc "statepoint-example"'))
    assert main(["llc", str(src)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{src}:7:3: error: @llvm.gcroot in @f: its function has gc \"statepoint-example\"")
