"""Every chapter in a live JupyterLab, as a reader opens it: the venv's JupyterLab serves a copy of the
notebooks, Debian's Chromium (under Playwright) opens each chapter, runs all its cells, and finds no
error output and no widget that failed to draw; then it moves the chapter's first widget and sees the
view change. A failure leaves a screenshot in build/screenshots/ (git-ignored)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser_support import SHOWN_TEXT, interact
from course_notebooks import NOTEBOOKS, ROOT

CHAPTERS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SCREENSHOTS = ROOT / "build" / "screenshots"
#: widget output areas: a cell output that holds a drawn widget
WIDGET_OUTPUT = ".jp-OutputArea-output:has(.jupyter-widgets)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab from this venv on a copy of the notebooks, with every cell rendered (no windowing)."""
    root = tmp_path_factory.mktemp("lab")
    for path in NOTEBOOKS.iterdir():
        if path.suffix in (".ipynb", ".md"):
            shutil.copy2(path, root / path.name)
    settings = root / ".settings"
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    # JupyterLab 4 only renders the cells on screen by default; the test reads them all
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["JUPYTER_CONFIG_DIR"] = str(root / ".jupyter")
    env["JUPYTER_DATA_DIR"] = str(root / ".data")   # the notebook signatures of this test only
    # as ./run.sh book does: trust the chapters, so that their saved widgets are drawn when they open
    subprocess.run([sys.executable, "-m", "jupyter", "trust", *sorted(str(p) for p in root.glob("*.ipynb"))],
                   env=env, check=True, capture_output=True)
    log = open(root / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}", "--allow-root",
         f"--LabApp.user_settings_dir={settings}", "--LabApp.news_url=", "--ServerApp.disable_check_xsrf=True"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            log.close()
            pytest.fail("JupyterLab did not start:\n" + (root / "lab.log").read_text()[-3000:])
        time.sleep(0.5)
    yield base, token
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


def _menu(page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def _kernel_is_up(base: str, token: str, name: str) -> bool:
    """The server holds a session for notebook ``name`` whose kernel has started and waits for work."""
    with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=10) as answer:
        sessions = json.load(answer)
    return any(s.get("path") == name and (s.get("kernel") or {}).get("execution_state") == "idle" for s in sessions)


def _accept_kernel(page, base: str, token: str, name: str) -> None:
    """Wait until the chapter's kernel is up; if JupyterLab asks which kernel to start first, take the one
    it proposes (the venv's Python 3)."""
    dialog = page.locator(".jp-Dialog:has-text('Select Kernel') button.jp-mod-accept")
    deadline = time.monotonic() + 90
    while not _kernel_is_up(base, token, name):
        if time.monotonic() > deadline:
            pytest.fail(f"{name}: no kernel started within 90 s")
        if dialog.is_visible():
            dialog.click()
        page.wait_for_timeout(200)


def _run_all(page, timeout_s: float) -> None:
    """Clear the saved outputs, run every cell through the Run menu, wait until each code cell has run."""
    _menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))"
        ".every(p => !/\\[\\d+\\]/.test(p.textContent))")
    _menu(page, "Run", "Run All Cells")
    page.wait_for_function(
        """() => {
             const prompts = Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'));
             return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
           }""",
        timeout=timeout_s * 1000, polling=500)


@pytest.mark.browser
@pytest.mark.parametrize("name", CHAPTERS, ids=[n[:2] for n in CHAPTERS])
def test_chapter_runs_in_jupyterlab_and_its_widget_responds(lab, browser, name):
    base, token = lab
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(60000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        # a workspace of its own, reset: only this chapter's tab is open
        page.goto(f"{base}/lab/workspaces/chapter{name[:2]}/tree/{name}?token={token}&reset")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _accept_kernel(page, base, token, name)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=90000)
        # opened, not yet run: the saved widget state draws the widgets (no "Error displaying widget");
        # a large chapter (13: 570 kB of saved outputs) can take JupyterLab more than a minute to draw on
        # a loaded machine, so this hang watchdog waits longer than the page's default
        page.wait_for_selector(f".jp-Notebook {WIDGET_OUTPUT}", state="attached", timeout=180000)
        unrun = page.locator(".jp-Notebook .jp-OutputArea-output").all_inner_texts()
        assert not [t for t in unrun if "Error displaying widget" in t], f"{name}: widgets not drawn before running"
        _run_all(page, timeout_s=240)
        texts = page.locator(".jp-Notebook .jp-OutputArea-output").all_inner_texts()
        tracebacks = [t[:300] for t in texts if "Traceback (most recent call last)" in t or "Error displaying widget" in t]
        assert not tracebacks, f"{name}: error outputs after Run All: {tracebacks}"
        assert page.locator(f".jp-Notebook {WIDGET_OUTPUT}").count() > 0, f"{name}: no widget was drawn"
        output = page.locator(f".jp-Notebook {WIDGET_OUTPUT}").first
        output.scroll_into_view_if_needed()
        # JupyterLab's output styles (white-space: pre-wrap; word-break: break-all) must not break gctoy's
        # code or text inside a word (as 'immar' + 'g' in chapter 01's form switcher)
        wrapping = output.evaluate("""el => Array.from(el.querySelectorAll('pre')).filter(p => p.offsetParent)
            .map(p => getComputedStyle(p).wordBreak)""")
        assert "break-all" not in wrapping, f"{name}: text broken inside words: {wrapping}"
        before = interact(page, output)
        page.wait_for_function(f"([el, old]) => ({SHOWN_TEXT})(el) !== old", arg=[output.element_handle(), before])
        assert not [e for e in errors if "THEBE" in e or "model not found" in e], errors
    except BaseException:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"jupyterlab-{name[:2]}.png"), full_page=False)
        raise
    finally:
        page.close()
        _shut_down_kernels(base, token)


def _shut_down_kernels(base: str, token: str) -> None:
    """Each chapter's kernel holds its Unicorn machines: stop them all before the next chapter."""
    with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=10) as answer:
        sessions = json.load(answer)
    for session in sessions:
        request = urllib.request.Request(f"{base}/api/sessions/{session['id']}?token={token}", method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


TYPED = """declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @main() gc "statepoint-example" {
  %a = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %p = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  store i64 1234, i64 addrspace(1)* %p
  call void @gc_collect()
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %p
  call void @print_i64(i64 %v)
  ret i64 0
}
"""


def _type_and_run(page, editor, run, text: str, *, typed: bool = False) -> None:
    """Put ``text`` in the workbench's editor, leave the editor (its text goes to the kernel then, once),
    let the kernel take it, and press Run."""
    editor.fill("")
    if typed:
        editor.type(text, delay=0)                        # key by key, as a reader would
    else:
        editor.fill(text)
    editor.blur()
    page.wait_for_timeout(500)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=90000)
    run.click()


@pytest.mark.browser
def test_workbench_runs_what_the_reader_types(lab, browser):
    """Chapter 08's workbench in JupyterLab: type a program, Run, see it through the passes, Keystone and
    Unicorn (its output and the stepper), pick a record and see its call highlighted; then type bad IR
    and bad assembly and see the message in the widget, with the kernel still there."""
    base, token = lab
    name = next(n for n in CHAPTERS if n.startswith("08_"))
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(60000)
    try:
        page.goto(f"{base}/lab/workspaces/workbench/tree/{name}?token={token}&reset")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _accept_kernel(page, base, token, name)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=90000)
        _run_all(page, timeout_s=240)
        bench = page.locator(".jp-Notebook .jp-OutputArea-output:has(.widget-textarea)").first
        bench.scroll_into_view_if_needed()
        editor = bench.locator(".widget-textarea textarea")
        run = bench.locator("button", has_text="Run").first
        status = bench.locator(".widget-html-content", has_text="passes,").first

        _type_and_run(page, editor, run, TYPED, typed=True)
        page.wait_for_function("el => el.innerText.includes('printed [1234], 4 collections')",
                               arg=status.element_handle(), timeout=120000)
        assert "no problems" in bench.inner_text()
        # the run was recorded: the stepper tab steps through it
        bench.locator(".lm-TabBar-tab", has_text="stepper").first.click()
        stepper = bench.locator(".widget-vbox:has(.widget-play)").last
        shown = "el => { const v = el.querySelectorAll('.widget-vbox'); return v.length ? v[v.length - 1].innerText : ''; }"
        page.wait_for_function(f"el => /state 0\\/\\d+/.test(({shown})(el))", arg=bench.element_handle())
        stepper.locator("button", has_text="step").first.click()          # runs Python: the kernel turns the page
        page.wait_for_function(f"el => /state 1\\/\\d+/.test(({shown})(el))", arg=bench.element_handle())
        bench.locator(".lm-TabBar-tab", has_text="machine code").first.click()
        record = bench.locator("select:has(option:text-is('(none)'))").first   # the record chooser
        record.select_option(index=2)                     # record 1 (choice 0 is "(none)")
        page.wait_for_function("el => el.querySelectorAll('tr.call.hot').length === 1", arg=bench.element_handle())

        _type_and_run(page, editor, run, "define i64 @main() {\n  ret i32 0\n}\n")
        page.wait_for_function("el => el.innerText.includes('line 2, column')", arg=bench.element_handle())
        assert "parse" in bench.locator(".widget-html-content", has_text="parse").first.inner_text()

        bench.locator(".widget-toggle-button", has_text="assembly").first.click()
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=90000)
        _type_and_run(page, editor, run, 'nop\n.incbin "/etc/hostname"\n')
        page.wait_for_function("el => el.innerText.includes(\"'.incbin' is not allowed\")", arg=bench.element_handle())
        _type_and_run(page, editor, run, "mov rax, 5\nadd rax, 3\nret\n")
        page.wait_for_function("el => el.innerText.includes('returned after 3 instructions')", arg=bench.element_handle())
    except BaseException:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "jupyterlab-workbench.png"), full_page=False)
        raise
    finally:
        page.close()
        _shut_down_kernels(base, token)
