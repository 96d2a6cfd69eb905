"""The one exception family of gctoy: every error a user can cause is a GCToyError."""

from __future__ import annotations


class GCToyError(Exception):
    """Base class of every error gctoy raises on purpose."""


class IRParseError(GCToyError):
    """LLVM IR text that gctoy cannot parse, with the place where parsing stopped."""

    def __init__(
        self,
        message: str,
        filename: str | None = None,
        line: int = 0,
        column: int = 0,
    ) -> None:
        self.message = message
        self.filename = filename if filename is not None else "<input>"
        self.line = line
        self.column = column
        super().__init__(message, self.filename, line, column)

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}: error: {self.message}"


class VerifyError(GCToyError):
    """IR that parses but breaks a rule (types, SSA, statepoint operands, safepoint invariants)."""

    def __init__(self, message: str, location: str | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(message, location)

    def __str__(self) -> str:
        if self.location:
            return f"{self.location}: error: {self.message}"
        return f"error: {self.message}"


class DecodeError(GCToyError):
    """Bytes that do not decode (a stack map section, x86 GC info), with the byte offset."""

    def __init__(self, offset: int, message: str) -> None:
        self.offset = offset
        self.message = message
        super().__init__(offset, message)

    def __str__(self) -> str:
        return f"offset {self.offset:#x}: {self.message}"


class AssemblerError(GCToyError):
    """Assembly text that Keystone rejected, hung on, or assembled into the wrong bytes."""


class EmulationFault(GCToyError):
    """The emulated machine stopped on a fault; carries the pc and the faulting instruction."""

    def __init__(self, message: str, pc: int, disassembly: str = "") -> None:
        self.message = message
        self.pc = pc
        self.disassembly = disassembly
        super().__init__(message, pc, disassembly)

    def __str__(self) -> str:
        where = f"pc={self.pc:#x}"
        if self.disassembly:
            where += f" ({self.disassembly})"
        return f"{where}: {self.message}"
