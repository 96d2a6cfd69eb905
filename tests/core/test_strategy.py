"""GC strategies: LLVM 14's built-ins (checked against llc 14), gctoy's own, the registry and its errors."""
from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gctoy.errors import GCToyError
from gctoy.ir import parse_module
from gctoy.strategy import (
    ALL_POINT_KINDS,
    BUILTIN_STRATEGIES,
    GCStrategy,
    PointKind,
    UnknownStrategyError,
    get_strategy,
    known_strategies,
    register_strategy,
    strategy_of,
    unregister_strategy,
)
from gctoy.llvm_tools import run_tool

LLVM_BUILTINS = ("shadow-stack", "statepoint-example", "coreclr", "erlang", "ocaml")


def test_llvm14_fields_of_builtins():
    want = {  # lib/IR/BuiltinGCs.cpp in LLVM 14
        "shadow-stack": (False, False, False),
        "statepoint-example": (True, False, False),
        "coreclr": (True, False, False),
        "erlang": (False, True, True),
        "ocaml": (False, True, True),
    }
    for name, (sp, safe, meta) in want.items():
        assert get_strategy(name).llvm14_fields() == {"UseStatepoints": sp, "NeededSafePoints": safe,
                                                      "UsesMetadata": meta}


def test_removed_flags_follow_llvm14_behaviour():
    for name in LLVM_BUILTINS:
        s = get_strategy(name)
        assert s.init_roots and not s.custom_read_barriers and not s.custom_write_barriers
        assert s.custom_roots == (name == "shadow-stack")
    assert get_strategy("ocaml").needed_safe_points == {PointKind.POST_CALL}
    assert get_strategy("erlang").safe_point_mask == 1 << 3


def test_gctoy_strategies():
    assert get_strategy("gctoy-gcmap").needed_safe_points == ALL_POINT_KINDS
    assert get_strategy("gctoy-gcmap").uses_metadata and get_strategy("gctoy-gcmap").roots_in_frame
    assert get_strategy("gctoy-cardmark").custom_write_barriers
    assert not get_strategy("gctoy-cardmark").custom_read_barriers
    assert get_strategy("gctoy-readbarrier").custom_read_barriers
    assert not get_strategy("gctoy-readbarrier").custom_write_barriers
    assert not get_strategy("shadow-stack").roots_in_frame
    assert not get_strategy("statepoint-example").roots_in_frame


def test_point_kind_bits_are_the_seeds_enum_order():
    assert [k.value for k in PointKind] == ["Loop", "Return", "PreCall", "PostCall"]
    assert [k.bit for k in PointKind] == [1, 2, 4, 8]
    assert get_strategy("gctoy-gcmap").safe_point_mask == 0b1111


def test_unknown_name_lists_known_ones():
    with pytest.raises(UnknownStrategyError) as e:
        get_strategy("mygc")
    for name in LLVM_BUILTINS:
        assert name in str(e.value)
    assert "'mygc'" in str(e.value)


def test_register_and_lookup_user_strategy():
    s = GCStrategy("test-user-gc", needed_safe_points={PointKind.LOOP}, custom_write_barriers=True)
    register_strategy(s)
    try:
        assert get_strategy("test-user-gc") is s
        assert "test-user-gc" in known_strategies()
        m = parse_module('define void @f() gc "test-user-gc" {\nentry:\n  ret void\n}\n')
        assert strategy_of(m.get_function("f")) is s
        with pytest.raises(GCToyError, match="already registered"):
            register_strategy(GCStrategy("test-user-gc"))
        assert register_strategy(GCStrategy("test-user-gc"), replace=True) is not s
    finally:
        unregister_strategy("test-user-gc")
    with pytest.raises(UnknownStrategyError):
        get_strategy("test-user-gc")


def test_builtins_cannot_be_removed_or_clobbered():
    with pytest.raises(GCToyError):
        unregister_strategy("ocaml")
    with pytest.raises(GCToyError):
        register_strategy(GCStrategy("ocaml"))


def test_strategy_of_function_without_gc_is_none():
    m = parse_module("define void @f() {\nentry:\n  ret void\n}\n")
    assert strategy_of(m.get_function("f")) is None
    m = parse_module('define void @f() gc "nope" {\nentry:\n  ret void\n}\n')
    with pytest.raises(UnknownStrategyError):
        strategy_of(m.get_function("f"))


def test_statepoint_strategy_rejects_gcroot_options():
    with pytest.raises(GCToyError, match="statepoint"):
        GCStrategy("bad", use_statepoints=True, uses_metadata=True)


def test_strategy_is_frozen():
    with pytest.raises(AttributeError):
        get_strategy("ocaml").uses_metadata = False  # type: ignore[misc]


@given(st.sets(st.sampled_from(list(PointKind))))
def test_mask_is_the_sum_of_the_kinds_bits(kinds):
    s = GCStrategy("x", needed_safe_points=kinds)
    assert s.safe_point_mask == sum(1 << list(PointKind).index(k) for k in kinds)
    assert s.llvm14_fields()["NeededSafePoints"] == bool(kinds)


# ---------------------------------------------------------------- LLVM 14 as the oracle

PROGRAM = """
declare void @g()
define void @f() gc "{gc}" {{
entry:
  call void @g()
  call void @g()
  ret void
}}
"""


@pytest.mark.parametrize("name", LLVM_BUILTINS + ("not-a-gc",))
def test_llc14_knows_the_same_builtins(llvm14, name):
    res = run_tool(llvm14.llc, ["-O0", "-o", "-"], PROGRAM.format(gc=name))
    known = name in [s.name for s in BUILTIN_STRATEGIES]
    assert (res.returncode == 0) == known, res.stderr
    if not known:
        assert "unsupported GC" in res.stderr


def test_llc14_ocaml_metadata_has_one_postcall_point_per_call(llvm14):
    res = run_tool(llvm14.llc, ["-O0", "-o", "-"], PROGRAM.format(gc="ocaml"))
    asm = res.stdout
    # UsesMetadata: a frametable; NeededSafePoints: one descriptor per call, at the return address.
    assert "__frametable" in asm
    labels = re.findall(r"^\s*callq\s+g@PLT\n(\.Ltmp\d+):", asm, re.M)
    assert len(labels) == 2
    for label in labels:
        assert re.search(rf"\.quad\s+{label}\b", asm)


@pytest.mark.parametrize("name", ["shadow-stack", "statepoint-example", "coreclr"])
def test_llc14_no_metadata_for_the_others(llvm14, name):
    asm = run_tool(llvm14.llc, ["-O0", "-o", "-"], PROGRAM.format(gc=name)).stdout
    assert "frametable" not in asm and ".Ltmp" not in asm
