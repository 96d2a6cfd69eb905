"""The checker behind tests/test_house_rules.py: gctoy's import graph, module sizes, private imports
and long functions, read from the source with `ast` (nothing is imported or run).

Every function takes the folder that holds the package (the repository root, or a temporary folder
with a planted package in the checker's own tests), so the rules can be shown to fail.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

#: The packages (and the one module) of the pipeline, by layer: a package imports only packages of
#: lower layers (GUIDE §2: ir <- passes <- codegen <- runtime; stack maps, the emulator and the
#: x86 GC-info format sit beside ir, below codegen).
LAYERS = {"ir": 1, "strategy": 1, "coreclr": 1, "emu": 1, "stackmap": 1, "passes": 2, "codegen": 3, "runtime": 4}
CORE = tuple(LAYERS)
#: Modules every layer may use: errors, and reading command-line inputs with a limit.
FOUNDATION = ("errors", "fileio", "inputs")
#: What the core must never import: gctoy's view layers and Jupyter itself.
VIEW_LAYERS = ("widgets", "viz")
JUPYTER = ("IPython", "ipywidgets", "ipykernel", "jupyter_client", "nbformat", "traitlets")
#: The one gctoy module the format package may use.
CORECLR_MAY_USE = ("errors",)

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


@dataclass(frozen=True)
class Import:
    """One import statement's target, as seen from the importing module."""

    importer: str  # dotted module name
    target: str  # dotted name of the imported module (a gctoy submodule where the name is one)
    names: tuple[str, ...]  # the names taken with ``from ... import``; () for ``import x``
    line: int
    function_level: bool  # inside a function or method (a deferred import)


def modules(root: Path, package: str = "gctoy") -> dict[str, Path]:
    """Every module of ``package`` under ``root`` by dotted name (a package by its own name)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of a (possibly relative) import inside ``module``."""
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports(root: Path, package: str = "gctoy") -> list[Import]:
    """Every import in the package, module-level and function-level, with relative names resolved
    (not the imports under ``if TYPE_CHECKING:``, which only annotations use)."""
    return list(_imports(root.resolve(), package))


@lru_cache(maxsize=8)
def _imports(root: Path, package: str) -> tuple[Import, ...]:
    known = modules(root, package)
    out = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        in_function: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function.update(id(n) for n in ast.walk(node) if n is not node)
        typing_only = {id(n) for node in ast.walk(tree) if _is_type_checking_block(node)
                       for stmt in node.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            deferred = id(node) in in_function
            if isinstance(node, ast.Import):
                for alias in node.names:
                    out.append(Import(module, alias.name, (), node.lineno, deferred))
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(module, is_package, node.level, node.module)
                names = tuple(a.name for a in node.names)
                submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in known]
                for sub in submodules:  # ``from . import header``: the edge goes to the submodule
                    out.append(Import(module, sub, (), node.lineno, deferred))
                rest = tuple(n for n in names if f"{target}.{n}" not in known)
                if rest or not submodules:
                    out.append(Import(module, target, rest, node.lineno, deferred))
    return tuple(out)


def _is_type_checking_block(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: its imports name types for annotations and never run, so they are not edges."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def graph(root: Path, package: str = "gctoy") -> dict[str, set[str]]:
    """Module -> the package's modules it imports (the most specific module each import names)."""
    known = modules(root, package)
    edges: dict[str, set[str]] = {m: set() for m in known}
    for imp in imports(root, package):
        target = imp.target
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != imp.importer:
            edges[imp.importer].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The import cycles: every strongly connected component of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(edges) + 100))
    try:
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def _is_core(module: str, package: str) -> bool:
    parts = module.split(".")
    return len(parts) > 1 and parts[0] == package and parts[1] in CORE


def upward_imports(root: Path, package: str = "gctoy") -> list[str]:
    """Imports that run up the layers, as ``module:line -> target``.

    From a core module: of Jupyter, of any gctoy module outside the core and the foundation (the
    view layers widgets and viz, the command line, the workbench...), or of a core package of the
    same or a higher layer.
    """
    bad = []
    for imp in imports(root, package):
        if not _is_core(imp.importer, package):
            continue
        parts = imp.target.split(".")
        own = imp.importer.split(".")[1]
        if parts[0] in JUPYTER:
            bad.append(f"{imp.importer}:{imp.line} -> {imp.target}")
        elif parts[0] != package or len(parts) < 2 or parts[1] == own or parts[1] in FOUNDATION:
            continue
        elif parts[1] not in LAYERS or LAYERS[parts[1]] >= LAYERS[own]:
            bad.append(f"{imp.importer}:{imp.line} -> {imp.target}")
    return bad


def impure_coreclr_imports(root: Path, package: str = "gctoy") -> list[str]:
    """Imports of the format package (coreclr) of anything but the standard library, itself and errors."""
    allowed = {f"{package}.coreclr", *(f"{package}.{m}" for m in CORECLR_MAY_USE)}
    bad = []
    for imp in imports(root, package):
        if not (imp.importer == f"{package}.coreclr" or imp.importer.startswith(f"{package}.coreclr.")):
            continue
        top = imp.target.split(".")[0]
        inside = imp.target in allowed or imp.target.startswith(f"{package}.coreclr.")
        if top == package and not inside or top != package and top not in sys.stdlib_module_names:
            bad.append(f"{imp.importer}:{imp.line} -> {imp.target}")
    return bad


def long_modules(root: Path, package: str = "gctoy") -> dict[str, int]:
    """Modules over `MAX_MODULE_LINES` lines, with their line counts."""
    out = {}
    for module, path in modules(root, package).items():
        n = len(path.read_text().splitlines())
        if n > MAX_MODULE_LINES:
            out[module] = n
    return out


def private_imports(root: Path, package: str = "gctoy") -> dict[str, list[str]]:
    """Modules that import a private name (``_x``) of another gctoy module: module -> ``target._x`` list."""
    out: dict[str, list[str]] = {}
    for imp in imports(root, package):
        if imp.target.split(".")[0] != package:
            continue
        for name in imp.names:
            if name.startswith("_") and not name.startswith("__"):
                out.setdefault(imp.importer, []).append(f"{imp.target}.{name}")
    return out


def long_functions(root: Path, package: str = "gctoy") -> dict[str, int]:
    """Functions over `MAX_FUNCTION_LINES` lines whose docstring gives no reason, as ``module.qualname``.

    The reason is a docstring sentence that starts with ``Long because`` (anywhere in the docstring).
    """
    out = {}
    for module, path in modules(root, package).items():
        tree = ast.parse(path.read_text(), str(path))
        for qualname, node in _functions(tree):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES and "Long because" not in (ast.get_docstring(node) or ""):
                out[f"{module}.{qualname}"] = lines
    return out


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
