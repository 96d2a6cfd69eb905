"""Floating-point types and constants: read as LLVM reads them, printed as LLVM prints them.

LLVM writes a float or double constant in decimal (six digits after the point) only when that
text reads back as the same double, otherwise as the 16 hex digits of the double; half and
bfloat always in their typed hex forms.  A literal that the type cannot hold exactly
(``float 0.1``) is refused.  LLVM 14 and 19 are the oracles on thousands of random bit patterns.
"""

from __future__ import annotations

import random
import re
import struct

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.ir.floats import float_text, parse_float_literal
from gctoy.llvm_tools import LLVMTools, run_opt


def _ret(ty: str, literal: str) -> str:
    """The text gctoy prints for ``ret ty literal``."""
    m = parse_module(f"define {ty} @f() {{\n  ret {ty} {literal}\n}}\n", "f.ll")
    return re.search(r"ret (.*)", print_module(m)).group(1)


# Spellings measured with opt-14 and opt-19 (both print the same).
@pytest.mark.parametrize("ty, literal, printed", [
    ("double", "1.5", "double 1.500000e+00"),
    ("double", "0.1", "double 1.000000e-01"),
    ("double", "-0.0", "double -0.000000e+00"),
    ("double", "0.000001", "double 0x3EB0C6F7A0B5ED8D"),
    ("double", "1234567.0", "double 0x4132D68700000000"),
    ("double", "123456.0", "double 1.234560e+05"),
    ("double", "1.25E+2", "double 1.250000e+02"),
    ("double", "+1.5", "double 1.500000e+00"),
    ("double", "0x1", "double 4.940660e-324"),
    ("double", "0x000FFFFFFFFFFFFF", "double 0xFFFFFFFFFFFFF"),
    ("double", "0x7FF0000000000000", "double 0x7FF0000000000000"),
    ("double", "5.5e-310", "double 5.500000e-310"),
    ("float", "0x3FB99999A0000000", "float 0x3FB99999A0000000"),
    ("float", "3.0", "float 3.000000e+00"),
    ("float", "0x7FF4000000000000", "float 0x7FF4000000000000"),
    ("half", "0.5", "half 0xH3800"),
    ("half", "0x3FF0000000000000", "half 0xH3C00"),
    ("half", "0xH7E00", "half 0xH7E00"),
    ("bfloat", "1.5", "bfloat 0xR3FC0"),
    ("x86_fp80", "0xK3FFF8000000000000000", "x86_fp80 0xK3FFF8000000000000000"),
    ("fp128", "0xL00000000000000003FFF000000000000", "fp128 0xL00000000000000003FFF000000000000"),
])
def test_spelling_as_llvm_prints_it(ty: str, literal: str, printed: str) -> None:
    assert _ret(ty, literal) == printed


@pytest.mark.parametrize("ty, literal, message", [
    ("float", "0.1", "floating point constant invalid for type"),
    ("float", "1.0e39", "floating point constant invalid for type"),
    ("float", "0x7FF0000000000001", "floating point constant invalid for type"),
    ("half", "0.1", "floating point constant invalid for type"),
    ("double", "1", "integer constant must have integer type"),
    ("double", "0xH3C00", "floating point constant does not have type 'double'"),
    ("x86_fp80", "1.0", "floating point constant does not have type 'x86_fp80'"),
])
def test_literals_llvm_refuses(ty: str, literal: str, message: str) -> None:
    with pytest.raises(IRParseError) as e:
        parse_module(f"define {ty} @f() {{\n  ret {ty} {literal}\n}}\n", "f.ll")
    assert message in str(e.value)
    assert "f.ll:2:" in str(e.value)


def test_equal_values_are_equal_constants() -> None:
    a = parse_module("@a = global double 0.5\n@b = global double 5.0e-1\n@c = global double 0x3FE0000000000000\n")
    inits = {g.initializer for g in a.globals}
    assert len(inits) == 1


def test_fadd_float_prints_hex_and_round_trips() -> None:
    text = "define float @f(float %y) {\n  %a = fadd float %y, 0x3FB99999A0000000\n  ret float %a\n}\n"
    out = print_module(parse_module(text))
    assert "fadd float %y, 0x3FB99999A0000000" in out
    assert print_module(parse_module(out)) == out


def _random_patterns(seed: int) -> tuple[list[int], list[int], list[int]]:
    rng = random.Random(seed)
    doubles = []
    for _ in range(2500):
        r = rng.random()
        if r < 0.3:
            bits = rng.getrandbits(64)
        elif r < 0.6:
            value = float(f"{rng.randint(-99999, 99999)}e{rng.randint(-30, 30)}")
            bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        elif r < 0.8:
            value = rng.randint(-10**7, 10**7) / 2 ** rng.randint(0, 30)
            bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        else:  # denormals, small exponents, short payloads
            bits = rng.getrandbits(12) << 52 | rng.getrandbits(rng.choice([1, 5, 20, 52]))
        doubles.append(bits)
    floats = [rng.getrandbits(32) for _ in range(800)]
    floats += [struct.unpack("<I", struct.pack("<f", rng.randint(-1000, 1000) / 8))[0] for _ in range(200)]
    halves = [rng.getrandbits(16) for _ in range(300)]
    return doubles, floats, halves


def _widen(fbits: int) -> int:
    """A float's bits as the double LLVM's text uses for it (NaN payloads kept)."""
    if (fbits >> 23) & 0xFF == 0xFF:
        return (fbits >> 31) << 63 | 0x7FF << 52 | (fbits & 0x7FFFFF) << 29
    return struct.unpack("<Q", struct.pack("<d", struct.unpack("<f", struct.pack("<I", fbits))[0]))[0]


@pytest.mark.parametrize("version", [14, 19])
def test_random_bit_patterns_print_as_llvm_prints_them(version: int, request) -> None:
    tools: LLVMTools = request.getfixturevalue(f"llvm{version}")
    doubles, floats, halves = _random_patterns(20261127 + version)
    src = "\n".join([
        f"@d = global [{len(doubles)} x double] [" + ", ".join(f"double 0x{b:016X}" for b in doubles) + "]",
        f"@f = global [{len(floats)} x float] [" + ", ".join(f"float 0x{_widen(b):016X}" for b in floats) + "]",
        f"@h = global [{len(halves)} x half] [" + ", ".join(f"half 0xH{b:04X}" for b in halves) + "]",
    ]) + "\n"
    r = run_opt(tools.opt, ["-S"], src)
    assert r.returncode == 0, r.stderr
    ours = print_module(parse_module(src), opaque=version >= 15)
    mismatches = []
    for name, kind, patterns in (("d", "double", doubles), ("f", "float", floats), ("h", "half", halves)):
        theirs = re.search(rf"^@{name} = .*$", r.stdout, re.M).group(0)
        mine = re.search(rf"^@{name} = .*$", ours, re.M).group(0)
        if mine != theirs:
            mismatches.append(f"@{name} printed differently")
        for bits, text in zip(patterns, re.findall(kind + r" ([^,\]]+)", theirs.split("] [", 1)[1])):
            if float_text(kind, bits) != text:
                mismatches.append((kind, hex(bits), float_text(kind, bits), text))
            if kind != "half" and parse_float_literal(text, kind) != bits:
                mismatches.append(("read back", kind, hex(bits), text))
    assert not mismatches, mismatches[:10]
