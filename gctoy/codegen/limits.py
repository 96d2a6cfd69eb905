"""The sizes gctoy's code generators accept, checked before anything of that size is built.

* ``MAX_FRAME_BYTES`` (1 MiB, the emulated machine's whole stack): the locals of one
  function, allocas included, on either target.
* ``MAX_PATCH_BYTES`` (4096): the ``"statepoint-num-patch-bytes"`` / ``num patch bytes``
  operand of one ``gc.statepoint`` (each byte becomes a ``nop`` in the code).
* ``MAX_GC_ALLOCA_FIELDS_X86_32`` (4096): GC pointer fields in the allocas of one x86-32 function
  (each is an untracked local of the GC info that the prolog zeroes with two instructions).
* ``MAX_DATA_BYTES`` (1 MiB) and ``MAX_CODE_BYTES`` (2 MiB): the image's data (every global,
  laid out) and code, the room the image has at its fixed addresses.
"""

from __future__ import annotations

from ..emu.image import CODE_LIMIT, DATA_LIMIT
from ..ir import instructions as I
from ..ir.types import IntType
from ..ir.values import ConstantInt
from .codegen_error import CodegenError, located

MAX_FRAME_BYTES = 1 << 20
MAX_PATCH_BYTES = 4096
MAX_GC_ALLOCA_FIELDS_X86_32 = 4096
MAX_DATA_BYTES = DATA_LIMIT
MAX_CODE_BYTES = CODE_LIMIT


def alloca_elements(a: I.Alloca, function_name: str, element_size: int) -> int:
    """The element count of a fixed-size alloca (of elements of ``element_size`` bytes), refused when its
    object would exceed the frame limit."""
    count = a.count
    if count is not None and not isinstance(count, ConstantInt):
        raise located(
            CodegenError(f"alloca %{a.name} has a variable element count; only fixed frames are supported"), a
        )
    if count is None:
        n = 1
    else:
        assert isinstance(count.type, IntType)  # the parser gives an integer constant an integer type
        n = count.value & ((1 << count.type.bits) - 1)
    size = n * element_size
    if size > MAX_FRAME_BYTES:
        raise located(
            CodegenError(
                f"alloca %{a.name} in @{function_name} takes {size} bytes, more than the "
                f"frame limit of {MAX_FRAME_BYTES} bytes"
            ),
            a,
        )
    return n


def check_frame_size(size: int, function_name: str) -> None:
    """Refuse a frame above MAX_FRAME_BYTES."""
    if size > MAX_FRAME_BYTES:
        raise CodegenError(
            f"the frame of @{function_name} takes {size} bytes, more than the frame limit of {MAX_FRAME_BYTES} bytes"
        )


def check_gc_alloca_fields(count: int, a: I.Alloca, function_name: str) -> None:
    """Refuse an x86-32 function whose allocas hold more than MAX_GC_ALLOCA_FIELDS_X86_32 GC pointers."""
    if count > MAX_GC_ALLOCA_FIELDS_X86_32:
        raise located(
            CodegenError(
                f"the allocas of @{function_name} hold {count} GC pointers (up to %{a.name}); "
                f"at most {MAX_GC_ALLOCA_FIELDS_X86_32} are supported on x86-32"
            ),
            a,
        )


def check_patch_bytes(n: int, where: str) -> None:
    """Refuse a statepoint asking for more than MAX_PATCH_BYTES patchable bytes."""
    if n < 0 or n > MAX_PATCH_BYTES:
        raise CodegenError(f"{where}: gc.statepoint asks for {n} patch bytes; at most {MAX_PATCH_BYTES} are supported")


__all__ = [
    "MAX_CODE_BYTES",
    "MAX_DATA_BYTES",
    "MAX_FRAME_BYTES",
    "MAX_GC_ALLOCA_FIELDS_X86_32",
    "MAX_PATCH_BYTES",
    "alloca_elements",
    "check_frame_size",
    "check_gc_alloca_fields",
    "check_patch_bytes",
]
