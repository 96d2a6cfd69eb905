"""Hostile IR inputs for ``gctoy opt``, ``llc`` and ``run``: one clear error, bounded time and memory.

Every case runs ``python -m gctoy`` in a child process under a time limit and an address-space
limit (``tests/limited_run.py``) and expects ``file:line:col: error: ...``, exit status 1, no
traceback.  Inputs that are valid (at a limit, or recursive only through a pointer) must be
accepted by every command.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from gctoy.inputs import TEXT_INPUT_LIMIT
from gctoy.ir.limits import MAX_NESTING
from limited_run import assert_clean_error, run_gctoy
from random_ir import module_of_lines

MAIN = "define i64 @main() {\n  ret i64 0\n}\n"
COMMANDS = ("opt", "llc", "run")
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def _located_error(result, *needles: str, max_rss_mb: float = 600.0) -> None:
    """A clean error whose line says where: ``file:line:col: error:``."""
    assert_clean_error(result, *needles, max_rss_mb=max_rss_mb)
    assert LOCATED.search(result.stderr), "no file:line:col\n" + result.describe()


def _nested(kind: str, depth: int) -> str:
    if kind == "array":
        return "@g = global " + "[1 x " * depth + "i8" + "]" * depth + " zeroinitializer\n"
    if kind == "struct":
        return "@g = global " + "{ " * depth + "i8" + " }" * depth + " zeroinitializer\n"
    if kind == "pointer":
        return "@g = global i8" + "*" * depth + " null\n"
    g = "i8* null"
    for _ in range(depth):
        g = f"i8* getelementptr (i8, {g}, i64 1)"
    return "@g = global " + g + "\n"


# -- reading the input -------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_not_utf8(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, "bad.ll", b"define i64 @main() {\n  ret i64 0 ; \xff\xfe\n}\n")
    r = run_gctoy([command, path])
    _located_error(r, "not UTF-8", f"{path}:2:15:")


def test_endless_standard_input_stops_at_the_limit() -> None:
    r = run_gctoy(["opt", "-"], stdin_path="/dev/zero")
    _located_error(r, "<stdin>:1:", f"{TEXT_INPUT_LIMIT // (1024 * 1024)} MiB limit")


@pytest.mark.parametrize("command", ("llc", "run"))
def test_endless_file_stops_at_the_limit(command: str) -> None:
    r = run_gctoy([command, "/dev/zero"])
    if command == "run":  # a file without the .ll suffix is an object: the objects' limit, at its byte offset
        assert_clean_error(r, "/dev/zero: error: input is larger than the 64 MiB limit of an object (byte offset")
        return
    _located_error(r, "MiB limit")


def test_endless_standard_input_to_run_stops_at_the_limit() -> None:
    r = run_gctoy(["run", "-"], stdin_path="/dev/zero")
    assert_clean_error(r, "<stdin>: error: input is larger than the 64 MiB limit of an object (byte offset")


def test_run_reads_ir_or_an_object_from_standard_input(tmp_path: Path, llvm14) -> None:
    ir = "define i64 @main() {\nentry:\n  ret i64 42\n}\n"
    text = run_gctoy(["run", "-"], stdin=ir)
    assert text.returncode == 0 and "result: 42" in text.stdout, text.stderr
    src = tmp_path / "m.ll"
    src.write_text(ir)
    obj = tmp_path / "m.o"
    subprocess.run([str(llvm14.llc), "-filetype=obj", str(src), "-o", str(obj)], check=True)
    binary = run_gctoy(["run", "-"], stdin_path=obj)
    assert binary.returncode == 0 and "result: 42" in binary.stdout, binary.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_file_of_functions_over_the_limit(tmp_path: Path, command: str) -> None:
    block = "".join(f"define i64 @f{k}(i64 %x) {{\n  %y = add i64 %x, {k}\n  ret i64 %y\n}}\n"
                    for k in range(1000))
    path = tmp_path / "huge.ll"
    with open(path, "w", encoding="utf-8") as out:
        while out.tell() <= TEXT_INPUT_LIMIT:
            out.write(block)
    r = run_gctoy([command, str(path)])
    _located_error(r, "MiB limit")


def test_many_newlines_under_the_limit_are_cheap(tmp_path: Path) -> None:
    """LLVM's opt needs gigabytes for a file of newlines; gctoy reads it in linear time and little memory."""
    path = _write(tmp_path, "blank.ll", "\n" * (TEXT_INPUT_LIMIT - 1024) + MAIN)
    r = run_gctoy(["opt", path, "-S"])
    assert r.returncode == 0 and "define i64 @main()" in r.stdout, r.describe()
    assert r.peak_rss_mb < 300, r.describe()


def test_memory_grows_at_most_20x_the_input(tmp_path: Path) -> None:
    """Parsing, verifying and printing a 5 MB module costs at most 20 bytes of memory per byte of input
    (beyond what the same command needs for a tiny module)."""
    big = _write(tmp_path, "big.ll", module_of_lines(100_000))
    small = _write(tmp_path, "small.ll", MAIN)
    base = run_gctoy(["opt", small, "-S", "-o", str(tmp_path / "small.out")])
    r = run_gctoy(["opt", big, "-S", "-o", str(tmp_path / "big.out")], timeout=300)
    assert base.returncode == 0 and r.returncode == 0, r.describe()
    size_mb = Path(big).stat().st_size / (1024 * 1024)
    assert r.peak_rss_mb - base.peak_rss_mb <= 20 * size_mb, (size_mb, base.peak_rss_mb, r.describe())


def test_one_huge_constant_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """A single global whose initializer is most of a 5 MB file costs no more per byte than a module."""
    n = 600_000
    text = f"@g = global [{n} x i64] [" + ", ".join(f"i64 {k % 1000}" for k in range(n)) + "]\n" + MAIN
    big = _write(tmp_path, "const.ll", text)
    base = run_gctoy(["opt", _write(tmp_path, "small.ll", MAIN)])
    r = run_gctoy(["opt", big], timeout=300)
    assert base.returncode == 0 and r.returncode == 0, r.describe()
    size_mb = len(text) / (1024 * 1024)
    assert r.peak_rss_mb - base.peak_rss_mb <= 20 * size_mb, (size_mb, base.peak_rss_mb, r.describe())


# -- nesting --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind,depth", [("array", 1000), ("pointer", 1000), ("struct", 330), ("gep", 250)])
def test_deep_nesting(tmp_path: Path, command: str, kind: str, depth: int) -> None:
    path = _write(tmp_path, "deep.ll", _nested(kind, depth) + MAIN)
    r = run_gctoy([command, path])
    _located_error(r, f"more than {MAX_NESTING} levels deep")


@pytest.mark.parametrize("kind", ["array", "pointer", "struct"])
def test_deepest_accepted_nesting_prints_and_lowers(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path, "deep.ll", _nested(kind, MAX_NESTING) + MAIN)
    r = run_gctoy(["opt", "-S", path])
    assert r.returncode == 0 and "@g = global" in r.stdout, r.describe()
    r = run_gctoy(["llc", path])
    assert r.returncode == 0 and "main:" in r.stdout, r.describe()


def test_deepest_accepted_constant_expression(tmp_path: Path) -> None:
    """The deepest GEP gctoy reads prints; llc names the constant it cannot lower in IR syntax."""
    path = _write(tmp_path, "deep.ll", _nested("gep", MAX_NESTING - 1) + MAIN)
    r = run_gctoy(["opt", "-S", path])
    assert r.returncode == 0 and "getelementptr" in r.stdout, r.describe()
    r = run_gctoy(["llc", path])
    assert_clean_error(r, "i8* null")
    assert "ConstantNull(" not in r.stderr and "(type=" not in r.stderr, r.describe()


# -- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_integer_literal_of_5000_digits(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, "int.ll", "define i64 @main() {\n  ret i64 " + "9" * 5000 + "\n}\n")
    _located_error(run_gctoy([command, path]), "5000 digits is too long", f"{path}:2:11:")


@pytest.mark.parametrize("command", COMMANDS)
def test_value_name_of_5000_digits(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, "name.ll", "define i64 @main() {\n  %" + "1" * 5000 + " = add i64 1, 2\n  ret i64 0\n}\n")
    _located_error(run_gctoy([command, path]), "expected to be numbered", f"{path}:2:3:")


@pytest.mark.parametrize("command", COMMANDS)
def test_array_too_large_for_llvm(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, "arr.ll", "@g = global [99999999999999999999 x i64] zeroinitializer\n" + MAIN)
    _located_error(run_gctoy([command, path]), "array length is too large", f"{path}:1:14:")


@pytest.mark.parametrize("text,needle", [
    ("define void @f() {\n  %a = alloca i64, align 3\n  ret void\n}\n", "not a power of two"),
    ("define void @f() {\n  %a = alloca i64, align 100000000000000000000\n  ret void\n}\n", "not a power of two"),
    ("@g = external global i8 addrspace(100000000000000000000)*\n", "address space"),
    ("define i64 @main() {\n  ret i64 0, !foo !" + "1" * 50 + "\n}\n", "metadata id"),
], ids=["align 3", "align 1e20", "addrspace 1e20", "metadata id of 50 digits"])
def test_numbers_llvm_rejects(tmp_path: Path, text: str, needle: str) -> None:
    path = _write(tmp_path, "n.ll", text)
    _located_error(run_gctoy(["opt", path]), needle)


# -- recursive types and phis -------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_recursive_type(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, "rec.ll", "%T = type { %T }\n@g = global %T zeroinitializer\n" + MAIN)
    _located_error(run_gctoy([command, path]), "invalid recursive type", f"{path}:1:1:")


def test_recursion_through_a_pointer_stays_valid(tmp_path: Path) -> None:
    text = ("%T = type { %T*, i64 }\n@g = global %T { %T* null, i64 5 }\n"
            "define i64 @main() {\n  %p = getelementptr %T, %T* @g, i64 0, i32 1\n"
            "  %v = load i64, i64* %p\n  ret i64 %v\n}\n")
    path = _write(tmp_path, "recptr.ll", text)
    r = run_gctoy(["opt", "-S", path])
    assert r.returncode == 0 and "%T = type { %T*, i64 }" in r.stdout, r.describe()
    assert run_gctoy(["llc", path]).returncode == 0
    r = run_gctoy(["run", path])
    assert r.returncode == 0 and "result: 5" in r.stdout, r.describe()


@pytest.mark.parametrize("command", COMMANDS)
def test_phi_that_names_only_itself(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, "phi.ll", "define i64 @main() {\nentry:\n  br label %l\nl:\n"
                  "  %x = phi i64 [ %x, %l ]\n  br label %l\n}\n")
    _located_error(run_gctoy([command, path]), "phi", f"{path}:5:")
