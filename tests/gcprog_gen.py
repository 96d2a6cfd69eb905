"""Random GC programs in the abstract machine model: LLVM 14 IR *before* RewriteStatepointsForGC.

``generate(seed, size)`` returns a whole module (declarations + one function) whose function
has roughly ``size`` instructions; ``generate_function(seed, size, name)`` returns only the
function, so that many can share one module (:func:`module_of`, one ``opt`` process for many
functions). The same seed and size always give the same text.

The functions are written the way a frontend for a collected language would write them
before statepoints exist: GC pointers are ordinary SSA values in ``addrspace(1)``
(``i8 addrspace(1)*``, ``i64 addrspace(1)*``, ``%obj addrspace(1)*`` and the addresses of
the object's pointer fields, ``T addrspace(1)* addrspace(1)*``), objects come from
``@gc_alloc``, and every call may collect. What the generator mixes:

* straight-line code: allocations, calls (``@foo()``, ``@bar(i8 addrspace(1)*)``,
  ``@baz(%obj addrspace(1)*, i64)``, calls that return GC pointers, a ``"gc-leaf-function"``
  call), ``"deopt"`` bundles on some calls, GEPs with constant and variable indices (field,
  array and element addresses), bitcasts between the GC pointer types, loads and stores of
  GC pointers from and to objects, ``select`` of GC pointers, ``icmp`` on pointers, integer
  arithmetic;
* GEP chains made to sit on both sides of RS4GC's rematerialization limit (at most two
  variable GEPs: rematerialized at a call; three variable GEPs or more than ten GEPs:
  relocated), followed by a call and a later use;
* diamonds and triangles with phis of GC pointers at the join;
* loops with an i64 counter, phis of GC pointers and of derived pointers (``gep`` of the phi
  on the back edge: same base) or of unrelated objects (a base phi is needed), sometimes
  LCSSA-style single-entry phis after the exit;
* invokes with ``landingpad token cleanup`` unwind blocks that rejoin or return, and
  diamonds of two invokes that share their normal destination and their landing pad (RS4GC
  splits both);
* comparisons computed early and branched on later (RS4GC moves them next to the branch);
* a ``ret`` of a GC pointer (or ``void``).

Validity by construction: code is structured (regions nest), every value is used only in
regions its definition dominates, phis take one value per predecessor that is available at
the end of that predecessor. Operands are drawn mostly from the most recent values of each
type, so live sets stay bounded and the work RS4GC does grows linearly with ``size``.
All values and blocks are named (``%vN``, ``%bN``, arguments ``%a0``...); no name contains
a dot, so names RS4GC makes (``.relocated``, ``.base``, ``.remat``, ``.0``) never clash.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

P8 = "i8 addrspace(1)*"
P64 = "i64 addrspace(1)*"
PO = "%obj addrspace(1)*"
PP8 = "i8 addrspace(1)* addrspace(1)*"
PP64 = "i64 addrspace(1)* addrspace(1)*"
PPO = "%obj addrspace(1)* addrspace(1)*"
GC_TYPES = (P8, P64, PO, PP8, PP64, PPO)
#: pointee type written in ``getelementptr T, ...`` and ``load T, ...``
POINTEE = {P8: "i8", P64: "i64", PO: "%obj", PP8: P8, PP64: P64, PPO: PO}
#: field addresses that hold GC pointers, and what loading them gives
FIELD_OF = {PP8: P8, PP64: P64, PPO: PO}
SLOT_FOR = {v: k for k, v in FIELD_OF.items()}

PREAMBLE = f"""\
%obj = type {{ i64, {P8}, {P64}, [8 x i64], {PO} }}

declare {P8} @gc_alloc(i64, i64)
declare void @foo()
declare void @bar({P8})
declare void @baz({PO}, i64)
declare {PO} @make_obj({PO})
declare {P64} @get_arr(i64)
declare i64 @hash({P8}) "gc-leaf-function"
declare i32 @pers(...)
"""

#: (callee, return type, parameter types) of the calls the generator may emit
CALLEES = {
    "foo": ("void", ()),
    "bar": ("void", (P8,)),
    "baz": ("void", (PO, "i64")),
    "make_obj": (PO, (PO,)),
    "get_arr": (P64, ("i64",)),
    "gc_alloc": (P8, ("i64", "i64")),
}
ARGS = ((P8, "a0"), (PO, "a1"), (P64, "a2"), ("i64", "n0"), ("i64", "n1"), ("i1", "c0"))
RET_TYPES = (P8, P8, PO, P64, "void")
#: GC operands come from the last WINDOW values of their type that were defined within the last
#: NEAR instructions (sometimes FAR); so live sets stay bounded and RS4GC's work is linear in size
WINDOW = 8
NEAR = 30
FAR = 150


@dataclass
class _Scope:
    """Values usable at the current point, per type; regions truncate back to a mark on exit."""

    vals: dict[str, list[str]] = field(default_factory=dict)

    def add(self, ty: str, name: str) -> None:
        self.vals.setdefault(ty, []).append(name)

    def mark(self) -> dict[str, int]:
        return {t: len(v) for t, v in self.vals.items()}

    def restore(self, mark: dict[str, int]) -> None:
        for t, v in self.vals.items():
            del v[mark.get(t, 0):]

    def has(self, ty: str) -> bool:
        return bool(self.vals.get(ty))


class FunctionGenerator:
    """Writes one function's text from a seeded ``random.Random``."""

    def __init__(self, seed: int, size: int, name: str):
        self.rng = random.Random(f"gcprog:{seed}:{size}")
        self.size = max(size, 4)
        self.name = name
        self.lines: list[str] = []
        self.count = 0  # instructions written
        self.next_id = 0
        self.scope = _Scope()
        self.born: dict[str, int] = {n: 0 for _, n in ARGS}
        self.cur = "entry"
        self.ret_type = self.rng.choice(RET_TYPES)

    # -- basics ---------------------------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        self.next_id += 1
        return f"{prefix}{self.next_id}"

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)
        self.count += 1

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.cur = name

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, ty: str, convert: bool = True) -> str:
        """An available value of type ``ty`` (mostly a recent one); the caller ensures one exists.

        With ``convert``, a bitcast of a recent pointer of another type may be written first.
        """
        vals = self.scope.vals[ty]
        if ty in GC_TYPES:
            # live ranges stay short: mostly values defined in the last few dozen instructions
            horizon = self.count - (NEAR if self.chance(0.85) else FAR)
            recent = [v for v in vals[-WINDOW:] if self.born[v] >= horizon]
            if recent:
                return self.rng.choice(recent)
            if convert and self.chance(0.7):
                return self.convert(ty, horizon)
            return vals[-1]
        return self.rng.choice(vals[-WINDOW:])

    def convert(self, ty: str, horizon: int) -> str:
        """A fresh value of GC type ``ty`` made from a recent GC pointer of another type."""
        for src in self.rng.sample(GC_TYPES, len(GC_TYPES)):
            vals = self.scope.vals.get(src, [])
            if src != ty and vals and self.born[vals[-1]] >= horizon:
                return self.define(ty, f"bitcast {src} %{vals[-1]} to {ty}")
        return self.scope.vals[ty][-1]

    def pick_gc_type(self, among=GC_TYPES) -> str:
        return self.rng.choice([t for t in among if self.scope.has(t)])

    def index(self) -> tuple[str, bool]:
        """A GEP index: ``(text, is_variable)``."""
        if self.chance(0.45):
            return f"i64 %{self.pick('i64')}", True
        return f"i64 {self.rng.randint(0, 40)}", False

    def define(self, ty: str, rhs: str) -> str:
        name = self.fresh()
        self.emit(f"%{name} = {rhs}")
        self.bind(ty, name)
        return name

    def bind(self, ty: str, name: str) -> None:
        """Make ``name`` (defined just now) available."""
        self.scope.add(ty, name)
        self.born[name] = self.count

    # -- the function ---------------------------------------------------------------------
    def generate(self) -> str:
        params = ", ".join(f"{t} %{n}" for t, n in ARGS)
        for t, n in ARGS:
            self.scope.add(t, n)
        self.lines.append(f'define {self.ret_type} @{self.name}({params}) gc "statepoint-example" '
                          "personality i32 (...)* @pers {")
        self.lines.append("entry:")
        self.region(self.size - 1, depth=0)
        self.ret()
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def ret(self) -> None:
        if self.ret_type == "void":
            self.emit("ret void")
        else:
            self.emit(f"ret {self.ret_type} %{self.pick(self.ret_type)}")

    def region(self, budget: int, depth: int, pending: list[tuple[str, str]] | None = None) -> None:
        """Statements until about ``budget`` instructions are written, then uses of ``pending`` values.

        ``pending`` holds (type, value) pairs defined in this region that must be used later
        on, so that they are live across the calls in between.
        """
        end = self.count + budget
        pending = list(pending or [])
        while self.count < end:
            self.statement(end - self.count, depth, pending)
            if pending and self.chance(0.3):
                self.use(*pending.pop(0))
        for ty, v in pending:
            self.use(ty, v)
        if self.chance(0.5):  # keep something alive to the end of the region
            ty = self.pick_gc_type()
            self.use(ty, self.pick(ty))

    STATEMENTS = (
        ("call", 10), ("alloc", 7), ("call_get", 4), ("gep", 12), ("chain", 4), ("bitcast", 6),
        ("load_gc", 6), ("load_int", 3), ("store_gc", 4), ("store_int", 2), ("select", 5),
        ("icmp", 4), ("leaf", 2), ("arith", 2), ("diamond", 6), ("loop", 4), ("invoke", 5),
        ("invoke_pair", 2),
    )
    STRUCTURED = {"diamond": 8, "loop": 10, "invoke": 6, "invoke_pair": 10}

    def statement(self, room: int, depth: int, pending: list) -> None:
        kinds = [k for k, _ in self.STATEMENTS]
        weights = [w for _, w in self.STATEMENTS]
        while True:
            kind = self.rng.choices(kinds, weights)[0]
            need = self.STRUCTURED.get(kind)
            if need is not None and (room < need or depth >= 4):
                continue
            break
        getattr(self, "st_" + kind)(room, depth, pending)

    # -- straight-line statements -----------------------------------------------------------
    def deopt(self) -> str:
        if not self.chance(0.25):
            return ""
        items = [f"i32 {self.rng.randint(0, 99)}"]
        for _ in range(self.rng.randint(0, 3)):
            if self.chance(0.7):
                ty = self.pick_gc_type()
                items.append(f"{ty} %{self.pick(ty)}")
            else:
                items.append(f"i64 %{self.pick('i64')}")
        return f' [ "deopt"({", ".join(items)}) ]'

    def call_args(self, params) -> str:
        out = []
        for p in params:
            if p == "i64":
                out.append(f"i64 %{self.pick('i64')}" if self.chance(0.5) else f"i64 {self.rng.randint(1, 64)}")
            else:
                out.append(f"{p} %{self.as_type(p)}")
        return ", ".join(out)

    def as_type(self, ty: str) -> str:
        """A value of GC type ``ty``: an available one, or a bitcast of another GC pointer."""
        if self.scope.has(ty) and self.chance(0.8):
            return self.pick(ty)
        src = self.pick_gc_type()
        if src == ty:
            return self.pick(ty)
        return self.define(ty, f"bitcast {src} %{self.pick(src)} to {ty}")

    def call(self, callee: str) -> str | None:
        ret, params = CALLEES[callee]
        args = self.call_args(params)
        text = f"call {ret} @{callee}({args}){self.deopt()}"
        if ret == "void":
            self.emit(text)
            return None
        return self.define(ret, text)

    def st_call(self, room, depth, pending):
        self.call(self.rng.choice(("foo", "foo", "bar", "baz")))

    def st_alloc(self, room, depth, pending):
        v = self.define(P8, f"call {P8} @gc_alloc(i64 {self.rng.choice((16, 24, 64, 96))}, "
                            f"i64 {self.rng.randint(0, 9)}){self.deopt()}")
        if self.chance(0.6):
            to = self.rng.choice((PO, P64))
            self.define(to, f"bitcast {P8} %{v} to {to}")

    def st_call_get(self, room, depth, pending):
        self.call(self.rng.choice(("make_obj", "get_arr")))

    def gep(self, ty: str, base: str) -> tuple[str, str, bool]:
        """One GEP on ``base`` of type ``ty``: ``(result type, rhs text, has a variable index)``."""
        if ty == PO:
            form = self.rng.randrange(4)
            if form == 0:
                idx, var = self.index()
                return PO, f"getelementptr %obj, {PO} %{base}, {idx}", var
            if form == 1:
                idx, var = self.index()
                return P64, f"getelementptr %obj, {PO} %{base}, i64 0, i32 3, {idx}", var
            fld, out = self.rng.choice(((0, P64), (1, PP8), (2, PP64), (4, PPO)))
            return out, f"getelementptr %obj, {PO} %{base}, i64 0, i32 {fld}", False
        idx, var = self.index()
        return ty, f"getelementptr {POINTEE[ty]}, {ty} %{base}, {idx}", var

    def st_gep(self, room, depth, pending):
        ty = self.pick_gc_type()
        out, rhs, _ = self.gep(ty, self.pick(ty))
        v = self.define(out, rhs)
        if self.chance(0.3):
            pending.append((out, v))

    def st_chain(self, room, depth, pending):
        """A run of GEPs (and casts) on one object, then a call, then a use of the end."""
        shape = self.rng.choice(("one_var", "two_var", "three_var", "long", "casts", "fields"))
        ty = self.pick_gc_type((P8, P64)) if shape != "fields" else PO
        if not self.scope.has(ty):
            ty = self.pick_gc_type()
        cur = self.pick(ty)
        if shape in ("one_var", "two_var", "three_var"):
            nvar = {"one_var": 1, "two_var": 2, "three_var": 3}[shape]
            steps = ["v"] * nvar + ["c"] * self.rng.randint(0, 3)
        elif shape == "long":
            steps = ["c"] * self.rng.randint(9, 12)
        elif shape == "casts":
            steps = [self.rng.choice("cvx") for _ in range(self.rng.randint(2, 6))]
        else:
            steps = ["f", "c"]
        self.rng.shuffle(steps)
        for step in steps:
            if step == "x":
                to = self.rng.choice([t for t in (P8, P64) if t != ty] or [P8])
                cur = self.define(to, f"bitcast {ty} %{cur} to {to}")
                ty = to
                continue
            if step == "f" and ty == PO:
                ty, rhs, _ = self.gep(PO, cur)
                cur = self.define(ty, rhs)
                continue
            if ty == PO:
                idx = f"i64 %{self.pick('i64')}" if step == "v" else f"i64 {self.rng.randint(0, 7)}"
                rhs = f"getelementptr %obj, {PO} %{cur}, {idx}"
            else:
                idx = f"i64 %{self.pick('i64')}" if step == "v" else f"i64 {self.rng.randint(1, 40)}"
                rhs = f"getelementptr {POINTEE[ty]}, {ty} %{cur}, {idx}"
            cur = self.define(ty, rhs)
        if self.chance(0.8):
            self.call(self.rng.choice(("foo", "bar", "gc_alloc", "make_obj")))
        pending.append((ty, cur))

    def st_bitcast(self, room, depth, pending):
        src = self.pick_gc_type()
        to = self.rng.choice([t for t in GC_TYPES if t != src])
        self.define(to, f"bitcast {src} %{self.pick(src)} to {to}")

    def st_load_gc(self, room, depth, pending):
        slots = [t for t in FIELD_OF if self.scope.has(t)]
        if slots and self.chance(0.6):
            slot = self.rng.choice(slots)
            addr = self.pick(slot)
        else:
            fld, slot = self.rng.choice(((1, PP8), (2, PP64), (4, PPO)))
            addr = self.define(slot, f"getelementptr %obj, {PO} %{self.pick(PO)}, i64 0, i32 {fld}")
        self.define(FIELD_OF[slot], f"load {FIELD_OF[slot]}, {slot} %{addr}, align 8")

    def st_load_int(self, room, depth, pending):
        if self.scope.has(P64) and self.chance(0.7):
            self.define("i64", f"load i64, {P64} %{self.pick(P64)}, align 8")
        else:
            self.define("i8", f"load i8, {P8} %{self.as_type(P8)}, align 1")

    def st_store_gc(self, room, depth, pending):
        ty = self.rng.choice((P8, P64, PO))
        val = self.as_type(ty)
        slot = SLOT_FOR[ty]
        if self.scope.has(slot) and self.chance(0.6):
            addr = self.pick(slot)
        else:
            fld = {PP8: 1, PP64: 2, PPO: 4}[slot]
            addr = self.define(slot, f"getelementptr %obj, {PO} %{self.pick(PO)}, i64 0, i32 {fld}")
        self.emit(f"store {ty} %{val}, {slot} %{addr}, align 8")

    def st_store_int(self, room, depth, pending):
        self.emit(f"store i64 %{self.pick('i64')}, {P64} %{self.as_type(P64)}, align 8")

    def st_select(self, room, depth, pending):
        ty = self.pick_gc_type()
        a, b = self.pick(ty), self.pick(ty)
        if a == b and self.chance(0.7):
            b = self.as_type_other(ty, a)
        v = self.define(ty, f"select i1 %{self.cond()}, {ty} %{a}, {ty} %{b}")
        if self.chance(0.3):
            pending.append((ty, v))

    def as_type_other(self, ty: str, avoid: str) -> str:
        """A value of type ``ty`` other than ``avoid`` when one can be had cheaply."""
        others = [v for v in self.scope.vals.get(ty, [])[-WINDOW:] if v != avoid]
        if others:
            return self.rng.choice(others)
        if ty == P8:
            return self.define(P8, f"call {P8} @gc_alloc(i64 16, i64 0)")
        return avoid

    def cond(self) -> str:
        """An i1: an existing one, or a fresh pointer comparison."""
        if self.scope.has("i1") and self.chance(0.6):
            return self.pick("i1")
        return self.icmp()

    def icmp(self) -> str:
        ty = self.pick_gc_type()
        a = self.pick(ty)
        b = "null" if self.chance(0.4) else "%" + self.pick(ty)
        pred = self.rng.choice(("eq", "ne", "ne", "ult", "uge"))
        return self.define("i1", f"icmp {pred} {ty} %{a}, {b}")

    def st_icmp(self, room, depth, pending):
        self.icmp()

    def st_leaf(self, room, depth, pending):
        self.define("i64", f"call i64 @hash({P8} %{self.as_type(P8)})")

    def st_arith(self, room, depth, pending):
        self.define("i64", f"{self.rng.choice(('add', 'sub', 'mul', 'and'))} i64 %{self.pick('i64')}, "
                           f"{self.rng.choice(('1', '8', '%' + self.pick('i64')))}")

    def use(self, ty: str, v: str) -> None:
        """Use ``v`` (of type ``ty``) so that it is live up to here."""
        r = self.rng.randrange(3)
        if r == 0:
            self.define("i1", f"icmp ne {ty} %{v}, null")
        elif ty == P8:
            if r == 1:
                self.define("i8", f"load i8, {P8} %{v}, align 1")
            else:
                self.emit(f"call void @bar({P8} %{v})")
        elif ty == P64:
            if r == 1:
                self.define("i64", f"load i64, {P64} %{v}, align 8")
            else:
                self.emit(f"store i64 7, {P64} %{v}, align 8")
        elif ty == PO:
            self.emit(f"call void @baz({PO} %{v}, i64 {r})")
        else:
            self.define(FIELD_OF[ty], f"load {FIELD_OF[ty]}, {ty} %{v}, align 8")

    # -- structured statements -----------------------------------------------------------------
    def split(self, room: int, parts: int, cap: int) -> list[int]:
        total = min(room, cap)
        return [max(1, self.rng.randint(1, max(1, total // parts))) for _ in range(parts)]

    def merge_values(self, k_types: list[str]) -> list[str]:
        """One value per type in ``k_types`` from the current scope (for a phi at a join)."""
        return [self.pick(t) for t in k_types]

    def phi_types(self, most: int) -> list[str]:
        return [self.pick_gc_type() for _ in range(self.rng.randint(0, most))]

    def st_diamond(self, room, depth, pending):
        c = self.cond()
        start = self.cur
        t_bb, f_bb, j_bb = self.fresh("b"), self.fresh("b"), self.fresh("b")
        triangle = self.chance(0.25)
        types = self.phi_types(3)
        skip_vals = self.merge_values(types) if triangle else []
        self.emit(f"br i1 %{c}, label %{t_bb}, label %{j_bb if triangle else f_bb}")
        sub = self.split(room - 4, 2, 60)
        incoming = []
        mark = self.scope.mark()
        self.label(t_bb)
        self.region(sub[0], depth + 1)
        incoming.append((self.merge_values(types), self.cur))
        self.emit(f"br label %{j_bb}")
        self.scope.restore(mark)
        if triangle:
            incoming.append((skip_vals, start))
        else:
            self.label(f_bb)
            self.region(sub[1], depth + 1)
            incoming.append((self.merge_values(types), self.cur))
            self.emit(f"br label %{j_bb}")
            self.scope.restore(mark)
        self.label(j_bb)
        self.join_phis(types, incoming)

    def join_phis(self, types, incoming) -> None:
        for i, ty in enumerate(types):
            ins = ", ".join(f"[ %{vals[i]}, %{bb} ]" for vals, bb in incoming)
            self.define(ty, f"phi {ty} {ins}")

    def st_loop(self, room, depth, pending):
        types = self.phi_types(3)
        inits = []
        for ty in types:
            if ty != PO and self.chance(0.4):  # start from a derived pointer
                out, rhs, _ = self.gep(ty, self.pick(ty))
                inits.append(self.define(out, rhs))
            else:
                inits.append(self.pick(ty))
        pre = self.cur
        h_bb, x_bb = self.fresh("b"), self.fresh("b")
        self.emit(f"br label %{h_bb}")
        self.label(h_bb)
        phi_at = len(self.lines)
        i, i_next, lc = self.fresh(), self.fresh(), self.fresh()
        self.bind("i64", i)
        names = []
        for ty in types:
            names.append(self.fresh())
            self.bind(ty, names[-1])
        self.region(self.split(room - 6, 1, 80)[0], depth + 1)
        latch = self.cur
        backs = []
        for ty, p in zip(types, names):
            r = self.rng.random()
            if r < 0.45 and ty != PO:
                out, rhs, _ = self.gep(ty, p)
                backs.append(self.define(out, rhs))
            elif r < 0.6:
                backs.append(p)
            else:
                backs.append(self.pick(ty))
        bound = f"%{self.pick('i64')}" if self.chance(0.5) else str(self.rng.randint(2, 100))
        self.emit(f"%{i_next} = add i64 %{i}, 1")
        self.emit(f"%{lc} = icmp slt i64 %{i_next}, {bound}")
        self.emit(f"br i1 %{lc}, label %{h_bb}, label %{x_bb}")
        phis = [f"  %{i} = phi i64 [ 0, %{pre} ], [ %{i_next}, %{latch} ]"]
        for ty, p, init, back in zip(types, names, inits, backs):
            phis.append(f"  %{p} = phi {ty} [ %{init}, %{pre} ], [ %{back}, %{latch} ]")
        self.lines[phi_at:phi_at] = phis
        self.count += len(phis)
        # the exit's only predecessor is the latch: everything in scope there stays in scope
        self.label(x_bb)
        self.bind("i64", i_next)
        self.bind("i1", lc)
        if self.chance(0.25):  # LCSSA-style single-entry phis (RS4GC folds them)
            types = self.phi_types(2)
            for ty, v in zip(types, [self.pick(t, convert=False) for t in types]):
                self.define(ty, f"phi {ty} [ %{v}, %{latch} ]")

    def invoke_text(self, callee: str, normal: str, unwind: str) -> tuple[str | None, str, str]:
        ret, params = CALLEES[callee]
        args = self.call_args(params)
        text = f"invoke {ret} @{callee}({args}){self.deopt()} to label %{normal} unwind label %{unwind}"
        if ret == "void":
            return None, ret, text
        return self.fresh(), ret, text

    def landing_pad(self) -> None:
        self.emit(f"%{self.fresh()} = landingpad token cleanup")

    def st_invoke(self, room, depth, pending):
        n_bb, u_bb, j_bb = self.fresh("b"), self.fresh("b"), self.fresh("b")
        callee = self.rng.choice(("foo", "bar", "baz", "make_obj", "gc_alloc", "get_arr"))
        res, rty, text = self.invoke_text(callee, n_bb, u_bb)
        self.emit(f"%{res} = {text}" if res else text)
        sub = self.split(room - 5, 2, 40)
        mark = self.scope.mark()
        unwind_returns = self.chance(0.4)
        types = [] if unwind_returns else self.phi_types(2)
        incoming = []
        self.label(u_bb)
        self.landing_pad()
        self.region(max(1, sub[1] // 2), depth + 2)
        if unwind_returns:
            self.ret()
        else:
            incoming.append((self.merge_values(types), self.cur))
            self.emit(f"br label %{j_bb}")
        self.scope.restore(mark)
        self.label(n_bb)
        if res:
            self.bind(rty, res)
        self.region(sub[0], depth + 1, [(rty, res)] if res else None)
        incoming.append((self.merge_values(types), self.cur))
        self.emit(f"br label %{j_bb}")
        if not unwind_returns:
            self.scope.restore(mark)
        self.label(j_bb)
        self.join_phis(types, incoming)

    def st_invoke_pair(self, room, depth, pending):
        """Two invokes on the arms of a diamond, sharing the normal destination and the landing pad."""
        c = self.cond()
        l_bb, r_bb, j_bb, u_bb = (self.fresh("b") for _ in range(4))
        self.emit(f"br i1 %{c}, label %{l_bb}, label %{r_bb}")
        types = self.phi_types(2)
        mark = self.scope.mark()
        incoming = []
        for arm in (l_bb, r_bb):
            self.label(arm)
            self.region(self.rng.randint(1, max(1, min(room // 4, 12))), depth + 2)
            callee = self.rng.choice(("foo", "bar", "make_obj", "gc_alloc"))
            res, rty, text = self.invoke_text(callee, j_bb, u_bb)
            vals = self.merge_values(types)
            if res is not None and rty in types and self.chance(0.7):
                vals[types.index(rty)] = res  # the invoke's result flows into the join on the normal edge
            self.emit(f"%{res} = {text}" if res else text)
            incoming.append((vals, self.cur))
            self.scope.restore(mark)
        self.label(u_bb)
        self.landing_pad()
        self.region(self.rng.randint(1, 4), depth + 3)
        self.ret()
        self.scope.restore(mark)
        self.label(j_bb)
        self.join_phis(types, incoming)


def generate_function(seed: int, size: int, name: str | None = None) -> str:
    """The text of one function of about ``size`` instructions (``@g<seed>`` unless named)."""
    return FunctionGenerator(seed, size, name or f"g{seed}").generate()


def module_of(functions: list[str]) -> str:
    """A module holding the shared declarations and the given function texts."""
    return PREAMBLE + "\n" + "\n".join(functions)


def generate(seed: int, size: int) -> str:
    """A whole module: the declarations and one generated function (``@g<seed>``)."""
    return module_of([generate_function(seed, size)])


if __name__ == "__main__":  # pragma: no cover - a convenience for looking at samples
    import sys

    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 1, int(sys.argv[2]) if len(sys.argv) > 2 else 40))
