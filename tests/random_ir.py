"""Random well-formed LLVM IR *text* (typed pointers, LLVM 14 syntax), valid by construction.

The generator is driven by a :class:`Chooser`, so the same code serves two masters:

* :class:`RandomChooser` wraps ``random.Random(seed)``: reproducible modules of any size
  (the parse/print benchmark, its smoke test);
* :class:`DrawChooser` wraps hypothesis' ``data.draw``: small modules that shrink when a
  property fails (the round-trip property test).

Validity is kept by construction, not by checking afterwards:

* a value may be used in its own block after its definition, or anywhere if it is an
  argument or is defined in the entry block (the entry block dominates every block);
* every block ``bbK`` (K >= 1) has ``bb(K-1)`` as a predecessor, other edges only go
  forward (``bbI -> bbJ`` with J > I + 1) or from a block to itself (a one-block loop);
  so every block is reachable and the entry block has no predecessors;
* a phi has exactly one entry per predecessor, and each incoming value is available at
  the end of that predecessor (an argument, an entry-block value, or a value of the
  predecessor itself);
* statepoints are in the modern form: ``gc-live`` lists GC pointers available at the call,
  each ``gc.relocate`` names two in-bounds ``gc-live`` indices, relocated values join the
  pool of the block.

Unnamed results (``%0``, ``%1``...) are written as placeholders and numbered in text order
once the function is complete, because a self-loop phi is only filled in after its block.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Protocol, Sequence, TypeVar

T = TypeVar("T")

GCPTR = "i8 addrspace(1)*"
INT_TYPES = ("i1", "i8", "i32", "i64")
#: types a function argument, a struct field or a phi may have
SCALARS = ("i1", "i8", "i32", "i64", "double", GCPTR)
RET_TYPES = ("void", "i64", "i32", GCPTR)

SP_DECLS = {
    "void": (
        "declare token @llvm.experimental.gc.statepoint.p0f_isVoidf"
        "(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)"
    ),
    "i64": (
        "declare token @llvm.experimental.gc.statepoint.p0f_i64i64f"
        "(i64 immarg, i32 immarg, i64 (i64)*, i32 immarg, i32 immarg, ...)"
    ),
    "gc": (
        "declare token @llvm.experimental.gc.statepoint.p0f_p1i8i64f"
        "(i64 immarg, i32 immarg, i8 addrspace(1)* (i64)*, i32 immarg, i32 immarg, ...)"
    ),
}
RELOCATE_DECL = (
    "declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0"
)
RESULT_DECLS = {
    "i64": "declare i64 @llvm.experimental.gc.result.i64(token) #0",
    "gc": "declare i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token) #0",
}


class Chooser(Protocol):
    """Where the generator's decisions come from."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""

    def choice(self, items: Sequence[T]) -> T:
        """One of ``items`` (non-empty)."""

    def chance(self, percent: int) -> bool:
        """True with probability ``percent`` / 100."""


class RandomChooser:
    """Decisions from ``random.Random(seed)``: reproducible for a given seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.rng.randrange(len(items))]

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent


class DrawChooser:
    """Decisions drawn from hypothesis (a composite's ``draw`` or ``data.draw``), so failing modules shrink."""

    def __init__(self, draw) -> None:
        from hypothesis import strategies as st

        self.draw = draw
        self.st = st

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def choice(self, items: Sequence[T]) -> T:
        return items[self.draw(self.st.integers(0, len(items) - 1))]

    def chance(self, percent: int) -> bool:
        # shrinks towards 0, i.e. towards "no"
        return self.draw(self.st.integers(0, 99)) >= 100 - percent


@dataclass(frozen=True)
class Limits:
    """Size knobs of one generated module."""

    functions: tuple[int, int] = (1, 3)
    blocks: tuple[int, int] = (1, 4)
    instructions: tuple[int, int] = (1, 8)
    structs: tuple[int, int] = (0, 2)
    globals: tuple[int, int] = (0, 3)
    externals: tuple[int, int] = (1, 3)
    statepoint_percent: int = 12


@dataclass
class _Value:
    ty: str
    ref: str  # the operand text: '%x', a placeholder, '@g'


@dataclass
class _Block:
    name: str
    lines: list[str] = field(default_factory=list)
    pool: list[_Value] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


def pointee(ty: str) -> str | None:
    """``'i64*'`` -> ``'i64'``; None for a GC pointer or a non-pointer."""
    if ty.endswith("*") and not ty.endswith("addrspace(1)*"):
        return ty[:-1]
    return None


class ModuleGenerator:
    """Builds one module's text from a Chooser's decisions."""

    def __init__(self, chooser: Chooser, limits: Limits = Limits()) -> None:
        self.c = chooser
        self.limits = limits
        self.structs: dict[str, tuple[str, ...]] = {}
        self.globals: list[_Value] = []
        self.externals: dict[str, tuple[str, tuple[str, ...]]] = {}
        self.used_sp: set[str] = set()
        self.used_relocate = False
        self.used_result: set[str] = set()
        self.fn_count = 0
        self.unnamed = 0
        self.with_gc = False

    # -- module level ----------------------------------------------------------
    def header(self) -> list[str]:
        """Named structs, globals and external declarations (call once, first)."""
        c, lim = self.c, self.limits
        out: list[str] = []
        for k in range(c.integer(*lim.structs)):
            n = c.integer(1, 4)
            fields = tuple(c.choice(SCALARS) for _ in range(n))
            name = f"%struct.S{k}"
            self.structs[name] = fields
            out.append(f"{name} = type {{ {', '.join(fields)} }}")
        for k in range(c.integer(*lim.globals)):
            kind = c.integer(0, 2)
            if kind == 0 or not self.structs:
                ty = c.choice(("i64", "i32"))
                init = str(c.integer(-1000, 1000))
            elif kind == 1:
                ty = c.choice(tuple(self.structs))
                init = "zeroinitializer"
            else:
                ty = GCPTR
                init = "null"
            name = f"@g{k}"
            const = "constant" if c.chance(20) else "global"
            linkage = c.choice(("", "internal ", "private "))
            out.append(f"{name} = {linkage}{const} {ty} {init}")
            if const == "global":
                self.globals.append(_Value(ty + "*", name))
        for k in range(c.integer(*lim.externals)):
            ret = c.choice(RET_TYPES)
            params = tuple(c.choice(SCALARS) for _ in range(c.integer(0, 3)))
            name = f"@ext{k}"
            self.externals[name] = (ret, params)
            out.append(f"declare {ret} {name}({', '.join(params)})")
        out.append("declare void @sp_void()")
        out.append("declare i64 @sp_i64(i64)")
        out.append("declare i8 addrspace(1)* @sp_alloc(i64)")
        return out

    def trailer(self) -> list[str]:
        """Intrinsic declarations that the functions used, and the attribute group."""
        out = [SP_DECLS[k] for k in ("void", "i64", "gc") if k in self.used_sp]
        if self.used_relocate:
            out.append(RELOCATE_DECL)
        out += [RESULT_DECLS[k] for k in ("i64", "gc") if k in self.used_result]
        if self.used_relocate or self.used_result:
            out.append("attributes #0 = { nounwind readnone }")
        return out

    def module(self) -> str:
        """A whole module with the limits' number of functions."""
        parts = ["\n".join(self.header())]
        for _ in range(self.c.integer(*self.limits.functions)):
            parts.append(self.function())
        trailer = self.trailer()
        if trailer:
            parts.append("\n".join(trailer))
        return "\n\n".join(parts) + "\n"

    # -- functions ---------------------------------------------------------------
    def function(self) -> str:
        """One function definition."""
        c, lim = self.c, self.limits
        name = f"@f{self.fn_count}"
        self.fn_count += 1
        self.unnamed = 0
        ret = c.choice(RET_TYPES)
        ptypes = [c.choice(SCALARS + ("i64*", GCPTR)) for _ in range(c.integer(0, 4))]
        if self.structs and c.chance(40):
            ptypes.append(c.choice(tuple(self.structs)) + "*")
        args = [_Value(t, f"%a{k}") for k, t in enumerate(ptypes)]
        # LLVM only accepts a statepoint inside a function that names a GC
        self.with_gc = c.chance(70)
        gc = ' gc "statepoint-example"' if self.with_gc else ""
        head = f"define {ret} {name}({', '.join(f'{a.ty} {a.ref}' for a in args)}){gc} {{"

        nblocks = c.integer(*lim.blocks)
        blocks = [_Block("entry" if k == 0 else f"bb{k}") for k in range(nblocks)]
        # edges: bbK-1 -> bbK always; maybe a forward edge or a self loop
        succs: list[list[int]] = []
        for k in range(nblocks):
            if k == nblocks - 1:
                succs.append([])
                continue
            s = [k + 1]
            if c.chance(50):
                options = [j for j in range(k + 2, nblocks)] + ([k] if k > 0 else [])
                if options:
                    s.append(c.choice(options))
            succs.append(s)
        for k, s in enumerate(succs):
            for j in s:
                blocks[j].preds.append(k)

        entry_pool = list(args) + list(self.globals)
        deferred: list[tuple[_Block, int, str, list[tuple[int, _Value | None]]]] = []
        for k, b in enumerate(blocks):
            b.pool = list(entry_pool) if k > 0 else list(args) + list(self.globals)
            if k > 0:
                self.phis(b, k, blocks, deferred)
            for _ in range(c.integer(*lim.instructions)):
                self.instruction(b, entry=(k == 0))
            self.terminator(b, k, succs[k], ret)
            if k == 0:
                entry_pool = b.pool
        for b, line_no, ty, incoming in deferred:
            parts = []
            for pred, v in incoming:
                if v is None:  # the self edge, filled now that the block is complete
                    v = self.available(blocks[pred].pool, ty)
                parts.append(f"[ {v.ref}, %{blocks[pred].name} ]")
            b.lines[line_no] = b.lines[line_no].replace("@INCOMING@", ", ".join(parts))
        body = []
        for b in blocks:
            body.append(f"{b.name}:")
            body += ["  " + line for line in b.lines]
        text = "\n".join([head, *body, "}"])
        return _number_placeholders(text)

    def fresh(self, hint: str) -> str:
        """A new result name: a named ``%hintN`` or an unnamed placeholder."""
        self.unnamed += 1
        if self.c.chance(30):
            return f"%__u{self.unnamed}__"
        return f"%{hint}{self.unnamed}"

    def available(self, pool: list[_Value], ty: str) -> _Value:
        """A value of type ``ty`` from ``pool``, or a constant of that type."""
        cands = [v for v in pool if v.ty == ty]
        if cands and not self.c.chance(15):
            return self.c.choice(cands)
        return _Value(ty, self.constant(ty))

    def constant(self, ty: str) -> str:
        c = self.c
        if ty == "i1":
            return c.choice(("true", "false"))
        if ty in ("i8", "i32", "i64"):
            return str(c.integer(-128, 127) if ty == "i8" else c.integer(-100000, 100000))
        if ty == "double":
            return c.choice(("0.0", "1.5", "-2.25", "1.000000e+10"))
        if ty.endswith("*"):
            return "null"
        if ty in self.structs:
            return "zeroinitializer"
        raise AssertionError(ty)

    # -- phis ---------------------------------------------------------------------------
    def phis(self, b: _Block, k: int, blocks: list[_Block], deferred) -> None:
        c = self.c
        for _ in range(c.integer(0, 2)):
            ty = c.choice(("i64", "i32", "i1", GCPTR))
            incoming: list[tuple[int, _Value | None]] = []
            for p in b.preds:
                incoming.append((p, None if p == k else self.available(blocks[p].pool, ty)))
            name = self.fresh("phi")
            if any(v is None for _, v in incoming):
                deferred.append((b, len(b.lines), ty, incoming))
                b.lines.append(f"{name} = phi {ty} @INCOMING@")
            else:
                parts = ", ".join(f"[ {v.ref}, %{blocks[p].name} ]" for p, v in incoming)
                b.lines.append(f"{name} = phi {ty} {parts}")
            b.pool.append(_Value(ty, name))

    # -- terminators ---------------------------------------------------------------------
    def terminator(self, b: _Block, k: int, succs: list[int], ret: str) -> None:
        if not succs:
            if ret == "void":
                b.lines.append("ret void")
            else:
                b.lines.append(f"ret {ret} {self.available(b.pool, ret).ref}")
            return
        names = [f"bb{j}" if j else "entry" for j in succs]
        if len(succs) == 1:
            b.lines.append(f"br label %{names[0]}")
            return
        cond = self.available(b.pool, "i1")
        if cond.ref in ("true", "false") and self.c.chance(50):
            x = self.available(b.pool, "i64")
            name = self.fresh("cmp")
            b.lines.append(f"{name} = icmp slt i64 {x.ref}, {self.c.integer(-5, 5)}")
            cond = _Value("i1", name)
        if self.c.chance(50):
            names.reverse()
        b.lines.append(f"br i1 {cond.ref}, label %{names[0]}, label %{names[1]}")

    # -- ordinary instructions ------------------------------------------------------------------
    def instruction(self, b: _Block, entry: bool) -> None:
        c = self.c
        kinds = ["binop", "binop", "icmp", "select", "cast", "load", "store", "gep", "call", "fop"]
        if entry:
            kinds += ["alloca", "alloca"]
        if self.with_gc and c.chance(self.limits.statepoint_percent):
            self.statepoint(b)
            return
        getattr(self, "inst_" + c.choice(kinds))(b)

    def define(self, b: _Block, ty: str, text: str, hint: str) -> _Value:
        name = self.fresh(hint)
        b.lines.append(f"{name} = {text}")
        v = _Value(ty, name)
        b.pool.append(v)
        return v

    def inst_binop(self, b: _Block) -> None:
        c = self.c
        ty = c.choice(("i64", "i32", "i8"))
        op = c.choice(("add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "sdiv", "urem"))
        flags = ""
        if op in ("add", "sub", "mul", "shl") and c.chance(30):
            flags = c.choice(("nsw ", "nuw ", "nuw nsw "))
        x, y = self.available(b.pool, ty), self.available(b.pool, ty)
        self.define(b, ty, f"{op} {flags}{ty} {x.ref}, {y.ref}", op)

    def inst_fop(self, b: _Block) -> None:
        op = self.c.choice(("fadd", "fsub", "fmul", "fdiv"))
        x, y = self.available(b.pool, "double"), self.available(b.pool, "double")
        self.define(b, "double", f"{op} double {x.ref}, {y.ref}", op)

    def inst_icmp(self, b: _Block) -> None:
        c = self.c
        ty = c.choice(("i64", "i32", GCPTR))
        preds = ("eq", "ne") if ty == GCPTR else ("eq", "ne", "slt", "sle", "sgt", "uge", "ult")
        x, y = self.available(b.pool, ty), self.available(b.pool, ty)
        self.define(b, "i1", f"icmp {c.choice(preds)} {ty} {x.ref}, {y.ref}", "cmp")

    def inst_select(self, b: _Block) -> None:
        ty = self.c.choice(("i64", "i32", GCPTR, "double"))
        cond = self.available(b.pool, "i1")
        x, y = self.available(b.pool, ty), self.available(b.pool, ty)
        self.define(b, ty, f"select i1 {cond.ref}, {ty} {x.ref}, {ty} {y.ref}", "sel")

    def inst_cast(self, b: _Block) -> None:
        c = self.c
        op, src, dst = c.choice((
            ("zext", "i32", "i64"), ("sext", "i32", "i64"), ("trunc", "i64", "i32"),
            ("zext", "i1", "i32"), ("trunc", "i64", "i8"), ("sext", "i8", "i64"),
            ("sitofp", "i64", "double"), ("fptosi", "double", "i32"),
            ("ptrtoint", GCPTR, "i64"), ("bitcast", "i64*", "i8*"),
        ))
        x = self.available(b.pool, src)
        self.define(b, dst, f"{op} {src} {x.ref} to {dst}", op)

    def pointers(self, b: _Block, scalar_pointee: bool) -> list[_Value]:
        out = []
        for v in b.pool:
            p = pointee(v.ty)
            if p is not None and (not scalar_pointee or p in SCALARS):
                out.append(v)
        return out

    def inst_load(self, b: _Block) -> None:
        ptrs = self.pointers(b, True)
        if not ptrs:
            return self.inst_binop(b)
        p = self.c.choice(ptrs)
        ty = pointee(p.ty)
        align = f", align {self.c.choice((1, 4, 8))}" if self.c.chance(40) else ""
        vol = "volatile " if self.c.chance(10) else ""
        self.define(b, ty, f"load {vol}{ty}, {p.ty} {p.ref}{align}", "ld")

    def inst_store(self, b: _Block) -> None:
        ptrs = self.pointers(b, True)
        if not ptrs:
            return self.inst_icmp(b)
        p = self.c.choice(ptrs)
        ty = pointee(p.ty)
        v = self.available(b.pool, ty)
        align = f", align {self.c.choice((1, 4, 8))}" if self.c.chance(40) else ""
        b.lines.append(f"store {ty} {v.ref}, {p.ty} {p.ref}{align}")

    def inst_gep(self, b: _Block) -> None:
        c = self.c
        structs = [v for v in b.pool if pointee(v.ty) in self.structs]
        gcs = [v for v in b.pool if v.ty == GCPTR]
        arrays = [v for v in b.pool if pointee(v.ty) in ("i64", "i32", "i8")]
        kind = c.integer(0, 2)
        inb = "inbounds " if c.chance(40) else ""
        if kind == 0 and structs:
            p = c.choice(structs)
            sty = pointee(p.ty)
            j = c.integer(0, len(self.structs[sty]) - 1)
            fty = self.structs[sty][j]
            self.define(b, fty + "*", f"getelementptr {inb}{sty}, {p.ty} {p.ref}, i64 0, i32 {j}", "fld")
        elif kind == 1 and gcs:
            p = c.choice(gcs)
            off = self.available(b.pool, "i64")
            self.define(b, GCPTR, f"getelementptr {inb}i8, {GCPTR} {p.ref}, i64 {off.ref}", "derived")
        elif arrays:
            p = c.choice(arrays)
            ety = pointee(p.ty)
            idx = self.available(b.pool, "i64")
            self.define(b, p.ty, f"getelementptr {inb}{ety}, {p.ty} {p.ref}, i64 {idx.ref}", "elt")
        else:
            self.inst_cast(b)

    def inst_alloca(self, b: _Block) -> None:
        c = self.c
        ty = c.choice(("i64", "i32", GCPTR, "i8") + tuple(self.structs))
        align = f", align {c.choice((4, 8, 16))}" if c.chance(50) else ""
        self.define(b, ty + "*", f"alloca {ty}{align}", "slot")

    def inst_call(self, b: _Block) -> None:
        if not self.externals:
            return self.inst_binop(b)
        name = self.c.choice(tuple(self.externals))
        ret, params = self.externals[name]
        args = ", ".join(f"{t} {self.available(b.pool, t).ref}" for t in params)
        tail = "tail " if self.c.chance(15) else ""
        if ret == "void":
            b.lines.append(f"{tail}call void {name}({args})")
        else:
            self.define(b, ret, f"{tail}call {ret} {name}({args})", "r")

    # -- statepoints -------------------------------------------------------------------------------
    def statepoint(self, b: _Block) -> None:
        c = self.c
        kind = c.choice(("void", "void", "i64", "gc"))
        self.used_sp.add(kind)
        ident = c.choice((2882400000, 0, 7, c.integer(0, 1 << 40)))
        patch = c.choice((0, 0, 0, 5, 16))
        if kind == "void":
            head = ("call token (i64, i32, void ()*, i32, i32, ...) "
                    f"@llvm.experimental.gc.statepoint.p0f_isVoidf(i64 {ident}, i32 {patch}, "
                    "void ()* @sp_void, i32 0, i32 0, i32 0, i32 0)")
        else:
            arg = self.available(b.pool, "i64")
            if kind == "i64":
                head = ("call token (i64, i32, i64 (i64)*, i32, i32, ...) "
                        f"@llvm.experimental.gc.statepoint.p0f_i64i64f(i64 {ident}, i32 {patch}, "
                        f"i64 (i64)* @sp_i64, i32 1, i32 0, i64 {arg.ref}, i32 0, i32 0)")
            else:
                head = ("call token (i64, i32, i8 addrspace(1)* (i64)*, i32, i32, ...) "
                        f"@llvm.experimental.gc.statepoint.p0f_p1i8i64f(i64 {ident}, i32 {patch}, "
                        f"i8 addrspace(1)* (i64)* @sp_alloc, i32 1, i32 0, i64 {arg.ref}, i32 0, i32 0)")
        bundles = []
        if c.chance(30):
            vals = [self.available(b.pool, c.choice(("i32", "i64"))) for _ in range(c.integer(0, 3))]
            bundles.append('"deopt"(' + ", ".join(f"{v.ty} {v.ref}" for v in vals) + ")")
        gcs = [v for v in b.pool if v.ty == GCPTR]
        live: list[_Value] = []
        if gcs:
            for _ in range(c.integer(1, min(4, len(gcs) + 1))):
                live.append(c.choice(gcs))
        if live:
            bundles.append('"gc-live"(' + ", ".join(f"{GCPTR} {v.ref}" for v in live) + ")")
        text = head + (" [ " + ", ".join(bundles) + " ]" if bundles else "")
        tok = self.fresh("tok")
        b.lines.append(f"{tok} = {text}")
        if kind != "void" and c.chance(70):
            self.used_result.add(kind)
            rty = "i64" if kind == "i64" else GCPTR
            mangled = "i64" if kind == "i64" else "p1i8"
            self.define(b, rty, f"call {rty} @llvm.experimental.gc.result.{mangled}(token {tok})", "res")
        relocated = []
        for d in range(len(live)):
            if not c.chance(75):
                continue
            base = d if c.chance(60) else c.integer(0, len(live) - 1)
            cc = "coldcc " if c.chance(30) else ""
            self.used_relocate = True
            name = self.fresh("rel")
            b.lines.append(
                f"{name} = call {cc}{GCPTR} @llvm.experimental.gc.relocate.p1i8"
                f"(token {tok}, i32 {base}, i32 {d})"
            )
            relocated.append(_Value(GCPTR, name))
        b.pool += relocated


_PLACEHOLDER = re.compile(r"%__u(\d+)__")


def _number_placeholders(text: str) -> str:
    """Give unnamed placeholders the numbers LLVM expects: 0, 1, 2... in order of definition."""
    numbers: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*(%__u\d+__) =", line)
        if m:
            numbers[m.group(1)] = len(numbers)
    return _PLACEHOLDER.sub(lambda m: f"%{numbers[m.group(0)]}", text)


def random_module(chooser: Chooser, limits: Limits = Limits()) -> str:
    """One module's text."""
    return ModuleGenerator(chooser, limits).module()


def module_of_lines(target_lines: int, seed: int = 2024) -> str:
    """A reproducible module of about ``target_lines`` lines (at least that many) for benchmarks."""
    limits = Limits(functions=(1, 1), blocks=(1, 6), instructions=(2, 14), structs=(3, 3),
                    globals=(4, 4), externals=(6, 6), statepoint_percent=10)
    gen = ModuleGenerator(RandomChooser(seed), limits)
    parts = ["\n".join(gen.header())]
    lines = parts[0].count("\n") + 1
    while True:
        trailer = gen.trailer()
        if lines + 1 + len(trailer) >= target_lines:
            break
        fn = gen.function()
        parts.append(fn)
        lines += fn.count("\n") + 2  # the function and the blank line before it
    parts.append("\n".join(trailer))
    return "\n\n".join(parts) + "\n"
