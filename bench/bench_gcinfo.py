"""Bytes of x86 GC info under each encoding, against the x86-64 stack map of the same IR; decode speed.

For generated programs (``tests/runnable_gen.py``) of growing size, every method is compiled to
x86-32 four ways, which changes only the GC info the method gets:

* EBP frame, partially interruptible     (EBP-frame pointer table: call sites only)
* EBP-less, partially interruptible      (EBP-less table: call sites plus every push and pop)
* EBP frame, fully interruptible         (the full table, every instruction a safe point)
* EBP-less, fully interruptible          (the full table with ESP tracking)

and the same IR goes through RS4GC and gctoy's x86-64 lowering, whose ``.llvm_stackmaps`` section
is the reference (LLVM's StackMap v3, which a JIT is expected to parse once and discard). The
figures: total bytes of GC info per encoding, bytes per call site, the ratio to the stack map, and
how they grow when the program size doubles.

Decode speed: every blob decoded (``gctoy.coreclr.decode``) and every call site looked up
(``gc_refs_at``), against parsing the stack map section (``gctoy.stackmap.parse``) of the same
programs, measured in the same run. Prints tables; exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gctoy.codegen import compile_module  # noqa: E402
from gctoy.codegen.x86_32 import compile_module32  # noqa: E402
from gctoy.coreclr import decode, encode, gc_refs_at  # noqa: E402
from gctoy.codegen.gcinfo32 import module_gcinfo  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from gctoy.passes import run as run_pass  # noqa: E402
from gctoy.stackmap import emit, parse  # noqa: E402
from runnable_gen import generate_program  # noqa: E402

ENCODINGS = (("EBP, partial", "ebp", "never"), ("EBP-less, partial", "esp", "never"),
             ("EBP, full", "ebp", "always"), ("EBP-less, full", "esp", "always"))


def gcinfo_blobs(text: str, frame: str, interruptible: str) -> list[bytes]:
    """The GC-info blob of every method of the program, compiled one way."""
    compiled = compile_module32(parse_module(text), frame=frame, interruptible=interruptible)
    return [encode(info) for info in module_gcinfo(compiled).values()]


def stackmap_section(text: str) -> tuple[bytes, int]:
    """The x86-64 stack map section of the program after RS4GC, and its number of records."""
    module = parse_module(text)
    run_pass(module, "rewrite-statepoints-for-gc")
    sm = compile_module(module).stackmap
    return emit(sm), len(sm.records)


def best_of(n: int, fn) -> float:
    """The fastest of ``n`` timed runs of ``fn()``, in seconds."""
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str]) -> int:
    """Measure and print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3, 4, 5, 6], help="generated programs")
    ap.add_argument("--sizes", type=int, nargs="*", default=[4, 8, 16, 32], help="program sizes (phases)")
    args = ap.parse_args(argv)

    print("Bytes of GC metadata, summed over the programs (x86-64 stack map = the reference)")
    print(f"  {'size':>5}{'records':>9}{'stack map':>11}" + "".join(f"{name:>20}" for name, _, _ in ENCODINGS))
    totals: dict[int, dict[str, int]] = {}
    per_size_blobs: dict[int, list[bytes]] = {}
    per_size_maps: dict[int, list[bytes]] = {}
    for size in args.sizes:
        row = {"stack map": 0, "records": 0}
        for seed in args.seeds:
            text = generate_program(seed, size)
            section, records = stackmap_section(text)
            row["stack map"] += len(section)
            row["records"] += records
            per_size_maps.setdefault(size, []).append(section)
            for name, frame, interruptible in ENCODINGS:
                blobs = gcinfo_blobs(text, frame, interruptible)
                row[name] = row.get(name, 0) + sum(map(len, blobs))
                if name == "EBP, partial":
                    per_size_blobs.setdefault(size, []).extend(blobs)
        totals[size] = row
        cells = "".join(f"{row[name]:>10} ({row[name] / row['stack map']:4.2f}x)" for name, _, _ in ENCODINGS)
        print(f"  {size:>5}{row['records']:>9}{row['stack map']:>11}{cells}")
    print("  bytes per call site (records):  stack map "
          f"{totals[args.sizes[-1]]['stack map'] / totals[args.sizes[-1]]['records']:.1f}, " +
          ", ".join(f"{name} {totals[args.sizes[-1]][name] / totals[args.sizes[-1]]['records']:.1f}"
                    for name, _, _ in ENCODINGS) + f"  (size {args.sizes[-1]})")
    print("  growth per doubling of the program size: " + "; ".join(
        f"{name} " + "/".join(f"{totals[b][name] / totals[a][name]:.2f}" for a, b in zip(args.sizes, args.sizes[1:]))
        for name in ("stack map",) + tuple(n for n, _, _ in ENCODINGS)))

    print("\nDecode speed (best of 5, the programs of the largest size)")
    size = args.sizes[-1]
    blobs, maps = per_size_blobs[size], per_size_maps[size]
    t_decode = best_of(5, lambda: [decode(b) for b in blobs])
    t_parse = best_of(5, lambda: [parse(m) for m in maps])
    infos = [decode(b) for b in blobs]
    queries = [(b, life.end) for b, info in zip(blobs, infos) for life in info.lifetimes]
    t_refs = best_of(5, lambda: [gc_refs_at(b, off, active_frame=False) for b, off in queries])
    total_bytes = sum(map(len, blobs))
    map_bytes = sum(map(len, maps))
    print(f"  x86 GC info: {len(blobs)} blobs, {total_bytes} bytes decoded in {1e3 * t_decode:.2f} ms "
          f"({total_bytes / t_decode / 1e6:.2f} MB/s, {1e6 * t_decode / len(blobs):.1f} us per method)")
    print(f"  stack maps:  {len(maps)} sections, {map_bytes} bytes parsed in {1e3 * t_parse:.2f} ms "
          f"({map_bytes / t_parse / 1e6:.2f} MB/s)")
    print(f"  ratio (time per byte, GC info / stack map): {(t_decode / total_bytes) / (t_parse / map_bytes):.2f}x")
    if queries:
        print(f"  gc_refs_at at {len(queries)} call sites: {1e6 * t_refs / len(queries):.1f} us per lookup "
              "(decoded blobs are remembered, as a runtime would keep them)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
