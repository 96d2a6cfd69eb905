"""``gctoy run`` on an object compiled by real llc: output, result, statistics, errors."""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))

from runtime_programs import EXPECTED, LIST, compile_program  # noqa: E402


def gctoy(*args):
    return subprocess.run([sys.executable, "-m", "gctoy.cli", "run", *args], capture_output=True, text=True,
                          timeout=120)


def test_run_prints_and_collects(llvm14, tmp_path):
    obj = compile_program(LIST, tmp_path, llvm14, name="list")
    calm = gctoy(str(obj), "--gc", "none")
    stressed = gctoy(str(obj), "--stress", "--verify-heap")
    assert calm.returncode == 0 and stressed.returncode == 0, (calm.stderr, stressed.stderr)
    assert calm.stdout == stressed.stdout
    printed, result = EXPECTED["list"]
    lines = stressed.stdout.splitlines()
    assert lines[-1] == f"result: {result}"
    assert [int(x) for x in lines[:-1]] == printed
    assert "collections: 0," in calm.stderr
    assert "collections: 0," not in stressed.stderr


def test_run_errors_are_one_line(tmp_path):
    missing = gctoy(str(tmp_path / "nope.o"))
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    ir = tmp_path / "p.ll"
    ir.write_text("define i64 @main() {\n  ret i64 %x\n}\n")
    r = gctoy(str(ir))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{ir}:2:11: error: use of undefined value '%x'")
    ok = tmp_path / "ok.ll"
    ok.write_text("define i64 @main() {\n  ret i64 42\n}\n")
    r = gctoy(str(ok))
    assert r.returncode == 0 and r.stdout == "result: 42\n"
    junk = tmp_path / "junk.o"
    junk.write_bytes(b"not an elf file")
    r = gctoy(str(junk))
    assert r.returncode == 1 and "Traceback" not in r.stderr and r.stderr.startswith(str(junk))


def test_trace_describes_each_collection(tmp_path):
    from runtime_programs import PROGRAMS

    src = tmp_path / "list.ll"
    src.write_text(PROGRAMS["list"], encoding="utf-8")
    r = gctoy(str(src), "--stress", "--trace")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("collection ")]
    assert lines and lines[0].startswith("collection 1 at return address 0x")
    assert len(lines) == int(r.stderr.split("collections: ")[1].split(",")[0])


def test_llc_writes_the_stack_map_section(tmp_path):
    """The .llvm_stackmaps bytes in gctoy llc's output parse back to what the lowering recorded."""
    from gctoy.codegen import compile_module
    from gctoy.ir import parse_module
    from gctoy.passes import run
    from gctoy.stackmap import parse
    from runtime_programs import PROGRAMS

    src = tmp_path / "list.ll"
    src.write_text(PROGRAMS["list"], encoding="utf-8")
    out = tmp_path / "list.s"
    r = subprocess.run([sys.executable, "-m", "gctoy.cli", "llc", str(src), "-o", str(out)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    section = text.split("__LLVM_StackMaps:\n")[1].split("\n\n")[0]
    data = bytes(int(b, 16) for line in section.splitlines() for b in line.replace("\t.byte ", "").split(", "))
    m = parse_module(PROGRAMS["list"])
    run(m, "rewrite-statepoints-for-gc")
    assert parse(data) == compile_module(m).stackmap


def test_python_dash_m_gctoy_is_the_command(tmp_path):
    import subprocess
    import sys

    src = tmp_path / "p.ll"
    src.write_text('declare void @print_i64(i64)\ndefine i64 @main() gc "statepoint-example" {\n'
                   '  call void @print_i64(i64 7)\n  ret i64 5\n}\n')
    r = subprocess.run([sys.executable, "-m", "gctoy", "run", str(src)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["7", "result:", "5"]
