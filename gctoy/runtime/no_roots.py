"""The same program collected twice: once with its stack map, once by a collector told nothing.

Chapter 00's first demonstration. The collector without a stack map still stops at the same calls,
but finds no roots: it copies nothing, the old space is poisoned (``0xDEADBEEFDEADBEEF`` in every
word, as after every collection), and the program goes on with addresses of a space that no longer
holds its objects. :func:`with_and_without_stack_map` runs both and says what each printed or where
it failed.
"""

from __future__ import annotations

from dataclasses import dataclass

from gctoy.errors import GCToyError
from gctoy.runtime.run import StackMapRoots

__all__ = ["NoRoots", "Outcome", "with_and_without_stack_map"]


class NoRoots(StackMapRoots):
    """Collect where the stack map allows, but report no roots: what a collector without the compiler's help knows."""

    design = "no stack map"

    def find(self, machine):
        return [], []

    def all_slots(self, machine):
        return []


@dataclass(frozen=True)
class Outcome:
    label: str
    printed: tuple[int, ...]
    result: int | None
    collections: int
    objects_copied: int
    error: str | None

    def describe(self) -> str:
        if self.error:
            return f"{self.label}: failed after printing {list(self.printed)}: {self.error}"
        return (
            f"{self.label}: printed {list(self.printed)}, returned {self.result}; {self.collections} "
            f"collection(s) copied {self.objects_copied} object(s)"
        )


def _run(module, roots_kind: str, max_instructions: int) -> Outcome:
    from gctoy.runtime.run import Runtime, load_compiled, roots_for

    loaded = load_compiled(module)
    roots = roots_for(loaded)
    label = "with the stack map"
    if roots_kind == "none":
        assert isinstance(roots, StackMapRoots)  # the program has statepoints
        roots = NoRoots(roots.sites)
        label = "without a stack map"
    with Runtime(loaded, gc="semispace", stress=False, verify=False, roots=roots) as runtime:
        try:
            done = runtime.run("main", max_instructions=max_instructions, max_seconds=10.0)
            return Outcome(
                label, tuple(done.printed), done.result, done.stats.collections, done.stats.gc.objects_copied, None
            )
        except GCToyError as error:
            first = str(error).splitlines()[0]
            return Outcome(
                label, tuple(runtime.printed), None, runtime.stats.collections, runtime.stats.gc.objects_copied, first
            )


def with_and_without_stack_map(program, max_instructions: int = 1_000_000) -> tuple[Outcome, Outcome]:
    """Run ``program`` (IR text or a Module; RS4GC runs first if it has no statepoints) both ways."""
    from gctoy.runtime.trace import prepare_module

    with_map = _run(prepare_module(program), "stack map", max_instructions)
    without = _run(prepare_module(program), "none", max_instructions)
    return with_map, without
