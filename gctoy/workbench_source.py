"""Where in the reader's text a workbench problem is.

Three ways to find the line, from the best to the last resort:

* a run that stopped (a guest fault, a division by zero, a spent budget) stopped at a machine
  address; the code generator says which IR instruction each line of its assembly was lowered
  from (``line_sources``), so the address gives the reader's line and column:

      0x400007  mov rsi, qword ptr [rsi]   <- "mov rsi, qword ptr [rsi]"  <- line 3, column 8:
                                                                             %v = load i64, i64* %p

  Code no instruction of the reader's made (a relocation RS4GC added, a prologue) belongs to the
  nearest instruction before it in the same function, or else to the function's ``define`` line;
* an error that carries ``file:line:col:``;
* a message that names a value or a function (``%x``, ``@f``): the line that defines it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence

__all__ = ["locate", "statement_places", "run_place"]

#: an IR place: (line, column), 1-based
Place = tuple[int, int]

_NAME = re.compile(r"([%@][-\w.$]+)")
_RETURN_ADDRESS = re.compile(r"return address (0x[0-9a-fA-F]+)")


def locate(message: str, source: str) -> int | None:
    """The line of ``source`` that defines (or else first mentions) a name the message names."""
    lines = source.splitlines()
    for name in _NAME.findall(message):
        pattern = re.compile(rf"^\s*{re.escape(name)}\s*=|\bdefine\b.*{re.escape(name)}\(")
        for number, text in enumerate(lines, start=1):
            if pattern.search(text):
                return number
        for number, text in enumerate(lines, start=1):
            if re.search(rf"{re.escape(name)}(?![-\w.$])", text):
                return number
    return None


def statement_places(compiled, count: int) -> list[tuple[str, Place | None]]:
    """For each of the ``count`` decoded instructions of ``compiled``'s code: the line of gctoy's
    assembly Keystone made it from and the IR place that line was lowered from. One instruction
    statement per decoded instruction; ("", None) for all if the two ever disagree in count."""
    from gctoy.emu.source import split_source

    sources: Sequence[Place | None] = getattr(compiled, "line_sources", ())
    statements = [
        (line.text, sources[line.number - 1] if line.number <= len(sources) else None)
        for line in split_source(compiled.asm_text)
        if line.kind == "insn"
    ]
    return statements if len(statements) == count else [("", None)] * count


def _stopping_addresses(error: BaseException) -> list[int]:
    """Where the guest was: inside the runtime, the call that entered it (one byte before the return
    address the message names: a stopped runtime call reports that address as its pc); else the pc."""
    out = []
    found = _RETURN_ADDRESS.search(str(error))
    if found:
        out.append(int(found.group(1), 16) - 1)
    pc = getattr(error, "pc", None)
    if isinstance(pc, int):
        out.append(pc)
    return out


def run_place(
    error: BaseException,
    code: Sequence[tuple[int, int, Place | None]],
    functions: Mapping[int, str],
    source: str,
) -> tuple[int, int | None] | None:
    """The (line, column) in ``source`` where a run stopped with ``error``: ``code`` is the machine
    code as (address, size, IR place) in address order, ``functions`` the start address of each
    function; None if the guest was not in the program's code."""
    addresses = [address for address, _, _ in code]
    starts = sorted(functions)
    for stop in _stopping_addresses(error):
        index = bisect.bisect_right(addresses, stop) - 1
        if index < 0 or not stop < addresses[index] + code[index][1]:
            continue
        first = bisect.bisect_right(starts, stop) - 1
        start = starts[first] if first >= 0 else addresses[0]
        for address, _, place in reversed(code[: index + 1]):
            if address < start:
                break
            if place is not None:
                return place
        if first >= 0:
            line = locate(f"@{functions[start]}", source)
            if line is not None:
                return line, None
    return None
