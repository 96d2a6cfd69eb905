"""Three programs of the test suite's generator, shipped with the package.

Chapter 17 and the chapter 15 lab run whole generated programs (``tests/runnable_gen.py``:
linked lists, trees, arrays of boxes, derived pointers live across calls, checksums printed), but
a chapter must not need ``tests/`` beside it. So the texts for seeds 11, 12 and 13 at size 12
are stored here as ``programs/generated_SEED_SIZE.ll``; ``tests/runtime/test_generated_programs.py``
checks that they are still exactly what the generator writes.
"""

from __future__ import annotations

from pathlib import Path

from gctoy.errors import GCToyError

__all__ = ["SEEDS", "SIZE", "generated_program"]

PROGRAMS = Path(__file__).resolve().parent / "programs"
#: the stored programs: generate_program(seed, SIZE) for each seed
SEEDS = (11, 12, 13)
SIZE = 12


def generated_program(seed: int, size: int = SIZE) -> str:
    """The IR text of generated program ``seed`` (only the stored seeds and size)."""
    path = PROGRAMS / f"generated_{seed}_{size}.ll"
    if seed not in SEEDS or size != SIZE or not path.exists():
        raise GCToyError(
            f"no stored generated program for seed {seed}, size {size} "
            f"(stored: seeds {', '.join(map(str, SEEDS))} at size {SIZE})"
        )
    return path.read_text(encoding="utf-8")
