"""Keystone assembly, treated as untrusted: a subprocess for user text, exact NOPs, a Capstone check.

Keystone 0.9.2 is the only release and it has bugs that matter to a GC book:

* it can loop forever on malformed text or take gigabytes (``.skip 0x7fffffff``), so text a
  user typed goes through :func:`assemble_untrusted`, which runs Keystone in a child process
  with a timeout and a memory limit;
* it reads any file ``.incbin``/``.include`` names, so :func:`check_directives` lets only
  the data, fill, alignment, symbol and section directives through (in-process too);
* in 64-bit mode an *absolute* memory operand (``mov dword ptr fs:[0x10], 1``) silently
  becomes RIP-relative with a meaningless displacement; :func:`find_rip_rewrites` spots it
  and says which bytes were meant;
* multi-byte NOPs come out in odd encodings, so patchable NOP runs come from :func:`nops`;
* its number radix is not reliable: in AT&T mode ``$41`` is read as 0x41, and once an AT&T
  instance has been used in a process, *later* Intel instances read ``41`` as 0x41 as well.
  :func:`hex_literals` therefore rewrites every decimal literal as ``0x..`` before Keystone
  sees the text (the check below compares against the text as written);
* hence :func:`check_assembly` disassembles the bytes with Capstone and compares every
  instruction with the line that asked for it.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Literal

import keystone

from gctoy.emu.source import (
    ARCHES,
    SYNTAXES,
    Imm,
    Mem,
    Reg,
    SourceLine,
    directive_size,
    label_names,
    mnemonics_agree,
    parse_operands,
    split_source,
)
from gctoy.errors import AssemblerError

#: Where code is assembled unless a caller says otherwise (the Image code base).
DEFAULT_BASE = 0x400000

# The recommended multi-byte NOPs of the Intel SDM (Vol. 2B, "NOP"), one per length 1..9.
#   len  bytes                          form
#   1    90                             nop
#   2    66 90                          xchg ax, ax
#   3    0f 1f 00                       nop dword [eax]
#   4    0f 1f 40 00                    nop dword [eax + 0]         (disp8)
#   5    0f 1f 44 00 00                 nop dword [eax + eax + 0]   (SIB, disp8)
#   6    66 0f 1f 44 00 00              nop word  [eax + eax + 0]
#   7    0f 1f 80 00 00 00 00           nop dword [eax + 0]         (disp32)
#   8    0f 1f 84 00 00 00 00 00        nop dword [eax + eax + 0]   (SIB, disp32)
#   9    66 0f 1f 84 00 00 00 00 00     nop word  [eax + eax + 0]   (SIB, disp32)
CANONICAL_NOPS: tuple[bytes, ...] = (
    bytes.fromhex("90"),
    bytes.fromhex("6690"),
    bytes.fromhex("0f1f00"),
    bytes.fromhex("0f1f4000"),
    bytes.fromhex("0f1f440000"),
    bytes.fromhex("660f1f440000"),
    bytes.fromhex("0f1f8000000000"),
    bytes.fromhex("0f1f840000000000"),
    bytes.fromhex("660f1f840000000000"),
)


def nops(n: int) -> bytes:
    """Exactly ``n`` bytes of canonical Intel NOPs: 9-byte NOPs, then one NOP for the rest."""
    if n < 0:
        raise AssemblerError(f"cannot make a NOP run of negative length {n}")
    full, rest = divmod(n, 9)
    out = CANONICAL_NOPS[8] * full
    if rest:
        out += CANONICAL_NOPS[rest - 1]
    return out


_DECIMAL = re.compile(r"(?<![\w.@])(?<!st\()(-?)(\d+)(?![\w.:])")
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*')


def hex_literals(text: str) -> str:
    """``text`` with each decimal integer literal written in hex (strings and comments untouched)."""

    def convert(chunk: str) -> str:
        return _DECIMAL.sub(lambda m: f"{m.group(1)}{int(m.group(2)):#x}", chunk)

    out, last = [], 0
    for m in _STRING_OR_COMMENT.finditer(text):
        out.append(convert(text[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(convert(text[last:]))
    return "".join(out)


#: The directives assembly text may use: those the checker (`directive_size`) understands --
#: data, strings, zero fill, alignment, ``.set``/``.equ``, sections and symbol attributes.
#: Everything else is refused, the directives that read files (``.incbin``, ``.include``) and
#: the macro machinery that could spell them (``.macro``, ``.irp``, ``.rept``...) among them.
ALLOWED_DIRECTIVES = frozenset(
    [
        ".byte",
        ".word",
        ".short",
        ".value",
        ".hword",
        ".2byte",
        ".long",
        ".int",
        ".4byte",
        ".quad",
        ".8byte",
        ".ascii",
        ".asciz",
        ".string",
        ".zero",
        ".skip",
        ".space",
        ".align",
        ".balign",
        ".p2align",
        ".set",
        ".equ",
        ".globl",
        ".global",
        ".local",
        ".type",
        ".size",
        ".text",
        ".data",
        ".section",
        ".intel_syntax",
        ".att_syntax",
        ".code32",
        ".code64",
        ".file",
        ".ident",
    ]
)

#: Directive names of LLVM's assembler (which Keystone is), matched without case: a label may not take
#: one, or ``.incbin: ...`` followed by ``.incbin "file"`` would pass for a use of the label.
KNOWN_DIRECTIVES = ALLOWED_DIRECTIVES | frozenset(
    """
    .abort .addrsig .addrsig_sym .align32 .balignl .balignw .bss .bundle_align_mode .bundle_lock
    .bundle_unlock .cfi_adjust_cfa_offset .cfi_def_cfa .cfi_def_cfa_offset .cfi_def_cfa_register
    .cfi_endproc .cfi_escape .cfi_offset .cfi_rel_offset .cfi_register .cfi_remember_state
    .cfi_restore .cfi_restore_state .cfi_same_value .cfi_sections .cfi_signal_frame .cfi_startproc
    .cfi_undefined .cfi_window_save .code16 .code16gcc .comm .common .cv_file .cv_func_id .cv_loc
    .cv_linetable .dc .dc.a .dc.b .dc.d .dc.l .dc.s .dc.w .dc.x .dcb .dcb.b .dcb.d .dcb.l .dcb.s .dcb.w
    .dcb.x .double .ds .ds.b .ds.d .ds.l .ds.p .ds.s .ds.w .ds.x .else .elseif .end .endif .endm
    .endmacro .endr .equiv .eqv .err .error .even .exitm .extern .fill .float .hidden .if .ifb .ifc
    .ifdef .ifeq .ifeqs .ifge .ifgt .ifle .iflt .ifnb .ifnc .ifndef .ifne .ifnes .ifnotdef .incbin
    .include .internal .irp .irpc .lcomm .lazy_reference .line .loc .macro .macros_off .macros_on
    .no_dead_strip .nops .octa .org .p2alignl .p2alignw .popsection .previous .print .private_extern
    .protected .purgem .pushsection .reference .reloc .rep .rept .single .sleb128 .stabs .subsection
    .symver .tbss .uleb128 .version .warning .weak .weak_definition .weak_reference .zerofill
    """.split()
)

#: Address space of the child process that runs Keystone on untrusted text (MiB).
UNTRUSTED_MEMORY_MB = 512

# A name that starts with a dot, not inside a longer name or number (``main.bb0``, ``1.5``).
_DOT_NAME = re.compile(r"(?<![\w.$@])(\.[A-Za-z_][\w.$@]*)")
_DOT_LABEL = re.compile(r"(?<![\w.$@])(\.[A-Za-z_][\w.$@]*)\s*:")


def check_directives(text: str) -> None:
    """Refuse text that uses a directive outside `ALLOWED_DIRECTIVES`, naming the line.

    The scan is deliberately blunt, so that no way of hiding a directive from it (a ``/* */``
    comment, a quoted label, an odd line break) gets one past: every dot-name in the raw text,
    comments and strings included, must be an allowed directive, a label the text defines
    (``.Lloop:``), or a section name after ``.section``.
    """
    labels = set()
    for m in _DOT_LABEL.finditer(text):
        if m.group(1).lower() in KNOWN_DIRECTIVES:
            number = text.count("\n", 0, m.start()) + 1
            raise AssemblerError(f"line {number}: a label may not be named like the directive '{m.group(1)}'")
        labels.add(m.group(1))
    for number, line in enumerate(text.splitlines(), start=1):
        for statement in line.split(";"):
            names = [m.group(1) for m in _DOT_NAME.finditer(statement)]
            if names and names[0].lower() == ".section":
                names = names[:1]
            for name in names:
                if name.lower() not in ALLOWED_DIRECTIVES and name not in labels:
                    raise AssemblerError(
                        f"line {number}: directive '{name}' is not allowed (gctoy assembles only data, "
                        "string, fill, alignment, symbol and section directives; none that reads files)"
                    )


def check_brackets(text: str) -> None:
    """Refuse an instruction whose memory operand's brackets do not balance, naming the line.

    Keystone 0.9.2 reads ``mov rax, [rbx+`` as ``mov rax, [rbx]`` without a word, so a typo would
    become a different program.
    """
    for line in split_source(text):
        if line.kind == "insn" and line.operands.count("[") != line.operands.count("]"):
            raise AssemblerError(f"line {line.number}: the brackets of '{line.operands}' do not balance")


def _keystone(arch: str, syntax: str) -> keystone.Ks:
    """A Keystone instance for one architecture and syntax."""
    if arch not in ARCHES:
        raise AssemblerError(f"unknown architecture {arch!r} (expected one of {', '.join(ARCHES)})")
    if syntax not in SYNTAXES:
        raise AssemblerError(f"unknown syntax {syntax!r} (expected 'intel' or 'att')")
    mode = keystone.KS_MODE_64 if arch == "x86_64" else keystone.KS_MODE_32
    ks = keystone.Ks(keystone.KS_ARCH_X86, mode)
    if syntax == "att":
        ks.syntax = keystone.KS_OPT_SYNTAX_ATT
    return ks


def _rejected(reason: str) -> AssemblerError:
    """Keystone's refusal as an error; its ``KS_ERR_OK`` (a failure it gives no reason for) is named as such."""
    if "KS_ERR_OK" in reason:
        return AssemblerError(
            "Keystone failed without giving a reason (it reports KS_ERR_OK); it does so when the text asks "
            "for more bytes than it can build (a huge .zero/.skip/.space count?)"
        )
    return AssemblerError(f"keystone rejected the assembly: {reason}")


def assemble(
    text: str,
    arch: str = "x86_64",
    base: int = DEFAULT_BASE,
    syntax: str = "intel",
    check: bool = False,
) -> bytes:
    """Assemble trusted text (text gctoy generated) in-process; optionally check it with Capstone."""
    check_directives(text)
    ks = _keystone(arch, syntax)
    try:
        encoding, _count = ks.asm(hex_literals(text), base)
    except keystone.KsError as err:
        raise _rejected(str(err)) from None
    code = bytes(encoding or b"")
    if check:
        check_assembly(text, code, base, arch=arch, syntax=syntax)
    return code


# The child reads one JSON request on stdin and answers one JSON object on stdout. It imports
# only keystone, so a hang or a crash inside Keystone takes nothing else down with it. Before
# assembling it limits its own address space (a ".skip 0x7fffffff" would otherwise take GBs) and
# its open files to the three it has, so that Keystone cannot open any file even if a directive
# got past `check_directives`.
_CHILD = r"""
import json, resource, sys
import keystone as K
req = json.load(sys.stdin)
ks = K.Ks(K.KS_ARCH_X86, K.KS_MODE_64 if req["arch"] == "x86_64" else K.KS_MODE_32)
if req["syntax"] == "att":
    ks.syntax = K.KS_OPT_SYNTAX_ATT
limit = req["memory_mb"] << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))
try:
    enc, _ = ks.asm(req["text"], req["base"])
    out = {"hex": bytes(enc or b"").hex()}
except K.KsError as err:
    out = {"error": str(err)}
except MemoryError:
    out = {"memory": True}
sys.stdout.write(json.dumps(out))
"""


def _out_of_memory(memory_mb: int) -> AssemblerError:
    """The error for a Keystone child that ran out of its address space."""
    return AssemblerError(
        f"Keystone ran out of its {memory_mb} MiB memory limit and was stopped "
        "(a huge .zero/.skip/.space count or a very long text?)"
    )


def assemble_untrusted(
    text: str,
    arch: str = "x86_64",
    base: int = DEFAULT_BASE,
    syntax: str = "intel",
    timeout: float = 5.0,
    check: bool = False,
    memory_mb: int = UNTRUSTED_MEMORY_MB,
) -> bytes:
    """Assemble user-typed text in a child process with ``timeout`` seconds and ``memory_mb`` MiB.

    Only `ALLOWED_DIRECTIVES` may appear; a hang, a crash or running out of memory becomes an
    AssemblerError.
    """
    _keystone(arch, syntax)  # validate the arguments here, with a clear message
    check_directives(text)
    check_brackets(text)
    request = json.dumps(
        {"text": hex_literals(text), "arch": arch, "base": base, "syntax": syntax, "memory_mb": memory_mb}
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=request,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise AssemblerError(
            f"Keystone did not finish within {timeout:g} s and was stopped; "
            "Keystone 0.9.2 loops forever on some malformed input (check the text for typos)"
        ) from None
    if proc.returncode != 0:
        if "bad_alloc" in proc.stderr or "MemoryError" in proc.stderr:
            raise _out_of_memory(memory_mb)
        if proc.returncode < 0:
            name = signal.Signals(-proc.returncode).name
            raise AssemblerError(
                f"Keystone crashed while assembling ({name}; it may have exceeded its {memory_mb} MiB memory limit)"
            )
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        raise AssemblerError(f"Keystone crashed while assembling: {tail[0]}")
    try:
        answer = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise AssemblerError("Keystone's child process gave no answer") from None
    if answer.get("memory"):
        raise _out_of_memory(memory_mb)
    if "error" in answer:
        raise _rejected(answer["error"])
    code = bytes.fromhex(answer["hex"])
    if check:
        check_assembly(text, code, base, arch=arch, syntax=syntax)
    return code


#: what went wrong: other bytes than the line means, Keystone's RIP-relative bug, or lengths that disagree
MismatchKind = Literal["mismatch", "rip-relative", "length"]


@dataclass(frozen=True)
class Mismatch:
    """One place where the bytes do not say what the source line meant."""

    line: SourceLine
    address: int
    disassembly: str
    reason: str
    kind: MismatchKind = "mismatch"
    intended_bytes: bytes | None = None

    def explain(self) -> str:
        """A sentence naming the line, what Keystone made of it and why that is wrong."""
        text = (
            f"line {self.line.number}: '{self.line.text}' assembled at {self.address:#x} "
            f"as '{self.disassembly}': {self.reason}"
        )
        if self.intended_bytes is not None:
            text += f"; the intended encoding is {self.intended_bytes.hex(' ')}"
        return text


def detailed_disassembler(arch: str):
    """A Capstone disassembler with operand details, for the checks."""
    import capstone

    mode = capstone.CS_MODE_64 if arch == "x86_64" else capstone.CS_MODE_32
    md = capstone.Cs(capstone.CS_ARCH_X86, mode)
    md.detail = True
    return md


def _capstone_operands(insn) -> list[Reg | Imm | Mem]:
    """Capstone's operands of one instruction in the gctoy operand model."""
    import capstone.x86 as x86

    ops: list[Reg | Imm | Mem] = []
    for op in insn.operands:
        if op.type == x86.X86_OP_REG:
            ops.append(Reg(insn.reg_name(op.reg)))
        elif op.type == x86.X86_OP_IMM:
            ops.append(Imm(op.imm, op.size))
        elif op.type == x86.X86_OP_MEM:
            m = op.mem
            ops.append(
                Mem(
                    segment=insn.reg_name(m.segment) if m.segment else None,
                    base=insn.reg_name(m.base) if m.base else None,
                    index=insn.reg_name(m.index) if m.index else None,
                    scale=m.scale if m.index else 1,
                    disp=m.disp,
                )
            )
    return ops


def _rip_fix(insn, disp: int) -> bytes | None:
    """The bytes the instruction should have had: ModRM rm=101 (RIP) -> rm=100 + SIB 0x25 + abs32."""
    off = insn.disp_offset
    if not off or insn.disp_size != 4 or not -(2**31) <= disp < 2**32:
        return None
    raw = bytes(insn.bytes)
    modrm = raw[off - 1]
    if modrm & 0xC7 != 0x05:
        return None
    sib_form = bytes([(modrm & 0xF8) | 0x04, 0x25])
    return raw[: off - 1] + sib_form + (disp & 0xFFFFFFFF).to_bytes(4, "little") + raw[off + 4 :]


def _compare_operands(line: SourceLine, insn, arch: str, syntax: str) -> tuple[MismatchKind, str, bytes | None] | None:
    """(kind, reason, intended bytes) when the operands differ, else None."""
    wanted = parse_operands(line, syntax, arch)
    got = _capstone_operands(insn)
    if not wanted:
        return None  # implicit operands (movsb, ret) are not spelled in the source
    if len(wanted) != len(got):
        return "mismatch", f"expected {len(wanted)} operands, found {len(got)}", None
    bits = 64 if arch == "x86_64" else 32
    for position, (w, g) in enumerate(zip(wanted, got), start=1):
        if isinstance(w, Mem) and isinstance(g, Mem):
            if g.base in ("rip", "eip") and w.base not in ("rip", "eip"):
                fixed = _rip_fix(insn, w.disp) if w.disp is not None and w.base is None else None
                return (
                    "rip-relative",
                    f"operand {position} was written as an absolute address but Keystone "
                    f"encoded it RIP-relative ({g.render()}), a known Keystone 0.9.2 bug; "
                    "address through a register or emit the bytes",
                    fixed,
                )
            if (w.base, w.index, w.segment) != (g.base, g.index, g.segment) or (
                w.index is not None and w.scale != g.scale
            ):
                return "mismatch", f"operand {position}: expected {w.render()}, found {g.render()}", None
            if w.disp is not None and (w.disp - (g.disp or 0)) % (1 << bits):
                return "mismatch", f"operand {position}: expected {w.render()}, found {g.render()}", None
        elif isinstance(w, Reg) and isinstance(g, Reg):
            if w.name != g.name:
                return "mismatch", f"operand {position}: expected {w.name}, found {g.name}", None
        elif isinstance(w, Imm) and isinstance(g, Imm):
            width = 8 * g.size if g.size else bits
            if w.value is not None and (w.value - (g.value or 0)) % (1 << width):
                return "mismatch", f"operand {position}: expected {w.value:#x}, found {g.value:#x}", None
        else:
            return "mismatch", f"operand {position}: expected {w.render()}, found {g.render()}", None
    return None


#: The longest x86 instruction (prefixes included): the window the checker decodes from.
MAX_INSTRUCTION_BYTES = 15


def compare_assembly(text: str, code: bytes, base: int, arch: str = "x86_64", syntax: str = "intel") -> list[Mismatch]:
    """Every disagreement between the source lines and Capstone's reading of ``code``.

    The walk stops at the first disagreement that loses the instruction boundaries
    (a line that decodes to nothing, or bytes left over at the end).
    """
    md = detailed_disassembler(arch)
    found: list[Mismatch] = []
    offset = 0
    for line in split_source(text):
        address = base + offset
        if line.kind == "label":
            continue
        if line.kind == "directive":
            size = directive_size(line, address)
            if size is None:
                found.append(Mismatch(line, address, "", "the checker does not understand this directive"))
                return found
            offset += size
            continue
        # one instruction is at most MAX_INSTRUCTION_BYTES long: a window, not the rest of the code
        insn = next(md.disasm(code[offset : offset + MAX_INSTRUCTION_BYTES], address, 1), None)
        if insn is None:
            shown = code[offset : offset + 15].hex(" ")
            found.append(Mismatch(line, address, shown, "no instruction decodes here", "length"))
            return found
        shown = f"{insn.mnemonic} {insn.op_str}".strip()
        offset += insn.size
        if not mnemonics_agree(line.mnemonic, insn.mnemonic, syntax):
            problem = f"expected mnemonic '{line.mnemonic}', found '{insn.mnemonic}'"
            found.append(Mismatch(line, address, shown, problem))
            continue
        bad = _compare_operands(line, insn, arch, syntax)
        if bad is not None:
            kind, reason, intended = bad
            found.append(Mismatch(line, address, shown, reason, kind, intended))
    if offset != len(code):
        last = SourceLine(0, "<end of text>", "label", "", "")
        found.append(
            Mismatch(last, base + offset, "", f"{len(code) - offset} bytes left over after the last line", "length")
        )
    return found


def check_assembly(
    text: str, code: bytes, base: int = DEFAULT_BASE, arch: str = "x86_64", syntax: str = "intel"
) -> None:
    """Raise AssemblerError naming the first line whose bytes do not disassemble to what it says."""
    found = compare_assembly(text, code, base, arch, syntax)
    if found:
        raise AssemblerError(found[0].explain())


def find_rip_rewrites(
    text: str, code: bytes, base: int = DEFAULT_BASE, arch: str = "x86_64", syntax: str = "intel"
) -> list[Mismatch]:
    """The lines where Keystone turned an absolute memory operand into a RIP-relative one."""
    return [m for m in compare_assembly(text, code, base, arch, syntax) if m.kind == "rip-relative"]


__all__ = [
    "ALLOWED_DIRECTIVES",
    "CANONICAL_NOPS",
    "UNTRUSTED_MEMORY_MB",
    "DEFAULT_BASE",
    "Mismatch",
    "assemble",
    "assemble_untrusted",
    "check_assembly",
    "check_directives",
    "compare_assembly",
    "find_rip_rewrites",
    "hex_literals",
    "label_names",
    "nops",
]
