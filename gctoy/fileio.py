"""Reading command-line inputs with a size limit, and writing outputs so that nothing is lost.

Every command that writes a file (``-o``) goes through `write_output`: the text is written to a
temporary file beside the target and renamed over it only when it is complete, so a write that
fails midway (a full disk, a file-size limit) leaves an existing output file as it was::

    out.s            the old output, untouched until the end
    .out.s.XXXX.tmp  the new output being written      --rename-->  out.s

Targets that are not regular files (``/dev/null``, ``/dev/stdout``, a pipe) are written directly.
Errors become `OutputError` (exit status 1); a reader that goes away (``gctoy ... | head -1``)
becomes `OutputClosed`, which the command line ends quietly, as Unix tools do.

Inputs read with `read_limited` stop at a size limit instead of growing until memory runs out
(``/dev/zero`` or any unbounded stream).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from typing import BinaryIO

from .errors import GCToyError
from .inputs import InputError, read_stream_limited


class OutputError(GCToyError):
    """An output that could not be written: the path (or standard output) and the reason."""

    def __init__(self, target: str, reason: str) -> None:
        self.target = target
        self.reason = reason
        super().__init__(target, reason)

    def __str__(self) -> str:
        return f"{self.target}: error: cannot write: {self.reason}"


class OutputClosed(OutputError):
    """Standard output was closed by its reader (a broken pipe)."""


class InputTooLarge(GCToyError):
    """An input larger than the command's documented size limit."""

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        super().__init__(name, limit)

    def __str__(self) -> str:
        return f"{self.name}: error: input larger than the limit of {_size(self.limit)}"


def _size(n: int) -> str:
    """``16 MiB`` for a byte count that is a whole number of MiB, else the bytes."""
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


def _reason(e: OSError) -> str:
    """The system's words for an OSError."""
    return e.strerror or str(e)


# --------------------------------------------------------------------------- input


def _read_stream(stream: BinaryIO, name: str, limit: int) -> bytes:
    """At most ``limit`` bytes of ``stream`` (read as gctoy.inputs reads); InputTooLarge if there are more."""
    try:
        return read_stream_limited(stream, name, limit, "this command's input")
    except InputError:
        raise InputTooLarge(name, limit) from None


def read_limited(name: str, limit: int) -> bytes:
    """The bytes of file ``name`` (``-``: standard input), refusing inputs over ``limit`` bytes.

    OSError is left to the caller, which knows how its command reports an unreadable input.
    """
    if name == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream standing in for stdin (tests)
            return _read_stream_text(sys.stdin, name, limit)
        return _read_stream(stream, "<stdin>", limit)
    with open(name, "rb") as f:
        return _read_stream(f, name, limit)


def _read_stream_text(stream, name: str, limit: int) -> bytes:
    """`_read_stream` for a text stream."""
    text = stream.read(limit + 1)
    data = text.encode("utf-8")
    if len(data) > limit:
        raise InputTooLarge("<stdin>", limit)
    return data


def names_file(name: str) -> bool:
    """Whether a file (of any kind) exists at ``name``; False for names no file can have."""
    try:
        os.stat(name)
    except (OSError, ValueError):  # missing, too long, a NUL byte, no permission
        return False
    return True


# --------------------------------------------------------------------------- output


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is out: a short write (the reader went away) is retried, so it fails."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[: 1 << 16]) :]


def _stdout_fd() -> int | None:
    """The file descriptor of the real standard output, or None when output is captured."""
    out = sys.stdout
    if out is not sys.__stdout__ or out is None:
        return None
    try:
        return out.fileno()
    except (OSError, ValueError, AttributeError):
        return None


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output; OutputClosed / OutputError on failure."""
    try:
        fd = _stdout_fd()
        if fd is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            sys.stdout.flush()
            _write_all(fd, text.encode("utf-8"))
    except BrokenPipeError:
        raise OutputClosed("<stdout>", "broken pipe") from None
    except OSError as e:
        raise OutputError("<stdout>", _reason(e)) from None


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to ``path`` (``None`` or ``-``: standard output) without ever truncating it midway."""
    if path is None or path == "-":
        write_stdout(text)
        return
    data = text.encode("utf-8")
    target = os.path.realpath(path)  # write through a symlink, keep the link
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(path, _reason(e)) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_in_place(path, data)  # a device or a pipe: no rename
        return
    if st is not None and (not os.access(target, os.W_OK) or not st.st_mode & 0o222):
        raise OutputError(path, "the file is read-only")
    _replace(path, target, data, st)


def _write_in_place(path: str, data: bytes) -> None:
    """Write ``data`` into an existing non-regular file (device, pipe)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except OSError as e:
        raise OutputError(path, _reason(e)) from None


def _replace(path: str, target: str, data: bytes, st: os.stat_result | None) -> None:
    """Write a temporary file beside ``target`` and rename it over ``target``."""
    folder, base = os.path.split(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=folder or ".")
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise OutputError(path, f"no such folder '{os.path.dirname(path) or '.'}'") from None
        raise OutputError(path, _reason(e)) from None
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        _remove(tmp)
        raise OutputError(path, _reason(e)) from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    """Delete a temporary file, if it is still there."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
