"""The error family formats its messages the way the CLI prints them."""

import pickle

import pytest

from gctoy.errors import (
    AssemblerError,
    DecodeError,
    EmulationFault,
    GCToyError,
    IRParseError,
    VerifyError,
)


def test_ir_parse_error_prints_file_line_column():
    err = IRParseError("expected type", filename="f.ll", line=3, column=14)
    assert str(err) == "f.ll:3:14: error: expected type"
    assert (err.message, err.filename, err.line, err.column) == ("expected type", "f.ll", 3, 14)


def test_ir_parse_error_default_filename():
    assert str(IRParseError("unexpected token", line=1, column=1)) == (
        "<input>:1:1: error: unexpected token"
    )


def test_decode_error_prints_hex_offset():
    err = DecodeError(0x1C, "unknown location kind 9")
    assert str(err) == "offset 0x1c: unknown location kind 9"
    assert err.offset == 28


def test_verify_error_with_and_without_location():
    assert str(VerifyError("gc.relocate outside a statepoint", location="@f:%bb1")) == (
        "@f:%bb1: error: gc.relocate outside a statepoint"
    )
    assert str(VerifyError("no entry block")) == "error: no entry block"


def test_emulation_fault_names_pc_and_instruction():
    err = EmulationFault("unmapped read", pc=0x401005, disassembly="mov rax, qword ptr [rbx]")
    assert str(err) == "pc=0x401005 (mov rax, qword ptr [rbx]): unmapped read"


@pytest.mark.parametrize(
    "err",
    [
        IRParseError("m", "a.ll", 2, 5),
        VerifyError("m", "loc"),
        DecodeError(4, "m"),
        AssemblerError("bad operand"),
        EmulationFault("m", 0x10, "ret"),
    ],
)
def test_every_error_is_a_gctoy_error_and_survives_pickling(err):
    assert isinstance(err, GCToyError)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err)
    assert str(again) == str(err)
