"""The generated programs shipped in gctoy/runtime/programs are what tests/runnable_gen.py writes."""

from __future__ import annotations

import pytest

from gctoy.errors import GCToyError
from gctoy.runtime.generated_programs import SEEDS, SIZE, generated_program
from runnable_gen import generate_program


@pytest.mark.parametrize("seed", SEEDS)
def test_stored_program_is_the_generators(seed):
    assert generated_program(seed) == generate_program(seed, SIZE)


def test_other_programs_are_refused():
    with pytest.raises(GCToyError, match="no stored generated program"):
        generated_program(99)
