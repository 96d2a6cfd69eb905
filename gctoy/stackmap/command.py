"""``gctoy readobj --stackmap FILE...``: print stack maps the way `llvm-readobj --stackmap` does."""

from __future__ import annotations

import argparse
import sys

from ..errors import GCToyError
from ..fileio import InputTooLarge, read_limited, write_stdout
from .elf import SECTION_NAME, read_object
from .readobj import format_file_header, format_stackmap

#: The largest object file ``gctoy readobj`` reads (``llc`` objects are kilobytes).
MAX_OBJECT_BYTES = 64 << 20


def _parser() -> argparse.ArgumentParser:
    """The options of ``gctoy readobj``."""
    p = argparse.ArgumentParser(
        prog="gctoy readobj",
        description="Print the LLVM stack map of ELF objects (like llvm-readobj --stackmap).",
        epilog=f"Objects larger than {MAX_OBJECT_BYTES >> 20} MiB are refused.",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="FILE",
        help="ELF object files (for example llc -filetype=obj output); '-' reads standard input",
    )
    p.add_argument("--stackmap", "-stackmap", action="store_true", help="print the .llvm_stackmaps section")
    return p


def cmd_readobj(argv: list[str]) -> int:
    """Print each file's header and, with --stackmap, its stack map; bad input is ``file: error: ...``."""
    args = _parser().parse_args(argv)
    status = 0
    for name in args.inputs:
        try:
            data = read_limited(name, MAX_OBJECT_BYTES)
        except OSError as e:
            print(f"gctoy readobj: error: cannot read '{name}': {e.strerror or e}", file=sys.stderr)
            status = 1
            continue
        except InputTooLarge as e:
            print(e, file=sys.stderr)
            status = 1
            continue
        try:
            found = read_object(data)
            text = format_stackmap(found.stackmap()) if args.stackmap and found.section is not None else ""
        except GCToyError as e:
            print(f"{name}: error: {e}", file=sys.stderr)
            status = 1
            continue
        header = format_file_header(name, found.file_format, found.arch, found.address_size)
        if args.stackmap and found.section is None:
            # llvm-readobj prints only the file header then; say why on stderr.
            print(f"{name}: warning: no {SECTION_NAME} section", file=sys.stderr)
        write_stdout(header + text)
    return status
