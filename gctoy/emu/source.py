"""Reading x86 assembly text line by line: labels, directives, mnemonics and operands.

This is just enough of an assembler front end to say what a line *meant*, so that the
bytes Keystone produced can be compared with it (see :func:`gctoy.emu.asm.check_assembly`).
Operands of both syntaxes end up in one model, in Intel order:

    Intel  mov qword ptr [rbx + rcx*8 + 8], 5      AT&T  movq $5, 8(%rbx,%rcx,8)
           Mem(base=rbx, index=rcx, scale=8, disp=8), Imm(5)
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

ARCHES = ("x86_64", "x86_32")
SYNTAXES = ("intel", "att")

#: Mnemonics whose bare operand is a branch target, not a memory operand (AT&T).
BRANCH_PREFIXES = ("j", "call", "loop")

_REGISTERS = frozenset(
    [f"{p}{r}" for p in ("r", "e", "") for r in ("ax", "bx", "cx", "dx", "si", "di", "sp", "bp")]
    + ["al", "bl", "cl", "dl", "ah", "bh", "ch", "dh", "sil", "dil", "spl", "bpl"]
    + [f"r{n}{s}" for n in range(8, 16) for s in ("", "d", "w", "b")]
    + ["rip", "eip", "ip", "cs", "ds", "es", "fs", "gs", "ss"]
    + [f"xmm{n}" for n in range(16)]
    + [f"ymm{n}" for n in range(16)]
    + [f"st({n})" for n in range(8)]
)

_SIZE_WORDS = re.compile(r"\b(byte|word|dword|qword|tbyte|xword|xmmword|ymmword|fword)\s+ptr\b", re.IGNORECASE)
_LABEL = re.compile(r"^\s*([A-Za-z_.$][\w.$@]*)\s*:(?!:)")
_PREFIXES = frozenset(["rep", "repe", "repz", "repne", "repnz", "lock"])

# Condition-code spellings that name the same condition; Capstone prints the first column.
_CC_ALIASES = {
    "z": "e",
    "nz": "ne",
    "c": "b",
    "nae": "b",
    "nb": "ae",
    "nc": "ae",
    "na": "be",
    "nbe": "a",
    "nge": "l",
    "nl": "ge",
    "ng": "le",
    "nle": "g",
    "pe": "p",
    "po": "np",
}
_ATT_SPECIAL = {
    "cltq": "cdqe",
    "cqto": "cqo",
    "cltd": "cdq",
    "cwtl": "cwde",
    "cwtd": "cwd",
    "movslq": "movsxd",
    "movabsq": "movabs",
    "movzbl": "movzx",
    "movzbw": "movzx",
    "movzbq": "movzx",
    "movzwl": "movzx",
    "movzwq": "movzx",
    "movsbl": "movsx",
    "movsbw": "movsx",
    "movsbq": "movsx",
    "movswl": "movsx",
    "movswq": "movsx",
}
_OTHER_ALIASES = {"sal": "shl", "retq": "ret", "retl": "ret", "callq": "call", "jmpq": "jmp", "calll": "call"}


@dataclass(frozen=True)
class SourceLine:
    """One statement of the text: a label, a directive or an instruction."""

    number: int
    text: str
    kind: Literal["label", "directive", "insn"]
    mnemonic: str
    operands: str


@dataclass(frozen=True)
class Reg:
    """A register operand."""

    name: str

    def render(self) -> str:
        """The operand as Intel syntax."""
        return self.name


@dataclass(frozen=True)
class Imm:
    """An immediate (or branch target); ``value`` is None when the source names a symbol."""

    value: int | None
    size: int = 0

    def render(self) -> str:
        """The operand as Intel syntax."""
        return "<symbol>" if self.value is None else hex(self.value)


@dataclass(frozen=True)
class Mem:
    """A memory operand ``segment:[base + index*scale + disp]``; disp None when symbolic."""

    segment: str | None = None
    base: str | None = None
    index: str | None = None
    scale: int = 1
    disp: int | None = 0

    def render(self) -> str:
        """The operand as Intel syntax."""
        parts = [p for p in (self.base, f"{self.index}*{self.scale}" if self.index else None) if p]
        if self.disp is None:
            parts.append("<symbol>")
        elif self.disp or not parts:
            parts.append(hex(self.disp))
        seg = f"{self.segment}:" if self.segment else ""
        return f"{seg}[{' + '.join(parts)}]"


def _strip_comment(text: str) -> str:
    """The text before a ``#`` comment, ignoring ``#`` inside string literals."""
    quoted = False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return text[:i]
    return text


def split_source(text: str) -> list[SourceLine]:
    """The statements of ``text`` in order; ``;`` and newlines separate, ``#`` starts a comment."""
    out: list[SourceLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        for stmt in _strip_comment(raw).split(";"):
            stmt = stmt.strip()
            while stmt:
                m = _LABEL.match(stmt)
                if not m:
                    break
                out.append(SourceLine(number, m.group(1) + ":", "label", m.group(1), ""))
                stmt = stmt[m.end() :].strip()
            if not stmt:
                continue
            head, _, rest = stmt.partition(" ")
            head = head.lower()
            rest = rest.strip()
            if head.startswith("."):
                out.append(SourceLine(number, stmt, "directive", head, rest))
                continue
            if head in _PREFIXES and rest:
                nxt, _, rest = rest.partition(" ")
                head = f"{head} {nxt.lower()}"
                rest = rest.strip()
            out.append(SourceLine(number, stmt, "insn", head, rest))
    return out


def label_names(text: str) -> list[str]:
    """The labels the text defines, in order of definition, without repeats."""
    seen: dict[str, None] = {}
    for line in split_source(text):
        if line.kind == "label":
            seen.setdefault(line.mnemonic, None)
    return list(seen)


def _canonical(mnemonic: str) -> str:
    """One spelling per mnemonic: condition-code aliases and a few synonyms folded."""
    m = _OTHER_ALIASES.get(mnemonic, mnemonic)
    for prefix in ("j", "set", "cmov"):
        if m.startswith(prefix) and m != "jmp" and m[len(prefix) :] in _CC_ALIASES:
            return prefix + _CC_ALIASES[m[len(prefix) :]]
    return m


def mnemonics_agree(source: str, capstone: str, syntax: str) -> bool:
    """Whether the mnemonic written in the source and Capstone's mnemonic name one instruction."""
    want, got = _canonical(source.lower()), _canonical(capstone.lower())
    if syntax == "att":
        want = _ATT_SPECIAL.get(want, want)
        if want != got and want[-1:] in ("b", "w", "l", "q") and _canonical(want[:-1]) == got:
            return True
    if want == got:
        return True
    return {want, got} == {"mov", "movabs"}


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _number(text: str) -> int | None:
    """An integer literal (decimal, hex, octal, binary, optional sign), or None."""
    text = text.replace(" ", "")
    try:
        return int(text, 0)
    except ValueError:
        if re.fullmatch(r"-?[0-9a-fA-F]+h", text):
            return int(text[:-1], 16)
        return None


def _intel_mem(body: str, segment: str | None) -> Mem:
    """``[base + index*scale + disp]`` (the inside of the brackets)."""
    if ":" in body:
        seg, body = body.split(":", 1)
        segment = seg.strip().lower()
    base = index = None
    scale = 1
    disp: int | None = 0
    for sign, term in re.findall(r"([+-]?)\s*([^+-]+)", body):
        term = term.strip().lower()
        if "*" in term:
            a, b = (t.strip() for t in term.split("*", 1))
            reg, factor = (a, b) if a in _REGISTERS else (b, a)
            index, scale = reg, _number(factor) or 1
        elif term in _REGISTERS:
            if base is None:
                base = term
            else:
                index = term
        else:
            value = _number(term)
            if value is None or disp is None:
                disp = None
            else:
                disp += -value if sign == "-" else value
    return Mem(segment, base, index, scale, disp)


def _intel_operand(text: str) -> Reg | Imm | Mem:
    """One Intel-syntax operand."""
    text = _SIZE_WORDS.sub("", text).strip()
    low = text.lower()
    if "[" in low:
        prefix, _, rest = low.partition("[")
        segment = prefix.strip().rstrip(":").strip() or None
        return _intel_mem(rest.rsplit("]", 1)[0], segment)
    if low in _REGISTERS:
        return Reg(low)
    if low.startswith("offset "):
        low = low[7:]
    return Imm(_number(low))


def _att_operand(text: str, branch: bool) -> Reg | Imm | Mem:
    """One AT&T-syntax operand."""
    text = text.strip().lower()
    if text.startswith("*"):
        text = text[1:].strip()
        branch = False
    if text.startswith("$"):
        return Imm(_number(text[1:]))
    if text.startswith("%") and "(" not in text and ":" not in text:
        return Reg(text[1:])
    segment = None
    m = re.match(r"%(\w+)\s*:\s*(.*)$", text)
    if m:
        segment, text = m.group(1), m.group(2)
    if "(" not in text:
        if branch and segment is None:
            return Imm(_number(text))
        return Mem(segment, None, None, 1, _number(text) if text else 0)
    disp_text, _, inner = text.partition("(")
    fields = [f.strip().lstrip("%") for f in inner.rstrip(")").split(",")]
    base = fields[0] or None
    index = fields[1] if len(fields) > 1 and fields[1] else None
    scale = _number(fields[2]) if len(fields) > 2 and fields[2] else 1
    disp = _number(disp_text) if disp_text.strip() else 0
    return Mem(segment, base, index, scale or 1, disp)


def parse_operands(line: SourceLine, syntax: str, arch: str) -> list[Reg | Imm | Mem]:
    """The operands of an instruction line, in Intel order."""
    parts = _split_top(line.operands)
    if syntax == "intel":
        return [_intel_operand(p) for p in parts]
    branch = line.mnemonic.startswith(BRANCH_PREFIXES)
    return [_att_operand(p, branch) for p in reversed(parts)]


_DATA_WIDTH = {
    ".byte": 1,
    ".word": 2,
    ".short": 2,
    ".value": 2,
    ".hword": 2,
    ".2byte": 2,
    ".long": 4,
    ".int": 4,
    ".4byte": 4,
    ".quad": 8,
    ".8byte": 8,
}
_NO_BYTES = frozenset(
    [
        ".set",
        ".equ",
        ".globl",
        ".global",
        ".text",
        ".data",
        ".section",
        ".type",
        ".size",
        ".intel_syntax",
        ".att_syntax",
        ".local",
        ".file",
        ".ident",
        ".code32",
        ".code64",
    ]
)


def _string_literals(text: str) -> list[bytes]:
    """The string literals of an .ascii-style directive, escapes decoded."""
    return [
        ast.literal_eval("b" + lit).decode("latin-1").encode("latin-1")
        for lit in re.findall(r'"(?:[^"\\]|\\.)*"', text)
    ]


def directive_size(line: SourceLine, address: int) -> int | None:
    """How many bytes a directive emits at ``address``, or None if the checker does not know it."""
    name, args = line.mnemonic, line.operands
    if name in _NO_BYTES:
        return 0
    if name in _DATA_WIDTH:
        return _DATA_WIDTH[name] * len(_split_top(args))
    if name in (".zero", ".skip", ".space"):
        count = _number(_split_top(args)[0]) if args else None
        return count
    if name in (".ascii", ".asciz", ".string"):
        extra = 0 if name == ".ascii" else 1
        return sum(len(s) + extra for s in _string_literals(args))
    if name in (".align", ".balign", ".p2align"):
        value = _number(_split_top(args)[0]) if args else None
        if value is None:
            return None
        alignment = 1 << value if name == ".p2align" else value
        return (-address) % alignment if alignment else 0
    return None
