"""The stack-map explorer and the header builder, read without a browser."""

from __future__ import annotations

import re

from gctoy.codegen import compile_module
from gctoy.coreclr.header import InfoHdr, decode_header
from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.stackmap import emit
from gctoy.widgets.explorers import HeaderBuilder, StackMapExplorer

PROGRAM = """\
declare void @foo()
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) gc "statepoint-example" {
  call void @foo()
  ret i8 addrspace(1)* %obj
}
"""


def _section() -> bytes:
    module = parse_module(PROGRAM)
    run(module, "rewrite-statepoints-for-gc")
    return emit(compile_module(module).stackmap)


def test_every_field_has_a_page_that_marks_exactly_its_bytes():
    data = _section()
    explorer = StackMapExplorer(data, python_link=True)
    assert sum(len(r.data) for r in explorer.rows) == len(data)
    for i, row in enumerate(explorer.rows):
        page = explorer.stack.children[i].value
        marked = re.findall(r'<span class="sel">([0-9a-f ]+)</span>', page)
        assert marked == [row.data.hex(" ")], row.field
        assert f"<td>{row.field}</td>" in page.replace("&#x27;", "'")
    explorer.slider.value = explorer.find("NumRecords")
    assert explorer.slider.value == 5 and explorer.stack.selected_index == 5   # after Version, 2 Reserved, 2 counts
    assert "<th>value</th><td>1</td>" in explorer.stack.children[5].value


def test_a_location_page_tints_its_siblings():
    explorer = StackMapExplorer(_section())
    i = explorer.find("loc#4.Type")
    page = explorer.stack.children[i].value
    tinted = re.findall(r'<span class="same">([0-9a-f ]+)</span>', page)
    assert sum(len(t.split()) for t in tinted) == 11   # the other 11 bytes of the 12-byte location


def test_header_builder_re_encodes_on_change_and_decodes_back():
    builder = HeaderBuilder(InfoHdr(prolog_size=5, epilog_size=3, epilog_count=1, epilog_at_end=True))
    first = builder.out.value
    builder.flags["ebp_frame"].value = True
    builder.numbers["frame_size"].value = 2
    assert builder.out.value != first and "flip ebpFrame" in builder.out.value
    data = bytes.fromhex(re.search(r"<b>\d+ bytes?:</b> ([0-9a-f ]+) ", builder.out.value).group(1))
    decoded, _ = decode_header(data)
    assert decoded == builder.header


def test_header_builder_says_when_a_header_cannot_be_written():
    builder = HeaderBuilder(InfoHdr(return_kind=1), version=1)   # return kinds came with version 2
    assert 'class="err"' in builder.out.value and "version 2" in builder.out.value
    builder.numbers["prolog_size"].value = 7                     # still refused after a change
    assert 'class="err"' in builder.out.value
