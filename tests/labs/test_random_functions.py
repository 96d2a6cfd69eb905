"""The labs' generated functions parse, and between them have the shapes the labs' checks need."""

from __future__ import annotations

from gctoy.ir import instructions as I
from gctoy.ir import parse_module
from gctoy.labs.random_functions import random_function


def test_generated_functions_parse_and_have_loops_phis_selects_and_calls():
    kinds = set()
    for seed in range(40):
        fn = parse_module(random_function(seed)).get_function("g")
        for inst in fn.instructions():
            kinds.add(type(inst).__name__)
        assert any(isinstance(i, I.Call) for i in fn.instructions())
    assert {"Phi", "Select", "GetElementPtr", "Cast", "Call"} <= kinds


def test_generation_is_deterministic():
    assert random_function(7) == random_function(7)
    assert random_function(7) != random_function(8)
