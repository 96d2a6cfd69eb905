"""The module: named types, globals, functions, attribute groups, metadata; printed and compared."""

from __future__ import annotations

from .compare import module_key
from .module_base import ModuleBase
from .printer import print_module
from .values import resolve_attrs

__all__ = ["Module", "resolve_attrs"]


class Module(ModuleBase):
    """A translation unit: what one ``.ll`` file holds."""

    def __str__(self) -> str:
        return print_module(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Module):
            return NotImplemented
        return module_key(self) == module_key(other)

    __hash__ = object.__hash__
