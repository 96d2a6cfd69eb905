"""`gctoy llc --target x86-32`: JIT32 assembly, each method's GC-info bytes and their gcdump text."""

from __future__ import annotations

import re

from gctoy.cli import main
from gctoy.coreclr import decode, gcdump

PROGRAM = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()

define i64 @main() gc "coreclr" {
entry:
  %o = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %f = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %f
  ret i64 %v
}
"""


def _blob(text: str, name: str) -> bytes:
    section = text.split(f"__gcinfo_{name}:\n", 1)[1]
    data = bytearray()
    for line in section.splitlines():
        if not line.startswith("\t.byte"):
            break
        data += bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", line))
    return bytes(data)


def test_llc_x86_32_prints_gcinfo_that_decodes(tmp_path, capsys):
    src = tmp_path / "p.ll"
    src.write_text(PROGRAM)
    for frame, ebp in (("ebp", "yes"), ("esp", "no")):
        assert main(["llc", "--target", "x86-32", "--frame", frame, "--gc-registers", "0", str(src)]) == 0
        out = capsys.readouterr().out
        assert "main.epilog:" in out and '.section .gcinfo_x86,"a"' in out
        blob = _blob(out, "main")
        info = decode(blob)
        assert info.header.ebp_frame == (frame == "ebp")
        assert len(info.lifetimes) == 1  # %o's slot, live across the call
        assert main(["llc", "--target", "x86-32", "--frame", frame, str(src)]) == 0  # by default %o lives in ESI
        homed = _blob(capsys.readouterr().out, "main")
        assert not decode(homed).lifetimes and "ESI" in gcdump(homed).split("Pointer table:")[1]
        for line in gcdump(blob).splitlines():
            assert ("# " + line if line else "#") in out
        assert f"ebp frame          = {ebp}" in out


def test_llc_x86_32_bad_input_is_one_error(tmp_path, capsys):
    src = tmp_path / "bad.ll"
    src.write_text("define i64 @main( {\n")
    assert main(["llc", "--target", "x86-32", str(src)]) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "bad.ll:" in err


def test_gc_registers_move_the_reference_from_the_lifetimes_to_a_register(tmp_path, capsys):
    src = tmp_path / "p.ll"
    src.write_text(PROGRAM)
    assert main(["llc", "--target", "x86-32", "--frame", "ebp", "--gc-registers", "1", str(src)]) == 0
    out = capsys.readouterr().out
    blob = _blob(out, "main")
    assert decode(blob).lifetimes == ()
    table = gcdump(blob).split("Pointer table:")[1]
    assert "call [ " in table and "ESI" in table
    assert main(["run", "--target", "x86-32", "--gc-registers", "3", "--stress", "--verify-heap", str(src)]) == 0
    assert capsys.readouterr().out.split() == ["result:", "0"]
