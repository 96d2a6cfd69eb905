"""GC strategies: what ``gc "name"`` on a function asks of the compiler (seed 003, "Custom GC Strategies").

A :class:`GCStrategy` is a name plus the seed's flags. ``get_strategy(name)`` looks one up
(an unknown name is an error, as it is for LLVM: "If none is found, the compiler will
raise an error"); ``register_strategy`` adds one; ``strategy_of(function)`` reads a
function's ``gc`` attribute.

LLVM 14 vs the seed
-------------------
The seed describes seven flags. LLVM 14's ``GCStrategy`` has kept only three of them,
``UseStatepoints``, ``NeededSafePoints`` (now a bool: "calls are inferred to be
safepoints", i.e. PostCall points only, tail calls excluded) and ``UsesMetadata``; the
others were removed when their behaviour became fixed. The built-ins below carry LLVM 14's
real values for the three fields (``lib/IR/BuiltinGCs.cpp``) and, for the four removed
flags, the behaviour LLVM 14 has instead:

=====================  =========  =====  ===========  ===========  ==========  ===========  ========
strategy               statepts   init   custom       custom read  custom      safe points  metadata
                                  roots  roots        barriers     write b.
=====================  =========  =====  ===========  ===========  ==========  ===========  ========
shadow-stack           no         yes    yes (1)      no           no          none         no
statepoint-example     yes        yes    no           no           no          none         no
coreclr                yes        yes    no           no           no          none         no
erlang                 no         yes    no           no           no          PostCall     yes
ocaml                  no         yes    no           no           no          PostCall     yes
=====================  =========  =====  ===========  ===========  ==========  ===========  ========

(1) ``shadow-stack-gc-lowering`` replaces every gcroot before code generation.
"init roots: yes" everywhere because LLVM 14's ``gc-lowering`` stores null into every
gcroot alloca of every GC function; "custom barriers: no" because it turns every gcread
into a load and every gcwrite into a store, whatever the strategy.

gctoy adds three strategies of its own that exercise the seed's other flags:

* ``gctoy-gcmap``: roots stay in the frame; all four kinds of safe points; the seed's
  compact ``__gcmap_<function>`` table (gctoy.codegen.gcmap) is the metadata;
* ``gctoy-cardmark``: a custom write barrier that marks a card (gctoy.passes.lower_barriers);
* ``gctoy-readbarrier``: a custom read barrier that follows a forwarding header word.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .errors import GCToyError


class PointKind(enum.Enum):
    """The seed's ``GC::PointKind``: where a collector may stop a function."""

    LOOP = "Loop"  # a backward branch
    RETURN = "Return"  # a return instruction
    PRE_CALL = "PreCall"  # a call instruction
    POST_CALL = "PostCall"  # the return address of a call

    @property
    def bit(self) -> int:
        """``1 << GC::Kind`` in the seed's ``NeededSafePoints`` mask (Loop = 0 ... PostCall = 3)."""
        return 1 << list(PointKind).index(self)


ALL_POINT_KINDS = frozenset(PointKind)


class UnknownStrategyError(GCToyError):
    """A ``gc "name"`` that no registered strategy answers to."""


@dataclass(frozen=True)
class GCStrategy:
    """A collector's code generation requirements: the seed's flags, under the name ``gc "..."`` uses."""

    name: str
    use_statepoints: bool = False
    init_roots: bool = True
    custom_roots: bool = False
    custom_read_barriers: bool = False
    custom_write_barriers: bool = False
    needed_safe_points: frozenset[PointKind] = field(default_factory=frozenset)
    uses_metadata: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "needed_safe_points", frozenset(self.needed_safe_points))
        if self.use_statepoints and (self.custom_roots or self.needed_safe_points or self.uses_metadata):
            raise GCToyError(
                f"strategy {self.name!r}: a statepoint strategy cannot also ask for gcroot "
                "lowering, safe points or metadata (LLVM: 'none of the other options can be "
                "anything but their default values')"
            )

    @property
    def safe_point_mask(self) -> int:
        """``NeededSafePoints`` as the seed's bit mask."""
        return sum(k.bit for k in self.needed_safe_points)

    @property
    def roots_in_frame(self) -> bool:
        """Whether gcroot allocas reach the code generator (so a frame map can name their slots)."""
        return not self.use_statepoints and not self.custom_roots

    def llvm14_fields(self) -> dict[str, bool]:
        """The three fields LLVM 14's GCStrategy still has, as this strategy would set them."""
        return {
            "UseStatepoints": self.use_statepoints,
            "NeededSafePoints": bool(self.needed_safe_points),
            "UsesMetadata": self.uses_metadata,
        }


_POST_CALL = frozenset({PointKind.POST_CALL})

BUILTIN_STRATEGIES: tuple[GCStrategy, ...] = (
    GCStrategy(
        "shadow-stack",
        custom_roots=True,
        description="very portable GC for uncooperative code generators (a linked list of frames)",
    ),
    GCStrategy(
        "statepoint-example",
        use_statepoints=True,
        description="an example strategy for statepoints; GC pointers live in addrspace(1)",
    ),
    GCStrategy("coreclr", use_statepoints=True, description="CoreCLR-compatible GC (statepoints)"),
    GCStrategy(
        "erlang",
        needed_safe_points=_POST_CALL,
        uses_metadata=True,
        description="erlang-compatible garbage collector (frametable printer)",
    ),
    GCStrategy(
        "ocaml",
        needed_safe_points=_POST_CALL,
        uses_metadata=True,
        description="ocaml 3.10-compatible GC (frametable printer)",
    ),
    GCStrategy(
        "gctoy-gcmap",
        needed_safe_points=ALL_POINT_KINDS,
        uses_metadata=True,
        description="roots in the frame, the seed's compact __gcmap_<function> table",
    ),
    GCStrategy(
        "gctoy-cardmark", custom_write_barriers=True, description="card-marking write barrier over gctoy's heap"
    ),
    GCStrategy(
        "gctoy-readbarrier", custom_read_barriers=True, description="read barrier that follows a forwarding header word"
    ),
)

_REGISTRY: dict[str, GCStrategy] = {s.name: s for s in BUILTIN_STRATEGIES}


def register_strategy(strategy: GCStrategy, replace: bool = False) -> GCStrategy:
    """Make ``strategy`` available to ``gc "<its name>"``; a clash is an error unless ``replace``."""
    if not strategy.name:
        raise GCToyError("a GC strategy needs a name")
    if strategy.name in _REGISTRY and not replace:
        raise GCToyError(f"a GC strategy named {strategy.name!r} is already registered")
    _REGISTRY[strategy.name] = strategy
    return strategy


def unregister_strategy(name: str) -> None:
    """Forget a strategy registered by ``register_strategy`` (built-ins cannot be removed)."""
    if any(s.name == name for s in BUILTIN_STRATEGIES):
        raise GCToyError(f"{name!r} is a built-in GC strategy")
    _REGISTRY.pop(name, None)


def known_strategies() -> list[str]:
    """The registered names, sorted."""
    return sorted(_REGISTRY)


def get_strategy(name: str) -> GCStrategy:
    """The strategy called ``name`` (UnknownStrategyError listing the known names if there is none)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownStrategyError(
            f"unsupported GC: {name!r} (known strategies: {', '.join(known_strategies())})"
        ) from None


def strategy_of(function) -> GCStrategy | None:
    """The strategy a function's ``gc "..."`` names, or None if it has no ``gc`` attribute."""
    name = getattr(function, "gc", None)
    return None if name is None else get_strategy(name)


__all__ = [
    "ALL_POINT_KINDS",
    "BUILTIN_STRATEGIES",
    "GCStrategy",
    "PointKind",
    "UnknownStrategyError",
    "get_strategy",
    "known_strategies",
    "register_strategy",
    "strategy_of",
    "unregister_strategy",
]
