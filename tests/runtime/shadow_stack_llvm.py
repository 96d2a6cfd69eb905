"""LLVM 14's own shadow-stack lowering and code generation, for running under gctoy's shadow-stack runtime."""

from __future__ import annotations

import subprocess
from pathlib import Path


def llvm_shadow_stack_object(text: str, llvm14, workdir: Path) -> Path:
    """LLVM 14's shadow-stack-gc-lowering (``llc -stop-after``, the IR part of the MIR), then
    ``llc -O2 -filetype=obj``. The chain head becomes a ``dso_local`` definition: LLVM makes it
    ``linkonce``, which code reaches through a GOT, and gctoy's loader has no GOT."""
    src, mir, low, obj = (workdir / n for n in ("in.ll", "in.mir", "low.ll", "low.o"))
    src.write_text(text, encoding="utf-8")
    r = subprocess.run([str(llvm14.llc), "-O0", "-stop-after=shadow-stack-gc-lowering", str(src), "-o", str(mir)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = mir.read_text().splitlines()
    ir = lines[1:lines.index("...")]
    module = "\n".join(line[2:] for line in ir)
    assert "@llvm_gc_root_chain = linkonce global" in module
    low.write_text(module.replace("@llvm_gc_root_chain = linkonce global", "@llvm_gc_root_chain = dso_local global"))
    r = subprocess.run([str(llvm14.llc), "-O2", "-filetype=obj", str(low), "-o", str(obj)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return obj
