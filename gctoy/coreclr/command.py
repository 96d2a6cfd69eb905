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

The JSON method description (every key but ``method_size`` is optional)::

    {
      "method_size": 54,                  code bytes, prolog and epilogs included
      "header": {                         any `InfoHdr` field, e.g.
        "prolog_size": 19, "epilog_size": 8, "ebp_frame": true, "interruptible": true,
        "edi_saved": true, "esi_saved": true, "ebp_saved": true,
        "arg_count": 4, "frame_size": 1, "return_kind": 0,
        "epilog_at_end": true             optional: default = one epilog that ends the method
      },                                  epilog_count, untracked_cnt, var_ptr_table_size and
                                          no_gc_region_cnt are derived from the lists below
      "epilogs": [46],                    start offset of every epilog
      "no_gc_regions": [{"offset": 3, "size": 4}],                       (version 4+)
      "untracked": [{"offset": -8, "interior": false, "pinned": false}], frame offsets
      "lifetimes": [{"offset": 12, "begin": 5, "end": 32, "interior": false, "pinned": false}],
      "pointer_table": { ... }
    }

``pointer_table`` holds the fields of the table description of the encoding the header selects
-- `gctoy.coreclr.ptrtab_full` (``interruptible``), `ptrtab_ebp` (``ebp_frame``) or
`ptrtab_esp` (neither) -- under the field names of that module's dataclass. Tuples are JSON
lists, enums are written by name, and where a field may hold one of several entry classes the
object names its class with ``"type"``. ``gctoy gcinfo-x86 schema`` prints these shapes and
``spec`` prints a complete example for any blob. Errors name the file and the JSON path.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import re
import sys
import types
import typing
from typing import Any

from ..errors import GCToyError
from ..fileio import InputTooLarge, names_file, read_limited, write_output
from .header import CURRENT_VERSION, VERSIONS, InfoHdr
from .info_tables import Lifetime, NoGCRegion, UntrackedSlot

_DERIVED = ("epilog_count", "untracked_cnt", "var_ptr_table_size", "no_gc_region_cnt")

#: The largest input (blob file, hex text or JSON description) the command reads.
MAX_INPUT_BYTES = 16 << 20


class SpecError(GCToyError):
    """A JSON method description that does not describe a method, with the JSON path at fault."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(path, message)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


# --------------------------------------------------------------------------- JSON <-> dataclasses


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return None


def from_json(tp: Any, value: Any, path: str) -> Any:
    """Convert JSON ``value`` to type ``tp`` (ints, bools, strings, enums, tuples, frozensets, dataclasses)."""
    if tp is Any:
        return value
    members = _union_args(tp)
    if members is not None:
        if value is None and type(None) in members:
            return None
        choices = [m for m in members if m is not type(None)]
        classes = [m for m in choices if dataclasses.is_dataclass(m)]
        if len(classes) > 1 and isinstance(value, dict):
            name = value.get("type")
            match = next((c for c in classes if c.__name__ == name), None)
            if match is None:
                raise SpecError(path, f"needs \"type\": one of {', '.join(c.__name__ for c in classes)}")
            return from_json(match, value, path)
        errors = []
        for member in choices:
            try:
                return from_json(member, value, path)
            except SpecError as e:
                errors.append(e.message)
        raise SpecError(path, " or ".join(dict.fromkeys(errors)))
    if tp is bool:
        if not isinstance(value, bool):
            raise SpecError(path, f"must be true or false, got {json.dumps(value)}")
        return value
    if tp is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise SpecError(path, f"must be an integer, got {json.dumps(value)}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise SpecError(path, f"must be a string, got {json.dumps(value)}")
        return value
    if tp is type(None):
        if value is not None:
            raise SpecError(path, f"must be null, got {json.dumps(value)}")
        return None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if value == member.name or (not isinstance(value, bool) and value == member.value):
                return member
        raise SpecError(path, f"must be one of {', '.join(m.name for m in tp)}, got {json.dumps(value)}")
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        if value not in typing.get_args(tp):
            raise SpecError(path, f"must be one of {', '.join(map(json.dumps, typing.get_args(tp)))}")
        return value
    if origin in (tuple, list, frozenset, set):
        if not isinstance(value, list):
            raise SpecError(path, f"must be a list, got {json.dumps(value)}")
        args = typing.get_args(tp)
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                raise SpecError(path, f"must be a list of {len(args)} items, got {len(value)}")
            return tuple(from_json(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
        item = args[0] if args else Any
        items = [from_json(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
        return {tuple: tuple, list: tuple, frozenset: frozenset, set: frozenset}[origin](items)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise SpecError(path, f"must be an object with the fields of {tp.__name__}, got {json.dumps(value)}")
        hints = typing.get_type_hints(tp)
        fields = {f.name: f for f in dataclasses.fields(tp) if f.init}
        unknown = sorted(set(value) - set(fields) - {"type"})
        if unknown:
            raise SpecError(f"{path}.{unknown[0]}" if path else unknown[0],
                            f"unknown field of {tp.__name__} (known: {', '.join(fields)})")
        kwargs = {}
        for name, f in fields.items():
            if name in value:
                kwargs[name] = from_json(hints[name], value[name], f"{path}.{name}" if path else name)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise SpecError(f"{path}.{name}" if path else name, f"is required by {tp.__name__}")
        try:
            return tp(**kwargs)
        except GCToyError as e:
            raise SpecError(path, str(e)) from None
        except (TypeError, ValueError) as e:
            raise SpecError(path, f"not a valid {tp.__name__}: {e}") from None
    raise SpecError(path, f"cannot read a value of type {tp!r} from JSON")


def to_json(value: Any, tp: Any = Any) -> Any:
    """The JSON form of ``value`` (the inverse of `from_json`); ``tp`` is the declared type."""
    if isinstance(value, enum.Enum):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        hints = typing.get_type_hints(type(value))
        out: dict[str, Any] = {}
        members = _union_args(tp) or ()
        if sum(1 for m in members if dataclasses.is_dataclass(m)) > 1:
            out["type"] = type(value).__name__
        for f in dataclasses.fields(value):
            if f.init:
                out[f.name] = to_json(getattr(value, f.name), hints.get(f.name, Any))
        return out
    if isinstance(value, (tuple, list, frozenset, set)):
        args = typing.get_args(tp)
        origin = typing.get_origin(tp)
        items = sorted(value, key=repr) if isinstance(value, (frozenset, set)) else list(value)
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            return [to_json(v, a) for v, a in zip(items, args)]
        item = args[0] if args else Any
        return [to_json(v, item) for v in items]
    if isinstance(value, bytes):
        return value.hex()
    return value


def schema_of(tp: Any, seen: set | None = None) -> Any:
    """A readable JSON sketch of the shape `from_json` accepts for ``tp``."""
    seen = set() if seen is None else seen
    members = _union_args(tp)
    if members is not None:
        return [schema_of(m, seen) for m in members if m is not type(None)] + (
            [None] if type(None) in members else [])
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "|".join(m.name for m in tp)
    origin = typing.get_origin(tp)
    if origin in (tuple, list, frozenset, set):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return [schema_of(a, seen) for a in args] or ["any"]
    if dataclasses.is_dataclass(tp):
        if tp in seen:
            return tp.__name__
        seen.add(tp)
        hints = typing.get_type_hints(tp)
        return {"type": tp.__name__, **{f.name: schema_of(hints[f.name], seen)
                                        for f in dataclasses.fields(tp) if f.init}}
    return getattr(tp, "__name__", str(tp))


# --------------------------------------------------------------------------- method descriptions


def info_from_spec(spec: Any, version: int = CURRENT_VERSION):
    """Build a `MethodGCInfo` from a parsed JSON method description (raises `SpecError`)."""
    from .method import MethodGCInfo, empty_pointer_table

    if not isinstance(spec, dict):
        raise SpecError("", "the method description must be a JSON object")
    known = {"method_size", "header", "epilogs", "no_gc_regions", "untracked", "lifetimes", "pointer_table"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise SpecError(unknown[0], f"unknown key (known: {', '.join(sorted(known))})")
    if "method_size" not in spec:
        raise SpecError("method_size", "is required")
    method_size = from_json(int, spec["method_size"], "method_size")
    raw_header = spec.get("header", {})
    if not isinstance(raw_header, dict):
        raise SpecError("header", "must be an object with InfoHdr fields")
    for name in _DERIVED:
        if name in raw_header:
            raise SpecError(f"header.{name}", "is derived from the tables; leave it out")
    at_end = raw_header.get("epilog_at_end")
    header = from_json(InfoHdr, {k: v for k, v in raw_header.items() if k != "epilog_at_end"}, "header")
    if at_end is not None:
        at_end = from_json(bool, at_end, "header.epilog_at_end")
    epilogs = from_json(tuple[int, ...], spec.get("epilogs", []), "epilogs")
    regions = from_json(tuple[NoGCRegion, ...], spec.get("no_gc_regions", []), "no_gc_regions")
    untracked = from_json(tuple[UntrackedSlot, ...], spec.get("untracked", []), "untracked")
    lifetimes = from_json(tuple[Lifetime, ...], spec.get("lifetimes", []), "lifetimes")
    table = None
    if "pointer_table" in spec:
        table = from_json(type(empty_pointer_table(header)), spec["pointer_table"], "pointer_table")
    try:
        return MethodGCInfo.create(method_size, header, epilogs=epilogs, no_gc_regions=regions,
                                   untracked=untracked, lifetimes=lifetimes, pointer_table=table,
                                   epilog_at_end=at_end)
    except GCToyError as e:
        raise SpecError("", str(e)) from None


def spec_from_info(info) -> dict:
    """The JSON method description of a `MethodGCInfo` (what `info_from_spec` reads back)."""
    header = to_json(info.header)
    for name in _DERIVED:
        del header[name]
    defaults = to_json(InfoHdr())
    header = {k: v for k, v in header.items() if k == "epilog_at_end" or v != defaults[k]}
    return {
        "method_size": info.method_size,
        "header": header,
        "epilogs": list(info.epilogs),
        "no_gc_regions": to_json(info.no_gc_regions, tuple[NoGCRegion, ...]),
        "untracked": to_json(info.untracked, tuple[UntrackedSlot, ...]),
        "lifetimes": to_json(info.lifetimes, tuple[Lifetime, ...]),
        "pointer_table": to_json(info.pointer_table, type(info.pointer_table)),
    }


# --------------------------------------------------------------------------- input


def parse_hex(text: str, where: str) -> bytes:
    """Bytes from hex text: pairs of digits, optionally ``0x``-prefixed, separated by spaces/commas or not."""
    cleaned = re.sub(r"[\s,]+", " ", text).strip()
    out = bytearray()
    for word in cleaned.split(" "):
        if not word:
            continue
        word = word[2:] if word[:2].lower() == "0x" else word
        if not re.fullmatch(r"[0-9A-Fa-f]+", word) or len(word) % 2:
            raise SpecError("", f"{where}: not hex bytes: {word!r}")
        out += bytes.fromhex(word)
    if not out:
        raise SpecError("", f"{where}: no bytes given")
    return bytes(out)


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


_BLOB_HELP = (f"hex bytes (spaces allowed), a file of hex text or raw bytes, or '-' for standard input "
              f"(at most {MAX_INPUT_BYTES >> 20} MiB)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gctoy gcinfo-x86",
                                description="Decode, print and encode CoreCLR x86 (JIT32) GC info.",
                                epilog=f"Inputs larger than {MAX_INPUT_BYTES >> 20} MiB are refused.")
    sub = p.add_subparsers(dest="action", required=True)

    def output(q: argparse.ArgumentParser) -> None:
        q.add_argument("-o", dest="output", metavar="FILE", help="write the output here instead of standard output")

    def common(q: argparse.ArgumentParser) -> None:
        output(q)
        q.add_argument("--gcinfo-version", type=int, default=CURRENT_VERSION, choices=VERSIONS,
                       help=f"GC info format version (default {CURRENT_VERSION})")
        q.add_argument("--legacy", action="store_true",
                       help="old (.NET Framework era) blobs: no argTabOffset, absolute untracked offsets")

    d = sub.add_parser("dump", help="print a blob as CoreCLR's gcdump does")
    d.add_argument("blob", nargs="+", metavar="HEX|FILE", help=_BLOB_HELP)
    d.add_argument("--at", metavar="OFFSET", help="also classify this code offset and list its live references")
    d.add_argument("--caller", action="store_true", help="with --at: the frame is not the leaf (curOffs-1 rules)")
    common(d)
    e = sub.add_parser("encode", help="print the blob of a JSON method description as hex",
                       description="Encode a JSON method description: keys method_size, header, epilogs, "
                       "no_gc_regions, untracked, lifetimes, pointer_table ('gctoy gcinfo-x86 schema' shows "
                       "their shapes, 'gctoy gcinfo-x86 spec HEX' an example).")
    e.add_argument("spec", metavar="SPEC.json", help=f"the method description ('-' for standard input; at most {MAX_INPUT_BYTES >> 20} MiB)")
    common(e)
    s = sub.add_parser("spec", help="print the JSON method description of a blob")
    s.add_argument("blob", nargs="+", metavar="HEX|FILE", help=_BLOB_HELP)
    common(s)
    output(sub.add_parser("schema", help="print the JSON shapes of the method description and each pointer table"))
    return p


def _dump(args) -> str:
    from .gcdump import classify_offset, gcdump
    from .gcrefs import gc_refs_at

    data, _ = read_blob(args.blob)
    out = gcdump(data, args.gcinfo_version, legacy=args.legacy)
    if args.at is not None:
        try:
            offset = int(args.at, 0)
        except ValueError:
            raise SpecError("", f"--at: not a number: {args.at!r}") from None
        out += classify_offset(data, offset, args.gcinfo_version, legacy=args.legacy) + "\n"
        refs = gc_refs_at(data, offset, active_frame=not args.caller, version=args.gcinfo_version,
                          legacy=args.legacy)
        frame = "caller frame" if args.caller else "active frame"
        out += f"Live references at {offset:04X} ({frame}): {len(refs)}\n"
        for ref in refs:
            flags = "".join((" interior" if ref.interior else "", " pinned" if ref.pinned else ""))
            out += f"    {ref.kind:<10} {ref.location}{flags}\n"
    return out


def _schema() -> str:
    from .method import ENCODINGS, empty_pointer_table

    header = {k: v for k, v in schema_of(InfoHdr).items() if k not in _DERIVED}
    shapes = {"method": {"method_size": "int", "header": header,
                         "epilogs": ["int"], "no_gc_regions": [schema_of(NoGCRegion)],
                         "untracked": [schema_of(UntrackedSlot)], "lifetimes": [schema_of(Lifetime)],
                         "pointer_table": "one of the pointer tables below"}}
    for kind, hdr in zip(ENCODINGS, (InfoHdr(interruptible=True), InfoHdr(ebp_frame=True), InfoHdr())):
        shapes[f"pointer_table ({kind})"] = schema_of(type(empty_pointer_table(hdr)))
    return json.dumps(shapes, indent=2) + "\n"


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
            from .method import decode

            name = blob_name(args.blob)
            data, name = read_blob(args.blob)
            out = json.dumps(spec_from_info(decode(data, args.gcinfo_version, legacy=args.legacy)), indent=2) + "\n"
        elif args.action == "schema":
            out = _schema()
        else:
            from .method import encode

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
