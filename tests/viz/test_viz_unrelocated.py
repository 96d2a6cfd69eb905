"""Chapter 06's pages: one per unrelocated use, the path tinted and the use and statepoint marked."""

from __future__ import annotations

import re

from gctoy.ir import parse_module
from gctoy.viz.unrelocated import unrelocated_pages

TWO_PATHS = """\
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %left, label %right
left:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  br label %join
right:
  br label %join
join:
  %u = getelementptr i8, i8 addrspace(1)* %obj, i64 8
  ret i8 addrspace(1)* %u
}
"""


def test_one_page_per_use_with_path_statepoint_and_use_marked():
    fn = parse_module(TWO_PATHS).get_function("f")
    pages = unrelocated_pages(fn)
    # like LLVM's verifier, the GEP only derives; the violation is the use of the derived %u in ret
    assert list(pages) == ["1. %u in ret"]
    page = pages["1. %u in ret"]
    assert len(re.findall(r'<pre class="use">', page)) == 1 and "ret i8" in page.split('class="use">')[1][:40]
    assert len(re.findall(r'<pre class="sp">', page)) == 1
    tinted = re.findall(r'<pre class="path">(\w+):</pre>', page)
    assert tinted == ["left", "join"]          # the path runs through left, not right
    assert "%left" in page and "%join" in page


def test_a_clean_function_has_no_pages():
    fixed = TWO_PATHS.replace("%u = getelementptr i8, i8 addrspace(1)* %obj, i64 8\n  ret i8 addrspace(1)* %u",
                              "ret i8 addrspace(1)* null")
    assert unrelocated_pages(parse_module(fixed).get_function("f")) == {}
