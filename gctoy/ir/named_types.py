"""Named type definitions: ``%T = type { ... }``, ``%T = type opaque`` and ``%Env = type ptr``.

A named struct is a type of its own, printed by name.  A name given to any other type
(``%Env = type ptr``, ``%Ref = type i8 addrspace(1)*``) stands for that type itself, as in LLVM:
uses print the type, and the definition is not printed.
"""

from __future__ import annotations

from .type_parser import TypeParser
from .types import StructType


class NamedTypeDefinitions(TypeParser):
    """The parser's reading of ``%T = type ...`` lines (a base of the module parser)."""

    def named_type_def(self) -> None:
        """Read one ``%T = type ...`` definition."""
        tok = self.next()
        name = self.local_name(tok)
        self.expect("=")
        self.expect("type")
        if name in self.defined_types:
            raise self.err(f"redefinition of type named '%{name}'", tok[2])
        self.defined_types.add(name)
        used_before = name in self.module.types
        if self.accept("opaque"):
            self.type_offsets[name] = tok[2]
            self.module.named_type(name).body.elements = None
            return
        if not (self.at("{") or (self.at("<") and self.peek(1)[1] == "{")):
            # ``%Env = type ptr``: a name for a non-struct type stands for that type itself
            ty = self.type_()
            if used_before or name in self.module.types:
                raise self.err(
                    f"forward references to non-struct type '%{name}' (it names '{ty}' and is "
                    "used before this definition: define it before its first use)",
                    tok[2],
                )
            self.type_aliases[name] = ty
            return
        self.type_offsets[name] = tok[2]
        ref = self.module.named_type(name)
        ty = self.type_()
        assert isinstance(ty, StructType)  # it began with '{' or '<{'
        ref.body.elements, ref.body.packed = ty.elements, ty.packed
