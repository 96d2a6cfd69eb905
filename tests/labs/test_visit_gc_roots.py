"""Lab of chapter 11 (gctoy.labs.visit_gc_roots): the check fails on the skeleton, passes on the
notebook's solution, and fails with a message that teaches on plausible wrong root walks."""

from __future__ import annotations

import pytest

from gctoy.labs import LabFailure, visit_gc_roots
from lab_cells import LabCell, failure

LAB = LabCell("11", "visit_gc_roots")
_mutated = LAB.mutated


def _failure(function) -> str:
    return failure(visit_gc_roots.check, function)


def test_the_lab_cell_names_its_module():
    lab = LAB.lab
    assert lab.module == "gctoy.labs.visit_gc_roots" and ".check(visit_gc_roots)" in lab.check_source


def test_check_fails_on_the_skeleton():
    with pytest.raises(LabFailure, match="still the skeleton"):
        visit_gc_roots.check(LAB.skeleton())


def test_check_passes_on_the_solution():
    text = str(visit_gc_roots.check(LAB.solution()))
    assert "3 programs under GC stress" in text and "collections" in text and "objects copied" in text


def test_visiting_only_the_innermost_entry_is_explained():
    message = _failure(_mutated("        entry = read_u64(entry)", "        entry = 0"))
    assert "only the innermost StackEntry" in message and "R->Next" in message


def test_stopping_at_num_meta_is_explained():
    message = _failure(_mutated("for i in range(num_roots):", "for i in range(num_meta):"))
    assert "stopped at NumMeta" in message and "[NumMeta, NumRoots)" in message


def test_starting_the_roots_after_the_metadata_is_explained():
    message = _failure(_mutated("visitor(entry + 16 + 8 * i, meta)", "visitor(entry + 16 + 8 * (num_meta + i), meta)"))
    assert "FrameMap" in message and "R + 16 + 8*i" in message


def test_metadata_for_every_root_is_explained():
    message = _failure(_mutated("if i < num_meta else 0", ""))
    assert "Right slots, wrong metadata" in message and "NumMeta" in message


def test_a_walk_that_misses_roots_is_caught_by_the_heap_verifier_too():
    """The stress run is an oracle of its own: without the comparison, the heap verifier (which walks
    the chain with gctoy's code) stops a collector that used a walk of the innermost entry only."""
    from gctoy.ir import parse_module
    from gctoy.runtime.run import Runtime, load_compiled
    from gctoy.runtime.shadowstack import ShadowStackRoots, lower_for_shadow_stack

    wrong = _mutated("        entry = read_u64(entry)", "        entry = 0")

    class Unchecked(visit_gc_roots.StudentShadowStackRoots):
        def find(self, machine):
            return list(dict.fromkeys(root for root, _ in self.student_pairs(machine))), []

    text, convert = visit_gc_roots.PROGRAMS["tree (NumMeta 2 < NumRoots 3, 5 entries deep)"]
    loaded = load_compiled(lower_for_shadow_stack(parse_module(text), convert_statepoints=convert))
    finder = ShadowStackRoots.for_symbols(loaded.image.symbols)
    runtime = Runtime(loaded, stress=True, verify=True, roots=Unchecked(wrong, finder.head, finder.names))
    with pytest.raises(Exception, match="not an object in the current space"):
        runtime.run()


def test_the_verifier_uses_gctoys_walk_not_the_students():
    assert visit_gc_roots.StudentShadowStackRoots.all_slots is visit_gc_roots.ShadowStackRoots.all_slots
