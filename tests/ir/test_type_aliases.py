"""Named types that are not structs (``%Env = type i8*``): aliases that LLVM reads and prints as the type itself.

LLVM 14 (typed pointers) and LLVM 19 (opaque) are the oracles: gctoy's ``-S`` output of each module equals
``opt -S``'s once both are re-printed by that opt, and both refuse the same bad definitions.
"""
from __future__ import annotations

import re

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import run_opt
from gctoy.passes import run

TYPED = {
    "pointer_alias": """
%Env = type i8*
declare void @keep(%Env)
define %Env @pass(%Env %e) {
entry:
  %slot = alloca %Env
  store %Env %e, %Env* %slot
  %v = load %Env, %Env* %slot
  call void @keep(%Env %v)
  ret %Env null
}
""",
    "alias_of_alias_and_struct_field": """
%Word = type i64
%Cell = type { %Word, %Word* }
%Count = type %Word
@cells = global [2 x %Cell] zeroinitializer
define %Count @first() {
entry:
  %p = getelementptr [2 x %Cell], [2 x %Cell]* @cells, i64 0, i64 0, i32 0
  %w = load %Word, %Word* %p
  ret %Count %w
}
""",
    "gcroot_through_alias": """
%Obj = type i8*
declare void @llvm.gcroot(%Obj*, %Obj)
define void @rooted() gc "shadow-stack" {
entry:
  %root = alloca %Obj
  call void @llvm.gcroot(%Obj* %root, %Obj null)
  ret void
}
""",
}

OPAQUE = {
    "opaque_pointer_alias": """
%Env = type ptr
declare void @llvm.gcroot(ptr, %Env)
define void @main.env(%Env %0) gc "shadow-stack" {
  %Root = alloca %Env
  call void @llvm.gcroot(ptr %Root, %Env null)
  ret void
}
""",
    "vector_alias": """
%V = type <2 x ptr addrspace(1)>
define %V @reload(%V %v, ptr %slot) {
entry:
  store %V %v, ptr %slot
  %s = load %V, ptr %slot
  ret %V %s
}
""",
}

# (module, gctoy's message, the line LLVM and gctoy point at; column 1)
BAD = {
    "forward_reference": ("define void @f(%Env %x) {\n  ret void\n}\n%Env = type i8*\n",
                          "forward references to non-struct type", 4),
    "redefinition": ("%Env = type i8*\n%Env = type i32\n", "redefinition of type", 2),
    "alias_defined_after_alias_use": ("%A = type %B\n%B = type i32\n", "forward references to non-struct type", 2),
}

DROP = re.compile(r"^(; ModuleID|source_filename|target datalayout).*\n", re.M)


def _normalised(opt, text: str, extra: tuple[str, ...] = ()) -> str:
    res = run_opt(opt, [*extra, "-S"], text)
    assert res.returncode == 0, res.stderr
    return DROP.sub("", res.stdout)


@pytest.mark.parametrize("name", sorted(TYPED))
def test_typed_aliases_print_as_llvm14_prints_them(llvm14, name):
    text = TYPED[name]
    ours = print_module(run(parse_module(text, "a.ll"), "verify"))
    assert "type i8*" not in ours and "%Word" not in ours and "%Obj" not in ours
    assert _normalised(llvm14.opt, ours) == _normalised(llvm14.opt, text)


@pytest.mark.parametrize("name", sorted(OPAQUE))
def test_opaque_aliases_print_as_llvm19_prints_them(llvm19, name):
    text = OPAQUE[name]
    ours = print_module(run(parse_module(text, "a.ll"), "verify"), opaque=True)
    assert _normalised(llvm19.opt, ours) == _normalised(llvm19.opt, text)


def test_alias_is_the_type_itself():
    m = parse_module(TYPED["pointer_alias"], "a.ll")
    fn = m.get_function("pass")
    assert fn.ftype.ret.render() == "i8*" and fn.args[0].type.render() == "i8*"
    assert "Env" not in m.types


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_alias_definitions_refused_like_llvm(llvm14, name):
    text, message, line = BAD[name]
    with pytest.raises(IRParseError, match=message) as info:
        parse_module(text, "bad.ll")
    assert (info.value.line, info.value.column) == (line, 1)
    res = run_opt(llvm14.opt, ["-S"], text)
    assert res.returncode != 0 and f":{line}:1: error:" in res.stderr
