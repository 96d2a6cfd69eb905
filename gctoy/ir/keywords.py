"""Keyword sets of LLVM's textual IR that the parser and printer share."""

LINKAGES = frozenset({
    "private", "internal", "available_externally", "linkonce", "weak", "common", "appending",
    "extern_weak", "linkonce_odr", "weak_odr", "external",
})

# Words that may precede a global's or function's type, printed in source order.
GLOBAL_QUALIFIERS = frozenset({
    "dso_local", "dso_preemptable", "default", "hidden", "protected", "dllimport", "dllexport",
    "unnamed_addr", "local_unnamed_addr", "externally_initialized",
})

CALLING_CONVENTIONS = frozenset({
    "ccc", "fastcc", "coldcc", "webkit_jscc", "anyregcc", "preserve_mostcc", "preserve_allcc",
    "cxx_fast_tlscc", "swiftcc", "swifttailcc", "tailcc", "cfguard_checkcc", "ghccc",
    "x86_stdcallcc", "x86_fastcallcc", "x86_thiscallcc", "x86_vectorcallcc", "x86_regcallcc",
    "x86_64_sysvcc", "win64cc", "intel_ocl_bicc",
})



def is_calling_convention(word: str) -> bool:
    """Whether ``word`` starts a calling convention: a name, ``cc`` (a number follows) or ``ccN``."""
    return word in CALLING_CONVENTIONS or word == "cc" or (word.startswith("cc") and word[2:].isdigit())


#: calling conventions LLVM prints by name, by number
CC_NAMES = {"0": "ccc", "8": "fastcc", "9": "coldcc", "10": "ghccc", "12": "webkit_jscc", "13": "anyregcc",
             "14": "preserve_mostcc", "15": "preserve_allcc", "16": "swiftcc", "17": "cxx_fast_tlscc",
             "18": "tailcc", "19": "cfguard_checkcc", "20": "swifttailcc", "64": "x86_stdcallcc",
             "65": "x86_fastcallcc", "70": "x86_thiscallcc", "77": "intel_ocl_bicc", "78": "x86_64_sysvcc",
             "79": "win64cc", "80": "x86_vectorcallcc", "92": "x86_regcallcc"}
# Attributes written as a bare word.
PLAIN_ATTRIBUTES = frozenset({
    "alwaysinline", "argmemonly", "builtin", "cold", "convergent", "disable_sanitizer_instrumentation",
    "hot", "immarg", "inaccessiblememonly", "inaccessiblemem_or_argmemonly", "inlinehint", "inreg",
    "jumptable", "minsize", "mustprogress", "naked", "nest", "noalias", "nobuiltin", "nocallback",
    "nocapture", "nocf_check", "noduplicate", "nofree", "noimplicitfloat", "noinline", "nomerge",
    "nonlazybind", "nonnull", "noprofile", "norecurse", "noredzone", "noreturn", "nosync", "noundef",
    "nounwind", "nosanitize_coverage", "null_pointer_is_valid", "optforfuzzing", "optnone", "optsize",
    "readnone", "readonly", "returned", "returns_twice", "safestack", "sanitize_address",
    "sanitize_hwaddress", "sanitize_memory", "sanitize_memtag", "sanitize_thread", "shadowcallstack",
    "signext", "speculatable", "speculative_load_hardening", "ssp", "sspreq", "sspstrong",
    "strictfp", "swiftasync", "swifterror", "swiftself", "uwtable", "willreturn", "writeonly",
    "zeroext", "nocallback", "allocptr", "presplitcoroutine", "writable", "dead_on_unwind",
    "nocreateundeforpoison", "hybrid_patchable", "sanitize_numerical_stability", "coro_only_destroy_when_complete",
})

# Attributes written as ``kind(value)``; the value is an integer or a type.
PAREN_ATTRIBUTES = frozenset({
    "dereferenceable", "dereferenceable_or_null", "allocsize", "alignstack", "vscale_range",
    "byval", "byref", "sret", "inalloca", "preallocated", "elementtype", "uwtable", "align",
    "memory", "initializes", "range", "nofpclass", "allockind", "captures",
})
TYPE_ATTRIBUTES = frozenset({"byval", "byref", "sret", "inalloca", "preallocated", "elementtype"})

# Words that start a constant value (so they are not attributes).
VALUE_WORDS = frozenset({
    "null", "undef", "poison", "zeroinitializer", "none", "true", "false",
    "bitcast", "addrspacecast", "ptrtoint", "inttoptr", "getelementptr",
})

TAIL_KINDS = frozenset({"tail", "musttail", "notail"})
WRAP_FLAGS = frozenset({"nsw", "nuw", "exact"})
