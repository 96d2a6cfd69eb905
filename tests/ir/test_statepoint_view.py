"""The Statepoint view decodes all three signatures, and relocate indices name the same pointers."""
import pytest

from gctoy.errors import VerifyError
from gctoy.ir import parse_module
from gctoy.ir.statepoint import StatepointForm, convert_statepoints, statepoints

# The same call in each form: no call args, five deopt values, one GC pointer %obj.
OLDEST = """
define i8 addrspace(1)* @t(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %tok = call i32 (void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 9, i32 9)
  ret i8 addrspace(1)* %r
}
declare void @foo()
declare i32 @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32, i32, i32)
"""
MIDDLE = """
define i8 addrspace(1)* @t(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 12, i32 12)
  ret i8 addrspace(1)* %r
}
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
"""
MODERN = """
define i8 addrspace(1)* @t(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i32 0, i32 -1, i32 0, i32 0, i32 0), "gc-live"(i8 addrspace(1)* %obj) ]
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %r
}
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)
"""


@pytest.mark.parametrize("text, form, index", [(OLDEST, "oldest", 9), (MIDDLE, "middle", 12), (MODERN, "modern", 0)])
def test_each_form_is_recognised(text, form, index):
    m = parse_module(text)
    fn = m.get_function("t")
    (sp,) = statepoints(fn)
    assert sp.form is StatepointForm(form)
    assert [a.name for a in sp.gc_args] == ["obj"]
    assert len(sp.deopt_args) == 5
    assert sp.relocate_index(0) == index
    (rel,) = sp.relocates()
    assert rel.base is fn.args[0] and rel.derived is fn.args[0]


def test_index_of_first_gc_pointer_without_deopt_values():
    # no call arguments, no transition, no deopt: 7 in the middle form, 4 in the oldest
    m = parse_module(MODERN)
    (sp,) = statepoints(m.get_function("t"))
    sp.deopt_args = []
    assert sp.relocate_index(0, StatepointForm.MIDDLE) == 7
    assert sp.relocate_index(0, StatepointForm.OLDEST) == 4


@pytest.mark.parametrize("src", [OLDEST, MIDDLE, MODERN])
@pytest.mark.parametrize("dst", ["oldest", "middle", "modern"])
def test_conversion_keeps_every_pair(src, dst):
    m = parse_module(src)
    convert_statepoints(m, dst)
    again = parse_module(str(m))
    fn = again.get_function("t")
    (sp,) = statepoints(fn)
    assert sp.form is StatepointForm(dst)
    (rel,) = sp.relocates()
    assert rel.base is fn.args[0]
    assert [str(getattr(d, "value", d)) for d in sp.deopt_args] == ["0", "-1", "0", "0", "0"]


def test_oldest_form_cannot_hold_a_gc_transition():
    text = MODERN.replace("i32 0, i32 0, i32 0, i32 0) [", "i32 0, i32 1, i32 0, i32 0) [").replace(
        '[ "deopt"', '[ "gc-transition"(i32 1), "deopt"')
    m = parse_module(text)
    with pytest.raises(VerifyError, match="GC transition"):
        convert_statepoints(m, "oldest")


def test_missing_count_is_named():
    # seed 000's GC-transition example leaves out the #transition count
    text = MIDDLE.replace("@foo, i32 0, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0,",
                          "@foo, i32 0, i32 1, i32* @flag, i32 0,")
    text = "@flag = global i32 0\n" + text
    m = parse_module(text)
    with pytest.raises(VerifyError, match=r"number of transition arguments \(argument 5\) must be a constant integer, "
                                          r"found 'i32\* @flag'"):
        statepoints(m.get_function("t"))
