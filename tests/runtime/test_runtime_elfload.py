"""Loading `llc -filetype=obj` output: placement, relocations, the stack map's addresses."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gctoy.emu import CODE_BASE, Machine  # noqa: E402
from gctoy.emu.image import stub_address  # noqa: E402
from gctoy.runtime import SiteTable, load_object  # noqa: E402
from runtime_programs import PROGRAMS, compile_program  # noqa: E402


def test_runtime_elfload_relocations_and_stackmap(tmp_path, llvm14):
    obj = compile_program(PROGRAMS["tree"], tmp_path, llvm14, "tree")
    loaded = load_object(obj)
    assert set(loaded.functions) == {"build", "sum", "main"}
    assert all(CODE_BASE <= a < CODE_BASE + len(loaded.image.code) for a in loaded.functions.values())
    assert set(loaded.externals) == {"gc_alloc", "gc_collect", "do_safepoint", "print_i64"}
    sm = loaded.stackmap
    assert {f.address for f in sm.functions} == set(loaded.functions.values())
    machine = Machine(loaded.image)
    targets = {stub_address(i) for i in range(len(loaded.externals))} | set(loaded.functions.values())
    table = SiteTable(sm, loaded.function_names())
    assert len(table.sites) == len(sm.records)
    for ra in table.sites:
        # every record sits right after a `call rel32` whose target is a stub or a function
        assert machine.read(ra - 5, 1) == b"\xe8"
        rel = int.from_bytes(machine.read(ra - 4, 4), "little", signed=True)
        assert ra + rel in targets
    assert loaded.relocations >= len(sm.records) + len(sm.functions)
