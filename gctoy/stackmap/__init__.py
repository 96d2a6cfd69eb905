"""LLVM StackMap v3: dataclasses, bytes in and out, reading ELF objects, `llvm-readobj` text."""

from .codec import StackMapEncodeError, emit, parse
from .elf import MissingStackMapError, ObjectStackMap, read_object, read_stackmap, read_stackmap_section
from .format import (
    LiveOut,
    Location,
    LocationKind,
    StackMap,
    StackMapRecord,
    StkSizeRecord,
)
from .readobj import format_file_header, format_location, format_stackmap

__all__ = [
    "LiveOut",
    "Location",
    "LocationKind",
    "MissingStackMapError",
    "ObjectStackMap",
    "StackMap",
    "StackMapEncodeError",
    "StackMapRecord",
    "StkSizeRecord",
    "emit",
    "format_file_header",
    "format_location",
    "format_stackmap",
    "parse",
    "read_object",
    "read_stackmap",
    "read_stackmap_section",
]
