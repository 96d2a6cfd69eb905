"""The core package must import on a machine without Jupyter (GUIDE §2: widgets are a thin layer)."""
import subprocess
import sys

CORE_MODULES = ["gctoy", "gctoy.ir", "gctoy.ir.statepoint", "gctoy.ir.verifier", "gctoy.ir.analysis", "gctoy.passes",
                "gctoy.passes.rs4gc_trace", "gctoy.passes.verify_safepoints", "gctoy.viz", "gctoy.viz.cfg",
                "gctoy.viz.rs4gc", "gctoy.viz.eras", "gctoy.cli"]

BLOCKER = """
import sys
class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('IPython', 'ipywidgets', 'ipykernel', 'jupyter_client', 'nbformat'):
            raise ImportError('blocked for this test: ' + name)
        return None
sys.meta_path.insert(0, _Blocked())
import importlib
for m in {mods!r}:
    importlib.import_module(m)
loaded = sorted(k for k in sys.modules if k.split('.')[0] in ('IPython', 'ipywidgets'))
print('loaded:', loaded)
"""


def test_core_imports_with_jupyter_blocked():
    code = BLOCKER.format(mods=CORE_MODULES)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "loaded: []" in r.stdout


def test_blocker_really_blocks():
    """The check above would be worthless if the blocker let ipywidgets through."""
    code = BLOCKER.format(mods=["ipywidgets"])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "blocked for this test" in r.stderr
