"""IR -> IR passes and checks, registered under LLVM's pass names.

``run(module, "verify")`` runs a comma-separated pipeline, as ``opt -passes=`` does.
"""
from __future__ import annotations

from typing import Callable

from ..errors import GCToyError, VerifyError
from ..ir.module import Module
from ..ir.verifier import check_module

PassFn = Callable[[Module], None]

#: opt-style pass name -> function that transforms (or checks) a module in place.
REGISTRY: dict[str, PassFn] = {}


def register(name: str) -> Callable[[PassFn], PassFn]:
    """Decorator: make a pass available under ``name`` (as in ``-passes=name``)."""

    def wrap(fn: PassFn) -> PassFn:
        REGISTRY[name] = fn
        return fn

    return wrap


@register("verify")
def verify(module: Module) -> None:
    """The structural verifier (raises VerifyError on the first problem)."""
    check_module(module)


class UnknownPassError(GCToyError):
    """A pass name that gctoy does not have."""


def parse_pipeline(text: str) -> list[str]:
    """Split ``"a,b"`` into pass names, checking each exists."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise UnknownPassError("empty pass pipeline")
    for n in names:
        if n not in REGISTRY:
            known = ", ".join(sorted(REGISTRY))
            raise UnknownPassError(f"unknown pass name '{n}' (gctoy has: {known})")
    return names


def run(module: Module, pipeline: str) -> Module:
    """Run the passes of ``pipeline`` on ``module`` in order; returns the module."""
    for name in parse_pipeline(pipeline):
        REGISTRY[name](module)
    return module


__all__ = ["REGISTRY", "UnknownPassError", "VerifyError", "parse_pipeline", "register", "run"]
