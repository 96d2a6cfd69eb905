"""A fuzz run over the ``gctoy`` command: over 10,000 mutated inputs, no traceback and no hang.

Four families of input, each made by mutating valid ones (fixed seeds, so a run is reproducible):

* IR text: the modules of ``tests/ir/corpus`` with lines dropped, repeated or swapped, tokens
  replaced, characters inserted, the text cut short -- through ``opt`` (verify; the statepoint
  passes; other pointer spellings and statepoint forms) and ``llc`` (x86-64 and x86-32);
* objects: ELF objects made by LLVM 14's ``llc`` from statepoint IR, bytes flipped and cut,
  through ``readobj --stackmap``;
* GC-info hex: blobs of several methods with bytes changed, through ``gcinfo-x86 dump`` (with
  versions, ``--legacy`` and ``--at``) and ``spec``;
* JSON: the ``spec`` of those blobs and the output of ``schema``, with values replaced by other
  JSON values, keys dropped or added, the text damaged, through ``gcinfo-x86 encode``.

Most inputs run in this process through ``gctoy.cli.main`` (cheap enough for thousands); each
must end with exit status 0, or 1 and an ``error:`` line, and nothing may escape ``main``. An
interval timer turns an input that runs for too long into a reported hang. A few dozen inputs
also run in child processes under ``tests/limited_run.py`` (time and memory limits).

``gctoy run`` takes its share of the IR inputs with a small instruction and wall-clock budget
(``--max-instructions``, ``--max-seconds``): a mutated program that loops ends with the budget's
error, which counts as a clean one.

``GCTOY_FUZZ_COUNT`` (the nightly setting) scales every family: N inputs in all, shared out in the
default run's proportions.
"""

from __future__ import annotations

import copy
import gc
import io
import json
import os
import random
import re
import resource
import signal
import sys
import traceback
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gctoy.cli import main
from gctoy.coreclr import encode
from gctoy.coreclr.spec import spec_from_info
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.info_tables import Lifetime, NoGCRegion, UntrackedSlot
from gctoy.coreclr.method import MethodGCInfo
from limited_run import REPO_ROOT, run_gctoy
from runnable_gen import generate_program

sys.path.insert(0, str(REPO_ROOT / "tests" / "stackmap"))
from stackmap_corpus import Case, build_object, rs4gc_module  # noqa: E402

import gctoy.coreclr.ptrtab_ebp as ebp_tab  # noqa: E402
import gctoy.coreclr.ptrtab_esp as esp_tab  # noqa: E402
import gctoy.coreclr.ptrtab_full as full_tab  # noqa: E402

CORPUS = sorted((REPO_ROOT / "tests" / "ir" / "corpus").glob("*.ll"))

#: Inputs per family in the default run (10,400 in all).
COUNTS = {"ir": 4000, "object": 2000, "hex": 2400, "json": 2000}
if os.environ.get("GCTOY_FUZZ_COUNT"):
    _SCALE = max(1.0, int(os.environ["GCTOY_FUZZ_COUNT"]) / sum(COUNTS.values()))
    COUNTS = {family: int(n * _SCALE) for family, n in COUNTS.items()}
#: Inputs per family that also run in a child process under limited_run.
SAMPLED = {"ir": 12, "object": 8, "hex": 8, "json": 8}
#: Seconds of wall-clock time one in-process input may take before it counts as a hang.
HANG_SECONDS = 30


# ----------------------------------------------------------------------------- bookkeeping


@pytest.fixture(autouse=True)
def address_space_cap():
    """Cap this process's address space at what it uses now plus 4 GiB while an in-process fuzz
    runs, so that an input that makes gctoy allocate without bound ends in a reported
    MemoryError instead of taking the machine's memory. (Each Unicorn engine reserves about
    1 GiB of address space for its translation buffer and exits the process when it cannot:
    ``run`` inputs free theirs before the next input starts, see run_in_process.)"""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status") as status:
        used_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    cap = used_kb * 1024 + (4 << 30)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture(autouse=True)
def frozen_heap():
    """Move the objects alive before the test into the collector's permanent generation while it
    runs, so that the full collection after each ``run`` input (see run_in_process) walks only
    what the inputs made. It frees their engines all the same, but no longer walks the whole
    heap of the worker, which after many test modules takes most of a second per collection."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class Hang(BaseException):
    """Raised by the interval timer inside an input that ran too long."""


@dataclass
class Findings:
    """What a family's inputs did: statuses, and every failure with the input that caused it."""

    statuses: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    classes: Counter = field(default_factory=Counter)

    def report(self) -> str:
        """One line per failure class, then the first failures in full."""
        lines = [f"{n} x {cls}" for cls, n in self.classes.most_common()]
        return "\n".join(lines + [""] + self.failures[:5])


def _where(tb) -> str:
    """The gctoy module deepest in a traceback (where the exception was raised)."""
    frames = [f for f in traceback.extract_tb(tb) if "/gctoy/" in f.filename]
    if not frames:
        return "?"
    f = frames[-1]
    return f"{f.filename.split('/gctoy/', 1)[1]}:{f.name}"


def _on_alarm(signum, frame):
    raise Hang()


def run_in_process(argv: list[str], findings: Findings, shown: str) -> None:
    """Run ``gctoy ARGV`` through main(); record anything but a clean 0 or a clean error."""
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = main(argv)
    except Hang:
        findings.classes["hang"] += 1
        findings.failures.append(f"hang: gctoy {' '.join(argv)}\n{shown}")
        return
    except Exception as e:  # noqa: BLE001 -- the point: nothing may escape main()
        cls = f"{type(e).__name__} in {_where(e.__traceback__)}"
        findings.classes[cls] += 1
        text = "".join(traceback.format_exception(e))[-1500:]
        findings.failures.append(f"{cls}: gctoy {' '.join(argv)}\n{shown}\n{text}")
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if argv[0] == "run":
            gc.collect()  # the emulator's engine sits in reference cycles: free its address space now
    findings.statuses[status] += 1
    stderr = err.getvalue()
    problem = None
    if status not in (0, 1):
        problem = f"exit status {status}"
    elif status == 1 and "error:" not in stderr:
        problem = "exit status 1 without an error: line"
    elif "Traceback" in stderr:
        problem = "a traceback on standard error"
    if problem:
        findings.classes[problem] += 1
        findings.failures.append(f"{problem}: gctoy {' '.join(argv)}\n{shown}\n{stderr[-800:]}")


def check_sample(argv: list[str], stdin: str | None = None) -> str | None:
    """Run one input in a child process with limits; a description of what went wrong, or None."""
    result = run_gctoy(argv, stdin=stdin, timeout=120, memory_mb=2048)
    if result.timed_out:
        return "hang\n" + result.describe()
    if result.returncode not in (0, 1) or "Traceback" in result.stderr:
        return "failure\n" + result.describe()
    if result.returncode == 1 and "error:" not in result.stderr:
        return "no error line\n" + result.describe()
    return None


def _assert_clean(findings: Findings, total: int) -> None:
    assert sum(findings.statuses.values()) + sum(findings.classes.values()) >= total
    assert not findings.classes, "fuzz failures:\n" + findings.report()


# ----------------------------------------------------------------------------- IR text

_TOKENS = ["i64", "i32", "i1", "i8 addrspace(1)*", "ptr addrspace(1)", "ptr", "void", "token", "label",
           "%0", "%1", "%x", "@foo", "@llvm.experimental.gc.statepoint.p0f_isVoidf", "gc.relocate",
           "define", "declare", "call", "invoke", "ret", "br", "phi", "getelementptr", "bitcast", "load",
           "store", "alloca", "addrspace(1)", "addrspace(4294967295)", "gc \"statepoint-example\"",
           "gc \"coreclr\"", "-1", "0", "4294967296", "99999999999999999999999", "0x7fffffff", "1e308",
           "undef", "null", "zeroinitializer", "{", "}", "(", ")", "[", "]", "<", ">", ",", "=", "*", "...",
           "\"deopt\"(i32 1)", "\"gc-live\"()", "!0", "#0", "c\"a\\00\"", "[2 x i64]", "{ i64, i64 }",
           "<2 x i64>", "x", "\\", "\"", ";", "\u00e9", "\x00", "\t", "\n"]
_TOKEN_RE = re.compile(r"[%@]?[\w.\"]+|\S")


def mutate_ir(rng: random.Random, text: str) -> str:
    """``text`` with one to four line- or token-level edits."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        i = rng.randrange(len(lines))
        if op == 0 and len(lines) > 1:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op in (3, 4):
            tokens = list(_TOKEN_RE.finditer(lines[i]))
            if tokens:
                m = rng.choice(tokens)
                new = rng.choice(_TOKENS) if op == 3 else rng.choice(_TOKEN_RE.findall(text) or _TOKENS)
                lines[i] = lines[i][: m.start()] + new + lines[i][m.end():]
        elif op == 5:
            at = rng.randint(0, len(lines[i]))
            lines[i] = lines[i][:at] + rng.choice(_TOKENS + list("{}()[]<>,%@!#\"=*:")) + lines[i][at:]
        else:
            joined = "\n".join(lines)
            lines = joined[: rng.randint(0, len(joined))].split("\n")
    return "\n".join(lines)


_IR_COMMANDS = [
    ["opt", "-S"],
    ["opt", "-S", "-passes=place-safepoints,rewrite-statepoints-for-gc"],
    ["opt", "-S", "-passes=rewrite-statepoints-for-gc,verify-safepoints", "--opaque-pointers"],
    ["opt", "-S", "--statepoint-form", "oldest", "--implicit-declarations", "--fix-numbering"],
    ["llc"],
    ["llc", "--target", "x86-32"],
]

_RUN_COMMANDS = [
    ["run", "--max-instructions", "200000", "--max-seconds", "10"],
    ["run", "--stress", "--verify-heap", "--max-instructions", "200000", "--max-seconds", "10"],
    ["run", "--target", "x86-32", "--stress", "--max-instructions", "200000", "--max-seconds", "10"],
    ["run", "--design", "shadow-stack", "--stress", "--max-instructions", "200000", "--max-seconds", "10"],
]


def ir_inputs(tmp_path: Path, count: int):
    """(argv, shown) for ``count`` mutated modules, each written to its own file."""
    rng = random.Random(20261127)
    sources = [p.read_text() for p in CORPUS]
    programs = [generate_program(seed, 4) for seed in range(1, 9)]  # runnable: an `i64 @main()`
    for n in range(count):
        # `run` compiles, assembles and starts an emulator: one input in twenty is a run
        command = rng.choice(_RUN_COMMANDS if rng.random() < 0.05 else _IR_COMMANDS)
        pool = programs if command[0] == "run" or rng.random() < 0.1 else sources
        text = mutate_ir(rng, rng.choice(pool))
        path = tmp_path / f"ir{n % 50}.ll"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        yield [*command, str(path)], text, path


def test_fuzz_ir_text(tmp_path):
    findings = Findings()
    samples = []
    for n, (argv, text, _) in enumerate(ir_inputs(tmp_path, COUNTS["ir"])):
        run_in_process(argv, findings, text[:2000])
        if n % 333 == 0 and len(samples) < SAMPLED["ir"]:
            keep = tmp_path / f"sample{len(samples)}.ll"
            keep.write_text(text, encoding="utf-8", errors="surrogatepass")
            samples.append([*argv[:-1], str(keep)])
    _assert_clean(findings, COUNTS["ir"])
    assert findings.statuses[0] > 0 and findings.statuses[1] > COUNTS["ir"] // 4  # both outcomes happen
    problems = [p for p in (check_sample(a) for a in samples) if p]
    assert len(samples) == SAMPLED["ir"] and not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- objects


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """``data`` with one to eight byte edits, sometimes a 32-bit field set to an extreme, or cut."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        i = rng.randrange(len(b)) if b else 0
        if op == 0 and b:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        elif op == 2 and len(b) > 4:
            i = rng.randrange(len(b) - 4)
            b[i:i + 4] = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0, len(data)]).to_bytes(4, "little")
        elif op == 3 and b:
            del b[i:i + rng.randint(1, 16)]
        else:
            b = b[: rng.randint(0, len(b))]
    return bytes(b)


def test_fuzz_objects(tmp_path, llvm14):
    objects = [build_object(llvm14, Case(f"rs{seed}", rs4gc_module(seed), True), tmp_path).read_bytes()
               for seed in (1, 4, 9)]
    rng = random.Random(7311)
    findings = Findings()
    samples = []
    path = tmp_path / "mutant.o"
    for n in range(COUNTS["object"]):
        data = mutate_bytes(rng, rng.choice(objects))
        path.write_bytes(data)
        run_in_process(["readobj", "--stackmap", str(path)], findings, f"object {n}: {len(data)} bytes")
        if n % 250 == 0:
            keep = tmp_path / f"sample{n}.o"
            keep.write_bytes(data)
            samples.append(["readobj", "--stackmap", str(keep)])
    _assert_clean(findings, COUNTS["object"])
    assert findings.statuses[0] > 0 and findings.statuses[1] > 0
    problems = [p for p in (check_sample(a) for a in samples) if p]
    assert len(samples) == SAMPLED["object"] and not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- GC-info hex and JSON


def seed_methods() -> list[MethodGCInfo]:
    """Methods of every pointer-table encoding, with epilogs, untracked slots and lifetimes."""
    full = full_tab.FullTable((full_tab.RegLive(5, "EAX", False, True), full_tab.RegLive(6, "EBX", True, False),
                               full_tab.PushNonPtr(7, 1), full_tab.PushPtr(8, 1, False, False),
                               full_tab.Pop(0x10, 2), full_tab.RegDead(0x12, "EBX")))
    ebp = ebp_tab.EbpTable("ESI", (ebp_tab.CallSite(0x18, ("ESI", "EDI"), ("EDI",), 0b101, 0b100),
                                   ebp_tab.CallSite(0x30, ("EBX",), (), 0, 0)))
    esp = esp_tab.EspTable((esp_tab.Push(0x10, gc=True), esp_tab.Push(0x11), esp_tab.Call(0x20, 0, ("EBX",)),
                            esp_tab.Pop(0x22, 2)))
    lives = (Lifetime(8, 0x10, 0x30), Lifetime(12, 0x14, 0x18, True, False))
    untracked = (UntrackedSlot(4), UntrackedSlot(-8, True, False), UntrackedSlot(16, False, True))
    return [
        MethodGCInfo.create(0x40, InfoHdr(prolog_size=3, epilog_size=2, interruptible=True, ebx_saved=True),
                            epilogs=[0x3E], pointer_table=full, lifetimes=lives),
        MethodGCInfo.create(0x60, InfoHdr(prolog_size=3, epilog_size=3, ebp_frame=True, ebp_saved=True,
                                          edi_saved=True, esi_saved=True, frame_size=6, arg_count=2),
                            epilogs=[0x28, 0x5D], pointer_table=ebp, untracked=untracked, lifetimes=lives),
        MethodGCInfo.create(0x40, InfoHdr(prolog_size=4, ebx_saved=True, frame_size=3), pointer_table=esp,
                            untracked=untracked[:1], no_gc_regions=(NoGCRegion(4, 4),)),
        MethodGCInfo.create(0x12345, InfoHdr(prolog_size=60, epilog_size=20, frame_size=5000, arg_count=300,
                                             gs_cookie_offset=12, ebp_frame=True, ebp_saved=True)),
    ]


def hex_inputs(count: int):
    """(argv, shown) for ``count`` mutated blobs, as one hex argument."""
    rng = random.Random(5150)
    blobs = [encode(m) for m in seed_methods()]
    for _ in range(count):
        data = mutate_bytes(rng, rng.choice(blobs)) if rng.random() < 0.9 else rng.randbytes(rng.randint(1, 40))
        argv = ["gcinfo-x86", rng.choice(["dump", "dump", "spec"]), data.hex(" ") or "00"]
        if rng.random() < 0.3:
            argv += ["--gcinfo-version", str(rng.choice([1, 2, 3, 4, 5]))]
        if rng.random() < 0.2:
            argv.append("--legacy")
        if argv[1] == "dump" and rng.random() < 0.4:
            argv += ["--at", rng.choice([str(rng.randrange(0x80)), hex(rng.randrange(1 << 33)), "-1", "x"])]
            if rng.random() < 0.5:
                argv.append("--caller")
        yield argv


def test_fuzz_gcinfo_hex():
    findings = Findings()
    samples = []
    for n, argv in enumerate(hex_inputs(COUNTS["hex"])):
        run_in_process(argv, findings, "")
        if n % 300 == 0:
            samples.append(argv)
    _assert_clean(findings, COUNTS["hex"])
    assert findings.statuses[0] > 0 and findings.statuses[1] > 0
    problems = [p for p in (check_sample(a) for a in samples) if p]
    assert len(samples) == SAMPLED["hex"] and not problems, "\n".join(problems)


_JSON_VALUES = [0, 1, -1, 2**31, 2**32, 2**64, -(2**63), 10**400, 1.5, float("inf"), "", "x", "EDI", "RegLive",
                True, False, None, [], [1, 2], {}, {"type": "Call"}, [[[[[]]]]], {"offset": 4}]


def mutate_json(rng: random.Random, value):
    """``value`` with one to three structural edits (replace, delete, add, duplicate)."""
    value = copy.deepcopy(value)

    def pick(pool):  # a fresh copy, so that no container ever holds itself
        return copy.deepcopy(rng.choice(pool))

    for _ in range(rng.randint(1, 3)):
        containers = []

        def walk(v):
            if isinstance(v, (dict, list)):
                containers.append(v)
                for child in (v.values() if isinstance(v, dict) else v):
                    walk(child)

        walk(value)
        if not containers:
            return pick(_JSON_VALUES)
        target = rng.choice(containers)
        keys = list(target) if isinstance(target, dict) else list(range(len(target)))
        op = rng.randrange(4)
        if op == 0 and keys:
            k = rng.choice(keys)
            target[k] = pick(_JSON_VALUES) if rng.random() < 0.7 else copy.deepcopy(target[rng.choice(keys)])
        elif op == 1 and keys:
            del target[rng.choice(keys)]
        elif op == 2:
            if isinstance(target, dict):
                target[rng.choice(["type", "offset", "zz", "method_size", "header", "epilog_at_end"])] = \
                    pick(_JSON_VALUES)
            else:
                target.append(pick(target) if target else pick(_JSON_VALUES))
        elif keys and isinstance(target, list):
            target.insert(rng.randrange(len(target) + 1), copy.deepcopy(target[rng.choice(keys)]))
    return value


def json_inputs(tmp_path: Path, count: int):
    """(argv, text) for ``count`` mutated method descriptions, each written to a file."""
    rng = random.Random(4242)
    seeds = [spec_from_info(m) for m in seed_methods()]
    out = io.StringIO()
    with redirect_stdout(out):
        main(["gcinfo-x86", "schema"])
    seeds.append(json.loads(out.getvalue())["method"])
    for n in range(count):
        text = json.dumps(mutate_json(rng, rng.choice(seeds)), allow_nan=True)
        if rng.random() < 0.15:
            text = mutate_bytes(rng, text.encode()).decode("utf-8", "replace")
        path = tmp_path / f"spec{n % 20}.json"
        path.write_text(text)
        argv = ["gcinfo-x86", "encode", str(path)]
        if rng.random() < 0.2:
            argv += ["--gcinfo-version", str(rng.choice([1, 3, 4]))]
        if rng.random() < 0.2:
            argv.append("--legacy")
        yield argv, text


def test_fuzz_gcinfo_json(tmp_path):
    findings = Findings()
    samples = []
    for n, (argv, text) in enumerate(json_inputs(tmp_path, COUNTS["json"])):
        run_in_process(argv, findings, text[:1500])
        if n % 250 == 0:
            samples.append((argv[:2] + ["-"] + argv[3:], text))
    _assert_clean(findings, COUNTS["json"])
    assert findings.statuses[0] > 0 and findings.statuses[1] > 0
    problems = [p for p in (check_sample(a, stdin=t) for a, t in samples) if p]
    assert len(samples) == SAMPLED["json"] and not problems, "\n".join(problems)


def test_fuzz_covers_ten_thousand_inputs():
    assert sum(COUNTS.values()) >= 10_000
    assert len(CORPUS) >= 20, "the IR corpus moved"


@pytest.mark.parametrize("seed", range(3))
def test_mutators_change_their_input(seed):
    rng = random.Random(seed)
    text = CORPUS[seed].read_text()
    assert any(mutate_ir(rng, text) != text for _ in range(5))
    assert any(mutate_bytes(rng, b"0123456789") != b"0123456789" for _ in range(5))
    spec = spec_from_info(seed_methods()[seed])
    assert any(mutate_json(rng, spec) != spec for _ in range(5))


def test_the_harness_reports_what_escapes_main_and_bad_statuses(monkeypatch):
    import gctoy.cli as cli

    def boom(argv):
        raise KeyError("x")

    monkeypatch.setitem(cli.COMMANDS, "opt", boom)
    findings = Findings()
    run_in_process(["opt", "x.ll"], findings, "")
    monkeypatch.setitem(cli.COMMANDS, "opt", lambda argv: 1)  # status 1, no error line
    run_in_process(["opt", "x.ll"], findings, "")
    monkeypatch.setitem(cli.COMMANDS, "opt", lambda argv: 3)
    run_in_process(["opt", "x.ll"], findings, "")
    assert set(findings.classes) == {"KeyError in cli.py:_run_command", "exit status 1 without an error: line", "exit status 3"}


@pytest.mark.parametrize("command", [["llc"], ["llc", "--target", "x86-32"]])
def test_huge_global_is_a_clean_error(tmp_path, command):
    source = tmp_path / "huge.ll"
    source.write_text("@g = global [4294967296 x i64] zeroinitializer\ndefine i64 @main() {\n  ret i64 1\n}\n")
    assert check_sample([*command, str(source)]) is None
