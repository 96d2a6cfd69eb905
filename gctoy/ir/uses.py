"""Use lists: every value knows the instructions that read it, and how many operand slots each fills.

The model is LLVM's (``Value::uses()``, ``replaceAllUsesWith``) in a form that suits Python lists:
a value keeps ``_users``, an insertion-ordered ``{instruction: slots}`` map, and an instruction's
operand containers (``ops``, ``args``, ``incoming``, ``cases``, ``bundles``) are
:class:`OperandList` objects that update that map whenever an item is stored, replaced or
removed.  Only instructions that sit in a block (``parent`` set) are counted, so a use list
names exactly what a scan of the function would find::

    %x = add i64 %a, %b        %a._users == {%x: 1, %y: 2}
    %y = mul i64 %a, %a        %b._users == {%x: 1}

A block's :class:`InstructionList` sets an instruction's ``parent`` when it goes in and clears it
when it comes out, so taking an instruction out of a block (``del``, ``remove``, ``pop``) drops
its uses as ``erase`` does.  Constants other than globals compare by content and are shared, so
they keep no use list.
This module sits below :mod:`gctoy.ir.values`: it knows values only through these attributes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

#: How a container item holds operands: the item itself, a tuple of values, or a bundle's inputs.
Unpack = Callable[[Any], Iterable[Any]]


def tracks_uses(value: Any) -> bool:
    """True for the values that keep a use list (everything but content-compared constants)."""
    return getattr(value, "_tracks_uses", False)


def add_use(value: Any, user: Any, count: int = 1) -> None:
    """Record that ``user`` reads ``value`` in ``count`` more operand slots."""
    if not getattr(value, "_tracks_uses", False):
        return
    users = value.__dict__.get("_users")
    if users is None:
        users = value.__dict__["_users"] = {}
    users[user] = users.get(user, 0) + count


def drop_use(value: Any, user: Any, count: int = 1) -> None:
    """Forget ``count`` operand slots of ``user`` that read ``value``."""
    if not getattr(value, "_tracks_uses", False):
        return
    users = value.__dict__.get("_users")
    if not users or user not in users:
        return
    left = users[user] - count
    if left > 0:
        users[user] = left
    else:
        del users[user]


def users_map(value: Any) -> dict[Any, int]:
    """``{instruction: operand slots}`` of the instructions in blocks that read ``value``."""
    return value.__dict__.get("_users") or {} if hasattr(value, "__dict__") else {}


def itself(item: Any) -> Iterable[Any]:
    """An item that is one operand."""
    return (item,)


def pair(item: Any) -> Iterable[Any]:
    """An item that is a tuple of operands (a phi's ``(value, block)``, a switch's ``(case, block)``)."""
    return item


def bundle_inputs(item: Any) -> Iterable[Any]:
    """An operand bundle: its inputs are the operands."""
    return item.inputs


class OperandList(list):
    """A list of operands (or of items holding operands) that keeps its owner's uses counted.

    Reading is a plain list read; every write goes through the owner, which counts the values it
    gains and loses while it sits in a block (``owner.parent`` set)."""

    __slots__ = ("owner", "unpack")

    def __init__(self, owner: Any, unpack: Unpack, items: Iterable[Any] = ()):
        super().__init__(items)
        self.owner = owner
        self.unpack = unpack

    def _count(self, items: Iterable[Any], sign: int) -> None:
        owner = self.owner
        if owner.__dict__.get("parent") is None:
            return
        step = add_use if sign > 0 else drop_use
        for item in items:
            for v in self.unpack(item):
                step(v, owner)

    def __setitem__(self, index, item) -> None:
        old = self[index]
        if isinstance(index, slice):
            item = list(item)
            super().__setitem__(index, item)
            self._count(old, -1)
            self._count(item, +1)
        else:
            super().__setitem__(index, item)
            self._count((old,), -1)
            self._count((item,), +1)

    def __delitem__(self, index) -> None:
        old = self[index]
        super().__delitem__(index)
        self._count(old if isinstance(index, slice) else (old,), -1)

    def __iadd__(self, items):  # type: ignore[misc]  # += takes any iterable, as list's own does
        self.extend(items)
        return self

    def __imul__(self, n):  # type: ignore[misc]  # *= keeps the list's type and its use counts
        extra = list(self) * (n - 1) if n > 0 else []
        if n <= 0:
            self.clear()
        else:
            self.extend(extra)
        return self

    def append(self, item) -> None:
        super().append(item)
        self._count((item,), +1)

    def extend(self, items) -> None:
        items = list(items)
        super().extend(items)
        self._count(items, +1)

    def insert(self, index, item) -> None:
        super().insert(index, item)
        self._count((item,), +1)

    def pop(self, index=-1):
        item = super().pop(index)
        self._count((item,), -1)
        return item

    def remove(self, item) -> None:
        super().remove(item)
        self._count((item,), -1)

    def clear(self) -> None:
        old = list(self)
        super().clear()
        self._count(old, -1)

    def values(self) -> Iterator[Any]:
        """Every operand the items hold, in order."""
        for item in self:
            yield from self.unpack(item)

    def __copy__(self) -> list:
        return list(self)

    def __reduce_ex__(self, protocol):  # a copy or a pickle is a plain list of the items
        return (list, (list(self),))


class WriteHook:
    """An attribute kept in the instance's ``__dict__`` under its own name, whose writes go through
    :meth:`__set__` (subclasses count uses there).

    It has no ``__get__``: Python then reads the attribute straight from the instance dictionary,
    as fast as a plain attribute (a ``property`` getter costs a Python call on every read, and
    operands are read everywhere).  The instance must set the attribute in its ``__init__``.
    """

    def __init__(self, name: str, doc: str = "") -> None:
        self.name = name
        self.__doc__ = doc

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


class _OperandListAttribute(WriteHook):
    def __init__(self, name: str, unpack: Unpack, doc: str) -> None:
        super().__init__(name, doc)
        self.unpack = unpack

    def __set__(self, obj: Any, items: Iterable[Any]) -> None:
        d = obj.__dict__
        old = d.get(self.name)
        new = OperandList(obj, self.unpack, items)
        d[self.name] = new
        if old is not None:
            new._count(old, -1)
        new._count(new, +1)


class _OperandSlotAttribute(WriteHook):
    def __set__(self, obj: Any, value: Any) -> None:
        d = obj.__dict__
        old = d.get(self.name)
        d[self.name] = value
        if d.get("parent") is not None:
            drop_use(old, obj)
            add_use(value, obj)


def operand_list(name: str, unpack: Unpack = itself, doc: str = "") -> Any:
    """An attribute whose value is an :class:`OperandList` kept in ``__dict__[name]``."""
    return _OperandListAttribute(name, unpack, doc)


def operand_slot(name: str, doc: str = "") -> Any:
    """An attribute holding one operand in ``__dict__[name]``, counted in the owner's uses."""
    return _OperandSlotAttribute(name, doc)


class InstructionList(list):
    """A block's instructions: an instruction put in sets its ``parent`` (its operands count as
    uses); one taken out (still pointing at this block) gets ``parent = None`` (its uses go)."""

    __slots__ = ("block",)

    def __init__(self, block: Any, items: Iterable[Any] = ()):
        super().__init__(items)
        self.block = block

    def _enter(self, items) -> None:
        for inst in items:
            inst.parent = self.block

    def _leave(self, items) -> None:
        for inst in items:
            if inst.parent is self.block:
                inst.parent = None

    def __setitem__(self, index, item) -> None:
        old = self[index]
        item = list(item) if isinstance(index, slice) else item
        super().__setitem__(index, item)
        self._leave(old if isinstance(index, slice) else (old,))
        self._enter(item if isinstance(index, slice) else (item,))

    def __delitem__(self, index) -> None:
        old = self[index]
        super().__delitem__(index)
        self._leave(old if isinstance(index, slice) else (old,))

    def __iadd__(self, items):  # type: ignore[misc]  # += takes any iterable, as list's own does
        self.extend(items)
        return self

    def append(self, inst) -> None:
        super().append(inst)
        inst.parent = self.block

    def extend(self, items) -> None:
        items = list(items)
        super().extend(items)
        self._enter(items)

    def insert(self, index, inst) -> None:
        super().insert(index, inst)
        inst.parent = self.block

    def pop(self, index=-1):
        inst = super().pop(index)
        self._leave((inst,))
        return inst

    def remove(self, inst) -> None:
        super().remove(inst)  # by identity: instructions have no equality of their own
        self._leave((inst,))

    def clear(self) -> None:
        old = list(self)
        super().clear()
        self._leave(old)

    def __copy__(self) -> list:
        return list(self)

    def __reduce_ex__(self, protocol):
        return (list, (list(self),))
