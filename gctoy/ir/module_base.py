"""The module's contents: named types, globals, functions, attribute groups, metadata.

Printing and comparing a module live above this, in :mod:`gctoy.ir.module`."""

from __future__ import annotations

from typing import Iterator

from .types import FunctionType, NamedStructType, StructBody
from .values import (
    AttributeGroup,
    Function,
    GlobalValue,
    GlobalVariable,
    MetadataDef,
    ModuleHeader,
    NamedType,
)


class ModuleBase:
    """A translation unit's contents (what one ``.ll`` file holds), without printing or comparing."""

    filename: str  # the file it was read from, set by the parser (messages read it with getattr)

    def __init__(self) -> None:
        self.header = ModuleHeader()
        self.types: dict[str, NamedType] = {}
        self.globals: list[GlobalVariable] = []
        self.functions: list[Function] = []
        #: name -> global or function, checked on use (a renamed or removed one is looked up again)
        self._by_name: dict[str, GlobalValue] = {}
        self.attribute_groups: dict[str, AttributeGroup] = {}
        self.metadata: list[MetadataDef] = []
        #: Notes left by the parser (e.g. declarations it added), one string each.
        self.notes: list[str] = []

    # -- lookup -----------------------------------------------------------
    def _lookup(self, name: str, kind: type):
        g = self._by_name.get(name)
        if g is not None and isinstance(g, kind) and g.name == name and getattr(g, "_in_module", None) is self:
            return g
        return None

    def get_function(self, name: str) -> Function | None:
        """The function called ``name`` (without ``@``), or None."""
        return self._lookup(name, Function)

    def get_global(self, name: str) -> GlobalVariable | None:
        """The global variable called ``name``, or None."""
        return self._lookup(name, GlobalVariable)

    def rename(self, g: GlobalValue, name: str) -> None:
        """Give a global or function a new name (keeps the name index right)."""
        if self._by_name.get(g.name) is g:
            del self._by_name[g.name]
        g.name = name
        self._by_name[name] = g

    def remove_function(self, fn: Function) -> None:
        """Take a function out of the module."""
        self.functions.remove(fn)
        fn._in_module = None

    def named_type(self, name: str) -> NamedStructType:
        """A reference to ``%name``, creating an opaque body if it is new."""
        if name not in self.types:
            self.types[name] = NamedType(name, StructBody(None))
        return self.types[name].ref

    def definitions(self) -> Iterator[Function]:
        """Functions that have a body."""
        return (f for f in self.functions if not f.is_declaration)

    # -- building ---------------------------------------------------------
    def add_function(self, fn: Function) -> Function:
        """Add a function (its name must be new)."""
        if self.get_function(fn.name) is not None or self.get_global(fn.name) is not None:
            raise ValueError(f"redefinition of '@{fn.name}'")
        fn.module = self
        fn._in_module = self
        self._by_name[fn.name] = fn
        self.functions.append(fn)
        return fn

    def add_global(self, gv: GlobalVariable) -> GlobalVariable:
        """Add a global variable (its name must be new)."""
        if self.get_function(gv.name) is not None or self.get_global(gv.name) is not None:
            raise ValueError(f"redefinition of '@{gv.name}'")
        gv.module = self
        gv._in_module = self
        self._by_name[gv.name] = gv
        self.globals.append(gv)
        return gv

    def get_or_declare(self, name: str, ftype: FunctionType, **kw) -> Function:
        """The function ``name``, declared with ``ftype`` if it does not exist yet."""
        fn = self.get_function(name)
        if fn is None:
            fn = self.add_function(Function(name, ftype, **kw))
        return fn
