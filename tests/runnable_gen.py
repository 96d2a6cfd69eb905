"""Random *runnable* allocation-heavy programs against the guest ABI (LLVM 14 IR, abstract machine model).

``generate_program(seed, size)`` returns a whole module: the ABI declarations, a handful of
helper functions and ``@main``. The same seed and size always give the same text. Unlike
``gcprog_gen.py`` (which only has to pass RS4GC and the verifier), these programs are meant to
be *run*: they build object graphs with ``@gc_alloc``, walk them, mutate them, and print
checksums of their contents, so that two executions can be compared line by line.

What a program mixes:

* helpers taking and returning GC pointers: build a linked list (a loop with a phi of the
  head), a binary tree (recursion), an array of pointers to boxes (a variable-index GEP into
  the array computed *before* the box is allocated and stored through after: a derived
  pointer live across a call), a pair record pointing at two other objects; and their
  checksums (list walks with a phi of the cursor, recursive tree sums, array sums through
  derived slot pointers), a list mutator that stores integers through the cursor;
* in ``@main``: phases drawn at random that allocate, keep a few objects live across many
  later calls, link them into pairs, take derived pointers into records and into pointer
  arrays and use them after ``@gc_collect``/``@do_safepoint``/allocations, loops whose phis
  rotate GC pointers (and a phi of derived pointers into different objects), diamonds joined
  by a phi of GC pointers, ``select`` of GC pointers, and ``@print_i64`` of the running
  checksum.

Validity by construction: every helper is a fixed, verified shape with random constants and
switches; main's phases are sequential regions, each ending in one block that dominates what
follows, and values kept for later phases are defined in such dominating blocks (a diamond's
result is its join phi). Pointer fields are read only where they are known non-null, or in
walks that test for null. Trip counts are constants, so every program terminates; structures
are small (lists of at most 12 nodes, trees of depth at most 3, arrays of at most 8 boxes,
at most four kept roots), so the live heap stays in the low kilobytes and a 1 MiB semispace
is ample even with a collection at every statepoint. Checksums are computed from object
contents with wrapping i64 arithmetic; addresses are never printed or hashed.

Every defined function's name is ``@main`` or starts with ``@h`` and a digit, so that
:func:`rename_program` can give a program's functions a unique prefix and many programs can
share one module (one ``opt``, ``llc`` or ``lli`` process for a batch).
"""

from __future__ import annotations

import random
import re

P = "i8 addrspace(1)*"
I64P = "i64 addrspace(1)*"
PP = "i8 addrspace(1)* addrspace(1)*"

ABI_DECLS = f"""\
declare {P} @gc_alloc(i64, i64)
declare void @do_safepoint()
declare void @gc_collect()
declare void @print_i64(i64)
"""

GC = 'gc "statepoint-example"'


class _Fn:
    """A function under construction: unique value and block names, the current block."""

    def __init__(self, rng: random.Random, header: str) -> None:
        self.rng = rng
        self.header = header
        self.lines: list[str] = []
        self.n = 0
        self.cur = "entry"
        self.lines.append("entry:")

    def v(self, hint: str = "t") -> str:
        self.n += 1
        return f"%{hint}{self.n}"

    def lbl(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def block(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.cur = name

    def text(self) -> str:
        return f"{self.header} {{\n" + "\n".join(self.lines) + "\n}\n"

    # ------------------------------------------------------------ field access

    def i64_field(self, obj: str, k: int | str) -> str:
        """The address of 8-byte field ``k`` (constant or i64 value) of ``obj``, as i64 addrspace(1)*."""
        idx = k if isinstance(k, str) else str(k)
        if isinstance(k, int) and self.rng.random() < 0.5:
            raw = self.v("fb")
            self.emit(f"{raw} = getelementptr i8, {P} {obj}, i64 {8 * k}")
            addr = self.v("fi")
            self.emit(f"{addr} = bitcast {P} {raw} to {I64P}")
            return addr
        base = self.v("oi")
        self.emit(f"{base} = bitcast {P} {obj} to {I64P}")
        addr = self.v("fi")
        self.emit(f"{addr} = getelementptr i64, {I64P} {base}, i64 {idx}")
        return addr

    def ptr_field(self, obj: str, k: int | str) -> str:
        """The address of field ``k`` of ``obj`` as a slot holding a GC pointer."""
        idx = k if isinstance(k, str) else str(k)
        if isinstance(k, int) and self.rng.random() < 0.5:
            raw = self.v("fb")
            self.emit(f"{raw} = getelementptr i8, {P} {obj}, i64 {8 * k}")
            addr = self.v("fp")
            self.emit(f"{addr} = bitcast {P} {raw} to {PP}")
            return addr
        base = self.v("op")
        self.emit(f"{base} = bitcast {P} {obj} to {PP}")
        addr = self.v("fp")
        self.emit(f"{addr} = getelementptr {P}, {PP} {base}, i64 {idx}")
        return addr

    def load_i64(self, obj: str, k: int | str) -> str:
        addr = self.i64_field(obj, k)
        val = self.v("ld")
        self.emit(f"{val} = load i64, {I64P} {addr}")
        return val

    def store_i64(self, obj: str, k: int | str, value: str) -> None:
        addr = self.i64_field(obj, k)
        self.emit(f"store i64 {value}, {I64P} {addr}")

    def load_ptr(self, obj: str, k: int | str) -> str:
        addr = self.ptr_field(obj, k)
        val = self.v("lp")
        self.emit(f"{val} = load {P}, {PP} {addr}")
        return val

    def store_ptr(self, obj: str, k: int | str, value: str) -> None:
        addr = self.ptr_field(obj, k)
        self.emit(f"store {P} {value}, {PP} {addr}")

    def alloc(self, nfields: int | str, mask: int | str) -> str:
        val = self.v("new")
        self.emit(f"{val} = call {P} @gc_alloc(i64 {nfields}, i64 {mask})")
        return val

    def mix(self, acc: str, value: str, mult: int) -> str:
        """acc * mult + value (or xor), wrapping."""
        m = self.v("mx")
        self.emit(f"{m} = mul i64 {acc}, {mult}")
        r = self.v("cs")
        op = "xor" if self.rng.random() < 0.3 else "add"
        self.emit(f"{r} = {op} i64 {m}, {value}")
        return r

    def maybe_safepoint(self, p: float = 0.5) -> None:
        if self.rng.random() < p:
            self.emit("call void @do_safepoint()")


def _odd(rng: random.Random) -> int:
    return rng.randrange(3, 1 << 20) | 1


# ---------------------------------------------------------------- helpers
# Each returns the function text; the name is fixed by the caller's table.


def _mklist(rng: random.Random, name: str) -> str:
    """A list of n >= 1 nodes {val, next}, built by a loop with a phi of the head."""
    f = _Fn(rng, f"define {P} @{name}(i64 %n, i64 %s) {GC}")
    c = rng.randrange(1, 1000)
    f.emit("br label %loop")
    f.block("loop")
    f.emit("%i = phi i64 [0, %entry], [%i1, %loop]")
    f.emit(f"%head = phi {P} [null, %entry], [%node, %loop]")
    f.emit(f"%node = call {P} @gc_alloc(i64 2, i64 2)")
    si = f.v()
    f.emit(f"{si} = mul i64 %s, %i")
    val = f.v()
    f.emit(f"{val} = add i64 {si}, {c}")
    if rng.random() < 0.5:
        f.store_ptr("%node", 1, "%head")
        f.maybe_safepoint()
        f.store_i64("%node", 0, val)
    else:
        f.store_i64("%node", 0, val)
        f.maybe_safepoint()
        f.store_ptr("%node", 1, "%head")
    f.emit("%i1 = add i64 %i, 1")
    f.emit("%more = icmp slt i64 %i1, %n")
    f.emit("br i1 %more, label %loop, label %out")
    f.block("out")
    f.emit(f"ret {P} %node")
    return f.text()


def _sumlist(rng: random.Random, name: str) -> str:
    """Walk a (possibly empty) list; the cursor is a phi, live across a safepoint when chosen."""
    f = _Fn(rng, f"define i64 @{name}({P} %l) {GC}")
    k, mult = rng.randrange(1, 99), _odd(rng)
    f.emit(f"%empty = icmp eq {P} %l, null")
    f.emit("br i1 %empty, label %done, label %loop")
    f.block("loop")
    f.emit(f"%p = phi {P} [%l, %entry], [%nx, %loop]")
    f.emit(f"%h = phi i64 [{k}, %entry], [%h2, %loop]")
    v = f.load_i64("%p", 0)
    f.maybe_safepoint(0.6)
    nx_addr = f.ptr_field("%p", 1)
    f.emit(f"%nx = load {P}, {PP} {nx_addr}")
    h1 = f.mix("%h", v, mult)
    f.emit(f"%h2 = add i64 {h1}, 0")
    f.emit(f"%end = icmp eq {P} %nx, null")
    f.emit("br i1 %end, label %done, label %loop")
    f.block("done")
    f.emit(f"%r = phi i64 [{k}, %entry], [%h2, %loop]")
    f.emit("ret i64 %r")
    return f.text()


def _bumplist(rng: random.Random, name: str) -> str:
    """Add delta*(position+1) to every node's value, storing through the cursor."""
    f = _Fn(rng, f"define void @{name}({P} %l, i64 %delta) {GC}")
    f.emit(f"%empty = icmp eq {P} %l, null")
    f.emit("br i1 %empty, label %done, label %loop")
    f.block("loop")
    f.emit(f"%p = phi {P} [%l, %entry], [%nx, %loop]")
    f.emit("%i = phi i64 [1, %entry], [%i1, %loop]")
    addr = f.i64_field("%p", 0)  # a derived pointer, live across the safepoint when chosen
    f.maybe_safepoint(0.7)
    old = f.v()
    f.emit(f"{old} = load i64, {I64P} {addr}")
    d = f.v()
    f.emit(f"{d} = mul i64 %delta, %i")
    new = f.v()
    f.emit(f"{new} = add i64 {old}, {d}")
    f.emit(f"store i64 {new}, {I64P} {addr}")
    nx = f.load_ptr("%p", 1)
    f.emit(f"%nx = bitcast {P} {nx} to {P}")
    f.emit("%i1 = add i64 %i, 1")
    f.emit(f"%end = icmp eq {P} %nx, null")
    f.emit("br i1 %end, label %done, label %loop")
    f.block("done")
    f.emit("ret void")
    return f.text()


def _mktree(rng: random.Random, name: str) -> str:
    """A complete binary tree of depth d, nodes {left, right, val} (mask 0b011), built recursively."""
    f = _Fn(rng, f"define {P} @{name}(i64 %d, i64 %v) {GC}")
    a, b = rng.randrange(1, 50), rng.randrange(1, 50)
    f.emit("%leaf = icmp eq i64 %d, 0")
    f.emit("br i1 %leaf, label %mk, label %inner")
    f.block("inner")
    f.emit("%d1 = sub i64 %d, 1")
    f.emit(f"%va = add i64 %v, {a}")
    f.emit(f"%vb = mul i64 %v, {b}")
    f.emit(f"%l = call {P} @{name}(i64 %d1, i64 %va)")
    f.emit(f"%r = call {P} @{name}(i64 %d1, i64 %vb)")
    n = f.alloc(3, 3)
    if rng.random() < 0.5:
        f.store_ptr(n, 0, "%l")
        f.store_ptr(n, 1, "%r")
    else:
        f.store_ptr(n, 1, "%r")
        f.maybe_safepoint()
        f.store_ptr(n, 0, "%l")
    f.store_i64(n, 2, "%v")
    f.emit(f"ret {P} {n}")
    f.block("mk")
    m = f.alloc(3, 3)
    f.store_i64(m, 2, "%v")
    f.emit(f"ret {P} {m}")
    return f.text()


def _sumtree(rng: random.Random, name: str) -> str:
    f = _Fn(rng, f"define i64 @{name}({P} %t) {GC}")
    m1, m2, k = _odd(rng), _odd(rng), rng.randrange(1, 1000)
    f.emit(f"%isnull = icmp eq {P} %t, null")
    f.emit("br i1 %isnull, label %zero, label %node")
    f.block("zero")
    f.emit(f"ret i64 {k}")
    f.block("node")
    f.maybe_safepoint()
    l = f.load_ptr("%t", 0)
    sl = f.v()
    f.emit(f"{sl} = call i64 @{name}({P} {l})")
    r = f.load_ptr("%t", 1)
    sr = f.v()
    f.emit(f"{sr} = call i64 @{name}({P} {r})")
    v = f.load_i64("%t", 2)
    h = f.mix(sl, sr, m1)
    h2 = f.mix(h, v, m2)
    f.emit(f"ret i64 {h2}")
    return f.text()


def _mkarray(rng: random.Random, name: str) -> str:
    """n pointer fields, each pointing at a fresh box {val, copy}; the slot address is derived
    from the array before the box is allocated and stored through after."""
    f = _Fn(rng, f"define {P} @{name}(i64 %n, i64 %s) {GC}")
    f.emit("%sh = shl i64 1, %n")
    f.emit("%mask = sub i64 %sh, 1")
    f.emit(f"%arr = call {P} @gc_alloc(i64 %n, i64 %mask)")
    f.emit(f"%arrp = bitcast {P} %arr to {PP}")
    f.emit("br label %loop")
    f.block("loop")
    f.emit("%i = phi i64 [0, %entry], [%i1, %loop]")
    f.emit(f"%slot = getelementptr {P}, {PP} %arrp, i64 %i")
    box = f.alloc(2, 0)
    sq = f.v()
    f.emit(f"{sq} = mul i64 %i, %i")
    val = f.v()
    f.emit(f"{val} = add i64 {sq}, %s")
    f.store_i64(box, 0, val)
    f.maybe_safepoint()
    f.store_i64(box, 1, "%i")
    f.emit(f"store {P} {box}, {PP} %slot")
    f.emit("%i1 = add i64 %i, 1")
    f.emit("%more = icmp slt i64 %i1, %n")
    f.emit("br i1 %more, label %loop, label %out")
    f.block("out")
    f.emit(f"ret {P} %arr")
    return f.text()


def _sumarray(rng: random.Random, name: str) -> str:
    f = _Fn(rng, f"define i64 @{name}({P} %arr, i64 %n) {GC}")
    mult = _odd(rng)
    f.emit(f"%arrp = bitcast {P} %arr to {PP}")
    f.emit("br label %loop")
    f.block("loop")
    f.emit("%i = phi i64 [0, %entry], [%i1, %loop]")
    f.emit(f"%h = phi i64 [7, %entry], [%h2, %loop]")
    f.emit(f"%slot = getelementptr {P}, {PP} %arrp, i64 %i")
    f.maybe_safepoint(0.7)
    f.emit(f"%box = load {P}, {PP} %slot")
    v0 = f.load_i64("%box", 0)
    v1 = f.load_i64("%box", 1)
    h = f.mix("%h", v0, mult)
    h1 = f.mix(h, v1, 31)
    f.emit(f"%h2 = add i64 {h1}, 0")
    f.emit("%i1 = add i64 %i, 1")
    f.emit("%more = icmp slt i64 %i1, %n")
    f.emit("br i1 %more, label %loop, label %out")
    f.block("out")
    f.emit("ret i64 %h2")
    return f.text()


def _pair(rng: random.Random, name: str) -> str:
    """A record {tag, a, b} (mask 0b110) pointing at two objects."""
    f = _Fn(rng, f"define {P} @{name}({P} %a, {P} %b, i64 %tag) {GC}")
    rec = f.alloc(3, 6)
    f.maybe_safepoint()
    f.store_ptr(rec, 1, "%a")
    f.store_i64(rec, 0, "%tag")
    f.maybe_safepoint(0.3)
    f.store_ptr(rec, 2, "%b")
    f.emit(f"ret {P} {rec}")
    return f.text()


HELPERS = {
    "mklist": _mklist, "sumlist": _sumlist, "bumplist": _bumplist, "mktree": _mktree,
    "sumtree": _sumtree, "mkarray": _mkarray, "sumarray": _sumarray, "pair": _pair,
}


# ---------------------------------------------------------------- main


class _Main:
    """@main's phases. ``keep`` holds (value, kind) of objects kept live for later phases;
    a kind is ("list",), ("tree",), ("array", n), ("ints", n) or ("pair", kind_a, kind_b)."""

    MAX_KEEP = 4

    def __init__(self, rng: random.Random, names: dict[str, str]) -> None:
        self.rng = rng
        self.h = names
        self.f = _Fn(rng, f"define i64 @main() {GC}")
        self.cs = str(rng.randrange(1, 1 << 30))
        self.keep: list[tuple[str, tuple]] = []

    # ------------------------------------------------------------ bookkeeping

    def absorb(self, value: str) -> None:
        self.cs = self.f.mix(self.cs, value, _odd(self.rng))

    def add_keep(self, value: str, kind: tuple) -> None:
        self.keep.append((value, kind))
        if len(self.keep) > self.MAX_KEEP:
            self.keep.pop(self.rng.randrange(len(self.keep)))

    def pick(self) -> tuple[str, tuple] | None:
        return self.rng.choice(self.keep) if self.keep else None

    def call_p(self, helper: str, args: str) -> str:
        v = self.f.v("obj")
        self.f.emit(f"{v} = call {P} @{self.h[helper]}({args})")
        return v

    def call_i(self, helper: str, args: str) -> str:
        v = self.f.v("sum")
        self.f.emit(f"{v} = call i64 @{self.h[helper]}({args})")
        return v

    def checksum_of(self, obj: str, kind: tuple, depth: int = 0) -> str:
        """Code that computes a checksum of the object graph at ``obj`` (non-null) of ``kind``."""
        f = self.f
        if kind[0] == "list":
            return self.call_i("sumlist", f"{P} {obj}")
        if kind[0] == "tree":
            return self.call_i("sumtree", f"{P} {obj}")
        if kind[0] == "array":
            return self.call_i("sumarray", f"{P} {obj}, i64 {kind[1]}")
        if kind[0] == "ints":
            acc = "0"
            for j in range(kind[1]):
                v = f.load_i64(obj, j)
                acc = f.mix(acc, v, 17)
            return acc
        # a pair: both children are non-null objects of known kinds
        tag = f.load_i64(obj, 0)
        a = f.load_ptr(obj, 1)
        sa = self.checksum_of(a, kind[1], depth + 1)
        b = f.load_ptr(obj, 2)  # loaded after calls made for a: the pair was relocated
        sb = self.checksum_of(b, kind[2], depth + 1)
        return f.mix(f.mix(tag, sa, 101), sb, 103)

    @staticmethod
    def depth(kind: tuple) -> int:
        return 1 + max(_Main.depth(kind[1]), _Main.depth(kind[2])) if kind[0] == "pair" else 0

    # ------------------------------------------------------------ phases

    def ph_list(self) -> None:
        n, s = self.rng.randrange(1, 13), self.rng.randrange(-50, 50)
        self.add_keep(self.call_p("mklist", f"i64 {n}, i64 {s}"), ("list",))

    def ph_tree(self) -> None:
        d, v = self.rng.randrange(0, 4), self.rng.randrange(0, 100)
        self.add_keep(self.call_p("mktree", f"i64 {d}, i64 {v}"), ("tree",))

    def ph_array(self) -> None:
        n, s = self.rng.randrange(1, 9), self.rng.randrange(0, 1000)
        self.add_keep(self.call_p("mkarray", f"i64 {n}, i64 {s}"), ("array", n))

    def ph_sum(self) -> None:
        got = self.pick()
        if got is None:
            return self.ph_list()
        self.absorb(self.checksum_of(*got))
        if self.rng.random() < 0.5:
            self.print_cs()

    def ph_bump(self) -> None:
        lists = [k for k in self.keep if k[1][0] == "list"]
        if not lists:
            return self.ph_list()
        obj, _ = self.rng.choice(lists)
        self.f.emit(f"call void @{self.h['bumplist']}({P} {obj}, i64 {self.cs})")

    def ph_pair(self) -> None:
        if len(self.keep) < 2:
            return self.ph_tree()
        (a, ka), (b, kb) = self.rng.sample(self.keep, 2)
        kind = ("pair", ka, kb)
        if self.depth(kind) > 3:
            return self.ph_sum()
        self.add_keep(self.call_p("pair", f"{P} {a}, {P} {b}, i64 {self.cs}"), kind)

    def ph_collect(self) -> None:
        self.f.emit(self.rng.choice(["call void @gc_collect()", "call void @do_safepoint()"]))
        if self.rng.random() < 0.3:
            self.print_cs()

    def ph_derived(self) -> None:
        """A derived pointer into a fresh record of ints, used across allocations and collections."""
        f, rng = self.f, self.rng
        k = rng.randrange(2, 7)
        rec = f.alloc(k, 0)
        for j in range(k):
            f.store_i64(rec, j, str(rng.randrange(-1000, 1000)))
        j = rng.randrange(k)
        d = f.i64_field(rec, j)
        f.emit(f"store i64 {self.cs}, {I64P} {d}")
        f.alloc(rng.randrange(1, 6), 0)  # garbage
        f.emit("call void @gc_collect()")
        old = f.v()
        f.emit(f"{old} = load i64, {I64P} {d}")
        self.absorb(old)
        if self.keep and rng.random() < 0.5:
            obj, kind = self.pick()
            self.absorb(self.checksum_of(obj, kind))  # calls while %d is live
        f.emit(f"store i64 {self.cs}, {I64P} {d}")
        f.maybe_safepoint()
        if rng.random() < 0.5:
            self.add_keep(rec, ("ints", k))
        else:
            self.absorb(self.checksum_of(rec, ("ints", k)))

    def ph_slot(self) -> None:
        """A derived pointer to a slot of a kept pointer array, read after a collection."""
        arrays = [k for k in self.keep if k[1][0] == "array"]
        if not arrays:
            return self.ph_array()
        f = self.f
        arr, (_, n) = self.rng.choice(arrays)
        j = self.rng.randrange(n)
        slot = f.ptr_field(arr, j)
        f.alloc(2, 0)
        f.emit("call void @gc_collect()")
        box = f.v()
        f.emit(f"{box} = load {P}, {PP} {slot}")
        f.emit("call void @do_safepoint()")
        self.absorb(f.load_i64(box, 0))
        # replace the box by a fresh one, stored through the derived slot after an allocation
        fresh = f.alloc(2, 0)
        f.store_i64(fresh, 0, self.cs)
        f.store_i64(fresh, 1, str(j))
        f.emit(f"store {P} {fresh}, {PP} {slot}")

    def ph_loop(self) -> None:
        """A loop whose phis rotate GC pointers (and a derived pointer) through fresh allocations."""
        f, rng = self.f, self.rng
        t = rng.randrange(2, 12)
        chain = rng.random() < 0.5
        mask = 2 if chain else 0
        a0 = f.alloc(2, mask)
        f.store_i64(a0, 0, str(rng.randrange(100)))
        b0 = f.alloc(2, mask)
        f.store_i64(b0, 0, self.cs)
        d0 = f.i64_field(b0, 0)
        pre, head, out = f.cur, f.lbl("loop"), f.lbl("after")
        i, i1 = f.v("i"), f.v("i")
        a, b, c = f.v("a"), f.v("b"), f.v("c")
        dp, h, h1 = f.v("dp"), f.v("h"), f.v("h")
        f.emit(f"br label %{head}")
        f.block(head)
        # c and the new derived pointer are defined below; their names are known already
        dnew = f.v("dn")
        f.emit(f"{i} = phi i64 [0, %{pre}], [{i1}, %{head}]")
        f.emit(f"{a} = phi {P} [{a0}, %{pre}], [{b}, %{head}]")
        f.emit(f"{b} = phi {P} [{b0}, %{pre}], [{c}, %{head}]")
        f.emit(f"{dp} = phi {I64P} [{d0}, %{pre}], [{dnew}, %{head}]")
        f.emit(f"{h} = phi i64 [{self.cs}, %{pre}], [{h1}, %{head}]")
        av = f.load_i64(a, 0)
        f.emit(f"{c} = call {P} @gc_alloc(i64 2, i64 {mask})")
        dv = f.v()
        f.emit(f"{dv} = load i64, {I64P} {dp}")  # through the derived phi, after the allocation
        s = f.v()
        f.emit(f"{s} = add i64 {av}, {i}")
        s2 = f.v()
        f.emit(f"{s2} = add i64 {s}, {dv}")
        f.store_i64(c, 0, s2)
        if chain:
            f.store_ptr(c, 1, b)
        f.maybe_safepoint(0.3)
        # the new derived pointer: field 0 of c, spelled as an i64 GEP
        cb = f.v()
        f.emit(f"{cb} = bitcast {P} {c} to {I64P}")
        f.emit(f"{dnew} = getelementptr i64, {I64P} {cb}, i64 0")
        hm = f.mix(h, s2, 31)
        f.emit(f"{h1} = add i64 {hm}, 0")
        f.emit(f"{i1} = add i64 {i}, 1")
        more = f.v()
        f.emit(f"{more} = icmp slt i64 {i1}, {t}")
        f.emit(f"br i1 {more}, label %{head}, label %{out}")
        f.block(out)
        f.emit("call void @gc_collect()")
        self.absorb(h1)
        self.absorb(f.load_i64(a, 0))
        self.absorb(f.load_i64(c, 0))
        if chain:
            # walk c -> b -> ... through the chained field 1 (the last hop may be null, stop at depth 2)
            nb = f.load_ptr(c, 1)
            self.absorb(f.load_i64(nb, 0))
        if rng.random() < 0.4:
            self.add_keep(c, ("ints", 1))

    def ph_diamond(self) -> None:
        """Two arms make different objects; a phi of GC pointers joins them; used after a collection."""
        f, rng = self.f, self.rng
        bit = f.v()
        f.emit(f"{bit} = and i64 {self.cs}, {1 << rng.randrange(0, 6)}")
        cond = f.v()
        f.emit(f"{cond} = icmp ne i64 {bit}, 0")
        left, right, join = f.lbl("left"), f.lbl("right"), f.lbl("join")
        f.emit(f"br i1 {cond}, label %{left}, label %{right}")
        f.block(left)
        x = f.alloc(2, 0)
        f.store_i64(x, 0, str(rng.randrange(1000)))
        f.store_i64(x, 1, self.cs)
        f.emit(f"br label %{join}")
        f.block(right)
        y = f.alloc(3, 0)
        f.maybe_safepoint()
        f.store_i64(y, 0, str(rng.randrange(1000)))
        f.store_i64(y, 1, str(rng.randrange(1000)))
        f.emit(f"br label %{join}")
        f.block(join)
        m = f.v("m")
        f.emit(f"{m} = phi {P} [{x}, %{left}], [{y}, %{right}]")
        f.emit("call void @gc_collect()")
        self.absorb(f.load_i64(m, 0))
        self.absorb(f.load_i64(m, 1))
        self.add_keep(m, ("ints", 2))

    def ph_select(self) -> None:
        """select of two GC pointers, kept across a collection."""
        f, rng = self.f, self.rng
        x = f.alloc(1, 0)
        f.store_i64(x, 0, str(rng.randrange(1000)))
        y = f.alloc(1, 0)
        f.store_i64(y, 0, str(rng.randrange(1000, 2000)))
        bit = f.v()
        f.emit(f"{bit} = and i64 {self.cs}, {1 << rng.randrange(0, 6)}")
        cond = f.v()
        f.emit(f"{cond} = icmp eq i64 {bit}, 0")
        s = f.v("sel")
        f.emit(f"{s} = select i1 {cond}, {P} {x}, {P} {y}")
        f.emit(rng.choice(["call void @gc_collect()", "call void @do_safepoint()"]))
        self.absorb(f.load_i64(s, 0))

    def print_cs(self) -> None:
        self.f.emit(f"call void @print_i64(i64 {self.cs})")

    PHASES = (
        ("ph_list", 3), ("ph_tree", 2), ("ph_array", 2), ("ph_sum", 4), ("ph_bump", 1), ("ph_pair", 2),
        ("ph_collect", 2), ("ph_derived", 2), ("ph_slot", 2), ("ph_loop", 2), ("ph_diamond", 1),
        ("ph_select", 1),
    )

    def build(self, size: int) -> str:
        names = [n for n, _ in self.PHASES]
        weights = [w for _, w in self.PHASES]
        for _ in range(size):
            getattr(self, self.rng.choices(names, weights)[0])()
        for obj, kind in list(self.keep):
            self.absorb(self.checksum_of(obj, kind))
        self.print_cs()
        self.f.emit(f"ret i64 {self.cs}")
        return self.f.text()


def generate_program(seed: int, size: int = 8) -> str:
    """A whole runnable module: ABI declarations, helpers and @main with ``size`` phases."""
    rng = random.Random(f"runnable:{seed}:{size}")
    names = {kind: f"h{i}_{kind}" for i, kind in enumerate(HELPERS)}
    helpers = [HELPERS[kind](rng, names[kind]) for kind in HELPERS]
    main = _Main(rng, names).build(size)
    return "\n".join([ABI_DECLS, *helpers, main])


_DEFINED = re.compile(r"@(main|h\d+_\w+)\b")


def rename_program(text: str, prefix: str) -> str:
    """The program's definitions (no declarations) with every defined function renamed ``@PREFIXname``."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("declare "))
    return _DEFINED.sub(lambda m: f"@{prefix}{m.group(1)}", body)


def combine_programs(texts: list[str], prefixes: list[str]) -> str:
    """Several programs in one module: the ABI declarations once, then each renamed program."""
    return "\n".join([ABI_DECLS, *(rename_program(t, p) for t, p in zip(texts, prefixes))])


def x86_64_reference(text: str) -> tuple[list[int], int]:
    """What a program prints and returns through gctoy's statepoint pipeline on x86-64, without
    collections: the reference the other targets and designs are compared with."""
    from gctoy.ir import parse_module
    from gctoy.passes import run
    from gctoy.runtime.run import run_module

    module = parse_module(text)
    run(module, "rewrite-statepoints-for-gc")
    result = run_module(module, gc="none")
    return result.printed, result.result
