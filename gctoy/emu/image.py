"""A loadable program image: code, data and named sections at fixed addresses, plus symbols.

The guest address space is the same for every image, so the same program always runs at
the same addresses and every listing, trace and snapshot is byte-for-byte reproducible:

    0x00400000  CODE_BASE      code (read + execute)
    0x00600000  DATA_BASE      data (read + write), ``data_size`` bytes reserved
    0x00700000  SECTION_BASE   named sections, sorted by name, each 16-byte aligned (read only)
    0x007f0000  STUB_BASE      native-call stubs, STUB_SIZE bytes each (see machine.py)
    0x00800000  STACK_BASE     stack, grows down from STACK_TOP = 0x00900000
    0x0dead000  RETURN_TRAP    never mapped: the return address of Machine.call
    0x10000000  HEAP_BASE      optional heap for a runtime

All of it lies below 4 GiB so that x86-32 programs see the same map.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gctoy.emu.asm import assemble, assemble_untrusted, check_assembly
from gctoy.emu.disasm import format_listing
from gctoy.emu.source import label_names
from gctoy.errors import AssemblerError

CODE_BASE = 0x0040_0000
DATA_BASE = 0x0060_0000
SECTION_BASE = 0x0070_0000
STUB_BASE = 0x007F_0000
STUB_SIZE = 16
STUB_PAGE_SIZE = 0x1000
STACK_BASE = 0x0080_0000
STACK_TOP = 0x0090_0000
RETURN_TRAP = 0x0DEA_D000
HEAP_BASE = 0x1000_0000

CODE_LIMIT = DATA_BASE - CODE_BASE
DATA_LIMIT = SECTION_BASE - DATA_BASE
SECTION_LIMIT = STUB_BASE - SECTION_BASE
SECTION_ALIGN = 16

_NAME = re.compile(r"^[A-Za-z_.$][\w.$@]*$")


def stub_address(index: int) -> int:
    """The address of the ``index``-th native stub."""
    if not 0 <= index < STUB_PAGE_SIZE // STUB_SIZE:
        raise AssemblerError(f"no room for native stub number {index}")
    return STUB_BASE + index * STUB_SIZE


def _section_layout(sections: dict[str, bytes]) -> dict[str, int]:
    """Section name -> address: sorted by name, each aligned to SECTION_ALIGN."""
    addresses: dict[str, int] = {}
    cursor = SECTION_BASE
    for name in sorted(sections):
        cursor = (cursor + SECTION_ALIGN - 1) & -SECTION_ALIGN
        addresses[name] = cursor
        cursor += len(sections[name])
    if cursor - SECTION_BASE > SECTION_LIMIT:
        raise AssemblerError(f"sections take {cursor - SECTION_BASE:#x} bytes, more than {SECTION_LIMIT:#x}")
    return addresses


@dataclass(frozen=True)
class Image:
    """Code and data bytes at fixed bases, symbols, native names and named sections."""

    code: bytes
    data: bytes = b""
    symbols: dict[str, int] = field(default_factory=dict)
    sections: dict[str, bytes] = field(default_factory=dict)
    natives: tuple[str, ...] = ()
    arch: str = "x86_64"
    data_size: int = 0

    def __post_init__(self) -> None:
        if self.arch not in ("x86_64", "x86_32"):
            raise AssemblerError(f"unknown architecture {self.arch!r}")
        if len(self.code) > CODE_LIMIT:
            raise AssemblerError(f"code of {len(self.code):#x} bytes does not fit below the data base")
        if max(len(self.data), self.data_size) > DATA_LIMIT:
            raise AssemblerError(f"data of {max(len(self.data), self.data_size):#x} bytes does not fit")
        _section_layout(self.sections)

    code_base = CODE_BASE
    data_base = DATA_BASE

    @property
    def data_extent(self) -> int:
        """Bytes reserved for data: at least the initial data."""
        return max(len(self.data), self.data_size)

    @property
    def section_addresses(self) -> dict[str, int]:
        """Where each named section is placed."""
        return _section_layout(self.sections)

    def section_address(self, name: str) -> int:
        """The address of one named section."""
        try:
            return self.section_addresses[name]
        except KeyError:
            raise AssemblerError(f"image has no section {name!r}") from None

    def address_of(self, symbol: str) -> int:
        """The address a symbol names (code label, data label or native stub)."""
        try:
            return self.symbols[symbol]
        except KeyError:
            raise AssemblerError(f"image has no symbol {symbol!r}") from None

    def with_sections(self, **sections: bytes) -> Image:
        """A copy with more named sections (e.g. a stack map built after the code)."""
        merged = {**self.sections, **sections}
        return Image(self.code, self.data, dict(self.symbols), merged, self.natives, self.arch, self.data_size)

    def listing(self, syntax: str = "intel") -> str:
        """The code as an address + bytes + instruction listing with code labels."""
        code_symbols = {n: a for n, a in self.symbols.items() if CODE_BASE <= a < CODE_BASE + len(self.code)}
        return format_listing(self.code, CODE_BASE, self.arch, syntax, code_symbols)

    @classmethod
    def from_assembly(
        cls,
        code_text: str,
        data_text: str = "",
        arch: str = "x86_64",
        syntax: str = "intel",
        natives: tuple[str, ...] | list[str] = (),
        sections: dict[str, bytes] | None = None,
        data_size: int = 0,
        check: bool = True,
        untrusted: bool = False,
        timeout: float = 5.0,
    ) -> Image:
        """Assemble code (and data) text; labels, data labels and natives become symbols.

        Code may name data labels and natives: they are defined for Keystone with ``.set``
        at their fixed addresses (use ``movabs rax, table`` / ``mov eax, table`` to take an
        address; ``call native`` is a direct call into the stub page). With ``check`` the code
        is disassembled with Capstone and compared line by line; ``untrusted`` assembles in a
        child process with ``timeout`` seconds.
        """
        natives = tuple(natives)
        for name in natives:
            if not _NAME.match(name):
                raise AssemblerError(f"{name!r} is not a valid native name")
        data: bytes = b""
        data_symbols: dict[str, int] = {}
        if data_text:
            data, data_symbols = _assemble_with_labels(data_text, DATA_BASE, arch, syntax, untrusted, timeout)
        externs = {**data_symbols, **{n: stub_address(i) for i, n in enumerate(natives)}}
        clash = sorted(set(data_symbols) & set(natives))
        if clash:
            raise AssemblerError(f"{clash[0]!r} is both a data label and a native")
        # One line of .set statements glued to the first line keeps the line numbers of errors.
        prelude = "".join(f".set {n}, {a:#x}; " for n, a in sorted(externs.items(), key=lambda kv: kv[1]))
        text = prelude + code_text
        code, code_symbols = _assemble_with_labels(text, CODE_BASE, arch, syntax, untrusted, timeout)
        clash = sorted(set(code_symbols) & set(externs))
        if clash:
            raise AssemblerError(f"{clash[0]!r} is defined in the code and also as data or native")
        if check:
            check_assembly(text, code, CODE_BASE, arch, syntax)
        symbols = dict(sorted({**code_symbols, **externs}.items(), key=lambda kv: (kv[1], kv[0])))
        return cls(code, data, symbols, dict(sections or {}), natives, arch, data_size)


def _assemble_with_labels(
    text: str, base: int, arch: str, syntax: str, untrusted: bool, timeout: float
) -> tuple[bytes, dict[str, int]]:
    """Assemble ``text`` and let Keystone resolve each label's address.

    Keystone does not report its symbol table, so a table of the labels is appended
    after the text (``.quad label`` per label; ``.long`` for x86-32), assembled with it,
    read back and cut off again. It comes last, so it moves nothing before it.
    """
    labels = label_names(text)
    width = 8 if arch == "x86_64" else 4
    directive = ".quad" if width == 8 else ".long"
    table = "".join(f"\n{directive} {name}" for name in labels)
    if untrusted:
        raw = assemble_untrusted(text + table, arch, base, syntax, timeout)
    else:
        raw = assemble(text + table, arch, base, syntax)
    size = len(raw) - width * len(labels)
    if size < 0:
        raise AssemblerError("Keystone returned fewer bytes than the label table needs")
    addresses = {
        name: int.from_bytes(raw[size + width * i : size + width * (i + 1)], "little") for i, name in enumerate(labels)
    }
    return raw[:size], addresses
