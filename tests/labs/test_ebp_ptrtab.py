"""Lab of chapter 15 (gctoy.labs.ebp_ptrtab): the check fails on the skeleton, passes on the
notebook's solution, and fails with a message that teaches on plausible wrong decoders."""

from __future__ import annotations

import pytest

from gctoy.labs import LabFailure, ebp_ptrtab
from lab_cells import LabCell, failure

LAB = LabCell("15", "decode_ebp_table")
_mutated = LAB.mutated


def test_the_lab_cell_names_its_module():
    lab = LAB.lab
    assert lab.module == "gctoy.labs.ebp_ptrtab" and "ebp_ptrtab.check(decode_ebp_table)" in lab.check_source


def test_check_fails_on_the_skeleton():
    with pytest.raises(LabFailure, match="still the skeleton"):
        ebp_ptrtab.check(LAB.skeleton())


def test_check_passes_on_the_solution():
    report = ebp_ptrtab.check(LAB.solution())
    text = str(report)
    assert "call sites read right" in text and "collections" in text


def test_forgetting_to_accumulate_the_code_deltas_is_explained():
    wrong = _mutated("offset += delta", "offset = delta")
    with pytest.raises(LabFailure) as failure:
        ebp_ptrtab.check(wrong)
    message = str(failure.value)
    assert "running sum" in message and "delta" in message and "call site 1" in message


def test_reading_the_live_and_interior_register_bits_in_the_wrong_order_is_explained():
    wrong = _mutated("regs, iregs = data[pos] & 7, data[pos] >> 4", "iregs, regs = data[pos] & 7, data[pos] >> 4")
    with pytest.raises(LabFailure) as failure:
        ebp_ptrtab.check(wrong)
    message = str(failure.value)
    assert "0BSD0bsd" in message and "swapped" in message and "interior" in message


def test_mirrored_register_bits_are_explained():
    wrong = _mutated('REGS = ("EDI", "ESI", "EBX")', 'REGS = ("EBX", "ESI", "EDI")')
    with pytest.raises(LabFailure) as failure:
        ebp_ptrtab.check(wrong)
    assert "EBX (4)" in str(failure.value) and "mirrored" in str(failure.value)


def test_a_wrong_argument_mask_is_explained():
    wrong = _mutated("(4 * i, bool(iargs >> i & 1))", "(i, bool(iargs >> i & 1))")
    with pytest.raises(LabFailure) as failure:
        ebp_ptrtab.check(wrong)
    assert "[ESP + 4*i]" in str(failure.value)


def test_the_runtime_run_catches_a_decoder_that_drops_registers():
    """Step 3 on its own: with registers dropped, pointers kept in EBX/ESI/EDI are not updated."""
    solution = LAB.solution()

    def forgetful(data, pos):
        this_reg, sites = solution(data, pos)
        return this_reg, [ebp_ptrtab.Site(s.offset, frozenset(), frozenset(), s.pushed) for s in sites]

    with pytest.raises(LabFailure, match="GC stress"):
        ebp_ptrtab.check(forgetful, tables=False, seeds=(), run_seed=11)
