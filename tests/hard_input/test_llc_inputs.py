"""Bad and hostile modules for ``gctoy llc``/``run``/``opt`` and the code generators: one clear error,
bounded time and memory, never a miscompiled run. Every case runs ``python -m gctoy`` in a child
process under limits (tests/limited_run.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from broken_modules import CASES
from limited_run import assert_clean_error, run_gctoy
from lli_shim import SHIM, parse_output

TIMEOUT = 120  # generous: the machine is shared; a hang or a runaway allocation is what is caught
LLC64, LLC32 = ("llc",), ("llc", "--target", "x86-32")
RUN64, RUN32 = ("run",), ("run", "--target", "x86-32")


def write(tmp_path: Path, text: str, name: str = "in.ll") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def gctoy(*args: str, memory_mb: int = 2048):
    return run_gctoy(list(args), timeout=TIMEOUT, memory_mb=memory_mb)


def assert_ok(result) -> None:
    assert not result.timed_out and result.returncode == 0, result.describe()
    assert "Traceback" not in result.stderr, result.describe()


# --------------------------------------------------------------------------- 1. the verifier first

@pytest.mark.parametrize("command", [RUN64, LLC32], ids=["run", "llc-x86-32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_broken_modules_are_refused_before_lowering(tmp_path, name, command):
    broken, _, fragment = CASES[name]
    assert_clean_error(gctoy(*command, write(tmp_path, broken)), fragment)


@pytest.mark.parametrize("command", [LLC64, RUN32], ids=["llc", "run-x86-32"])
@pytest.mark.parametrize("name", ["self-reference", "phi in the entry block", "statepoint flags"])
def test_broken_modules_are_refused_by_the_other_commands(tmp_path, name, command):
    broken, _, fragment = CASES[name]
    assert_clean_error(gctoy(*command, write(tmp_path, broken)), fragment)


@pytest.mark.parametrize("name", ["self-reference", "token phi"])
def test_opt_verifies_its_input_before_the_passes(tmp_path, name):
    broken, repaired, fragment = CASES[name]
    path = write(tmp_path, broken)
    assert_clean_error(gctoy("opt", "-passes=shadow-stack-gc-lowering", "-S", path), fragment)
    assert_ok(gctoy("opt", "-passes=shadow-stack-gc-lowering", "-S", write(tmp_path, repaired, "ok.ll")))


def test_disable_verify_skips_the_input_check(tmp_path):
    broken, repaired, _ = CASES["self-reference"]
    path = write(tmp_path, broken)
    for flag in ("-disable-verify", "--disable-verify"):
        assert_ok(gctoy("opt", flag, "-passes=lower-gc-barriers", "-S", path))
    ok = write(tmp_path, repaired, "ok.ll")
    for command in (LLC64, RUN64, LLC32, RUN32):
        done = gctoy(*command, "-disable-verify", ok)
        assert_ok(done)


# --------------------------------------------------------------------------- 2. the entry function

ENTRIES = {
    "i32 result": "define i32 @main() {\nentry:\n  ret i32 -7\n}\n",
    "parameters": "define i64 @main(i64 %a, i64 %b) {\nentry:\n  ret i64 %a\n}\n",
    "void": "define void @main() {\nentry:\n  ret void\n}\n",
    "varargs": "define i64 @main(...) {\nentry:\n  ret i64 1\n}\n",
}


@pytest.mark.parametrize("command", [RUN64, RUN32], ids=["x86-64", "x86-32"])
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_entry_with_the_wrong_type_is_refused(tmp_path, name, command):
    done = gctoy(*command, write(tmp_path, ENTRIES[name]))
    assert_clean_error(done, "entry function @main has type", "'i64 ()'", ":1:")
    assert "result:" not in done.stdout


@pytest.mark.parametrize("command", [RUN64, RUN32], ids=["x86-64", "x86-32"])
def test_entry_option_is_checked_too(tmp_path, command):
    text = "define i32 @start() {\nentry:\n  ret i32 1\n}\n" \
           "define i64 @main() {\nentry:\n  ret i64 2\n}\n"
    path = write(tmp_path, text)
    assert_clean_error(gctoy(*command, "--entry", "start", path), "@start has type 'i32 ()'", ":1:")
    assert_clean_error(gctoy(*command, "--entry", "absent", path), "no function @absent")
    done = gctoy(*command, path)
    assert_ok(done)
    assert done.stdout.strip().splitlines()[-1] == "result: 2"


# --------------------------------------------------------------------------- 3. and 4. sizes

PATCH = """define void @g() {
entry:
  ret void
}
define i64 @main() gc "statepoint-example" {
entry:
  call void @g() "statepoint-num-patch-bytes"="%s"
  ret i64 0
}
"""


@pytest.mark.parametrize("command", [LLC64, RUN64], ids=["llc", "run"])
def test_huge_patch_bytes_are_refused(tmp_path, command):
    done = gctoy(*command, write(tmp_path, PATCH % "4000000000"))
    assert_clean_error(done, "patch bytes", "4096", max_rss_mb=300)


def test_patch_bytes_within_the_limit_run(tmp_path):
    done = gctoy(*RUN64, write(tmp_path, PATCH % "4096"))
    assert_ok(done)
    listing = gctoy(*LLC64, write(tmp_path, PATCH % "16", "small.ll"))
    assert_ok(listing)
    assert "0x0f, 0x1f" in listing.stdout  # the nops are there


GLOBAL = """@g = global [%d x i64] zeroinitializer
define i64 @main() {
entry:
  %%p = getelementptr [%d x i64], [%d x i64]* @g, i64 0, i64 %d
  store i64 5, i64* %%p
  %%v = load i64, i64* %%p
  ret i64 %%v
}
"""


@pytest.mark.parametrize("command", [LLC64, RUN64, LLC32, RUN32], ids=["llc", "run", "llc-x86-32", "run-x86-32"])
@pytest.mark.parametrize("count", [100_000_000, 1_000_000])
def test_huge_globals_are_refused_before_any_byte_is_written(tmp_path, count, command):
    done = gctoy(*command, write(tmp_path, GLOBAL % (count, count, count, count - 1)))
    assert_clean_error(done, "global @g", "1048576 bytes of data", max_rss_mb=300)


@pytest.mark.parametrize("command", [RUN64, RUN32], ids=["x86-64", "x86-32"])
def test_a_large_global_within_the_limit_runs(tmp_path, command):
    count = 100_000
    path = write(tmp_path, GLOBAL % (count, count, count, count - 1))
    done = gctoy(*command, path)
    assert_ok(done)
    assert done.stdout.strip().splitlines()[-1] == "result: 5"


def test_zero_filled_globals_are_written_as_zero_directives(tmp_path):
    count = 100_000
    done = gctoy(*LLC64, write(tmp_path, GLOBAL % (count, count, count, count - 1)))
    assert_ok(done)
    assert ".zero 800000" in done.stdout
    assert done.stdout.count(".byte") < 100


ALLOCA = """define i64 @main() {
entry:
  %%a = alloca %s, i64 %d
  ret i64 0
}
"""


@pytest.mark.parametrize("command", [LLC64, RUN64, LLC32, RUN32], ids=["llc", "run", "llc-x86-32", "run-x86-32"])
@pytest.mark.parametrize("ty, count", [("i64", 1_000_000_000_000), ("i8 addrspace(1)*", 100_000_000),
                                       ("{}", 1_000_000_000_000)])
def test_huge_allocas_are_refused(tmp_path, ty, count, command):
    done = gctoy(*command, write(tmp_path, ALLOCA % (ty, count)))
    if ty == "{}":  # an empty type takes no room however many there are: it must just not hang
        assert_ok(done)
        return
    assert_clean_error(done, "alloca %a", "frame limit of 1048576 bytes", ":3:", max_rss_mb=300)


# --------------------------------------------------------------------------- 5. names

SYMBOLS = (Path(__file__).parent / "symbol_names.ll").read_text(encoding="utf-8")


def lli_reference(text: str, lli) -> tuple[list[int], int]:
    """What LLVM 14's lli prints and returns for the program (the shim serves the runtime's functions)."""
    import subprocess

    body = "\n".join(line for line in text.replace("@main(", "@prog_main(").splitlines()
                     if not line.startswith("declare "))
    entry = ("define i32 @main() {\nentry:\n  call void @gctoy_lli_run(i32 0, i64 ()* @prog_main)\n"
             "  ret i32 0\n}\n")
    done = subprocess.run([str(lli), "-"], input="\n".join([SHIM, body, entry]), capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return parse_output(done.stdout, 1)[0]


@pytest.mark.parametrize("extra", [(), ("--design", "shadow-stack"), ("--target", "x86-32")],
                         ids=["statepoint", "shadow-stack", "x86-32"])
def test_register_and_keyword_names_run_as_lli_runs_them(tmp_path, extra, lli14):
    printed, result = lli_reference(SYMBOLS, lli14)
    done = gctoy("run", "--stress", "--verify-heap", *extra, write(tmp_path, SYMBOLS))
    assert_ok(done)
    lines = done.stdout.strip().splitlines()
    assert [int(v) for v in lines[:-1]] == printed
    assert lines[-1] == f"result: {result}"
    assert "collections: 0," not in done.stderr  # the collector did run


@pytest.mark.parametrize("command", [LLC64, LLC32], ids=["x86-64", "x86-32"])
def test_no_ir_name_reaches_the_assembly_as_a_register_or_keyword(tmp_path, command):
    done = gctoy(*command, write(tmp_path, SYMBOLS))
    assert_ok(done)
    text = done.stdout
    for name in ("rax", "rsp", "byte", "dword", "ptr", "rip"):
        assert f"\n{name}:" not in text and f"call {name}\n" not in text
    for mangled in ("__gctoy_sym_rax:", "__gctoy_sym_byte:", "__gctoy_sym__2estr:", "__gctoy_sym_meta_2enode:",
                    "__gctoy_sym_a_20b:"):
        assert mangled in text


#: a runtime function used as a value: its address is taken, compared and called through
ADDRESS_TAKEN = """declare void @print_i64(i64)

define i64 @main() {
entry:
  %slot = alloca void (i64)*
  store void (i64)* @print_i64, void (i64)** %slot
  %fp = load void (i64)*, void (i64)** %slot
  call void %fp(i64 7)
  %i = ptrtoint void (i64)* %fp to i64
  %nz = icmp ne i64 %i, 0
  %r = zext i1 %nz to i64
  ret i64 %r
}
"""


@pytest.mark.parametrize("extra", [(), ("--no-regalloc",), ("--target", "x86-32")],
                         ids=["x86-64", "slots", "x86-32"])
def test_a_runtime_function_whose_address_is_taken_runs_as_lli_runs_it(tmp_path, extra, lli14):
    printed, result = lli_reference(ADDRESS_TAKEN, lli14)
    done = gctoy("run", *extra, write(tmp_path, ADDRESS_TAKEN))
    assert_ok(done)
    lines = done.stdout.strip().splitlines()
    assert [int(v) for v in lines[:-1]] == printed == [7]
    assert lines[-1] == f"result: {result}"


def test_a_name_that_spells_an_internal_label_is_refused(tmp_path):
    text = '@"main.bb0" = global i64 3\ndefine i64 @main() {\nentry:\n  ret i64 1\n}\n'
    for command in (LLC64, RUN32):
        assert_clean_error(gctoy(*command, write(tmp_path, text)), "@main.bb0", "label")


# --------------------------------------------------------------------------- 6. runtime declarations

DECLARATIONS = {
    "declare void @print_i64()": "'void ()'",
    "declare void @print_i64(i64, ...)": "'void (i64, ...)'",
    "declare i64 @gc_collect()": "'i64 ()'",
    "declare i8* @gc_alloc(i64)": "'i8* (i64)'",
    "declare void @do_safepoint(i32)": "'void (i32)'",
}


@pytest.mark.parametrize("command", [LLC64, RUN64, LLC32, RUN32], ids=["llc", "run", "llc-x86-32", "run-x86-32"])
@pytest.mark.parametrize("declaration", sorted(DECLARATIONS))
def test_runtime_declarations_must_match_the_guest_abi(tmp_path, declaration, command):
    text = f"; a program\n{declaration}\ndefine i64 @main() {{\nentry:\n  ret i64 1\n}}\n"
    done = gctoy(*command, write(tmp_path, text))
    assert_clean_error(done, DECLARATIONS[declaration], "the runtime's", ":2:")


def test_gc_alloc_may_return_any_pointer(tmp_path):
    text = ("declare i8* @gc_alloc(i64, i64)\ndeclare i64 addrspace(1)* @gc_alloc2(i64, i64)\n"
            "define i64 @main() {\nentry:\n  %o = call i8* @gc_alloc(i64 1, i64 0)\n  ret i64 1\n}\n")
    assert_ok(gctoy(*RUN64, "--gc", "none", write(tmp_path, text)))


# --------------------------------------------------------------------------- 7. external globals

@pytest.mark.parametrize("command", [LLC64, RUN64, LLC32, RUN32], ids=["llc", "run", "llc-x86-32", "run-x86-32"])
def test_unused_external_global_is_accepted_and_a_used_one_refused(tmp_path, command):
    unused = "@G = external global i32\ndefine i64 @main() {\nentry:\n  ret i64 1\n}\n"
    assert_ok(gctoy(*command, write(tmp_path, unused)))
    used = "@G = external global i32\ndefine i64 @main() {\nentry:\n  %v = load i32, i32* @G\n  ret i64 1\n}\n"
    assert_clean_error(gctoy(*command, write(tmp_path, used, "used.ll")), "external global @G is used", ":4:")


@pytest.mark.parametrize("command", [LLC32, RUN32], ids=["llc", "run"])
def test_x86_32_refuses_allocas_with_too_many_gc_pointers(tmp_path, command):
    # 130000 pointers fit the frame limit, but each is an untracked GC-info local zeroed by the prolog
    done = gctoy(*command, write(tmp_path, ALLOCA % ("i8 addrspace(1)*", 130_000)))
    assert_clean_error(done, "hold 130000 GC pointers", "at most 4096", ":3:", max_rss_mb=300)
    assert_ok(gctoy(*LLC64, write(tmp_path, ALLOCA % ("i8 addrspace(1)*", 130_000), "ok.ll")))  # x86-64 zeroes none
