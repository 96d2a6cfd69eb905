"""``gctoy run`` on damaged ``llc -filetype=obj`` objects: never a traceback, never past its budget.

Real objects are built with LLVM 14 (``opt`` RS4GC, then ``llc -O2 -filetype=obj``) from the
runtime's statepoint programs, then damaged three ways: truncated, bit-flipped anywhere, and
with their ``.llvm_stackmaps`` bytes mutated (bits, bytes, small increments of a field). Each
damaged object is run under the collector, mostly with ``--stress`` so that every statepoint
walks the frames with the damaged stack map.

Most inputs run in this process (``run_object``, the function behind ``gctoy run OBJ``): any
exception that is not a GCToyError is a bug. A watchdog alarm, far above the run's own
wall-clock budget, catches a run that ignores the budget. A sample of the same inputs runs
through ``python -m gctoy run`` under tests/limited_run.py (time and memory limits).

400 in-process inputs by default (about 20 s). ``GCTOY_FUZZ_COUNT`` (the nightly setting, made for
byte-level fuzzers whose inputs cost far less than a run) scales it: N runs N / 40 objects, so
the nightly 200,000 runs 5,000.
"""

from __future__ import annotations

import io
import os
import random
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from limited_run import run_gctoy  # noqa: E402
from runtime_programs import EXPECTED, PROGRAMS, compile_program  # noqa: E402

from gctoy.emu.budget import BudgetExceeded  # noqa: E402
from gctoy.errors import GCToyError  # noqa: E402
from gctoy.runtime.run import run_object  # noqa: E402

COUNT = int(os.environ["GCTOY_FUZZ_COUNT"]) // 40 if os.environ.get("GCTOY_FUZZ_COUNT") else 400
SUBPROCESS_SAMPLE = 6
#: the wall-clock budget of each run (generous: a loaded machine must not turn a normal run into one)
BUDGET_SECONDS = 5.0
#: a run that ends this long after its budget ran out did not stop at its budget (the slack covers one
#: collection or decode step that cannot be cut short on a loaded machine)
OVERRUN_SLACK_SECONDS = 10.0
#: the watchdog: a run still going this long after its start ignored its budget (it never ends by itself)
WATCHDOG_SECONDS = 60
#: a child gctoy's start (imports) before its budget begins
STARTUP_SECONDS = 15.0
MAX_INSTRUCTIONS = 300_000
SEED = 0x6C7C


class Overran(Exception):
    """The watchdog fired: a run went on far past its wall-clock budget."""


@dataclass(frozen=True)
class Damaged:
    """One damaged object and how to run it."""

    index: int
    program: str
    how: str
    data: bytes
    stress: bool
    verify: bool


def _stackmap_range(data: bytes) -> tuple[int, int]:
    from elftools.elf.elffile import ELFFile

    section = ELFFile(io.BytesIO(data)).get_section_by_name(".llvm_stackmaps")
    return section["sh_offset"], section["sh_size"]


def damage(rng: random.Random, name: str, data: bytes, index: int) -> Damaged:
    """A damaged copy of ``data``: truncated, bit-flipped, or with its stack map mutated."""
    b = bytearray(data)
    kind = rng.choices(["truncate", "flip", "stackmap"], weights=[1, 2, 4])[0]
    if kind == "truncate":
        b = b[: rng.randrange(len(b))]
    elif kind == "flip":
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    else:
        off, size = _stackmap_range(data)
        for _ in range(rng.randint(1, 3)):
            at = off + rng.randrange(size)
            op = rng.randrange(3)
            if op == 0:
                b[at] ^= 1 << rng.randrange(8)
            elif op == 1:
                b[at] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            else:
                b[at] = (b[at] + rng.choice([-16, -8, -1, 1, 8, 16])) & 0xFF
    return Damaged(index, name, kind, bytes(b), stress=rng.random() < 0.6, verify=rng.random() < 0.2)


@pytest.fixture(scope="module")
def objects(tmp_path_factory, llvm14) -> dict[str, bytes]:
    """The runtime's programs as real llc objects."""
    out = tmp_path_factory.mktemp("llc_objects")
    return {name: Path(compile_program(text, out, llvm14, name)).read_bytes() for name, text in PROGRAMS.items()}


def damaged_inputs(objects: dict[str, bytes], count: int) -> list[Damaged]:
    """``count`` damaged objects, the same ones on every run."""
    rng = random.Random(SEED)
    names = sorted(objects)
    return [damage(rng, name, objects[name], i) for i, name in ((i, rng.choice(names)) for i in range(count))]


def _alarm(_signum, _frame):
    raise Overran()


def _in_time(outcome: str, start: float) -> str:
    """``outcome``, or ``overran`` when the run ended well after its wall-clock budget."""
    elapsed = time.monotonic() - start
    if elapsed > BUDGET_SECONDS + OVERRUN_SLACK_SECONDS:
        return f"overran: ended ({outcome}) after {elapsed:.1f} s with a budget of {BUDGET_SECONDS} s"
    return outcome


def run_in_process(item: Damaged) -> str:
    """``ok``, ``error`` or ``budget`` for a clean end; ``overran`` or ``bug: ...`` otherwise."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(WATCHDOG_SECONDS)
    start = time.monotonic()
    try:
        run_object(item.data, stress=item.stress, verify=item.verify, max_instructions=MAX_INSTRUCTIONS,
                   max_seconds=BUDGET_SECONDS)
        return _in_time("ok", start)
    except BudgetExceeded:
        return _in_time("budget", start)
    except GCToyError:
        return _in_time("error", start)
    except Overran:
        return f"overran: still running after the watchdog's {WATCHDOG_SECONDS} s"
    except Exception as e:  # anything else is a traceback the user would see
        return "bug: " + "".join(traceback.format_exception_only(type(e), e)).strip() + "\n" + \
            "".join(traceback.format_tb(e.__traceback__)[-3:])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_run_that_ends_long_after_its_budget_counts_as_overran(objects, monkeypatch):
    # the check itself: a run that takes longer than budget + slack is an overrun, whatever its end
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "BUDGET_SECONDS", 0.01)
    monkeypatch.setattr(module, "OVERRUN_SLACK_SECONDS", 0.05)
    monkeypatch.setattr(module, "run_object", lambda *a, **k: time.sleep(0.2))
    item = next(iter(damaged_inputs(objects, 1)))
    assert run_in_process(item).startswith("overran: ended (ok) after")


def test_undamaged_objects_run_as_expected(objects):
    for name, data in objects.items():
        result = run_object(data, stress=True, verify=True, max_seconds=60)
        assert (result.printed, result.result) == EXPECTED[name], name


def test_damaged_objects_end_cleanly_in_process(objects):
    outcomes: dict[str, int] = {}
    problems = []
    for item in damaged_inputs(objects, COUNT):
        outcome = run_in_process(item)
        key = outcome.split(":")[0]
        outcomes[key] = outcomes.get(key, 0) + 1
        if key in ("bug", "overran"):
            problems.append(f"input {item.index} ({item.program}, {item.how}, stress={item.stress}, "
                            f"verify={item.verify}): {outcome}")
    assert not problems, f"{len(problems)} of {COUNT} damaged objects:\n" + "\n".join(problems[:10])
    # the mutations must reach both the loader's errors and the runs themselves
    assert outcomes.get("error", 0) > 0 and outcomes.get("ok", 0) > 0, outcomes


def test_damaged_objects_through_the_command(objects, tmp_path):
    inputs = [item for item in damaged_inputs(objects, COUNT) if item.how == "stackmap"][:SUBPROCESS_SAMPLE]
    inputs += [item for item in damaged_inputs(objects, COUNT) if item.how != "stackmap"][:2]
    for item in inputs:
        path = tmp_path / f"damaged{item.index}.o"
        path.write_bytes(item.data)
        args = ["run", str(path), "--max-instructions", str(MAX_INSTRUCTIONS), "--max-seconds", str(BUDGET_SECONDS)]
        r = run_gctoy(args + (["--stress"] if item.stress else []),
                      timeout=BUDGET_SECONDS + OVERRUN_SLACK_SECONDS + STARTUP_SECONDS)
        assert not r.timed_out, "ran past its budget\n" + r.describe()
        assert "Traceback" not in r.stderr, r.describe()
        assert r.returncode in (0, 1), r.describe()
        if r.returncode == 1:
            assert f"{path}: error: " in r.stderr, r.describe()
        else:
            assert "result: " in r.stdout, r.describe()
