"""The workbench widget: edit IR or assembly, pick a pipeline, Run, and look at every stage.

    [IR | assembly]  [x] place-safepoints [x] rewrite-statepoints-for-gc ...  target [x86-64 v]  [Run]
    +--------------------------------------------------------------+
    | the reader's text (a Textarea)                               |
    +--------------------------------------------------------------+
    problem (at its line, with a caret) or "no problems"; a one-line summary
    [ IR | machine code | stack map | run | stepper ]      (assembly mode: [ code and registers ])

Everything shown is computed by :mod:`gctoy.workbench` and rendered by :mod:`gctoy.viz.workbench`;
this module only wires widgets to them. Running needs a kernel: in the static HTML book the Run
button does nothing, and the panes show what was computed when the page was made.
"""

from __future__ import annotations

import ipywidgets as widgets

from gctoy.viz import workbench as view
from gctoy.workbench import PIPELINE_STEPS, TARGETS, AsmResult, IRResult, Problem, run_assembly, run_ir

__all__ = ["Workbench"]

IR_TABS = ("IR", "machine code", "stack map", "run", "stepper")


class Workbench(widgets.VBox):
    """An editable program, a pipeline, and the panes of :func:`gctoy.workbench.run_ir` / ``run_assembly``."""

    #: the box's rows (ipywidgets' trait, declared here for the type checker: ipywidgets has no type information)
    children: tuple[widgets.Widget, ...]

    def __init__(
        self,
        source: str = "",
        *,
        mode: str = "IR",
        steps: tuple[str, ...] = ("rewrite-statepoints-for-gc", "verify-safepoints"),
        target: str = "x86-64",
        run: bool = True,
        height: str = "220px",
    ) -> None:
        self.mode = widgets.ToggleButtons(
            options=["IR", "assembly"],
            value=mode,
            description="mode",
            tooltips=[
                "LLVM IR through gctoy's passes and lowering",
                "x86 assembly: Keystone's bytes, one step at a time on Unicorn",
            ],
        )
        # continuous_update=False: the text reaches the kernel once, when the editor loses focus (as it does
        # when Run is pressed), not once per key; a per-key sync can still be queued in the browser when
        # Run's click arrives, and the kernel would run a half-typed program
        self.editor = widgets.Textarea(
            value=source,
            layout=widgets.Layout(width="100%", height=height),
            continuous_update=False,
            placeholder="type LLVM IR (define i64 @main() ...) or x86 assembly",
        )
        self.steps = {
            name: widgets.Checkbox(
                value=name in steps, description=name, indent=False, layout=widgets.Layout(width="auto")
            )
            for name in PIPELINE_STEPS
        }
        self.target = widgets.Dropdown(
            options=list(TARGETS), value=target, description="target", layout=widgets.Layout(width="180px")
        )
        self.run_button = widgets.Button(
            description="Run", button_style="primary", tooltip="run the pipeline (needs a running kernel)"
        )
        self._make_panes()
        self.result: IRResult | AsmResult | None = None
        self.options_box = widgets.HBox(
            [*self.steps.values(), self.target], layout=widgets.Layout(flex_flow="row wrap")
        )
        super().__init__(
            [
                widgets.HBox([self.mode, self.run_button]),
                self.options_box,
                self.editor,
                self.problem,
                self.status,
                self.tabs,
            ]
        )
        self.run_button.on_click(self.run)
        self._link_choosers()
        self.step.observe(self._show_step, names="value")
        self.mode.observe(self._switch_mode, names="value")
        self._switch_mode()
        if run and source.strip():
            self.run()

    def _make_panes(self) -> None:
        """The message lines, the tabs of an IR run and the stepper of an assembly run."""
        self.problem = widgets.HTML()
        self.status = widgets.HTML()
        # The stage and record choosers are linked to Stacks of precomputed panes in the browser, so that
        # picking a stage or a record works in the static HTML book too.
        self.stage = widgets.Dropdown(description="stage", options=[], layout=widgets.Layout(width="340px"))
        self.ir_pane = widgets.Stack([])
        self.record = widgets.Dropdown(description="record", options=[], layout=widgets.Layout(width="340px"))
        self.code_pane = widgets.Stack([])
        self.records_pane = widgets.Stack([])
        self.run_pane = widgets.HTML()
        self.stepper_box = widgets.VBox()
        self.step = widgets.IntSlider(description="step", min=0, max=0, value=0)
        self.asm_pane = widgets.HTML()
        self.tabs = widgets.Tab(
            children=[
                widgets.VBox([self.stage, self.ir_pane]),
                widgets.VBox([self.record, self.code_pane]),
                self.records_pane,
                self.run_pane,
                self.stepper_box,
            ]
        )
        for i, title in enumerate(IR_TABS):
            self.tabs.set_title(i, title)
        self.asm_box = widgets.VBox([self.step, self.asm_pane])

    def _link_choosers(self) -> None:
        """Link the stage and record choosers to their panes, in the browser and in the kernel."""
        self.links = [
            widgets.jslink((self.stage, "index"), (self.ir_pane, "selected_index")),
            widgets.jslink((self.record, "index"), (self.code_pane, "selected_index")),
            widgets.jslink((self.record, "index"), (self.records_pane, "selected_index")),
        ]
        # the same links in Python, so that a kernel (and the tests) see the panes follow the choosers
        self.links += [
            widgets.link((self.stage, "index"), (self.ir_pane, "selected_index")),
            widgets.link((self.record, "index"), (self.code_pane, "selected_index")),
            widgets.link((self.record, "index"), (self.records_pane, "selected_index")),
        ]

    # ------------------------------------------------------------------ actions

    def run(self, _button=None) -> None:
        """Run the text through the chosen pipeline; a failure becomes a message, never an exception."""
        text = self.editor.value
        try:
            if self.mode.value == "assembly":
                self.result = run_assembly(text, arch="x86_32" if self.target.value == "x86-32" else "x86_64")
                self._show_assembly(self.result)
            else:
                chosen = tuple(name for name, box in self.steps.items() if box.value)
                self.result = run_ir(text, chosen, target=self.target.value)
                self._show_ir(self.result)
        except Exception as error:  # noqa: BLE001 - the kernel must survive whatever the reader typed
            self.result = None
            self.problem.value = view.problem_html(Problem("workbench", f"{type(error).__name__}: {error}"), text)
            self.status.value = ""

    def _switch_mode(self, _change=None) -> None:
        assembly = self.mode.value == "assembly"
        self.options_box.layout.display = "none" if assembly else ""
        children = list(self.children)
        children[-1] = self.asm_box if assembly else self.tabs
        self.children = tuple(children)

    # ------------------------------------------------------------------ IR mode

    def _show_ir(self, result: IRResult) -> None:
        self.problem.value = view.problem_html(result.problem, self.editor.value)
        stages = [widgets.HTML(view.stages_html(result.stages, i)) for i in range(len(result.stages))]
        self.ir_pane.children = stages or [widgets.HTML(view.stages_html([]))]
        self.stage.options = [(f"{i}: {s.name}", i) for i, s in enumerate(result.stages)] or [("(none)", 0)]
        self.stage.index = len(self.stage.options) - 1
        self.ir_pane.selected_index = self.stage.index
        # record choice 0 is "(none)"; choice k highlights record k-1 and its call
        highlights = [None] + [r.index for r in result.records]
        self.code_pane.children = [
            widgets.HTML(view.code_html(result.code, result.records, highlight=h) if result.code else "")
            for h in highlights
        ]
        self.records_pane.children = [
            widgets.HTML(view.records_html(result.records, highlight=h, frame_maps=result.frame_maps))
            for h in highlights
        ]
        self.record.options = [("(none)", -1)] + [(r.summary, r.index) for r in result.records]
        self.record.index = 0
        self.code_pane.selected_index = self.records_pane.selected_index = 0
        self.run_pane.value = view.run_html(result.run)
        trace = result.run.trace if result.run else None
        if trace is not None:
            from gctoy.widgets.stepper import SafepointStepper

            self.stepper_box.children = [SafepointStepper(trace, python_link=True)]
        else:
            self.stepper_box.children = [widgets.HTML("(no recorded run: the program did not run with a stack map)")]
        # last, so that the summary appears when every pane is ready
        self.status.value = f"<code>{view.summary_text(result)}</code>"

    def pane_html(self, stack: widgets.Stack) -> str:
        """The HTML a Stack of panes shows now."""
        if not stack.children or stack.selected_index is None:
            return ""
        return stack.children[stack.selected_index].value

    # ------------------------------------------------------------------ assembly mode

    def _show_assembly(self, result: AsmResult) -> None:
        self.problem.value = view.problem_html(result.problem, self.editor.value)
        self.status.value = f"<code>{len(result.code)} instructions; {result.stopped}</code>"
        self.step.max = max(len(result.steps) - 1, 0)
        self.step.value = 0
        self.asm_pane.value = view.asm_html(result, 0)

    def _show_step(self, change) -> None:
        if isinstance(self.result, AsmResult):
            self.asm_pane.value = view.asm_html(self.result, change["new"])
