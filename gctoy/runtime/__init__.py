"""The guest runtime: heap, Cheney copying collector, stack walker, ELF loader, runner."""

from gctoy.runtime.collector import Collection, Collector, GCStats, read_slot, write_slot
from gctoy.runtime.elfload import LoadedObject, ObjectLoadError, load_object
from gctoy.runtime.heap import POISON_WORD, Heap, HeapError, OutOfMemory
from gctoy.runtime.run import RUNTIME_ENTRIES, RootFinder, RunResult, RunStats, Runtime, StackMapRoots, run_object
from gctoy.runtime.shadowstack import ShadowStackEntry, ShadowStackRoots, shadow_stack_chain, visit_gc_roots
from gctoy.runtime.stackwalk import Frame, SiteTable, StackWalkError, roots_of, walk
from gctoy.runtime.verify_heap import HeapCorruption, heap_problems, verify_heap

__all__ = [
    "Collection",
    "Collector",
    "Frame",
    "GCStats",
    "Heap",
    "HeapCorruption",
    "HeapError",
    "LoadedObject",
    "ObjectLoadError",
    "OutOfMemory",
    "POISON_WORD",
    "RUNTIME_ENTRIES",
    "RootFinder",
    "RunResult",
    "RunStats",
    "Runtime",
    "ShadowStackEntry",
    "ShadowStackRoots",
    "SiteTable",
    "StackMapRoots",
    "StackWalkError",
    "heap_problems",
    "load_object",
    "read_slot",
    "roots_of",
    "run_object",
    "shadow_stack_chain",
    "verify_heap",
    "visit_gc_roots",
    "walk",
    "write_slot",
]
