"""The workbench widget without a browser: type, Run, look at the panes; pick a record and its call lights up."""

from __future__ import annotations

import html
import re

import pytest

from gctoy.widgets.workbench import Workbench
from test_workbench import BAD_ASM, BAD_IR, PROGRAM, RUN_STOPS


def test_typing_and_running_fills_every_pane():
    bench = Workbench("", run=False)
    # the text syncs once, on leaving the editor: a per-key sync can trail behind Run's click
    assert bench.editor.continuous_update is False
    bench.editor.value = PROGRAM
    bench.run_button.click()
    assert "no problems" in bench.problem.value
    assert "after verify-safepoints" in bench.pane_html(bench.ir_pane)
    bench.stage.value = 1
    shown = bench.pane_html(bench.ir_pane)
    assert "after rewrite-statepoints-for-gc" in shown and 'class="add"' in shown
    assert "printed: 42" in bench.run_pane.value
    assert bench.stepper_box.children and type(bench.stepper_box.children[0]).__name__ == "SafepointStepper"
    # picking record 1 highlights exactly its call
    record = bench.result.records[1]
    bench.record.value = 1
    hot = re.findall(r'<tr class="call hot" data-address="(0x[0-9a-f]+)"', bench.pane_html(bench.code_pane))
    assert hot == [f"{record.call_address:#x}"]
    assert bench.pane_html(bench.records_pane).count('class="hot"') == 1 + len(record.locations)
    # the choosers are linked to their panes in the browser too (the static book has no kernel)
    linked = {(l.source[0], l.source[1], l.target[0], l.target[1]) for l in bench.links if type(l).__name__ == "Link"
              and l._model_name == "LinkModel"}
    assert (bench.record, "index", bench.code_pane, "selected_index") in linked


#: the 20 bad inputs typed into one workbench: a message in the widget each time, and the kernel survives
BAD_INPUTS = {**BAD_IR, **{k: v for k, v in BAD_ASM.items() if k != "unknown arch"}}


@pytest.fixture(scope="module")
def bench():
    return Workbench("", run=False)


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_shows_a_message_in_the_widget_and_the_kernel_survives(bench, name):
    text, stage, line, *_rest = BAD_INPUTS[name]
    bench.mode.value = "assembly" if name in BAD_ASM else "IR"
    bench.target.value = "x86-32" if name == "statepoint on x86-32" else "x86-64"
    bench.editor.value = text
    bench.run_button.click()
    shown = bench.problem.value
    assert 'class="problem"' in shown, name
    assert f"<b>{stage}</b>" in shown, shown
    if line is not None:
        assert f"line {line}: {html.escape(text.splitlines()[line - 1], quote=True)}" in shown, shown
    if name in RUN_STOPS:  # a run that stopped: the caret under the instruction's column
        _, column = RUN_STOPS[name]
        assert "\n" + " " * (len(f"line {line}: ") + column - 1) + "^" in shown, shown


def test_assembly_mode_steps_through_registers():
    bench = Workbench("mov rax, 5\nadd rax, 3\nret\n", mode="assembly")
    assert bench.children[-1] is bench.asm_box
    assert bench.step.max == 2
    bench.step.value = 1
    assert re.search(r'<tr class="hot"><td>rax</td><td>0x8</td>', bench.asm_pane.value)
