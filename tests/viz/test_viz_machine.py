"""gctoy.viz.machine: a recorded machine state as deterministic, self-contained HTML."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from gctoy.runtime.trace import LIST3, record_trace
from gctoy.viz.machine import object_colour, state_html, trace_pages, trace_text


@pytest.fixture(scope="module")
def trace():
    return record_trace(LIST3)


def _collected(trace):
    return next(s for s in trace.states if s.kind == "collected")


def test_pages_are_deterministic_and_inline_only(trace):
    pages = trace_pages(trace)
    assert pages == trace_pages(record_trace(LIST3))
    assert len(pages) == len(trace.states)
    for page in pages:
        assert "<script" not in page and "<style" not in page and "class=" not in page
        assert " at 0x" not in page  # no host object reprs


def test_a_page_shows_pc_code_registers_frame_and_heap(trace):
    state = trace.states[trace.indices("step")[2]]
    page = state_html(state, len(trace.states))
    assert f"pc {state.pc:#x}" in page
    assert f"state {state.index}/{len(trace.states) - 1}" in page
    current = next(line for line in state.disasm if line.marker == "pc")
    assert f"&#9654; {current.address:08x}" in page
    assert "registers" in page and " rsp " in page
    assert "current frame of @main" in page and "return address" in page
    assert "heap: current space [0x10000000" in page
    for obj in state.heap.objects:
        assert f"{obj.address:#x}" in page


def test_gc_slots_of_the_record_are_highlighted(trace):
    state = trace.states[trace.indices("safepoint")[-4]]  # the call of gc_collect
    assert state.runtime_call == "gc_collect"
    page = state_html(state)
    assert "the stack map record of main.sp2" in page
    assert "pair 0: base [rsp+8] %node2, derived [rsp+16] %link0" in page
    assert page.count("#ffe9a8") == sum(1 for w in state.frame.words if w.roles)
    assert "now inside the runtime: gc_collect" in page
    assert "; gc_collect &middot; statepoint main.sp2" in page


def test_the_collected_page_shows_the_move(trace):
    state = _collected(trace)
    page = state_html(state)
    assert "collection #1" in page
    assert "[rsp+8] %node2               0x10000098 -&gt; 0x10001010" in page
    assert "[rsp+16] %link0              0x100000a0 -&gt; 0x10001018" in page
    assert "(was 0x10000098)" in page and "(was 0x100000a0)" in page
    assert "copied from 0x10000098" in page
    assert "not reached, so not copied: A (0x10000010), C (0x10000048), E (0x10000080)" in page
    assert "poisoned with 0xdeadbeefdeadbeef" in page
    assert "stale!" not in page  # every GC slot was rewritten
    # the object keeps its colour at its new address
    assert f'background:{object_colour("F")};color:#1a1a1a">0x10001010 -&gt;F' in page


def test_a_missed_slot_would_show_as_stale(trace):
    state = _collected(trace)
    words = list(state.frame.words)
    k = next(i for i, w in enumerate(words) if w.roles)
    words[k] = replace(words[k], value=0x10000098, previous=None)  # as if the collector skipped it
    broken = replace(state, frame=replace(state.frame, words=tuple(words)))
    assert "0x10000098 stale!" in state_html(broken)


def test_object_colours_are_fixed():
    assert object_colour("A") == object_colour("I") != object_colour("B")
    assert object_colour("AA") == object_colour("C")  # AA is the 27th object


def test_all_words_shows_the_zero_words(trace):
    state = trace.states[trace.indices("safepoint")[0]]
    folded, full = state_html(state), state_html(state, all_words=True)
    assert "words holding 0 not shown" in folded and "not shown" not in full
    assert len(re.findall(r"0x008f", full)) == len(state.frame.words)


def test_trace_text_lists_every_state(trace):
    lines = trace_text(trace).splitlines()
    assert len(lines) == len(trace.states)
    assert lines[0].split()[:2] == ["0", "start"]
    assert "collection #1 inside gc_collect" in trace_text(trace)


def test_the_recorder_and_the_renderer_import_without_jupyter():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class B:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('IPython', 'ipywidgets', 'ipykernel'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, B())\n"
        "import gctoy.runtime.trace, gctoy.viz.machine\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
