"""``gctoy llc``: lower IR to x86-64 assembly with its stack map, or to x86-32 with CoreCLR GC info."""

from __future__ import annotations

import argparse

from .command_support import (
    add_disable_verify,
    add_gc_registers,
    add_regalloc,
    code_parts,
    driver_module,
    gc_registers_for,
    read_module,
    report_failure,
    write_lines,
)
from .errors import GCToyError


def cmd_llc(argv: list[str]) -> int:
    """``gctoy llc``: lower IR to x86-64 assembly with its stack map (like LLVM's llc)."""
    p = argparse.ArgumentParser(
        prog="gctoy llc",
        description="Lower LLVM IR to x86-64 assembly text, with the stack map that describes each statepoint.",
    )
    p.add_argument("input", help="input .ll file")
    p.add_argument("-o", dest="output", help="write the assembly here instead of standard output")
    p.add_argument("--place-safepoints", action="store_true", help="run place-safepoints before RS4GC")
    p.add_argument("--implicit-declarations", action="store_true", help="declare what the input leaves undeclared")
    p.add_argument(
        "--target",
        choices=["x86-64", "x86-32"],
        default="x86-64",
        help="x86-32: lower the IR as written with CoreCLR's JIT32 conventions and print each "
        "method's x86 GC info (bytes and gcdump text) instead of a stack map",
    )
    p.add_argument(
        "--frame",
        choices=["auto", "ebp", "esp"],
        default="auto",
        help="x86-32 only: EBP frames, EBP-less frames, or the code generator's choice",
    )
    add_gc_registers(p)
    add_regalloc(p)
    add_disable_verify(p)
    args = p.parse_args(argv)
    args.gc_registers = gc_registers_for(p, args)
    if args.target == "x86-32":
        return llc_x86_32(args)
    from .codegen import compile_module
    from .stackmap import format_stackmap

    try:
        module = driver_module(args.input, args.place_safepoints, args.implicit_declarations, not args.disable_verify)
        from .passes import run

        run(module, "lower-gc-barriers")  # llc's gc-lowering: barriers become code, frame roots start null
        if any(f.gc == "shadow-stack" for f in module.definitions()):
            run(module, "shadow-stack-gc-lowering")  # llc runs it next, for gc "shadow-stack" functions
        compiled = compile_module(module, regalloc=args.regalloc, gc_registers=args.gc_registers)
        from .codegen.gcmap import emit_gcmaps

        gcmaps = emit_gcmaps(compiled)
        from .codegen.frametables import emit_frametables

        frametables = emit_frametables(compiled, "<stdin>" if args.input == "-" else args.input, gcmaps.image)
    except (OSError, GCToyError) as e:
        return report_failure(e, args.input)
    parts = ([frametables.text_before.rstrip()] if frametables.text_before else []) + code_parts(compiled)
    if gcmaps.text:
        parts += ["", "\t.data", "# GC metadata: the seed's compact __gcmap_<function> tables", gcmaps.text.rstrip()]
    if frametables.text_after:
        parts += ["", "# GC metadata: OCaml's frametable, Erlang's .note.gc", frametables.text_after.rstrip()]
    if compiled.stackmap.records:
        from .stackmap import emit

        data = emit(compiled.stackmap)
        parts += ["", '\t.section .llvm_stackmaps,"a"', "__LLVM_StackMaps:"]
        parts += ["\t.byte " + ", ".join(f"0x{b:02x}" for b in data[i : i + 16]) for i in range(0, len(data), 16)]
        parts += [
            "",
            "# the section above, as llvm-readobj --stackmap prints it (function addresses are",
            "# those of gctoy's image):",
        ]
        parts += ["# " + line for line in format_stackmap(compiled.stackmap).splitlines()]
    return write_lines(parts, args.output)


def llc_x86_32(args) -> int:
    """``gctoy llc --target x86-32``: JIT32 assembly, then every method's GC-info blob and its gcdump text."""
    from .codegen.gcinfo32 import module_gcinfo
    from .codegen.symbols import mangle
    from .codegen.x86_32 import compile_module32
    from .coreclr import encode, gcdump

    try:
        module = read_module(args.input, args.implicit_declarations, not args.disable_verify)
        compiled = compile_module32(module, frame=args.frame, gc_registers=args.gc_registers)
        infos = module_gcinfo(compiled)
    except (OSError, GCToyError) as e:
        return report_failure(e, args.input)
    parts = code_parts(compiled)
    parts += ["", '\t.section .gcinfo_x86,"a"', "# CoreCLR x86 GC info (version 5), one blob per method"]
    for name, info in infos.items():
        blob = encode(info)
        parts += ["", f"__gcinfo_{mangle(name)}:"]
        parts += ["\t.byte " + ", ".join(f"0x{b:02x}" for b in blob[i : i + 16]) for i in range(0, len(blob), 16)]
        parts += ["# " + line if line else "#" for line in gcdump(blob).splitlines()]
    return write_lines(parts, args.output)
