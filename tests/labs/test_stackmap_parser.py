"""The lab of chapter 07 (a StackMap v3 parser): its check fails on the skeleton, passes on the
reference solution, and fails with a message that teaches on plausible wrong parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from gctoy.course import load_chapter, strip_solutions
from gctoy.labs import LabFailure
from gctoy.labs import stackmap_parser
from gctoy.llvm_results import REFRESH_ENV
from gctoy.llvm_tools import ENV_PATH

NOTEBOOK = Path(__file__).resolve().parent.parent.parent / "notebooks" / "07_The_stack_map_format.ipynb"
LAB = load_chapter(NOTEBOOK).labs()[0]


@pytest.fixture(scope="module")
def sections():
    return stackmap_parser.samples()


def _function(source: str):
    namespace: dict = {}
    exec(compile(source, "lab-cell", "exec"), namespace)
    return namespace["parse_stackmap"]


def _wrong(old: str, new: str):
    """The reference solution with one line changed: a plausible bug."""
    assert LAB.source.count(old) >= 1, old
    return _function(LAB.source.replace(old, new, 1))


def test_the_lab_cell_names_its_module():
    assert LAB.module == "gctoy.labs.stackmap_parser"
    assert "stackmap_parser.check(parse_stackmap)" in LAB.check_source


def test_check_fails_on_the_skeleton(sections):
    skeleton = _function(strip_solutions(LAB.source))
    with pytest.raises(LabFailure, match="still the skeleton"):
        stackmap_parser.check(skeleton, sections)


def test_check_passes_on_the_solution(sections):
    report = stackmap_parser.check(_function(LAB.source), sections)
    text = str(report)
    assert "4 sections" in text and "13 records" in text and "6 live-outs" in text
    assert "GC stress" in text and "heap verified" in text


def test_forgetting_the_padding_after_the_locations_is_explained(sections):
    parser = _wrong("pos += -pos % 8                      # padding to 8 after the locations", "pass")
    with pytest.raises(LabFailure) as failure:
        stackmap_parser.check(parser, sections)
    message = str(failure.value)
    # lab-kinds.o: record 0 has 6 locations (no padding), record 1 has 1 location: its live-out count is misread
    assert "rec[1].NumLiveOuts" in message and "byte 0x" in message
    assert "8-byte boundary" in message and "NumLocations = 1 is odd" in message


def test_forgetting_the_padding_after_the_live_outs_is_explained(sections):
    parser = _wrong("pos += -pos % 8                      # padding to 8 after the live-outs", "pass")
    with pytest.raises(LabFailure) as failure:
        stackmap_parser.check(parser, sections)
    message = str(failure.value)
    # record 0 of lab-kinds.o has no live-outs: 4 padding bytes follow, so record 1 is read 4 bytes early
    assert "reading record 1, which starts at byte 0x00c0" in message and "Record 0 came out right" in message
    assert "wrong offset" in message and "takes 96 bytes" in message


def test_an_unsigned_offset_is_explained(sections):
    parser = _wrong('"<BBHHHi"', '"<BBHHHI"')
    with pytest.raises(LabFailure) as failure:
        stackmap_parser.check(parser, sections)
    message = str(failure.value)
    assert "rec[0].loc#2.Value" in message and "signed 32-bit" in message


def test_a_result_of_the_wrong_shape_is_explained(sections):
    with pytest.raises(LabFailure, match="not shaped like gctoy.stackmap.StackMap"):
        stackmap_parser.check(lambda data: {"version": 3}, sections)


def test_samples_come_from_the_store_without_llvm(monkeypatch):
    monkeypatch.setenv(ENV_PATH, "")          # no LLVM tool is found
    monkeypatch.delenv(REFRESH_ENV, raising=False)
    stored = stackmap_parser.samples()
    assert [s.name for s in stored][:2] == ["lab-kinds.o", "lab-statepoints.o"]
    assert "stored" in stored[0].origin
    stackmap_parser.check(_function(LAB.source), stored)


def test_the_solution_runs_an_llc_object_under_gc_stress():
    origin, collections, moved = stackmap_parser.stress_run(_function(LAB.source))
    assert "llc" in origin and collections > 0 and moved > 0


def test_a_parse_that_swaps_size_and_register_fails_under_gc_stress():
    """The stack walk reads the roots at the locations the student's parse gives: a swapped field breaks it."""
    parser = _wrong("kind, _, size, dwarf_reg, _, value", "kind, _, dwarf_reg, size, _, value")
    with pytest.raises(LabFailure) as failure:
        stackmap_parser.stress_run(parser)
    message = str(failure.value)
    assert "failed under GC stress" in message and "runtime's stack walk" in message
    assert "DWARF register 8" in message and "loc#1.Size" in message and "u16 size, u16 DWARF register" in message


def test_the_stress_object_comes_from_the_store_without_llvm(monkeypatch):
    monkeypatch.setenv(ENV_PATH, "")          # no LLVM tool is found
    monkeypatch.delenv(REFRESH_ENV, raising=False)
    origin, collections, _ = stackmap_parser.stress_run(_function(LAB.source))
    assert "stored" in origin and collections > 0
