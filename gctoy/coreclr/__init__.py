"""CoreCLR's x86 ("JIT32") GC info: primitive encodings and the method header, for GC-info versions 1-5."""

from .codecs import (
    GCInfoEncodeError,
    decode_dword,
    decode_signed,
    decode_udelta,
    decode_unsigned,
    encode_dword,
    encode_signed,
    encode_udelta,
    encode_unsigned,
)
from .gcdump import classify_offset, gcdump
from .gcrefs import GCRef, gc_refs_at
from .header import (
    CURRENT_VERSION,
    VERSIONS,
    InfoHdr,
    check_header,
    choose_shortcut,
    decode_header,
    encode_header,
    header_codes,
    shortcut,
    trailing_fields,
)
from .info_tables import Lifetime, NoGCRegion, UntrackedSlot
from .method import MethodGCInfo, decode, decode_with_entries, encode

__all__ = [
    "GCRef",
    "Lifetime",
    "MethodGCInfo",
    "NoGCRegion",
    "UntrackedSlot",
    "classify_offset",
    "decode",
    "decode_with_entries",
    "encode",
    "gc_refs_at",
    "gcdump",
    "CURRENT_VERSION",
    "GCInfoEncodeError",
    "InfoHdr",
    "VERSIONS",
    "check_header",
    "choose_shortcut",
    "decode_dword",
    "decode_header",
    "decode_signed",
    "decode_udelta",
    "decode_unsigned",
    "encode_dword",
    "encode_header",
    "encode_signed",
    "encode_udelta",
    "encode_unsigned",
    "header_codes",
    "shortcut",
    "trailing_fields",
]
