"""LLVM's own spellings of ``opt``'s command-line options (``cl::opt``), for ``gctoy opt``.

LLVM writes its long options with one dash and an ``=`` (``-spp-rematerialization-threshold=0``,
``-spp-no-entry``, ``-rs4gc-allow-statepoint-with-no-deopt-info=false``); two dashes work too.
A boolean takes ``=true``/``=false`` (or ``=1``/``=0``); a number takes ``=N`` or the next word.
:func:`split_llvm_flags` takes those out of the argument list before argparse sees the rest, and
also the legacy pass manager's pass flags (``opt -rewrite-statepoints-for-gc``, ``-place-safepoints``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .errors import GCToyError

#: the value an option takes (``names``: a name each time the option is given, all kept)
FlagKind = Literal["bool", "int", "names"]
#: option name -> (kind, which pass reads it)
LLVM_FLAGS: dict[str, tuple[FlagKind, str]] = {
    # PlaceSafepoints
    "spp-no-entry": ("bool", "place-safepoints"),
    "spp-no-call": ("bool", "place-safepoints"),
    "spp-no-backedge": ("bool", "place-safepoints"),
    "spp-all-backedges": ("bool", "place-safepoints"),
    "spp-split-backedge": ("bool", "place-safepoints"),
    "spp-counted-loop-trip-width": ("int", "place-safepoints"),
    # RewriteStatepointsForGC
    "spp-rematerialization-threshold": ("int", "rewrite-statepoints-for-gc"),
    "spp-print-liveset": ("bool", "rewrite-statepoints-for-gc"),
    "spp-print-liveset-size": ("bool", "rewrite-statepoints-for-gc"),
    "spp-print-base-pointers": ("bool", "rewrite-statepoints-for-gc"),
    "rs4gc-clobber-non-live": ("bool", "rewrite-statepoints-for-gc"),
    "rs4gc-allow-statepoint-with-no-deopt-info": ("bool", "rewrite-statepoints-for-gc"),
    "rs4gc-remat-derived-at-uses": ("bool", "rewrite-statepoints-for-gc"),
    # TargetLibraryInfo: a C library function opt must not take for the known one (``-disable-builtin=ldexp``);
    # read by both passes that treat known library calls as GC leaves
    "disable-builtin": ("names", "rewrite-statepoints-for-gc,place-safepoints"),
    # SafepointIRVerifier
    "safepoint-ir-verifier-print-only": ("bool", "opt"),  # read by gctoy opt itself
    # opt itself
    "opaque-pointers": ("bool", "opt"),
    "disable-output": ("bool", "opt"),
    "enable-new-pm": ("bool", "opt"),
}

#: the pass option (``pass<option>``) each flag becomes; booleans set to false are left out
_PASS_OPTION = {
    "spp-counted-loop-trip-width": "trip-width",
    "spp-rematerialization-threshold": "remat-threshold",
}

_TRUE, _FALSE = ("", "true", "1", "TRUE", "True"), ("false", "0", "FALSE", "False")


class CommandLineError(GCToyError):
    """An option ``gctoy opt`` does not know, or a value an option cannot take."""


@dataclass
class LLVMFlags:
    """The LLVM-spelled options found on a command line."""

    #: name -> value (True/False, an int, or the names given), in the order given
    values: dict[str, bool | int | tuple[str, ...]] = field(default_factory=dict)
    #: passes named as legacy flags (``-rewrite-statepoints-for-gc``), in order
    legacy_passes: list[str] = field(default_factory=list)

    def pass_options(self, pass_name: str) -> list[str]:
        """The options for ``pass_name<...>`` that these flags ask for."""
        out = []
        for name, value in self.values.items():
            if pass_name not in LLVM_FLAGS[name][1].split(","):
                continue
            if isinstance(value, tuple):
                out += [f"{name}={item}" for item in value]
            elif LLVM_FLAGS[name][0] == "int":
                out.append(f"{_PASS_OPTION.get(name, name)}={value}")
            elif name == "rs4gc-allow-statepoint-with-no-deopt-info" or name == "rs4gc-remat-derived-at-uses":
                out.append(f"{name}={'true' if value else 'false'}")
            elif value:
                out.append(name.removeprefix("spp-") if pass_name == "place-safepoints" else name)
        return out


def split_llvm_flags(argv: list[str], pass_names: set[str]) -> tuple[list[str], LLVMFlags]:
    """Take LLVM's ``cl::opt`` flags and legacy pass flags out of ``argv``; return the rest and them."""
    rest: list[str] = []
    flags = LLVMFlags()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-") or arg in ("-", "--"):
            rest.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name in LLVM_FLAGS:
            kind = LLVM_FLAGS[name][0]
            if kind == "names":
                if not eq:
                    if i >= len(argv):
                        raise CommandLineError(f"option '-{name}' needs a name")
                    value = argv[i]
                    i += 1
                if not value or not re.fullmatch(r"[\w.$]+", value):
                    raise CommandLineError(f"option '-{name}': '{value}' is not a function name")
                before = flags.values.get(name, ())
                flags.values[name] = (*before, value) if isinstance(before, tuple) else (value,)
            elif kind == "bool":
                if value in _TRUE and not (eq and not value):
                    flags.values[name] = True
                elif value in _FALSE:
                    flags.values[name] = False
                else:
                    raise CommandLineError(f"option '-{name}': '{value}' is not a boolean (true, false, 1 or 0)")
            else:
                if not eq:
                    if i >= len(argv):
                        raise CommandLineError(f"option '-{name}' needs a number")
                    value = argv[i]
                    i += 1
                try:
                    number = int(value, 0)
                except ValueError:
                    raise CommandLineError(f"option '-{name}': '{value}' is not a number") from None
                flags.values[name] = number
                if name == "spp-rematerialization-threshold" and number < 0:
                    raise CommandLineError(f"option '-{name}': '{value}' is not an unsigned number")
        elif not eq and arg.startswith("-") and not arg.startswith("--") and name in pass_names:
            flags.legacy_passes.append(name)
        else:
            rest.append(arg)
    return rest, flags
