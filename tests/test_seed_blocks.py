"""The LLVM examples of the statepoint seeds are found, whole and in order.

The blocks are kept in tests/seed_text/ (so the tests that use them run on any clone); one test
per seed checks that the extractor reads exactly those blocks from the seed itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seed_blocks import SEED_TEXT, SeedBlock, extract_llvm_blocks, read_stored_block, stored_blocks

EXPECTED = {
    "000-Statepoints-modern.rst": [168, 187, 270, 338, 384, 761, 771, 832, 848],
    "001-Statepoints-oldest.rst": [112, 127, 377, 384, 413, 424],
    "004-Statepoints-middle.rst": [122, 141, 238, 591, 601, 640, 656],
}
SEED_MODERN = Path(__file__).resolve().parent / "ir" / "seed_modern"


def _stored(name: str) -> list[SeedBlock]:
    """The stored blocks of seed file ``name``, in file order."""
    return [b for (key, _), b in sorted(stored_blocks().items()) if key == name[:3]]


def test_stored_blocks_name_their_seed_line_and_section() -> None:
    for path in sorted(SEED_TEXT.glob("*.ll")):
        block, section = read_stored_block(path)
        assert path.name == f"seed{block.file[:3]}_{block.line}.ll"
        assert block.file in EXPECTED and section.strip() and section != "None", path.name


@pytest.mark.parametrize(("name", "count"), [(n, len(v)) for n, v in EXPECTED.items()])
def test_block_count(name: str, count: int) -> None:
    assert len(_stored(name)) == count


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_directive_lines(name: str) -> None:
    blocks = _stored(name)
    assert [b.line for b in blocks] == EXPECTED[name]
    assert all(b.file == name for b in blocks)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_seeds_hold_the_stored_blocks(seeds_dir: Path, name: str) -> None:
    """The extractor reads from the seed exactly the blocks kept in tests/seed_text/."""
    lines = (seeds_dir / name).read_text(encoding="utf-8").splitlines()
    extracted = extract_llvm_blocks(seeds_dir / name)
    assert extracted == _stored(name)
    for block in extracted:
        assert lines[block.line - 1].strip() == ".. code-block:: llvm"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_blocks_nonempty_and_balanced(name: str) -> None:
    for block in _stored(name):
        text = block.text
        assert text.strip(), f"{block.file}:{block.line} is empty"
        depth = 0
        for ch in text:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0, f"{block.file}:{block.line} closes a brace it never opened"
        assert depth == 0, f"{block.file}:{block.line} leaves {depth} brace(s) open"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_blocks_start_with_ir_and_contain_no_prose(name: str) -> None:
    for block in _stored(name):
        first = block.text.splitlines()[0]
        assert first.startswith(("define ", "@")), first
        assert block.text.rstrip().endswith("}")
        for line in block.text.splitlines():
            assert not line[:1].isupper(), f"prose line in {block.file}:{block.line}: {line!r}"


def test_flattened_seed_keeps_two_function_block_together() -> None:
    poll_input = stored_blocks()["001", 413]
    assert poll_input.text.count("define ") == 2
    assert "declare void @do_safepoint()" in poll_input.text
    assert poll_input.text.rstrip().endswith("}")


def test_indented_block_is_dedented_and_keeps_blank_lines() -> None:
    transition = stored_blocks()["000", 384]
    lines = transition.text.splitlines()
    assert lines[0] == "@flag = thread_local global i32 0, align 4"
    assert lines[1] == ""
    assert lines[2].startswith("define ")
    assert lines[-1] == "}"


def test_every_block_has_a_modern_conversion() -> None:
    for name in EXPECTED:
        for block in _stored(name):
            expected = SEED_MODERN / f"seed{name[:3]}_{block.line}.ll"
            assert expected.is_file(), f"no conversion for {block.file}:{block.line}"


def test_flattened_extraction_stops_at_prose(tmp_path: Path) -> None:
    rst = tmp_path / "flat.rst"
    rst.write_text(
        "Intro text:\n"
        ".. code-block:: llvm\n"
        "define void @f()\n"
        'gc "statepoint-example" {\n'
        "call void @g()\n"
        "ret void\n"
        "}\n"
        "declare void @g()\n"
        "Then some prose follows.\n"
        ".. code-block:: llvm\n"
        "@x = global i32 0\n"
        "and prose again.\n",
        encoding="utf-8",
    )
    blocks = extract_llvm_blocks(rst)
    assert [(b.line, b.text) for b in blocks] == [
        (2, 'define void @f()\ngc "statepoint-example" {\ncall void @g()\nret void\n}\ndeclare void @g()\n'),
        (10, "@x = global i32 0\n"),
    ]


def test_other_languages_and_options_are_handled(tmp_path: Path) -> None:
    rst = tmp_path / "mixed.rst"
    rst.write_text(
        ".. code-block:: gas\n\n  retq\n\n"
        ".. code-block:: llvm\n  :linenos:\n\n  ret void\n\n    ; deeper\nText.\n",
        encoding="utf-8",
    )
    assert extract_llvm_blocks(rst) == [
        SeedBlock(file="mixed.rst", line=5, text="ret void\n\n  ; deeper\n")
    ]
