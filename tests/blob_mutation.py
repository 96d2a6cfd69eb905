"""The byte mutator the GC-info fuzz tests share: flip, replace, insert, delete, duplicate, truncate."""

from __future__ import annotations

import random
from typing import Callable


def mutate(rng: random.Random, data: bytes, *, rounds: int, replace_byte: Callable[[], int],
           insert_byte: Callable[[], int], duplicate: bool = False) -> bytes:
    """``data`` with 1..``rounds`` random edits; ``replace_byte``/``insert_byte`` draw the new bytes
    (each fuzzer biases them towards the opcodes of its table), ``duplicate`` adds the edit that
    repeats a run of up to six bytes in place."""
    b = bytearray(data)
    for _ in range(rng.randint(1, rounds)):
        op = rng.randrange(6 if duplicate else 5)
        if op == 0 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[rng.randrange(len(b))] = replace_byte()
        elif op == 2:
            b.insert(rng.randint(0, len(b)), insert_byte())
        elif op == 3 and b:
            del b[rng.randrange(len(b))]
        elif duplicate and op == 4 and b:
            i = rng.randrange(len(b))
            b[i:i] = b[i:i + rng.randint(1, 6)]
        else:
            b = b[: rng.randint(0, len(b))]
    return bytes(b)
