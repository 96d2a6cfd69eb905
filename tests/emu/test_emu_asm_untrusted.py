"""Untrusted assembly: no directive reads a host file, and Keystone's child has a memory limit."""

from __future__ import annotations

import pytest

import gctoy.emu.asm as asm
from gctoy.emu.asm import ALLOWED_DIRECTIVES, UNTRUSTED_MEMORY_MB, assemble, assemble_untrusted, check_directives
from gctoy.errors import AssemblerError


@pytest.fixture()
def secret(tmp_path):
    """A host file whose bytes must never come back from the assembler."""
    path = tmp_path / "secret.txt"
    path.write_bytes(b"host secret\n")
    (tmp_path / "inc.s").write_text(".byte 0x77\n")
    return path


# Each way of writing a file-reading directive, including ways that hide it from a line-based
# reader: a block comment before it, a quoted label, a carriage return, upper case, a macro.
SNEAKY = [
    ('.incbin "{p}"', 1, ".incbin"),
    ('/* c */ .incbin "{p}"', 1, ".incbin"),
    ('"lab": .incbin "{p}"', 1, ".incbin"),
    ('.INCBIN "{p}"', 1, ".INCBIN"),
    ('nop\r.incbin "{p}"', 2, ".incbin"),
    ('nop ; .incbin "{p}"', 1, ".incbin"),
    ('nop // c\n.incbin "{p}", 0, 4', 2, ".incbin"),
    ('.include "{inc}"', 1, ".include"),
    ('.macro m\n.incbin "{p}"\n.endm\nm', 1, ".macro"),
    ('.irp d,incbin\n.\\d "{p}"\n.endr', 1, ".irp"),
    ('.rept 2\nnop\n.endr', 1, ".rept"),
    ('.fill 4, 1, 0x90', 1, ".fill"),
]


@pytest.mark.parametrize(("template", "line", "directive"), SNEAKY)
def test_file_and_macro_directives_are_refused_with_the_line(secret, template, line, directive) -> None:
    text = template.format(p=secret, inc=secret.parent / "inc.s")
    for assembler in (assemble_untrusted, assemble):
        with pytest.raises(AssemblerError) as caught:
            assembler(text)
        assert f"line {line}: directive '{directive}' is not allowed" in str(caught.value)


@pytest.mark.parametrize(
    ("template", "line", "label"),
    [
        ('.incbin:\n.incbin "{p}"', 1, ".incbin"),
        ('nop\n.INCLUDE: nop\n.include "{inc}"', 2, ".INCLUDE"),
        ('.Loc: .loc 1 2', 1, ".Loc"),
    ],
)
def test_a_label_named_like_a_directive_is_refused(secret, template, line, label) -> None:
    # a defined label is allowed wherever its name appears; one spelled like a directive would let
    # the directive through under its cover
    text = template.format(p=secret, inc=secret.parent / "inc.s")
    for assembler in (assemble_untrusted, assemble):
        with pytest.raises(AssemblerError) as caught:
            assembler(text)
        assert f"line {line}: a label may not be named like the directive '{label}'" in str(caught.value)


def test_the_child_cannot_open_files_even_past_the_check(secret, monkeypatch) -> None:
    # Second line of defence: with the directive check switched off, Keystone's child still has
    # no file descriptor to spare, so .incbin/.include give nothing (or an error), never the file.
    monkeypatch.setattr(asm, "check_directives", lambda text: None)
    for text in (f'.incbin "{secret}"', f'.include "{secret.parent / "inc.s"}"'):
        try:
            code = assemble_untrusted(text, timeout=30)
        except AssemblerError:
            continue
        assert b"host secret" not in code and b"\x77" not in code


@pytest.mark.parametrize("directive", [".long", ".short", ".byte", ".globl", ".align", ".quad", ".section",
                                       ".set", ".p2align", ".ascii", ".zero"])
def test_directives_the_book_and_code_generator_use_are_allowed(directive) -> None:
    assert directive in ALLOWED_DIRECTIVES


def test_allowed_text_with_local_labels_and_sections_assembles() -> None:
    text = '.section .rodata,"a"\n.Lx: .byte 1\njmp .Lx\n.p2align 2\n.quad 7\n.ascii "a.b"'
    check_directives(text)
    assert assemble_untrusted(text, timeout=30) == assemble(text)
    with pytest.raises(AssemblerError, match="line 1: directive '.Lnowhere'"):
        check_directives("jmp .Lnowhere")  # not a label the text defines: treated as a directive


@pytest.mark.parametrize("text", [".skip 0x7fffffff", ".zero 0x40000000", ".space 0x7fffffff, 1"])
def test_memory_hungry_input_ends_in_a_clear_error(text) -> None:
    # Without a limit Keystone's child takes gigabytes for these within seconds (2.8 GB after
    # 10 s for the first); with it, the child stops at the limit and says so.
    with pytest.raises(AssemblerError, match=f"{UNTRUSTED_MEMORY_MB} MiB memory limit"):
        assemble_untrusted(text, timeout=120)


def test_small_fills_still_work_under_the_limit() -> None:
    assert assemble_untrusted(".zero 0x10000\nret", timeout=60) == bytes(0x10000) + b"\xc3"


def test_unbalanced_brackets_are_refused_before_keystone_reads_them_as_something_else():
    from gctoy.emu.asm import assemble_untrusted, check_brackets

    with pytest.raises(AssemblerError, match=r"line 2: the brackets of '.*\[rbx\+' do not balance"):
        assemble_untrusted("nop\nmov rax, [rbx+\n")
    check_brackets("mov rax, [rbx + 8]\nlea rdi, [rip + x]\nx: .quad 1\n")   # balanced text passes


def test_a_failure_keystone_gives_no_reason_for_is_named_as_such() -> None:
    # Keystone answers KS_ERR_OK ("OK") when it cannot build a huge fill: say that it gave no reason
    with pytest.raises(AssemblerError) as caught:
        assemble_untrusted(".zero 0x10000000", timeout=120)
    message = str(caught.value)
    assert "KS_ERR_OK" in message and "rejected the assembly: OK" not in message
    assert "without giving a reason" in message
