"""What RewriteStatepointsForGC decided, per original call, in terms of the *input's* values.

RS4GC's output names things its own way: a live value shows up in a later ``gc-live``
bundle as ``%x.relocated``, ``%x.relocated.casted``, ``%x.remat`` or a ``%.0`` phi that
mem2reg made from copies of ``%x``; base pointers it had to invent are ``%p.base`` /
``%base_phi`` / ``%base_select`` (carrying ``!is_base_value``). This module reads the output
(with gctoy's parser), walks back from every ``gc.relocate`` to the input value it stands
for, and reports, per call of the input that became a statepoint:

* ``pairs``: the set of ``(base, derived)`` relocated there, as strings: ``"%v3"`` for an
  input value (``"%7"`` for an unnamed one, numbered as in the input), ``"base-of(%p)"``
  for a base phi/select inserted for the input's phi/select ``%p``;
* ``remat``: the input values rematerialized after it instead of relocated: the ``.remat``
  clones whose chain starts at one of its relocates (both edges of an invoke), counting a
  clone when it has no users or a user other than the next clone of a chain (so the
  intermediate links of a chain made for ``%g2`` do not count, a clone shared by two
  chains and used on its own does).

Calls are keyed ``(function name, k)``: the k-th ``call``/``invoke`` of the function in the
input, counting every call in text order (0-based), whether it became a statepoint or not
(calls of ``"gc-leaf-function"`` callees and intrinsics do not; they get no key).

How output values are matched to input values:

* arguments by position; instructions that kept their input name by that name; unnamed
  instructions by their order among the unnamed instructions of the same opcode;
* ``gc.relocate`` -> the ``gc-live`` entry it relocates; bitcasts of a relocate (the
  ``.casted`` casts of LLVM 14) -> the relocate; ``gc.result`` of the k-th statepoint ->
  the k-th call of the input;
* a phi named ``.N`` (mem2reg's) -> the single input value its incoming values stand for
  (cycles through loops are cut);
* ``X.remat``/``X.remat3`` -> ``X``; an unnamed ``X`` is found by opcode and operands;
* an ``!is_base_value`` phi/select (or extractelement/insertelement/shufflevector, for
  vectors) named ``X.base`` -> ``base-of(X)``; an unnamed one (``base_phi``, ``base_select``,
  ``base_ee``, ``base_ie``, ``base_sv``) -> ``base-of`` the next original instruction of its
  block (RS4GC puts it right before the node it is the base of); the base of the broadcast
  RS4GC makes of a scalar GEP base (``.splat.base``) -> ``%.splat``.

Anything else raises :class:`OracleError` (so a new output shape is noticed, not guessed).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gctoy.ir import parse_module
from gctoy.ir import instructions as I
from gctoy.ir.intrinsics import is_relocate_name, is_result_name, is_statepoint_name
from gctoy.ir.module import Module
from gctoy.ir.printer import print_operand
from gctoy.ir.statepoint import token_statepoint
from gctoy.ir.types import VOID
from gctoy.ir.values import Argument, Constant, Function, Value

CallKey = tuple[str, int]
Pair = tuple[str, str]

_REMAT = re.compile(r"^(.*)\.remat\d*$")
_BASE = re.compile(r"^(.*)\.base\d*$")
_MEM2REG = re.compile(r"^\.\d+$")
_BASE_NODE_KINDS = (I.Phi, I.Select, I.ExtractElement, I.InsertElement, I.ShuffleVector)
#: the broadcast RS4GC builds of a GEP's scalar base when its indices are vectors
_SPLAT = re.compile(r"^\.splat(insert)?\d*$")


class OracleError(Exception):
    """The output has a shape the oracle cannot map back to the input."""


@dataclass(frozen=True)
class CallFacts:
    """What RS4GC did at one call of the input."""

    pairs: frozenset[Pair]
    remat: frozenset[str]


# ---------------------------------------------------------------------------
# running LLVM


def run_rs4gc(opt: str | Path, text: str, extra: list[str] | None = None, timeout: float = 600) -> str:
    """LLVM's ``opt -passes=rewrite-statepoints-for-gc -S`` on ``text``; raises OracleError on failure."""
    r = subprocess.run([str(opt), "-passes=rewrite-statepoints-for-gc", *(extra or []), "-S"],
                       input=text, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise OracleError(f"opt rewrite-statepoints-for-gc failed:\n{r.stderr}")
    return r.stdout


# ---------------------------------------------------------------------------
# the input side


def _reachable(fn: Function) -> set[int]:
    seen = {id(fn.entry)}
    work = [fn.entry]
    while work:
        b = work.pop()
        for s in b.successors:
            if id(s) not in seen:
                seen.add(id(s))
                work.append(s)
    return seen


def _slot_names(fn: Function) -> dict[int, str]:
    """``id(value) -> "%name"`` for the arguments and instructions, numbering unnamed ones as LLVM does."""
    out: dict[int, str] = {}
    n = 0
    for a in fn.args:
        if a.name is None:
            out[id(a)] = f"%{n}"
            n += 1
        else:
            out[id(a)] = f"%{a.name}"
    for b in fn.blocks:
        if b.name is None:
            n += 1
        for inst in b.instructions:
            if inst.name is not None:
                out[id(inst)] = f"%{inst.name}"
            elif inst.type != VOID:
                out[id(inst)] = f"%{n}"
                n += 1
    return out


def _is_call_site(inst) -> bool:
    return isinstance(inst, I.CallBase) and not (is_relocate_name(inst.callee_name)
                                                 or is_result_name(inst.callee_name))


def _alignment_key(inst) -> str | None:
    """Unnamed instructions are matched by their order within this key (None: not matched this way)."""
    if inst.name is not None or inst.type == VOID or isinstance(inst, (I.CallBase, I.ICmp, I.FCmp)):
        return None
    return inst.opcode


class _Source:
    """One function of the input."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.repr = _slot_names(fn)
        self.by_name = {a.name: a for a in fn.args if a.name is not None}
        for inst in fn.instructions():
            if inst.name is not None:
                self.by_name[inst.name] = inst
        self.args = list(fn.args)
        live = _reachable(fn)
        # (index among all calls, call) for the calls in reachable blocks
        self.calls: list[tuple[int, I.CallBase]] = []
        k = 0
        for b in fn.blocks:
            for inst in b.instructions:
                if isinstance(inst, I.CallBase):
                    if id(b) in live:
                        self.calls.append((k, inst))
                    k += 1
        self.unnamed: dict[str, list[I.Instruction]] = {}
        preds: dict[int, int] = {}
        for b in fn.blocks:
            for s in b.successors:
                preds[id(s)] = preds.get(id(s), 0) + 1
        for b in fn.blocks:
            if id(b) not in live:
                continue
            for inst in b.instructions:
                key = _alignment_key(inst)
                if key is None:
                    continue
                if isinstance(inst, I.Phi) and len(inst.incoming) == 1 and preds.get(id(b)) == 1:
                    continue  # RS4GC folds single-entry phis of single-predecessor blocks
                self.unnamed.setdefault(key, []).append(inst)

    def name_of(self, v: Value) -> str:
        return self.repr[id(v)]


# ---------------------------------------------------------------------------
# the output side


def _inserted(inst) -> bool:
    """Instructions RS4GC adds (so they are skipped when matching unnamed originals by order)."""
    if isinstance(inst, I.CallBase):
        return True
    if any(k == "is_base_value" for k, _ in inst.metadata):
        return True
    name = inst.name
    if name is not None:
        return bool(_MEM2REG.match(name) or _REMAT.match(name) or name.endswith(".casted"))
    return isinstance(inst, I.Cast) and _is_relocate(inst.value)


def _is_relocate(v) -> bool:
    return isinstance(v, I.Call) and is_relocate_name(v.callee_name)


def _is_result(v) -> bool:
    return isinstance(v, I.Call) and is_result_name(v.callee_name)


def _is_remat(v) -> bool:
    return isinstance(v, (I.GetElementPtr, I.Cast)) and v.name is not None and bool(_REMAT.match(v.name))


def _is_base_node(v) -> bool:
    return isinstance(v, I.Instruction) and any(k == "is_base_value" for k, _ in v.metadata)


class _Mapper:
    """Maps the values of one output function back to the input function."""

    def __init__(self, out_fn: Function, src: _Source):
        self.fn = out_fn
        self.src = src
        self.memo: dict[int, str] = {}
        # call sites, aligned with the input's reachable calls
        sites = [i for i in out_fn.instructions() if _is_call_site(i)]
        if len(sites) != len(src.calls):
            raise OracleError(f"@{out_fn.name}: {len(src.calls)} reachable calls in the input, "
                              f"{len(sites)} call sites in the output")
        self.site_of: dict[int, tuple[int, I.CallBase]] = {id(s): kc for s, kc in zip(sites, src.calls)}
        self.statepoints = [s for s in sites if is_statepoint_name(s.callee_name)]
        # unnamed originals, by order within their opcode
        self.aligned: dict[int, Value] = {}
        seq: dict[str, list[I.Instruction]] = {}
        for inst in out_fn.instructions():
            key = _alignment_key(inst)
            if key is not None and not _inserted(inst):
                seq.setdefault(key, []).append(inst)
        self.misaligned = {k for k in set(seq) | set(src.unnamed)
                           if len(seq.get(k, [])) != len(src.unnamed.get(k, []))}
        for k, outs in seq.items():
            for o, s in zip(outs, src.unnamed.get(k, [])):
                self.aligned[id(o)] = s
        self.reloc_sp: dict[int, I.CallBase] = {}
        for inst in out_fn.instructions():
            if _is_relocate(inst):
                self.reloc_sp[id(inst)] = _statepoint_of_relocate(inst)
        self.users: dict[int, list[I.Instruction]] = {}
        for inst in out_fn.instructions():
            for op in inst.operands:
                if isinstance(op, I.Instruction):
                    self.users.setdefault(id(op), []).append(inst)

    # -- what an output value stands for ------------------------------------------------------
    def source_value(self, v: Value) -> Value | None:
        """The input value an *original* output value is (None if ``v`` is not one)."""
        if isinstance(v, Argument):
            return self.src.args[self.fn.args.index(v)]
        if not isinstance(v, I.Instruction) or id(v) in self.reloc_sp or _is_result(v) or _is_base_node(v):
            return None
        if v.name is not None:
            s = self.src.by_name.get(v.name)
            if s is None or isinstance(s, I.CallBase) != isinstance(v, I.CallBase):
                return None  # a call's name is taken over by its gc.result (uniqued): not the same value
            return s
        if _inserted(v):
            return None
        s = self.aligned.get(id(v))
        if s is None:
            return None
        if _alignment_key(v) in self.misaligned:
            raise OracleError(f"@{self.fn.name}: cannot match unnamed '{v.opcode}' instructions of the "
                              "output with the input's by order (their numbers differ)")
        return s

    def resolve(self, v: Value) -> str:
        """The input value (or ``base-of(...)``) that output value ``v`` stands for."""
        got = self.memo.get(id(v))
        if got is not None:
            return got
        leaves, _ = self._leaves(v, set())
        if len(leaves) != 1:
            what = print_operand(v)
            raise OracleError(f"@{self.fn.name}: {what} stands for {sorted(leaves) or 'nothing'}")
        (out,) = leaves
        self.memo[id(v)] = out
        return out

    def _leaves(self, v: Value, visiting: set[int]) -> tuple[set[str], set[int]]:
        """Input values ``v`` may stand for, and the values on the path where a cycle was cut.

        Relocates, their casts and mem2reg's phis are looked through; a value is memoized once
        nothing below it was cut short except at the value itself (then its set is complete).
        """
        key = id(v)
        if key in self.memo:
            return {self.memo[key]}, set()
        if isinstance(v, Constant):
            return set(), set()
        if key in visiting:
            return set(), {key}
        inputs = self._through(v)
        if inputs is None:
            out = {self._leaf(v)}
            self.memo[key] = next(iter(out))
            return out, set()
        visiting.add(key)
        leaves: set[str] = set()
        cuts: set[int] = set()
        for inp in inputs:
            got, c = self._leaves(inp, visiting)
            leaves |= got
            cuts |= c
        visiting.discard(key)
        cuts.discard(key)
        if not cuts and len(leaves) == 1:
            self.memo[key] = next(iter(leaves))
        return leaves, cuts

    def _through(self, v: Value) -> list[Value] | None:
        """The values a copy-like output value stands for (None: ``v`` is a leaf)."""
        if self.source_value(v) is not None:
            return None
        if id(v) in self.reloc_sp:
            return [_gc_live(self.reloc_sp[id(v)])[_int(v.args[2])]]
        if isinstance(v, I.Cast) and (id(v.value) in self.reloc_sp or (v.name or "").endswith(".casted")):
            return [v.value]
        if isinstance(v, I.Phi) and (v.name is None or _MEM2REG.match(v.name)) and not _is_base_node(v):
            return [inc for inc, _ in v.incoming]
        return None

    def _leaf(self, v: Value) -> str:
        s = self.source_value(v)
        if s is not None:
            return self.src.name_of(s)
        if _is_result(v):
            k, call = self.site_of[id(v.args[0])]
            return self.src.name_of(call)
        if _is_base_node(v):
            return f"base-of({self.base_target(v)})"
        if _is_remat(v):
            return self.src.name_of(self.remat_original(v))
        raise OracleError(f"@{self.fn.name}: cannot tell which input value {print_operand(v)} stands for")

    def base_target(self, node: I.Instruction) -> str:
        """The input phi/select an inserted base node was made for."""
        m = _BASE.match(node.name or "")
        if m and m.group(1) in self.src.by_name:
            return self.src.name_of(self.src.by_name[m.group(1)])
        if m and _SPLAT.match(m.group(1)):
            return "%" + m.group(1)
        insts = node.parent.instructions
        for nxt in insts[insts.index(node) + 1:]:
            if _is_base_node(nxt) or (nxt.name and _MEM2REG.match(nxt.name)) or \
                    (isinstance(nxt, I.Cast) and (nxt.name or "").startswith("cast")):
                continue
            s = self.source_value(nxt)
            if s is not None and isinstance(nxt, _BASE_NODE_KINDS):
                return self.src.name_of(s)
            break
        raise OracleError(f"@{self.fn.name}: cannot tell which phi/select {print_operand(node)} is the base of")

    def remat_original(self, r: I.Instruction) -> Value:
        """The input instruction a ``.remat`` clone copies."""
        m = _REMAT.match(r.name or "")
        if m and m.group(1):
            s = self.src.by_name.get(m.group(1))
            if s is not None:
                return s
        # unnamed original: same opcode, types and non-pointer operands; pointer operand preferred equal
        cands = []
        for s in self.src.fn.instructions():
            if s.name is not None or s.opcode != r.opcode or s.type != r.type:
                continue
            if isinstance(r, I.GetElementPtr):
                if s.source_type != r.source_type or len(s.indices) != len(r.indices):
                    continue
                if not all(self._same_operand(a, b) for a, b in zip(r.indices, s.indices)):
                    continue
            cands.append(s)
        if len(cands) > 1:
            ptr = self.resolve(r.operands[0])
            exact = [s for s in cands if self.src.repr.get(id(s.operands[0])) == ptr]
            cands = exact or cands
        if len(cands) != 1:
            raise OracleError(f"@{self.fn.name}: cannot tell which instruction {print_operand(r)} "
                              f"rematerializes ({len(cands)} candidates)")
        return cands[0]

    def _same_operand(self, out_v: Value, src_v: Value) -> bool:
        if isinstance(out_v, Constant) or isinstance(src_v, Constant):
            return out_v == src_v
        try:
            return self.resolve(out_v) == self.src.repr.get(id(src_v))
        except OracleError:
            return False

    # -- per statepoint facts ------------------------------------------------------------------
    def facts(self) -> dict[int, CallFacts]:
        relocs: dict[int, list[I.Call]] = {id(s): [] for s in self.statepoints}
        remat_roots: dict[int, list[I.Instruction]] = {id(s): [] for s in self.statepoints}
        for inst in self.fn.instructions():
            if id(inst) in self.reloc_sp:
                relocs[id(self.reloc_sp[id(inst)])].append(inst)
            elif _is_remat(inst):
                sp = self._remat_statepoint(inst)
                if sp is not None:
                    remat_roots[id(sp)].append(inst)
        out: dict[int, CallFacts] = {}
        for s in self.statepoints:
            k, _ = self.site_of[id(s)]
            live = _gc_live(s)
            pairs = set()
            for r in relocs[id(s)]:
                pairs.add((self.resolve(live[_int(r.args[1])]), self.resolve(live[_int(r.args[2])])))
            remat = set()
            for r in remat_roots[id(s)]:
                users = self.users.get(id(r), [])
                if not users or any(not _is_remat(u) for u in users):
                    remat.add(self.src.name_of(self.remat_original(r)))
            out[k] = CallFacts(frozenset(pairs), frozenset(remat))
        return out

    def _remat_statepoint(self, r: I.Instruction) -> I.CallBase | None:
        v: Value = r
        seen = 0
        while _is_remat(v) and seen < 100:
            v = v.operands[0]
            seen += 1
        if isinstance(v, I.Cast) and id(v.value) in self.reloc_sp:
            v = v.value
        return self.reloc_sp.get(id(v))


def _gc_live(sp: I.CallBase) -> list[Value]:
    """The ``gc-live`` bundle of a statepoint (LLVM 12+ form, the only one LLVM 14 writes)."""
    b = sp.bundle("gc-live")
    return list(b.inputs) if b is not None else []


def _statepoint_of_relocate(r: I.Call) -> I.CallBase:
    sp = token_statepoint(r.args[0])
    if sp is None:
        raise OracleError(f"gc.relocate {print_operand(r)} has no statepoint")
    return sp


def _int(v: Value) -> int:
    return v.value  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# API


def _module(m: str | Module, what: str) -> Module:
    return parse_module(m, what) if isinstance(m, str) else m


def facts_by_call(after: str | Module, original: str | Module) -> dict[CallKey, CallFacts]:
    """``{(function, k): CallFacts}`` for every call of ``original`` that became a statepoint in ``after``."""
    out_mod = _module(after, "<after>")
    src_mod = _module(original, "<original>")
    result: dict[CallKey, CallFacts] = {}
    for src_fn in src_mod.definitions():
        out_fn = out_mod.get_function(src_fn.name)
        if out_fn is None or out_fn.is_declaration:
            raise OracleError(f"@{src_fn.name} is missing from the output")
        mapper = _Mapper(out_fn, _Source(src_fn))
        for k, f in mapper.facts().items():
            result[(src_fn.name, k)] = f
    return result


def pairs_by_call(after: str | Module, original: str | Module) -> dict[CallKey, frozenset[Pair]]:
    """``{(function, k): {(base, derived), ...}}``: the relocations at each call that became a statepoint."""
    return {k: f.pairs for k, f in facts_by_call(after, original).items()}


def remat_by_call(after: str | Module, original: str | Module) -> dict[CallKey, frozenset[str]]:
    """``{(function, k): {derived, ...}}``: the values rematerialized after each statepoint."""
    return {k: f.remat for k, f in facts_by_call(after, original).items()}


def describe(facts: dict[CallKey, CallFacts]) -> str:
    """A readable listing, one call per line."""
    lines = []
    for (fn, k), f in sorted(facts.items()):
        pairs = ", ".join(f"({b}, {d})" for b, d in sorted(f.pairs))
        remat = f"  remat: {', '.join(sorted(f.remat))}" if f.remat else ""
        lines.append(f"@{fn} call {k}: {pairs or '-'}{remat}")
    return "\n".join(lines)
