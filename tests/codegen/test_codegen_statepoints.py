"""Statepoints lowered by gctoy.codegen: the stack map parses and prints, names the slots that really
hold the live GC pointers at the call, patch bytes become exact NOPs, and a moving collector works."""

from __future__ import annotations

import pytest

from gctoy.codegen import compile_module
from gctoy.emu import RETURN_TRAP, Machine, disassemble, nops
from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.stackmap import LocationKind, emit, format_stackmap, parse

HEADER = """
declare void @do_safepoint()
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @print_i64(i64)
"""

# Two objects, a deopt bundle, a statepoint with patch bytes, loads after the safepoints.
OBJECTS = HEADER + """
define i64 @main() gc "statepoint-example" {
entry:
  %a8 = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)
  %a = bitcast i8 addrspace(1)* %a8 to i64 addrspace(1)*
  %b8 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %b = bitcast i8 addrspace(1)* %b8 to i64 addrspace(1)*
  %d = getelementptr i64, i64 addrspace(1)* %a, i64 2
  store i64 11, i64 addrspace(1)* %a
  store i64 33, i64 addrspace(1)* %d
  store i64 22, i64 addrspace(1)* %b
  call void @do_safepoint() [ "deopt"(i64 7, i64 5000000000, i64 -1) ]
  call void @do_safepoint() "statepoint-num-patch-bytes"="11"
  %va = load i64, i64 addrspace(1)* %a
  %vd = load i64, i64 addrspace(1)* %d
  %vb = load i64, i64 addrspace(1)* %b
  call void @print_i64(i64 %va)
  call void @print_i64(i64 %vd)
  call void @print_i64(i64 %vb)
  %ai = ptrtoint i64 addrspace(1)* %a to i64
  ret i64 %ai
}
"""

# A derived pointer chosen by a phi cannot be rematerialised: it is relocated as (a, d).
DERIVED = HEADER + """
define i64 @main() gc "statepoint-example" {
entry:
  %a8 = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)
  %a = bitcast i8 addrspace(1)* %a8 to i64 addrspace(1)*
  %ai = ptrtoint i64 addrspace(1)* %a to i64
  %c = icmp eq i64 %ai, 0
  br i1 %c, label %left, label %right
left:
  %d1 = getelementptr i64, i64 addrspace(1)* %a, i64 1
  br label %join
right:
  %d3 = getelementptr i64, i64 addrspace(1)* %a, i64 3
  br label %join
join:
  %d = phi i64 addrspace(1)* [ %d1, %left ], [ %d3, %right ]
  store i64 44, i64 addrspace(1)* %d
  store i64 55, i64 addrspace(1)* %a
  call void @do_safepoint()
  %vd = load i64, i64 addrspace(1)* %d
  %va = load i64, i64 addrspace(1)* %a
  call void @print_i64(i64 %vd)
  call void @print_i64(i64 %va)
  %di = ptrtoint i64 addrspace(1)* %d to i64
  %ai2 = ptrtoint i64 addrspace(1)* %a to i64
  %off = sub i64 %di, %ai2
  call void @print_i64(i64 %off)
  ret i64 %ai2
}
"""

MOVE = 0x1000


def lowered(text: str):
    module = parse_module(text)
    run(module, "rewrite-statepoints-for-gc")
    return compile_module(module)


class World:
    """A bump allocator and a `do_safepoint` that inspects (and optionally moves) the recorded slots."""

    def __init__(self, compiled, move: bool = False) -> None:
        self.compiled = compiled
        self.machine = Machine(compiled.image, heap_size=0x10000)
        self.bump = self.machine.heap_base
        self.allocated: list[int] = []
        self.printed: list[int] = []
        self.safepoints: list[dict[int, int]] = []
        self.records_seen = []
        self.move = move
        m = self.machine
        m.register_native("gc_alloc", self.gc_alloc)
        m.register_native("print_i64", self.printed.append)
        m.register_native("do_safepoint", self.do_safepoint)

    def gc_alloc(self, nfields: int, ptrmask: int) -> int:
        obj = self.bump + 8  # one header word before field 0
        self.bump += 8 * (nfields + 1)
        self.allocated.append(obj)
        return obj

    def record_here(self):
        """The record of the call whose return address is at [rsp] (we are in a native stub)."""
        m = self.machine
        ret = m.read_u64(m.sp)
        for fn, records in self.compiled.stackmap.records_by_function():
            for rec in records:
                if fn.address + rec.instruction_offset == ret:
                    return fn, rec, m.sp + 8
        raise AssertionError(f"no stack map record for return address {ret:#x}")

    def do_safepoint(self) -> None:
        m = self.machine
        fn, rec, caller_sp = self.record_here()
        # The recorded stack size leads from the call site's rsp to the caller's return address.
        assert m.read_u64(caller_sp + fn.stack_size) == RETURN_TRAP
        ndeopt = rec.locations[2].offset
        pairs = rec.locations[3 + ndeopt:]
        slots = {}
        for loc in pairs:
            assert loc.kind is LocationKind.INDIRECT and loc.dwarf_reg == 7 and loc.size == 8
            slots[loc.offset] = m.read_u64(caller_sp + loc.offset)
        self.safepoints.append(slots)
        self.records_seen.append(rec)
        if self.move:
            heap = m.heap_base
            used = m.read(heap, self.bump - heap)
            m.write(heap + MOVE, used)
            m.write(heap, b"\xdd" * len(used))  # poison the old copies
            self.bump += MOVE
            for off, value in slots.items():
                m.write_u64(caller_sp + off, value + MOVE)

    def run(self) -> int:
        return self.machine.call("main", max_instructions=1_000_000)


@pytest.mark.parametrize("text", [OBJECTS, DERIVED], ids=["objects", "derived"])
def test_stackmap_parses_prints_and_round_trips(text: str) -> None:
    compiled = lowered(text)
    data = compiled.image.sections[".llvm_stackmaps"]
    sm = parse(data)
    assert sm == compiled.stackmap
    assert emit(sm) == data
    listing = format_stackmap(sm)
    assert listing.startswith("LLVM StackMap Version: 3\n")
    assert f"Function address: {compiled.image.address_of('main')}" in listing


@pytest.mark.parametrize("text", [OBJECTS, DERIVED], ids=["objects", "derived"])
def test_every_record_follows_a_call_or_its_patch_bytes(text: str) -> None:
    compiled = lowered(text)
    image = compiled.image
    code = image.code
    for fn, records in compiled.stackmap.records_by_function():
        for rec in records:
            ret = fn.address + rec.instruction_offset
            before = [i for i in disassemble(code, image.code_base, "x86_64") if i.address + i.size == ret]
            assert before, f"no instruction ends at {ret:#x}"
            assert before[0].mnemonic in ("call", "nop", "xchg")


def test_objects_slots_hold_live_pointers_at_the_call() -> None:
    world = World(lowered(OBJECTS))
    result = world.run()
    a, b = world.allocated
    assert world.printed == [11, 33, 22]
    assert result == a
    # One do_safepoint call runs (the other is patched out): its pairs name exactly a and b.
    assert len(world.safepoints) == 1
    assert sorted(world.safepoints[0].values()) == sorted([a, b])


def test_deopt_values_are_recorded_as_constants() -> None:
    compiled = lowered(OBJECTS)
    sm = compiled.stackmap
    deopt = [r for r in sm.records if r.locations[2].offset == 3]
    assert len(deopt) == 1
    locs = deopt[0].locations
    assert [loc.kind for loc in locs[3:6]] == [LocationKind.CONSTANT, LocationKind.CONSTANT_INDEX,
                                                LocationKind.CONSTANT]
    assert locs[3].offset == 7 and sm.constants[locs[4].offset] == 5000000000 and locs[5].small_constant == 0xFFFFFFFF
    assert locs[0].offset == 0 and locs[1].offset == 0


def test_patch_bytes_are_exact_nops() -> None:
    compiled = lowered(OBJECTS)
    image = compiled.image
    fn = compiled.stackmap.functions[0]
    patched = [r for r in compiled.stackmap.records
               if image.code[fn.address - image.code_base + r.instruction_offset - 11:
                             fn.address - image.code_base + r.instruction_offset] == nops(11)]
    assert len(patched) == 1
    end = fn.address + patched[0].instruction_offset
    insns = [i for i in disassemble(image.code, image.code_base, "x86_64") if end - 11 <= i.address < end]
    assert sum(i.size for i in insns) == 11
    assert all(i.mnemonic == "nop" for i in insns)
    assert "call do_safepoint" not in compiled.asm_text.split("main.sp3:")[0].split("main.sp2:")[1]


def test_derived_pointer_is_a_base_derived_pair() -> None:
    world = World(lowered(DERIVED))
    result = world.run()
    (a,) = world.allocated
    assert world.printed == [44, 55, 24]
    assert result == a
    assert len(world.records_seen) == 1
    pairs = world.records_seen[0].locations[3:]
    assert len(pairs) == 4  # (a, a) and (a, d) in some order
    values = {off: v for off, v in world.safepoints[-1].items()}
    by_loc = [values[loc.offset] for loc in pairs]
    assert sorted(zip(by_loc[::2], by_loc[1::2])) == sorted([(a, a), (a, a + 24)])


@pytest.mark.parametrize("text,expected", [(OBJECTS, [11, 33, 22]), (DERIVED, [44, 55, 24])],
                         ids=["objects", "derived"])
def test_moving_collector_updates_are_seen_by_the_program(text: str, expected: list[int]) -> None:
    world = World(lowered(text), move=True)
    result = world.run()
    first = world.allocated[0]
    assert world.printed == expected
    assert result == first + MOVE


def test_relocate_pairs_come_in_reverse_textual_order() -> None:
    compiled = lowered(OBJECTS)
    frame = compiled.functions[0].frame
    names = {frame.slot(v): v.name for v in frame.values}
    rec = [r for r in compiled.stackmap.records if r.locations[2].offset == 3][0]
    derived = [names[loc.offset] for loc in rec.locations[7::2]]
    # RS4GC emits the relocate of a before the relocate of b; the record lists b's pair first.
    assert [n.startswith("b") for n in derived] == [True, False]
