"""Run the ``gctoy`` command in a child process under a time and a memory limit.

The hard-input tests feed gctoy what a hostile or careless user would and check the
answer: one clear error, exit status 1, no traceback, within seconds and a bounded
amount of memory.  This module is their harness: it starts ``python -m gctoy ...``
with an address-space limit (``RLIMIT_AS``), kills it when the time is up, and reports
the exit status, the output and the peak resident memory of the child (``wait4``).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class LimitedResult:
    """What one limited run of ``gctoy`` did."""

    args: tuple[str, ...]
    returncode: int | None  # None: killed because the time ran out
    stdout: str
    stderr: str
    peak_rss_mb: float
    timed_out: bool

    def describe(self) -> str:
        """A few lines for an assertion message."""
        return (
            f"gctoy {' '.join(self.args)}\n"
            f"exit: {self.returncode} (timed out: {self.timed_out}), peak RSS {self.peak_rss_mb:.0f} MB\n"
            f"stderr (last 1500 chars):\n{self.stderr[-1500:]}\n"
            f"stdout (first 500 chars):\n{self.stdout[:500]}"
        )


def run_gctoy(
    args: list[str] | tuple[str, ...],
    *,
    stdin: bytes | str | None = None,
    stdin_path: str | Path | None = None,
    timeout: float = 60.0,
    memory_mb: int = 2048,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    file_size_limit: int | None = None,
    module: str = "gctoy",
) -> LimitedResult:
    """Run ``python -m gctoy ARGS`` (or another ``module``) with at most ``memory_mb`` of address space and ``timeout`` seconds.

    ``stdin`` is written to the child's standard input (text is UTF-8 encoded); ``stdin_path``
    connects a file (e.g. ``/dev/zero``) instead. ``file_size_limit`` sets ``RLIMIT_FSIZE``.
    """
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    child_env = dict(os.environ if env is None else env)
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), child_env.get("PYTHONPATH", "")) if p
    )

    def limit() -> None:
        limit_bytes = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        os.setsid()

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin_path is not None:
            stdin_file = open(stdin_path, "rb")
        else:
            if stdin is not None:
                inp.write(stdin)
                inp.seek(0)
            stdin_file = inp
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", module, *args],
                stdin=stdin_file,
                stdout=out,
                stderr=err,
                cwd=cwd,
                env=child_env,
                preexec_fn=limit,
            )
        finally:
            if stdin_path is not None:
                stdin_file.close()
        deadline = time.monotonic() + timeout
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.monotonic() > deadline:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return LimitedResult(
            args=tuple(args),
            returncode=None if timed_out else proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            peak_rss_mb=usage.ru_maxrss / 1024.0,
            timed_out=timed_out,
        )


def assert_clean_error(result: LimitedResult, *needles: str, max_rss_mb: float = 600.0) -> None:
    """One clear error: exit 1, ``error:`` on standard error, no traceback, bounded memory.

    Every string in ``needles`` must appear in standard error (case-insensitive).
    """
    text = result.describe()
    assert not result.timed_out, "did not finish in time\n" + text
    assert result.returncode == 1, "expected exit status 1\n" + text
    assert "Traceback (most recent call last)" not in result.stderr, "a traceback\n" + text
    assert "error:" in result.stderr, "no 'error:' line\n" + text
    assert result.peak_rss_mb <= max_rss_mb, f"used more than {max_rss_mb} MB\n" + text
    lowered = result.stderr.lower()
    for needle in needles:
        assert needle.lower() in lowered, f"{needle!r} not in the message\n" + text
