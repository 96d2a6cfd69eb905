"""Every example in gctoy.seed_examples is the seed's own text: it matches a block of the seed
(whitespace aside), the one of the section it names."""

from __future__ import annotations

import re

import pytest

from gctoy.seed_examples import seed_example, seed_examples
from seed_blocks import SEED_TEXT, read_stored_block


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _blocks():
    return [read_stored_block(path) for path in sorted(SEED_TEXT.glob("*.ll"))]


@pytest.mark.parametrize("example", [e for e in seed_examples() if not e.name.endswith("asm")], ids=lambda e: e.name)
def test_example_is_in_a_seed_block_of_its_section(example):
    hits = [(block, section) for block, section in _blocks()
            if block.file == example.seed and _words(example.text) in _words(block.text)]
    assert hits, f"{example.name} is not the text of any llvm block of {example.seed}"
    assert any(example.section in section for _, section in hits), f"{example.name}: sections {[s for _, s in hits]}"


@pytest.mark.parametrize("example", [e for e in seed_examples() if e.name.endswith("asm")], ids=lambda e: e.name)
def test_assembly_examples_are_in_the_seed(example, seeds_dir):
    text = (seeds_dir / example.seed).read_text(encoding="utf-8")
    assert _words(example.text) in _words(text)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(KeyError, match="test1-explicit"):
        seed_example("test2")
    assert seed_example("derived").cite == 'seed 000-Statepoints-modern.rst, "Base & Derived Pointers" (the exterior derived pointer)'


def test_place_safepoints_input_is_the_same_in_all_three_seeds():
    text = _words(seed_example("place-safepoints-input").text)
    files = {block.file for block, section in _blocks() if section == "PlaceSafepoints" and _words(block.text) == text}
    assert files == {"000-Statepoints-modern.rst", "001-Statepoints-oldest.rst", "004-Statepoints-middle.rst"}


def test_the_rs4gc_input_of_seed_000_is_its_own_block():
    """Seed 000 shows the pass's input in today's call syntax, unlike the abstract example of "Explicit
    Representation" (``call void ()* @foo()``): two blocks, two examples."""
    example = seed_example("rs4gc-input-000")
    (block, section), = [(b, s) for b, s in _blocks()
                         if b.file == example.seed and _words(example.text) == _words(b.text)]
    assert section == "RewriteStatepointsForGC" and block.line == 761
    assert "call void @foo()" in example.text and example.text != seed_example("test1-abstract").text
