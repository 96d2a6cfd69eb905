"""One program through `gctoy llc`'s pipeline and through LLVM 14's llc -O2, for tests that compare them."""

from __future__ import annotations

import subprocess

from gctoy.command_support import driver_module
from gctoy.codegen import compile_module
from gctoy.passes import run
from gctoy.stackmap import read_object


def gctoy_llc(text: str, tmp_path, regalloc: bool = True):
    """What ``gctoy llc`` compiles ``text`` to (read from a file, barriers lowered, as the command does;
    ``regalloc=False``: as ``gctoy llc --no-regalloc``)."""
    path = tmp_path / "in.ll"
    path.write_text(text)
    module = driver_module(str(path), False, False)
    run(module, "lower-gc-barriers")
    return compile_module(module, regalloc=regalloc)


def llc14_stackmap(llvm14, text: str, tmp_path):
    """The stack map of llc-14 -O2's object for ``text``."""
    src, obj = tmp_path / "ref.ll", tmp_path / "ref.o"
    src.write_text(text)
    res = subprocess.run([str(llvm14.llc), "-O2", "-filetype=obj", str(src), "-o", str(obj)],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    return read_object(obj.read_bytes()).stackmap()
