"""Reading the commands' inputs: a file or standard input, bounded in size, decoded with care.

Every command that reads a file the user names goes through :func:`read_text_input` (IR text)
or :func:`read_bytes_input` (objects, GC-info blobs).  Both read in chunks and stop with an
:class:`InputError` as soon as the input passes its size limit, so an endless stream
(``gctoy opt - < /dev/zero``) ends in a clear error instead of filling the memory.
Text that is not UTF-8 is reported at the line and column of the first bad byte.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from .errors import GCToyError

#: The largest IR text gctoy reads (32 MiB: the benchmark modules of 50,000 lines are 2.5 MB).
TEXT_INPUT_LIMIT = 32 * 1024 * 1024
#: The largest binary input gctoy reads (an object file or a GC-info blob).
BYTES_INPUT_LIMIT = 64 * 1024 * 1024
_CHUNK = 1 << 20


class InputError(GCToyError):
    """An input that cannot be read: missing, too large, or not UTF-8 text.

    Printed as ``file:line:col: error: message`` when the place is known (text),
    ``file: error: message (byte offset N)`` for a binary place, else ``file: error: message``.
    """

    def __init__(self, filename: str, message: str, line: int = 0, column: int = 0, offset: int | None = None) -> None:
        self.filename = filename
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset
        super().__init__(filename, message, line, column, offset)

    def __str__(self) -> str:
        if self.line:
            return f"{self.filename}:{self.line}:{self.column}: error: {self.message}"
        if self.offset is not None:
            return f"{self.filename}: error: {self.message} (byte offset {self.offset})"
        return f"{self.filename}: error: {self.message}"


def display_name(path_or_dash: str) -> str:
    """The name errors use for an input: ``<stdin>`` for ``-``."""
    return "<stdin>" if path_or_dash == "-" else path_or_dash


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters of the valid UTF-8 before it) of a byte offset."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    line = data.count(b"\n", 0, line_start) + 1
    column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
    return line, column


def read_stream_limited(stream: BinaryIO, name: str, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes of ``stream``; one byte more is an :class:`InputError`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            data = b"".join(chunks)[:limit]
            message = f"input is larger than the {limit // (1024 * 1024)} MiB limit of {what}"
            if what == "IR text":
                line, col = _line_col(data, limit)
                raise InputError(name, message, line, col)
            raise InputError(name, message, offset=limit)


def read_bytes_input(path_or_dash: str, limit: int = BYTES_INPUT_LIMIT, what: str = "binary input") -> bytes:
    """The bytes of a file (``-``: standard input), at most ``limit`` of them, else :class:`InputError`."""
    name = display_name(path_or_dash)
    if path_or_dash == "-":
        return read_stream_limited(sys.stdin.buffer, name, limit, what)
    try:
        with open(path_or_dash, "rb") as stream:
            return read_stream_limited(stream, name, limit, what)
    except OSError as e:
        raise InputError(name, f"cannot read the input: {e.strerror or e}") from None


def read_text_input(path_or_dash: str, limit: int = TEXT_INPUT_LIMIT) -> str:
    """The UTF-8 text of a file (``-``: standard input), at most ``limit`` bytes, else :class:`InputError`."""
    return decode_text(read_bytes_input(path_or_dash, limit, "IR text"), path_or_dash)


def decode_text(data: bytes, path_or_dash: str) -> str:
    """``data`` read from ``path_or_dash`` as UTF-8 text; a bad byte is an :class:`InputError` at its line:col."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line, col = _line_col(data, e.start)
        raise InputError(
            display_name(path_or_dash),
            f"not UTF-8 text: byte 0x{data[e.start]:02x} cannot start or continue a character (byte offset {e.start})",
            line,
            col,
        ) from None
