"""JSON method descriptions of CoreCLR x86 GC info: `MethodGCInfo` <-> JSON, and the JSON shapes.

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

import dataclasses
import enum
import json
import re
import types
import typing
from typing import Any

from ..errors import GCToyError
from .header import CURRENT_VERSION, InfoHdr
from .info_tables import Lifetime, NoGCRegion, UntrackedSlot
from .method import ENCODINGS, MethodGCInfo, empty_pointer_table

_DERIVED = ("epilog_count", "untracked_cnt", "var_ptr_table_size", "no_gc_region_cnt")


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
    """Convert JSON ``value`` to type ``tp`` (ints, bools, strings, enums, tuples, frozensets, dataclasses).

    Long because it is one dispatch over the type forms the descriptions use, a few lines each,
    sharing the JSON path for the errors.
    """
    if tp is Any:
        return value
    members = _union_args(tp)
    if members is not None:
        if value is None and type(None) in members:
            return None
        choices = [m for m in members if m is not type(None)]
        classes = [m for m in choices if isinstance(m, type) and dataclasses.is_dataclass(m)]
        if len(classes) > 1 and isinstance(value, dict):
            name = value.get("type")
            match = next((c for c in classes if c.__name__ == name), None)
            if match is None:
                raise SpecError(path, f'needs "type": one of {", ".join(c.__name__ for c in classes)}')
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
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise SpecError(path, f"must be an object with the fields of {tp.__name__}, got {json.dumps(value)}")
        hints = typing.get_type_hints(tp)
        fields = {f.name: f for f in dataclasses.fields(tp) if f.init}
        unknown = sorted(set(value) - set(fields) - {"type"})
        if unknown:
            raise SpecError(
                f"{path}.{unknown[0]}" if path else unknown[0],
                f"unknown field of {tp.__name__} (known: {', '.join(fields)})",
            )
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
        return [schema_of(m, seen) for m in members if m is not type(None)] + ([None] if type(None) in members else [])
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "|".join(m.name for m in tp)
    origin = typing.get_origin(tp)
    if origin in (tuple, list, frozenset, set):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return [schema_of(a, seen) for a in args] or ["any"]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if tp in seen:
            return tp.__name__
        seen.add(tp)
        hints = typing.get_type_hints(tp)
        return {
            "type": tp.__name__,
            **{f.name: schema_of(hints[f.name], seen) for f in dataclasses.fields(tp) if f.init},
        }
    return getattr(tp, "__name__", str(tp))


# --------------------------------------------------------------------------- method descriptions


def info_from_spec(spec: Any, version: int = CURRENT_VERSION):
    """Build a `MethodGCInfo` from a parsed JSON method description (raises `SpecError`)."""
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
        return MethodGCInfo.create(
            method_size,
            header,
            epilogs=epilogs,
            no_gc_regions=regions,
            untracked=untracked,
            lifetimes=lifetimes,
            pointer_table=table,
            epilog_at_end=at_end,
        )
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


def schema_text() -> str:
    """The JSON shapes of the method description and of each pointer table, as indented JSON text."""
    header = {k: v for k, v in schema_of(InfoHdr).items() if k not in _DERIVED}
    shapes = {
        "method": {
            "method_size": "int",
            "header": header,
            "epilogs": ["int"],
            "no_gc_regions": [schema_of(NoGCRegion)],
            "untracked": [schema_of(UntrackedSlot)],
            "lifetimes": [schema_of(Lifetime)],
            "pointer_table": "one of the pointer tables below",
        }
    }
    for kind, hdr in zip(ENCODINGS, (InfoHdr(interruptible=True), InfoHdr(ebp_frame=True), InfoHdr())):
        shapes[f"pointer_table ({kind})"] = schema_of(type(empty_pointer_table(hdr)))
    return json.dumps(shapes, indent=2) + "\n"
