"""How fast the CoreCLR GC-info decoders get through fuzzed input, next to valid input in the same run.

The fuzz tests (tests/coreclr/test_coreclr_blob_fuzz.py and test_coreclr_ptrtab_fuzz_b.py) make
a corpus of encoder-produced blobs and mutate them. Here, for whole-method blobs and for EBP-less
pointer tables, the decoder's time per byte is measured, best of ``--repeat`` runs:

* the reference: decoding the valid corpus itself;
* decoding ``--blobs`` mutated blobs (made before the clock starts), most of which raise
  ``DecodeError`` somewhere in the middle.

Target: mutated input costs at most ``TARGET_RATIO`` times valid input per byte (a slow path that
only bad input takes, or a hang, shows as a large ratio); the blobs per second are printed too.
It always exits 0: it is a report, not a gate. (The fuzz tests bound the work per byte in counted
lines of gctoy.)
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tests" / "coreclr")]

import test_coreclr_blob_fuzz as blob_fuzz  # noqa: E402
import test_coreclr_ptrtab_fuzz_b as esp_fuzz  # noqa: E402
from gctoy.coreclr.method import decode  # noqa: E402
from gctoy.coreclr.ptrtab_esp import decode_table  # noqa: E402
from gctoy.errors import DecodeError  # noqa: E402

TARGET_RATIO = 3.0


def per_byte(repeat: int, inputs: list, run) -> float:
    """The best time per input byte (seconds) of ``run`` over every input."""
    total = sum(len(item[-1]) for item in inputs) or 1
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for item in inputs:
            try:
                run(item)
            except DecodeError:
                pass
        best = min(best, time.perf_counter() - t0)
    return best / total


def method_blobs(count: int) -> tuple[list, list]:
    """(valid, mutated) whole-method blobs as (version, legacy, bytes)."""
    rng = random.Random(0x5EED_0005)
    corpus = blob_fuzz._corpus(rng)
    mutated = []
    for _ in range(count):
        version, legacy, seed = rng.choice(corpus)
        mutated.append((version, legacy, blob_fuzz._mutate(rng, seed)))
    return corpus, mutated


def esp_tables(count: int) -> tuple[list, list]:
    """(valid, mutated) EBP-less pointer tables as 1-tuples of bytes."""
    rng = random.Random(0x5EED_E5B)
    corpus = [esp_fuzz.encode_table(esp_fuzz.random_table(rng), esp_fuzz.HDR) for _ in range(300)]
    return [(b,) for b in corpus], [(esp_fuzz.mutate(rng, rng.choice(corpus)),) for _ in range(count)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blobs", type=int, default=20_000, help="mutated blobs per decoder")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement, the best is kept")
    args = ap.parse_args(argv)

    rows = []
    valid, mutated = method_blobs(args.blobs)
    run_method = lambda item: decode(item[2], item[0], legacy=item[1])  # noqa: E731
    rows.append(("whole-method blobs", valid, mutated, run_method))
    valid, mutated = esp_tables(args.blobs)
    rows.append(("EBP-less pointer tables", valid, mutated, lambda item: decode_table(item[0], 0, esp_fuzz.HDR)))

    print(f"GC-info decoders on valid and on mutated input (best of {args.repeat}; python {sys.version.split()[0]})")
    print()
    verdicts = []
    for name, valid, mutated, run in rows:
        ref = per_byte(args.repeat, valid, run)
        bad = per_byte(args.repeat, mutated, run)
        mean_len = sum(len(item[-1]) for item in mutated) / max(len(mutated), 1)
        print(f"{name}:")
        print(f"  valid corpus ({len(valid)} blobs):      {ref * 1e6:8.2f} us per byte")
        print(f"  mutated ({len(mutated)} blobs):        {bad * 1e6:8.2f} us per byte "
              f"({1 / (bad * mean_len):,.0f} blobs/s)")
        verdicts.append((f"{name}: mutated input is {bad / ref:.2f}x valid input per byte "
                         f"(target <= {TARGET_RATIO:g}x)", bad / ref <= TARGET_RATIO))
    print()
    for text, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
