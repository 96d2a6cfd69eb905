"""Converting statepoints between the three historical signatures keeps their meaning.

Each ``corpus_legacy/X.ll`` is written in the oldest (``oldest_*``) or middle (``middle_*``)
form, and ``X.modern.ll`` is the same program written by hand in the modern form.

What "the same statepoints" means here (the *statepoint key* of a module): for every function,
in order,

* per ``gc.statepoint`` call or invoke, in order: ``(id, patch bytes, target, call args,
  flags, transition args, deopt args, gc-live list)``, where the list members are *source
  values* (see below), whatever the form stores them as (inline sections or bundles);
* per ``gc.relocate``, in order: its own position, the position of its statepoint, and the
  ``(base, derived)`` pair that ``GCRelocate.base`` / ``GCRelocate.derived`` resolve its two
  indices to — again as source values, so absolute argument positions (older forms) and
  ``gc-live`` indices (modern form) compare equal when they name the same pointers.

A *source value* is named by where it is defined, not by what it is called: an argument by its
index, an instruction by (block index, instruction index), a constant or global by its typed
text (``i32 -1``, ``void ()* @foo``). Value names and declaration attributes (``immarg``,
``#0``) are never compared. The *instruction skeleton* (per block: opcode, result type and
called function of each instruction) is compared too, so the conversion must not add, drop or
reorder instructions.

The oldest form has no ID and no patch bytes (a converted oldest statepoint gets the default
ID 0xABCDEF00 and 0 patch bytes, as RewriteStatepointsForGC would) and no GC transitions;
converting such a statepoint to the oldest form must raise VerifyError.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gctoy.errors import VerifyError
from gctoy.ir import instructions as I
from gctoy.ir import parse_module, print_module
from gctoy.ir.module import Module
from gctoy.ir.printer import print_operand
from gctoy.ir.statepoint import GCRelocate, Statepoint, StatepointForm, convert_statepoints, statepoints
from gctoy.ir.values import Argument, BasicBlock, Function
from gctoy.ir.verifier import check_module
from gctoy.llvm_tools import LLVMTools, run_opt

HERE = Path(__file__).resolve().parent / "corpus_legacy"
ORIGINALS = sorted(p for p in HERE.glob("*.ll") if not p.name.endswith(".modern.ll"))
FORMS = ("oldest", "middle", "modern")

#: files whose statepoints the oldest form cannot express, and the reason gctoy must give
CANNOT_BE_OLDEST = {
    "middle_i32_basic.ll": "patch bytes",  # @patchable has 5 patch bytes
    "middle_i32_transition.ll": "transition",
    "middle_token_args_transition.ll": "transition",
}
#: a gc.relocate on the unwind path takes the landing pad's token, which the oldest form
#: (i32 statepoint result, no token type) has no way to say: refusing is fine, producing
#: IR that gctoy's own verifier rejects is not
MAY_REFUSE_OLDEST = {"middle_token_invoke.ll"}


def original_form(path: Path) -> str:
    return path.name.split("_", 1)[0]


def _modern_twin(path: Path) -> Path:
    return path.with_name(path.name[: -len(".ll")] + ".modern.ll")


def _parse(path: Path) -> Module:
    return parse_module(path.read_text(encoding="utf-8"), str(path))


# -- the keys ----------------------------------------------------------------------------


def _positions(fn: Function) -> dict[int, tuple]:
    pos: dict[int, tuple] = {}
    for i, a in enumerate(fn.args):
        pos[id(a)] = ("arg", i)
    for bi, b in enumerate(fn.blocks):
        pos[id(b)] = ("block", bi)
        for ii, inst in enumerate(b.instructions):
            pos[id(inst)] = ("inst", bi, ii)
    return pos


def _source(v, pos: dict[int, tuple]):
    if isinstance(v, (Argument, BasicBlock, I.Instruction)):
        return pos[id(v)]
    return print_operand(v)


def statepoint_key(m: Module, *, oldest_fields_only: bool = False) -> list:
    """The statepoint key described in the module docstring (optionally without ID, patch bytes, transitions)."""
    key = []
    for fn in m.definitions():
        pos = _positions(fn)
        src = lambda v: _source(v, pos)  # noqa: E731
        sps = statepoints(fn)
        calls = [sp.call for sp in sps]
        sp_rows = []
        for sp in sps:
            row = (
                src(sp.target),
                tuple(map(src, sp.call_args)),
                sp.flags,
                tuple(map(src, sp.deopt_args)),
                tuple(map(src, sp.gc_args)),
            )
            if not oldest_fields_only:
                row = (sp.id, sp.num_patch_bytes, *row, tuple(map(src, sp.transition_args)))
            sp_rows.append(row)
        reloc_rows = []
        for sp in sps:
            for r in sp.relocates():
                owner = next(k for k, c in enumerate(calls) if c is r.statepoint.call)
                reloc_rows.append((pos[id(r.call)], owner, src(r.base), src(r.derived)))
        reloc_rows.sort()
        key.append((fn.name, tuple(sp_rows), tuple(reloc_rows)))
    return key


def relocation_pairs(m: Module) -> list:
    """Every ``(relocate position, base, derived)`` as source values: what no conversion may change."""
    return [(fn, rows) for fn, _, rows in statepoint_key(m, oldest_fields_only=True)]


def skeleton(m: Module) -> list:
    """Per function and block: (opcode, result type, called function) of every instruction."""
    out = []
    for fn in m.definitions():
        for b in fn.blocks:
            out.append((fn.name, tuple(
                (inst.opcode, str(inst.type),
                 inst.callee_name if isinstance(inst, I.CallBase) else None)
                for inst in b.instructions
            )))
    return out


def forms_of(m: Module) -> set[StatepointForm]:
    return {sp.form for fn in m.definitions() for sp in statepoints(fn)}


def assert_in_form(m: Module, form: str) -> None:
    """Every statepoint reads back in ``form``.

    One case is ambiguous by nature: a middle-form statepoint with a token result and nothing
    in its transition, deopt and GC sections is, character for character, a modern statepoint
    without bundles, so it reads back as modern.
    """
    want = StatepointForm(form)
    for fn in m.definitions():
        for sp in statepoints(fn):
            if sp.form is want:
                continue
            empty = not (sp.transition_args or sp.deopt_args or sp.gc_args)
            assert want is StatepointForm.MIDDLE and sp.form is StatepointForm.MODERN and empty, (
                f"@{fn.name}: a statepoint reads back as {sp.form.value}, not {form}")


# -- original -> modern matches the hand-written modern twin ------------------------------------------


def test_every_original_has_a_modern_twin() -> None:
    assert len(ORIGINALS) >= 8
    for p in ORIGINALS:
        assert _modern_twin(p).is_file(), p.name
        assert original_form(p) in ("oldest", "middle"), p.name
    assert {original_form(p) for p in ORIGINALS} == {"oldest", "middle"}


@pytest.mark.parametrize("path", ORIGINALS, ids=lambda p: p.name)
def test_original_is_in_its_form(path: Path) -> None:
    assert forms_of(_parse(path)) == {StatepointForm(original_form(path))}
    assert forms_of(_parse(_modern_twin(path))) == {StatepointForm.MODERN}


@pytest.mark.parametrize("path", ORIGINALS, ids=lambda p: p.name)
def test_to_modern_matches_twin(path: Path) -> None:
    m = _parse(path)
    twin = _parse(_modern_twin(path))
    assert convert_statepoints(m, "modern") == sum(len(statepoints(f)) for f in m.definitions())
    check_module(m)
    assert_in_form(m, "modern")
    assert statepoint_key(m) == statepoint_key(twin)
    assert skeleton(m) == skeleton(twin)


@pytest.mark.parametrize("path", ORIGINALS, ids=lambda p: p.name)
def test_to_modern_accepted_by_llvm14(path: Path, llvm14: LLVMTools) -> None:
    m = _parse(path)
    convert_statepoints(m, "modern")
    text = print_module(m)
    r = run_opt(llvm14.opt, ["-passes=verify", "-S"], text)
    assert r.returncode == 0, f"LLVM 14 rejected the conversion:\n{r.stderr}\n{text}"
    # and LLVM's reading has the same statepoints
    assert statepoint_key(parse_module(r.stdout, "<opt>")) == statepoint_key(m)


@pytest.mark.parametrize("path", ORIGINALS, ids=lambda p: p.name)
def test_modern_to_original_to_modern_is_stable(path: Path) -> None:
    form = original_form(path)
    twin = _parse(_modern_twin(path))
    m = _parse(_modern_twin(path))
    convert_statepoints(m, form)
    check_module(m)
    assert_in_form(m, form)
    # back in its own form it says what the original file says
    assert statepoint_key(m, oldest_fields_only=form == "oldest") == statepoint_key(
        _parse(path), oldest_fields_only=form == "oldest")
    convert_statepoints(m, "modern")
    check_module(m)
    assert statepoint_key(m) == statepoint_key(twin)
    assert skeleton(m) == skeleton(twin)
    # a second trip changes nothing more: the printed text is a fixed point
    once = print_module(m)
    convert_statepoints(m, form)
    convert_statepoints(m, "modern")
    assert print_module(m) == once


def test_converting_to_the_same_form_changes_nothing() -> None:
    for path in ORIGINALS:
        m = _parse(path)
        before = print_module(m)
        assert convert_statepoints(m, original_form(path)) == 0
        assert print_module(m) == before


# -- all six directions keep every (base, derived) pair -----------------------------------------------


def _convert_checked(m: Module, name: str, target: str) -> bool:
    """Convert to ``target``; False if the oldest form rightly refused. The result must verify."""
    if target == "oldest" and name in CANNOT_BE_OLDEST:
        with pytest.raises(VerifyError, match=CANNOT_BE_OLDEST[name]):
            convert_statepoints(m, target)
        return False
    if target == "oldest" and name in MAY_REFUSE_OLDEST:
        try:
            convert_statepoints(m, target)
        except VerifyError:
            return False
    else:
        convert_statepoints(m, target)
    check_module(m)
    assert_in_form(m, target)
    return True


DIRECTIONS = [(a, b) for a in FORMS for b in FORMS if a != b]


@pytest.mark.parametrize(("a", "b"), DIRECTIONS, ids=[f"{a}-to-{b}" for a, b in DIRECTIONS])
@pytest.mark.parametrize("path", ORIGINALS, ids=lambda p: p.name)
def test_direction_keeps_relocation_pairs(path: Path, a: str, b: str) -> None:
    m = _parse(path)
    pairs = relocation_pairs(m)
    if original_form(path) != a and not _convert_checked(m, path.name, a):
        return
    assert relocation_pairs(m) == pairs
    if not _convert_checked(m, path.name, b):
        return
    assert relocation_pairs(m) == pairs


def test_relocation_pairs_are_not_trivial() -> None:
    """The pair check has something to bite on: several files relocate derived pointers or many values."""
    derived = 0
    total = 0
    for path in ORIGINALS:
        for _, rows in relocation_pairs(_parse(path)):
            total += len(rows)
            derived += sum(1 for _, _, base, der in rows if base != der)
    assert total >= 10
    assert derived >= 2


@pytest.mark.parametrize("name", sorted(CANNOT_BE_OLDEST))
def test_oldest_refuses_what_it_cannot_express(name: str) -> None:
    m = _parse(HERE / name)
    with pytest.raises(VerifyError, match=CANNOT_BE_OLDEST[name]):
        convert_statepoints(m, "oldest")
    m = _parse(HERE / name.replace(".ll", ".modern.ll"))
    with pytest.raises(VerifyError, match=CANNOT_BE_OLDEST[name]):
        convert_statepoints(m, "oldest")


def test_unwind_relocate_to_oldest_is_refused_or_well_formed() -> None:
    """An invoke whose unwind path relocates through the landing pad token, taken to the oldest form."""
    m = _parse(HERE / "middle_token_invoke.ll")
    pairs = relocation_pairs(m)
    try:
        convert_statepoints(m, "oldest")
    except VerifyError:
        return
    check_module(m)
    assert relocation_pairs(m) == pairs


def test_gc_relocate_resolves_in_every_form() -> None:
    """GCRelocate.base/.derived name the same pointers whatever the indices are written as."""
    m = _parse(HERE / "oldest_deopt_derived.ll")
    fn = m.get_function("derived")
    (sp,) = statepoints(fn)
    names = {r.call.name: (r.base, r.derived) for r in sp.relocates()}
    obj = fn.args[0]
    gep = fn.entry.instructions[0]
    assert names == {"obj.relocated": (obj, obj), "gep.relocated": (obj, gep)}
    for form, first in (("middle", 12), ("modern", 0), ("oldest", 9)):
        convert_statepoints(m, form)
        (sp,) = statepoints(fn)
        rel = {r.call.name: r for r in sp.relocates()}
        assert isinstance(rel["gep.relocated"], GCRelocate)
        assert (rel["gep.relocated"].base_index, rel["gep.relocated"].derived_index) == (first, first + 1)
        assert (rel["gep.relocated"].base, rel["gep.relocated"].derived) == (obj, gep)
        assert Statepoint.of(sp.call).form is StatepointForm(form)
