"""gctoy.exercises: a check passes on the right answer and explains every wrong or missing one."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gctoy.exercises import (
    WrongAnswer,
    answers_in_sight,
    check_answered,
    check_digest,
    check_equal,
    check_that,
    digest,
    normalize,
)


def test_blank_answers_are_refused_with_a_pointer_to_the_answer_cell():
    for blank in (None, ...):
        with pytest.raises(WrongAnswer, match=r"answer_1 is still .*replace it"):
            check_equal("answer_1", blank, 3, why="three")


def test_wrong_kind_is_named():
    with pytest.raises(WrongAnswer, match="should be a int, not a str"):
        check_answered("answer_2", "3", int)


def test_equal_passes_and_explains_with_the_hint_of_a_known_wrong_answer():
    check_equal("a", [1, 2], (1, 2), why="w")
    with pytest.raises(WrongAnswer) as caught:
        check_equal("a", False, True, why="because %b + 8 lies inside b", hints={False: "an interior pointer still keeps b alive"})
    message = str(caught.value)
    assert "a = False is not right." in message and "interior pointer" in message and "inside b" in message
    assert "True" not in message.split("\n", 1)[1]   # the right answer is not printed


def test_sets_say_how_many_are_missing_and_which_are_extra():
    with pytest.raises(WrongAnswer) as caught:
        check_equal("live", {"a", "x"}, {"a", "b", "c"}, why="w")
    message = str(caught.value)
    assert "leaves out 2" in message and "'x'" in message and "'b'" not in message


def test_digest_checks_without_the_answer():
    check_digest("a", {3, 1}, digest({1, 3}), why="w")
    with pytest.raises(WrongAnswer, match="a = 4 is not right"):
        check_digest("a", 4, digest(3), why="w")


@given(st.lists(st.integers(), max_size=5))
def test_digest_ignores_list_or_tuple_and_set_order(values):
    assert digest(values) == digest(tuple(values))
    assert digest(set(values)) == digest(set(reversed(values)))
    assert normalize(values) == tuple(values)


def test_digest_tells_types_apart():
    assert digest(1) != digest("1") != digest(True)


def test_check_that_reports_the_first_failed_property_and_crashes_as_wrong_answers():
    check_that("n", 8, [(lambda n: n % 4 == 0, "a multiple of 4")])
    with pytest.raises(WrongAnswer, match="n = 6: a multiple of 4"):
        check_that("n", 6, [(lambda n: n > 0, "positive"), (lambda n: n % 4 == 0, "a multiple of 4")])
    with pytest.raises(WrongAnswer, match="TypeError"):
        check_that("n", "x", [(lambda n: n % 4 == 0, "a number")])


def test_digest_command_prints_the_digest():
    done = subprocess.run([sys.executable, "-m", "gctoy.exercises", "digest", "{1, 3}"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == digest({1, 3})


IN_SIGHT = {
    "check_equal('a', a, 6 * 7, why='w')": "check_equal shows",
    "check_digest('a', a, digest(6 * 7), why='w')": "digest is computed",
    "check_digest('a', a, 'c58cbc1e042c3c5c', why='w', hints={right - 1: 'off by one'})": "hint key right - 1",
    "check_that('a', a, [(lambda a: a['x'] == table['x'], 'x is wrong')])": "compares with a computed value",
    "check_that('a', a, [(lambda a: set(a) == set(found), 'wrong')])": "compares with a computed value",
    "check_that('a', a, [(recomputed('%d1'), 'wrong')])": "not a lambda",
    "check_that('a', a, TESTS)": "not written in the call",
    "expected_1 = live_set(f)": "expected_1 holds",
}


@pytest.mark.parametrize("source", IN_SIGHT)
def test_answers_in_sight_finds_a_check_that_computes_its_answer(source):
    problems = answers_in_sight(source)
    assert len(problems) == 1 and IN_SIGHT[source] in problems[0], problems


def test_answers_in_sight_accepts_digests_literal_hints_and_literal_comparisons():
    source = """\
check_answered('answer_3', answer_3, str)
check_digest('a', set(a), '0f7b16e015bab770', why='w',
             hints={frozenset({'move'}): 'moving rewrites', bytes([0x9C]): 'no'})
check_that('a', a, [
    (lambda a: isinstance(a, dict) and set(a) == {'x', 'y'}, 'two keys'),
    (lambda a: digest(('x', a['x'])) == 'c58cbc1e042c3c5c', 'x is wrong'),
    (lambda a: sp_3.form is StatepointForm.MIDDLE and names.join(sp_3.call_args) == '%x', 'the middle form'),
    (lambda n: n % 4 == 0, 'a multiple of 4'),
])
"""
    assert answers_in_sight(source) == []
