"""Attributes in the order LLVM keeps them, and function attributes as numbered groups.

LLVM stores every attribute list sorted: plain (enum) attributes first, then those holding a
type (``sret(T)``), then those holding an integer (``align 8``, ``allocsize(0)``), then the
string attributes by key.  Within a kind the order is that of the attribute's *definition name*
in LLVM's ``Attributes.td`` (``optnone`` is ``OptimizeNone``, after ``OptimizeForSize``:
``optsize optnone``), compared as bytes (capitals first: ``SExt`` before ``SafeStack``).

When it prints a module, LLVM writes the function attributes of every function and call as a
reference ``#N`` to an ``attributes #N = { ... }`` group: the functions' sets first, numbered in
module order, then the calls' sets in the order the calls are printed; equal sets share a group.
"""
from __future__ import annotations

from .values import Attribute

# Attributes.td definition names where they are not the spelling with its first letter raised.
_RECORD = {
    "alwaysinline": "AlwaysInline", "argmemonly": "ArgMemOnly", "disable_sanitizer_instrumentation":
    "DisableSanitizerInstrumentation", "immarg": "ImmArg", "inaccessiblememonly": "InaccessibleMemOnly",
    "inaccessiblemem_or_argmemonly": "InaccessibleMemOrArgMemOnly", "inlinehint": "InlineHint",
    "inreg": "InReg", "jumptable": "JumpTable", "minsize": "MinSize", "mustprogress": "MustProgress",
    "noalias": "NoAlias", "nobuiltin": "NoBuiltin", "nocallback": "NoCallback", "nocapture": "NoCapture",
    "nocf_check": "NoCfCheck", "noduplicate": "NoDuplicate", "nofree": "NoFree",
    "noimplicitfloat": "NoImplicitFloat", "noinline": "NoInline", "nomerge": "NoMerge",
    "nonlazybind": "NonLazyBind", "nonnull": "NonNull", "noprofile": "NoProfile", "norecurse": "NoRecurse",
    "noredzone": "NoRedZone", "noreturn": "NoReturn", "nosync": "NoSync", "noundef": "NoUndef",
    "nounwind": "NoUnwind", "nosanitize_coverage": "NoSanitizeCoverage",
    "null_pointer_is_valid": "NullPointerIsValid", "optforfuzzing": "OptForFuzzing", "optnone": "OptimizeNone",
    "optsize": "OptimizeForSize", "readnone": "ReadNone", "readonly": "ReadOnly", "returned": "Returned",
    "returns_twice": "ReturnsTwice", "safestack": "SafeStack", "sanitize_address": "SanitizeAddress",
    "sanitize_hwaddress": "SanitizeHWAddress", "sanitize_memory": "SanitizeMemory",
    "sanitize_memtag": "SanitizeMemTag", "sanitize_thread": "SanitizeThread",
    "shadowcallstack": "ShadowCallStack", "signext": "SExt", "speculatable": "Speculatable",
    "speculative_load_hardening": "SpeculativeLoadHardening", "ssp": "StackProtect",
    "sspreq": "StackProtectReq", "sspstrong": "StackProtectStrong", "strictfp": "StrictFP",
    "swiftasync": "SwiftAsync", "swifterror": "SwiftError", "swiftself": "SwiftSelf", "uwtable": "UWTable",
    "willreturn": "WillReturn", "writeonly": "WriteOnly", "zeroext": "ZExt", "allocptr": "AllocatedPointer",
    "presplitcoroutine": "PresplitCoroutine", "dead_on_unwind": "DeadOnUnwind",
    "hybrid_patchable": "HybridPatchable", "sanitize_numerical_stability": "SanitizeNumericalStability",
    "coro_only_destroy_when_complete": "CoroDestroyOnlyWhenComplete",
    "nocreateundeforpoison": "NoCreateUndefOrPoison",
    # holding a type
    "byref": "ByRef", "byval": "ByVal", "elementtype": "ElementType", "inalloca": "InAlloca",
    "preallocated": "Preallocated", "sret": "StructRet",
    # holding an integer
    "align": "Alignment", "allockind": "AllocKind", "allocsize": "AllocSize",
    "dereferenceable": "Dereferenceable", "dereferenceable_or_null": "DereferenceableOrNull",
    "memory": "Memory", "nofpclass": "NoFPClass", "alignstack": "StackAlignment",
    "vscale_range": "VScaleRange",
}
_TYPE_KINDS = frozenset({"byref", "byval", "elementtype", "inalloca", "preallocated", "sret"})
_INT_KINDS = frozenset({"align", "allockind", "allocsize", "dereferenceable", "dereferenceable_or_null",
                        "memory", "nofpclass", "alignstack", "vscale_range"})
_RANGE_KINDS = frozenset({"range", "initializes", "captures"})


def attr_sort_key(a: Attribute, llvm19: bool = False) -> tuple:
    """Where LLVM puts ``a`` in a sorted attribute list (``llvm19``: ``uwtable`` holds an integer)."""
    if a.style == "group":
        return (5, a.kind.rjust(12), "")
    if a.style == "string":
        return (4, a.kind, "" if a.value is None else str(a.value))
    if a.kind in _TYPE_KINDS:
        rank = 1
    elif a.kind in _INT_KINDS or (llvm19 and a.kind == "uwtable"):
        rank = 2
    elif a.kind in _RANGE_KINDS:
        rank = 3
    else:
        rank = 0
    record = _RECORD.get(a.kind) or a.kind[:1].upper() + a.kind[1:]
    return (rank, record, "")


def sort_attrs(attrs, llvm19: bool = False) -> tuple[Attribute, ...]:
    """The attributes in LLVM's order, each kind once (a later duplicate is dropped)."""
    seen: set = set()
    out = []
    for a in attrs:
        key = (a.style == "string", a.kind)
        if key in seen and a.style != "group":
            continue
        seen.add(key)
        out.append(a)
    return tuple(sorted(out, key=lambda a: attr_sort_key(a, llvm19)))


def render_in_group(a: Attribute, opaque: bool) -> str:
    """An attribute inside ``attributes #N = { ... }`` (``alignstack=16`` there, as LLVM writes it)."""
    if a.kind == "alignstack" and a.style != "string" and a.value is not None:
        return f"alignstack={a.value}"
    return a.render(opaque)


class AttributeSlots:
    """Numbers of the function-attribute sets of one printed module, in LLVM's order."""

    def __init__(self, llvm19: bool):
        self.llvm19 = llvm19
        self.numbers: dict[tuple, int] = {}
        self.sets: list[tuple[Attribute, ...]] = []

    def slot(self, attrs: tuple[Attribute, ...]) -> int | None:
        """The group number of this set (a new one if unseen); None for an empty set.

        A reference to an undefined group is dropped, as LLVM drops it when reading."""
        canon = sort_attrs([a for a in attrs if a.style != "group"], self.llvm19)
        if not canon:
            return None
        n = self.numbers.get(canon)
        if n is None:
            n = self.numbers[canon] = len(self.sets)
            self.sets.append(canon)
        return n
