"""Where PlaceSafepoints puts its polls, for every combination of its three switches.

One page per combination of LLVM's ``-spp-no-entry``, ``-spp-no-backedge`` and ``-spp-no-call``
(gctoy: ``place-safepoints<no-entry;no-backedge;no-call>``): the function after the pass, the
lines the pass added tinted, and how many polls it placed. Chapter 05 shows them with one button
per combination (precomputed, so the static book has them too).
"""

from __future__ import annotations

import difflib
import html
import itertools

from gctoy.ir import parse_module
from gctoy.ir.module import Module
from gctoy.ir.values import Function
from gctoy.ir.printer import print_function
from gctoy.viz.html import PRE_STYLE as _PRE
from gctoy.passes import run

__all__ = ["SWITCHES", "poll_pages", "placed_polls"]

SWITCHES = ("no-entry", "no-backedge", "no-call")
_STYLE = """<style>
.gctoy-pp { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.gctoy-pp pre { margin: 0; white-space: pre; word-break: normal; }
.gctoy-pp .add { background: rgba(40, 180, 60, 0.22); }
</style>"""


def _options(switches: tuple[str, ...]) -> str:
    return "place-safepoints" + (f"<{';'.join(switches)}>" if switches else "")


def placed_polls(before: str, after: str) -> int:
    """How many poll calls the pass added: calls to @gc.safepoint_poll or to the runtime's poll body."""
    added = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line.startswith("+ ")]
    return sum(1 for line in added if "call" in line and ("safepoint" in line or "poll" in line))


def _function(module: Module, name: str) -> Function:
    fn = module.get_function(name)
    if fn is None:
        raise KeyError(f"no function @{name} in the module")
    return fn


def poll_pages(ir_text: str, function: str) -> dict[str, str]:
    """Label ('entry + backedge + call polls', ...) -> page, for the 8 combinations of the switches."""
    original = print_function(_function(parse_module(ir_text), function))
    pages: dict[str, str] = {}
    for off in itertools.chain.from_iterable(itertools.combinations(SWITCHES, k) for k in range(len(SWITCHES) + 1)):
        module = parse_module(ir_text)
        run(module, _options(off))
        after = print_function(_function(module, function))
        kept = [name.removeprefix("no-") for name in SWITCHES if name not in off]
        label = " + ".join(kept) + " polls" if kept else "no polls"
        rows = []
        for line in difflib.ndiff(original.splitlines(), after.splitlines()):
            if line.startswith("+ "):
                rows.append(f'<pre class="add">{html.escape(line[2:])}</pre>')
            elif line.startswith("  "):
                rows.append(f'<pre style="{_PRE}">{html.escape(line[2:])}</pre>')
        count = placed_polls(original, after)
        head = f"<div><b>{html.escape(_options(off))}</b>: {count} poll{'s' if count != 1 else ''} placed</div>"
        pages[label] = f'{_STYLE}<div class="gctoy-pp">{head}{"".join(rows)}</div>'
    return pages
