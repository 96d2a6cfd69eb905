"""gctoy.viz imports without Jupyter, without the ``dot`` program, and explains a missing graphviz package."""
from __future__ import annotations

import subprocess
import sys

import pytest

from gctoy.viz import _graphviz
from oracles import DOT, skip_missing

BLOCK = """
import sys
class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ImportError('blocked for this test: ' + name)
        return None
sys.meta_path.insert(0, _Blocked())
"""


def _run(code: str, env_path: str | None = None) -> subprocess.CompletedProcess:
    env = None
    if env_path is not None:
        import os

        env = dict(os.environ, PATH=env_path)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def test_imports_without_jupyter_and_without_dot():
    code = BLOCK.format(blocked=("IPython", "ipywidgets", "ipykernel")) + """
import gctoy.viz
from gctoy.ir import parse_module
fn = parse_module('define void @f() {\\n  ret void\\n}\\n').get_function('f')
print('dot' if gctoy.viz.has_dot() else 'no dot')
print(gctoy.viz.cfg_dot_source(fn).splitlines()[0])
print(sorted(k for k in sys.modules if k.split('.')[0] in ('IPython', 'ipywidgets')))
"""
    r = _run(code, env_path="/nonexistent")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["no dot", "digraph cfg_f {", "[]"]


def test_missing_graphviz_package_is_explained():
    code = BLOCK.format(blocked=("graphviz",)) + """
import gctoy.viz
from gctoy.ir import parse_module
fn = parse_module('define void @f() {\\n  ret void\\n}\\n').get_function('f')
try:
    gctoy.viz.cfg_graph(fn)
except ImportError as e:
    print(type(e).__name__, isinstance(e, gctoy.errors.GCToyError))
    print(e)
"""
    r = _run(code)
    assert r.returncode == 0, r.stderr
    first, message = r.stdout.split("\n", 1)
    assert first == "GraphvizMissing True"
    assert "pip install graphviz" in message and "dot" in message


def test_require_dot_explains(monkeypatch):
    monkeypatch.setattr(_graphviz.shutil, "which", lambda name: None)
    assert not _graphviz.has_dot()
    with pytest.raises(_graphviz.GraphvizMissing, match="apt-get install graphviz"):
        _graphviz.require_dot()


def test_render_svg_when_dot_is_present():
    import graphviz  # noqa: F401 - part of the [book] extra

    if not _graphviz.has_dot():
        skip_missing(DOT, "Graphviz's dot program is not on the PATH (apt-get install graphviz)")
    from gctoy.ir import parse_module
    from gctoy.viz import cfg_graph, render_svg

    fn = parse_module("define void @f() {\n  ret void\n}\n").get_function("f")
    svg = render_svg(cfg_graph(fn))
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg and "ret void" in svg
