"""Outputs are never lost and write errors are one clear line; unbounded inputs stop at a limit;
every command follows the same exit-status rule (0 ok, 1 input or run error, 2 usage error)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from gctoy.cli import EXIT_BROKEN_PIPE, main
from limited_run import REPO_ROOT, assert_clean_error, run_gctoy

CORPUS = REPO_ROOT / "tests" / "ir" / "corpus"
GOOD_IR = CORPUS / "inst_loop.ll"  # llc and opt both accept it
SMALL_BLOB = "14 4F FF"


def _big_ir(path: Path, n: int = 20000) -> Path:
    """A module whose printed form is far larger than a pipe's buffer."""
    lines = ["define void @f() {"] + [f"  %x{i} = add i64 {i}, 1" for i in range(n)] + ["  ret void", "}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _spec(tmp_path: Path, slots: int = 0) -> Path:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"method_size": 64, "header": {"frame_size": 200},
                                "untracked": [{"offset": 4 * i} for i in range(slots)]}))
    return path


def _writers(tmp_path: Path, out: str) -> list[list[str]]:
    """One command line per command that writes with -o."""
    return [["opt", "-S", str(GOOD_IR), "-o", out], ["llc", str(GOOD_IR), "-o", out],
            ["gcinfo-x86", "encode", str(_spec(tmp_path)), "-o", out],
            ["gcinfo-x86", "dump", SMALL_BLOB, "-o", out]]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# ----------------------------------------------------------------------------- -o errors


@pytest.mark.parametrize("which", range(4))
def test_output_into_a_missing_folder(tmp_path, which):
    args = _writers(tmp_path, str(tmp_path / "nowhere" / "out.txt"))[which]
    assert_clean_error(run_gctoy(args), "cannot write", "no such folder")


@pytest.mark.parametrize("which", range(4))
def test_output_onto_a_full_device(tmp_path, which):
    args = _writers(tmp_path, "/dev/full")[which]
    assert_clean_error(run_gctoy(args), "/dev/full", "No space left on device")


def test_output_onto_a_directory(tmp_path):
    for args in _writers(tmp_path, str(tmp_path)):
        assert_clean_error(run_gctoy(args), "is a directory")


def test_output_onto_a_read_only_file_leaves_it(tmp_path):
    target = tmp_path / "ro.s"
    target.write_text("old\n")
    target.chmod(0o444)
    for args in _writers(tmp_path, str(target)):
        assert_clean_error(run_gctoy(args), "read-only")
        assert target.read_text() == "old\n"


def test_file_size_limit_midway_keeps_the_old_output(tmp_path):
    # ulimit -f: the new output (about a kilobyte) does not fit in 500 bytes.
    target = tmp_path / "out.s"
    target.write_text("the previous output\n")
    for args in (["llc", str(GOOD_IR), "-o", str(target)], ["opt", "-S", str(GOOD_IR), "-o", str(target)]):
        assert len(run_gctoy(args[:-2]).stdout) > 500
        result = run_gctoy(args, file_size_limit=500)
        assert_clean_error(result, "out.s", "File too large")
        assert target.read_text() == "the previous output\n"
        assert _leftovers(tmp_path) == []


def test_output_replaces_a_file_completely_and_keeps_its_mode(tmp_path):
    target = tmp_path / "out.ll"
    target.write_text("x" * 100000)
    target.chmod(0o640)
    result = run_gctoy(["opt", "-S", str(GOOD_IR), "-o", str(target)])
    assert result.returncode == 0, result.describe()
    assert target.read_text() == run_gctoy(["opt", "-S", str(GOOD_IR)]).stdout
    assert target.stat().st_mode & 0o777 == 0o640
    assert _leftovers(tmp_path) == []


def test_output_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    result = run_gctoy(["gcinfo-x86", "dump", SMALL_BLOB, "-o", str(link)])
    assert result.returncode == 0, result.describe()
    assert link.is_symlink() and real.read_text().startswith("Method info block:")


# ----------------------------------------------------------------------------- standard output
# tests/limited_run.py captures standard output in a file; these two cases need standard output
# to be /dev/full or a pipe that closes, so they start the child themselves (with a timeout).


def _child(args: list[str], stdout) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.Popen([sys.executable, "-m", "gctoy", *args], stdout=stdout, stderr=subprocess.PIPE,
                            env=env, cwd=REPO_ROOT)


@pytest.mark.parametrize("args", [["opt", "-S", str(GOOD_IR)], ["llc", str(GOOD_IR)],
                                  ["gcinfo-x86", "schema"], ["gcinfo-x86", "dump", SMALL_BLOB]])
def test_standard_output_on_a_full_device(args):
    with open("/dev/full", "w") as full:
        proc = _child(args, full)
        _, err = proc.communicate(timeout=120)
    err = err.decode()
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert "error: cannot write: No space left on device" in err


@pytest.mark.parametrize("command", ["opt", "llc"])
def test_broken_pipe_ends_quietly(tmp_path, command):
    # gctoy opt -S big.ll | head -1
    big = _big_ir(tmp_path / "big.ll")
    proc = _child([command, "-S", str(big)] if command == "opt" else [command, str(big)], subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE, err
    assert first and err == ""


# ----------------------------------------------------------------------------- unbounded inputs


@pytest.mark.parametrize(("args", "limit"), [
    (["readobj", "--stackmap", "/dev/zero"], "64 MiB"),
    (["gcinfo-x86", "encode", "/dev/zero"], "16 MiB"),
    (["gcinfo-x86", "dump", "/dev/zero"], "16 MiB"),
    (["gcinfo-x86", "spec", "/dev/zero"], "16 MiB"),
])
def test_endless_inputs_stop_at_the_limit(args, limit):
    assert_clean_error(run_gctoy(args), "larger than the limit of " + limit)


@pytest.mark.parametrize("args", [["gcinfo-x86", "encode", "-"], ["gcinfo-x86", "dump", "-"],
                                  ["readobj", "--stackmap", "-"]])
def test_endless_standard_input_stops_at_the_limit(args):
    assert_clean_error(run_gctoy(args, stdin_path="/dev/zero"), "<stdin>", "larger than the limit")


# ----------------------------------------------------------------------------- long hex, '-'


def test_dump_of_a_long_blob_given_as_one_argument(tmp_path):
    spec = _spec(tmp_path, slots=100)
    encoded = run_gctoy(["gcinfo-x86", "encode", str(spec)])
    assert encoded.returncode == 0, encoded.describe()
    hex_text = encoded.stdout.strip()
    assert len(bytes.fromhex(hex_text)) > 85 and len(hex_text) > 255
    dumped = run_gctoy(["gcinfo-x86", "dump", hex_text])
    assert dumped.returncode == 0, dumped.describe()
    assert "untracked count    = 100" in dumped.stdout
    from_stdin = run_gctoy(["gcinfo-x86", "spec", "-"], stdin=hex_text)
    assert from_stdin.returncode == 0 and json.loads(from_stdin.stdout)["method_size"] == 64
    spec_stdin = run_gctoy(["gcinfo-x86", "encode", "-"], stdin=spec.read_text())
    assert spec_stdin.stdout == encoded.stdout


def test_long_non_hex_argument_is_a_hex_error_not_a_file_error():
    assert_clean_error(run_gctoy(["gcinfo-x86", "dump", "Z" * 600]), "not hex bytes")


# ----------------------------------------------------------------------------- exit statuses


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _cases(tmp_path: Path) -> dict[str, tuple[list[str], list[str], list[str]]]:
    """command -> (a good command line, one with bad input, one with a usage error)."""
    bad_ir = tmp_path / "bad.ll"
    bad_ir.write_text("define void @f( {\n")
    bad_obj = tmp_path / "bad.o"
    bad_obj.write_bytes(b"\x7fELF" + bytes(60))
    program = tmp_path / "main.ll"
    program.write_text("define i64 @main() {\n  ret i64 7\n}\n")
    return {
        "opt": (["opt", str(GOOD_IR)], ["opt", str(bad_ir)], ["opt", "--no-such-option", str(GOOD_IR)]),
        "llc": (["llc", str(GOOD_IR)], ["llc", str(bad_ir)], ["llc"]),
        "run": (["run", str(program)], ["run", str(bad_ir)], ["run", str(program), "--gc", "mark-sweep"]),
        "readobj": (["readobj", "--help"], ["readobj", str(bad_obj)], ["readobj"]),
        "gcinfo-x86 dump": (["gcinfo-x86", "dump", SMALL_BLOB], ["gcinfo-x86", "dump", "14 4F"],
                            ["gcinfo-x86", "dump", SMALL_BLOB, "--gcinfo-version", "9"]),
        "gcinfo-x86 encode": (["gcinfo-x86", "encode", str(_spec(tmp_path))],
                              ["gcinfo-x86", "encode", str(bad_ir)], ["gcinfo-x86", "encode"]),
        "gcinfo-x86 spec": (["gcinfo-x86", "spec", SMALL_BLOB], ["gcinfo-x86", "spec", "FF"],
                            ["gcinfo-x86", "spec"]),
        "gcinfo-x86 schema": (["gcinfo-x86", "schema"], ["gcinfo-x86", "schema", "-o", str(tmp_path / "x" / "y")],
                              ["gcinfo-x86", "schema", "extra"]),
    }


@pytest.mark.parametrize("command", ["opt", "llc", "run", "readobj", "gcinfo-x86 dump", "gcinfo-x86 encode",
                                     "gcinfo-x86 spec", "gcinfo-x86 schema"])
def test_exit_status_rule_for_every_command(tmp_path, command):
    good, bad, usage = _cases(tmp_path)[command]
    status, _, err = _main(*good)
    assert status == 0, err
    status, _, err = _main(*bad)
    assert status == 1 and "error:" in err and "Traceback" not in err, err
    status, _, err = _main(*usage)
    assert status == 2 and "usage:" in err, err


def test_exit_status_of_the_command_itself():
    assert _main()[0] == 2
    assert _main("no-such-command")[0] == 2
    assert _main("--help")[0] == 0
    assert "1 error in the input or the run, 2 usage error" in _main("--help")[1]
