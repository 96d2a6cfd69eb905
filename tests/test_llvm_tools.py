"""The LLVM oracle helpers find the right release and run it."""

from llvm_tools import run_opt, tool_major_version

VALID = "define i32 @answer() {\n  ret i32 42\n}\n"
INVALID = "define i32 @answer() {\n  ret i64 42\n}\n"


def test_llvm14_tools_are_release_14(llvm14):
    for tool in (llvm14.opt, llvm14.llc, llvm14.llvm_readobj):
        assert tool_major_version(tool) == 14


def test_run_opt_round_trips_valid_ir(llvm14):
    result = run_opt(llvm14.opt, ["-passes=verify", "-S"], VALID)
    assert result.returncode == 0, result.stderr
    assert "ret i32 42" in result.stdout


def test_run_opt_reports_invalid_ir(llvm14):
    result = run_opt(llvm14.opt, ["-passes=verify", "-S"], INVALID)
    assert result.returncode != 0
    assert "error" in result.stderr


def test_llvm19_opt_is_release_19(llvm19):
    assert tool_major_version(llvm19.opt) == 19


def test_seeds_dir_holds_the_specifications(seeds_dir):
    assert any(seeds_dir.glob("*.rst"))
