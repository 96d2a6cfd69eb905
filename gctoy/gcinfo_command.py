"""``gctoy gcinfo-x86``: decode, print and encode CoreCLR x86 GC info from the command line.

::

    gctoy gcinfo-x86 dump HEX|FILE|- [--gcinfo-version N] [--legacy] [--at OFFSET [--caller]] [-o OUT]
    gctoy gcinfo-x86 encode SPEC.json|- [--gcinfo-version N] [--legacy] [-o OUT]
    gctoy gcinfo-x86 spec HEX|FILE|- [--gcinfo-version N] [--legacy] [-o OUT]

``dump`` prints the blob as CoreCLR's gcdump does; with ``--at`` it adds gcdump's
prolog/epilog/body line for that code offset and the references the runtime would report there
(``--caller``: as a frame that is not the leaf). ``encode`` prints the blob of a JSON method
description as hex. ``spec`` prints the JSON description of a blob (the inverse of ``encode``).
HEX may be split over several arguments and contain spaces; a FILE holds hex text or raw bytes;
``-`` reads standard input. An argument that names no file is hex, whatever its length. Inputs
over `MAX_INPUT_BYTES` (16 MiB) are refused; ``-o`` replaces its file only once the output is complete.

The JSON method description is `gctoy.coreclr.spec`'s (``gctoy gcinfo-x86 schema`` prints its shapes).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from typing import Any

from .coreclr.gcdump import classify_offset, gcdump
from .coreclr.gcrefs import gc_refs_at
from .coreclr.header import CURRENT_VERSION, VERSIONS
from .coreclr.method import decode, encode
from .coreclr.spec import SpecError, info_from_spec, parse_hex, schema_text, spec_from_info
from .errors import GCToyError
from .fileio import InputTooLarge, names_file, read_limited, write_output

#: The largest input (blob file, hex text or JSON description) the command reads.
MAX_INPUT_BYTES = 16 << 20


def read_blob(args: list[str]) -> tuple[bytes, str]:
    """The blob named by the command line and its name.

    ``-`` reads standard input; one argument naming an existing file reads that file (hex text or
    raw bytes); anything else is hex digits, however long. Inputs over `MAX_INPUT_BYTES` are refused.
    """
    if len(args) == 1 and (args[0] == "-" or names_file(args[0])):
        name = args[0]
        raw = read_limited(name, MAX_INPUT_BYTES)
        name = "<stdin>" if name == "-" else name
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            return raw, name
        if re.fullmatch(r"[\s,0-9A-Fa-fxX]*", text) and text.strip():
            return parse_hex(text, "file"), name
        return raw, name
    return parse_hex(" ".join(args), "HEX"), "<hex>"


def blob_name(args: list[str]) -> str:
    """How errors name the blob of ``args``: the file, ``<stdin>`` or ``<hex>``."""
    if len(args) == 1 and args[0] == "-":
        return "<stdin>"
    return args[0] if len(args) == 1 and names_file(args[0]) else "<hex>"


# --------------------------------------------------------------------------- commands


_BLOB_HELP = (
    f"hex bytes (spaces allowed), a file of hex text or raw bytes, or '-' for standard input "
    f"(at most {MAX_INPUT_BYTES >> 20} MiB)"
)


# Built once per process (parsing leaves a parser as it was): building it costs more than decoding a blob.
@functools.cache
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gctoy gcinfo-x86",
        description="Decode, print and encode CoreCLR x86 (JIT32) GC info.",
        epilog=f"Inputs larger than {MAX_INPUT_BYTES >> 20} MiB are refused.",
    )
    sub = p.add_subparsers(dest="action", required=True)

    def output(q: argparse.ArgumentParser) -> None:
        q.add_argument("-o", dest="output", metavar="FILE", help="write the output here instead of standard output")

    def common(q: argparse.ArgumentParser) -> None:
        output(q)
        q.add_argument(
            "--gcinfo-version",
            type=int,
            default=CURRENT_VERSION,
            choices=VERSIONS,
            help=f"GC info format version (default {CURRENT_VERSION})",
        )
        q.add_argument(
            "--legacy",
            action="store_true",
            help="old (.NET Framework era) blobs: no argTabOffset, absolute untracked offsets",
        )

    d = sub.add_parser("dump", help="print a blob as CoreCLR's gcdump does")
    d.add_argument("blob", nargs="+", metavar="HEX|FILE", help=_BLOB_HELP)
    d.add_argument("--at", metavar="OFFSET", help="also classify this code offset and list its live references")
    d.add_argument("--caller", action="store_true", help="with --at: the frame is not the leaf (curOffs-1 rules)")
    common(d)
    e = sub.add_parser(
        "encode",
        help="print the blob of a JSON method description as hex",
        description="Encode a JSON method description: keys method_size, header, epilogs, "
        "no_gc_regions, untracked, lifetimes, pointer_table ('gctoy gcinfo-x86 schema' shows "
        "their shapes, 'gctoy gcinfo-x86 spec HEX' an example).",
    )
    e.add_argument(
        "spec",
        metavar="SPEC.json",
        help=f"the method description ('-' for standard input; at most {MAX_INPUT_BYTES >> 20} MiB)",
    )
    common(e)
    s = sub.add_parser("spec", help="print the JSON method description of a blob")
    s.add_argument("blob", nargs="+", metavar="HEX|FILE", help=_BLOB_HELP)
    common(s)
    output(sub.add_parser("schema", help="print the JSON shapes of the method description and each pointer table"))
    return p


def _dump(args) -> str:
    data, _ = read_blob(args.blob)
    out = gcdump(data, args.gcinfo_version, legacy=args.legacy)
    if args.at is not None:
        try:
            offset = int(args.at, 0)
        except ValueError:
            raise SpecError("", f"--at: not a number: {args.at!r}") from None
        refs = gc_refs_at(data, offset, active_frame=not args.caller, version=args.gcinfo_version, legacy=args.legacy)
        out += classify_offset(data, offset, args.gcinfo_version, legacy=args.legacy) + "\n"
        frame = "caller frame" if args.caller else "active frame"
        out += f"Live references at {offset:04X} ({frame}): {len(refs)}\n"
        for ref in refs:
            flags = "".join((" interior" if ref.interior else "", " pinned" if ref.pinned else ""))
            out += f"    {ref.kind:<10} {ref.location}{flags}\n"
    return out


def _read_spec(name: str) -> Any:
    """The parsed JSON method description in file ``name`` (``-``: standard input)."""
    shown = "<stdin>" if name == "-" else name
    try:
        raw = read_limited(name, MAX_INPUT_BYTES)
    except OSError as e:
        raise SpecInputError(f"{shown}: error: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecInputError(f"{shown}: error: not UTF-8 text (byte offset {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecInputError(f"{shown}:{e.lineno}:{e.colno}: error: invalid JSON: {e.msg}") from None
    except ValueError as e:  # e.g. an integer literal of more digits than Python converts
        raise SpecInputError(f"{shown}: error: invalid JSON: {e}") from None
    except RecursionError:
        raise SpecInputError(f"{shown}: error: invalid JSON: nested too deeply") from None


class SpecInputError(GCToyError):
    """A JSON description that cannot be read or parsed; the message is the whole error line."""


def cmd_gcinfo_x86(argv: list[str]) -> int:
    """Run ``gctoy gcinfo-x86``; bad input prints ``file: error: message`` and returns 1."""
    args = _parser().parse_args(argv)
    name = "<hex>"
    try:
        if args.action == "dump":
            name = blob_name(args.blob)
            out = _dump(args)
        elif args.action == "spec":
            name = blob_name(args.blob)
            data, name = read_blob(args.blob)
            out = json.dumps(spec_from_info(decode(data, args.gcinfo_version, legacy=args.legacy)), indent=2) + "\n"
        elif args.action == "schema":
            out = schema_text()
        else:
            name = "<stdin>" if args.spec == "-" else args.spec
            info = info_from_spec(_read_spec(args.spec), args.gcinfo_version)
            out = encode(info, args.gcinfo_version, legacy=args.legacy).hex(" ").upper() + "\n"
    except (SpecInputError, InputTooLarge) as e:
        print(e, file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{name}: error: {e.strerror or e}", file=sys.stderr)
        return 1
    except GCToyError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 1
    write_output(out, args.output)
    return 0
