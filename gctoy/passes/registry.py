"""The pass registry: pass names as LLVM spells them, and running a pipeline of them.

``run(module, "verify")`` runs a comma-separated pipeline, as ``opt -passes=`` does.
A pass registered with ``options=True`` also accepts ``name<opt1;opt2=value>``
(the syntax of LLVM's new pass manager); the text between the brackets is
handed to the pass function as its second argument.  The passes register themselves
when :mod:`gctoy.passes` imports them; this module imports none of them.

Every pass has one shape, as in LLVM's pass managers: the registered *module pass* does the
module-wide work (declarations it adds or drops, state shared by functions) and runs the pass's
*function pass* on each function it applies to, which a chapter or a lab can call alone:

=============================  ======================================  ================================
pass                           function pass                           runs on
=============================  ======================================  ================================
place-safepoints               ``place_safepoints_in_function``        functions that want safepoints
rewrite-statepoints-for-gc     ``rewrite_function`` (its ``PHASES``)   functions of a statepoint GC
verify-safepoints              ``find_unrelocated_uses``               every definition
statepoints-to-gcroots         ``_FunctionRewrite.run``                functions with statepoints
shadow-stack-gc-lowering       ``lower_function``                      ``gc "shadow-stack"`` functions
lower-gc-barriers              ``_Lowering.run``                       functions with a ``gc``
=============================  ======================================  ================================
"""

from __future__ import annotations

from typing import Callable

from ..errors import GCToyError
from ..ir.module import Module
from ..ir.verifier import check_module

#: a pass changes (or checks) the module in place; what it returns is not used
PassFn = Callable[[Module], object]

#: opt-style pass name -> function that transforms (or checks) a module in place.
REGISTRY: dict[str, PassFn] = {}
#: Names of passes that accept ``name<options>``; their function takes the option text.
TAKES_OPTIONS: set[str] = set()


def register(name: str, options: bool = False) -> Callable[[PassFn], PassFn]:
    """Decorator: make a pass available under ``name`` (as in ``-passes=name``)."""

    def wrap(fn: PassFn) -> PassFn:
        REGISTRY[name] = fn
        if options:
            TAKES_OPTIONS.add(name)
        return fn

    return wrap


class UnknownPassError(GCToyError):
    """A pass name that gctoy does not have."""


@register("verify", options=True)
def verify(module: Module, options: str | None = None) -> None:
    """The structural verifier (raises VerifyError on the first problem); ``verify<safepoint-ir>``: LLVM's
    name for the safepoint verifier, ``verify-safepoints``."""
    if options is None:
        check_module(module)
    elif options == "safepoint-ir":
        REGISTRY["verify-safepoints"](module)
    else:
        raise UnknownPassError(f"unknown verifier 'verify<{options}>' (gctoy has: verify, verify<safepoint-ir>)")


def split_pass(entry: str) -> tuple[str, str | None]:
    """``"p<a;b>"`` -> ``("p", "a;b")``; ``"p"`` -> ``("p", None)``."""
    entry = entry.strip()
    if entry.endswith(">") and "<" in entry:
        name, _, rest = entry.partition("<")
        return name.strip(), rest[:-1]
    return entry, None


def split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_pipeline(text: str) -> list[str]:
    """Split ``"a,b<opts>"`` into pass entries, checking each name exists (and takes options if given)."""
    entries = split_top_level(text)
    if not entries:
        raise UnknownPassError("empty pass pipeline")
    for entry in entries:
        n, opts = split_pass(entry)
        if n not in REGISTRY:
            known = ", ".join(sorted(REGISTRY))
            raise UnknownPassError(f"unknown pass name '{n}' (gctoy has: {known})")
        if opts is not None and n not in TAKES_OPTIONS:
            raise UnknownPassError(f"pass '{n}' takes no options (got '<{opts}>')")
    return entries


def run(module: Module, pipeline: str) -> Module:
    """Run the passes of ``pipeline`` on ``module`` in order; returns the module."""
    for entry in parse_pipeline(pipeline):
        name, opts = split_pass(entry)
        if opts is None:
            REGISTRY[name](module)
        else:
            REGISTRY[name](module, opts)  # type: ignore[call-arg]  # a pass in TAKES_OPTIONS takes the option text too
    return module
