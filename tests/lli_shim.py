"""Run guest programs with LLVM's ``lli``: the ABI implemented with malloc, as a tiny IR module.

The program is run as plain IR, *without* RewriteStatepointsForGC: ``addrspace(1)`` pointers
are ordinary pointers to ``lli``, and nothing ever moves or is freed. The shim:

* ``@gc_alloc(n, mask)``: ``calloc(max(n, 1), 8)`` (zero-filled, as the ABI says), the
  result cast to ``addrspace(1)``;
* ``@print_i64(v)``: ``printf("%lld\\n", v)``;
* ``@do_safepoint()`` and ``@gc_collect()``: no-ops;
* an entry ``@gctoy_lli_main`` that calls each program's main in turn, printing a marker line
  ``#run K`` before and ``#result R`` (main's full i64 result) after it, so that one ``lli``
  process serves a whole batch of programs and results are not truncated to an exit code.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from gctoy.llvm_tools import find_lli
from runnable_gen import ABI_DECLS, combine_programs

SHIM = r"""
declare i8* @calloc(i64, i64)
declare i32 @printf(i8*, ...)
declare i32 @fflush(i8*)

@gctoy_fmt_value = private unnamed_addr constant [6 x i8] c"%lld\0A\00"
@gctoy_fmt_run = private unnamed_addr constant [9 x i8] c"#run %d\0A\00"
@gctoy_fmt_result = private unnamed_addr constant [14 x i8] c"#result %lld\0A\00"

define i8 addrspace(1)* @gc_alloc(i64 %n, i64 %mask) {
entry:
  %small = icmp slt i64 %n, 1
  %count = select i1 %small, i64 1, i64 %n
  %m = call i8* @calloc(i64 %count, i64 8)
  %p = addrspacecast i8* %m to i8 addrspace(1)*
  ret i8 addrspace(1)* %p
}

define void @print_i64(i64 %v) {
entry:
  %f = getelementptr [6 x i8], [6 x i8]* @gctoy_fmt_value, i64 0, i64 0
  %r = call i32 (i8*, ...) @printf(i8* %f, i64 %v)
  ret void
}

define void @do_safepoint() {
entry:
  ret void
}

define void @gc_collect() {
entry:
  ret void
}

define void @gctoy_lli_run(i32 %k, i64 ()* %main) {
entry:
  %f = getelementptr [9 x i8], [9 x i8]* @gctoy_fmt_run, i64 0, i64 0
  %a = call i32 (i8*, ...) @printf(i8* %f, i32 %k)
  %r = call i64 %main()
  %g = getelementptr [14 x i8], [14 x i8]* @gctoy_fmt_result, i64 0, i64 0
  %b = call i32 (i8*, ...) @printf(i8* %g, i64 %r)
  ret void
}
"""


class LliError(Exception):
    """lli failed or printed something that is not the shim's protocol."""


def batch_module(programs: list[str]) -> str:
    """The shim, every program (functions renamed ``@pK_...``) and an entry running them in order."""
    prefixes = [f"p{k}_" for k in range(len(programs))]
    body = combine_programs(programs, prefixes)
    body = body.replace(ABI_DECLS, "")  # the shim defines them
    calls = "\n".join(f"  call void @gctoy_lli_run(i32 {k}, i64 ()* @{p}main)" for k, p in enumerate(prefixes))
    entry = f"define i32 @main() {{\nentry:\n{calls}\n  ret i32 0\n}}\n"
    return "\n".join([SHIM, body, entry])


def parse_output(stdout: str, count: int) -> list[tuple[list[int], int]]:
    """Split the shim's output into (printed, result) per program."""
    runs: list[tuple[list[int], int]] = []
    printed: list[int] | None = None
    for line in stdout.splitlines():
        if m := re.fullmatch(r"#run (\d+)", line):
            if int(m.group(1)) != len(runs) or printed is not None:
                raise LliError(f"unexpected {line!r}")
            printed = []
        elif m := re.fullmatch(r"#result (-?\d+)", line):
            if printed is None:
                raise LliError(f"unexpected {line!r}")
            runs.append((printed, int(m.group(1))))
            printed = None
        elif printed is not None and re.fullmatch(r"-?\d+", line):
            printed.append(int(line))
        else:
            raise LliError(f"unexpected line {line!r}")
    if len(runs) != count:
        raise LliError(f"{len(runs)} of {count} programs finished")
    return runs


def run_lli_batch(programs: list[str], lli: Path | str | None = None, timeout: float = 120) -> list[tuple[list[int], int]]:
    """(printed, result) of each program, all run by one lli process."""
    if lli is None:
        lli, reason = find_lli(14)
        if lli is None:
            raise LliError(reason)
    r = subprocess.run([str(lli), "--entry-function=main", "-"], input=batch_module(programs),
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise LliError(f"lli exited with {r.returncode}: {r.stderr.strip()[:2000]}")
    return parse_output(r.stdout, len(programs))


def run_lli(program_text: str, lli: Path | str | None = None) -> tuple[list[int], int]:
    """(printed, result) of one program run by lli with the shim."""
    return run_lli_batch([program_text], lli)[0]
