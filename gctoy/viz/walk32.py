"""A 32-bit stack walk, frame by frame: which method, where its frame is, how the walker finds the
caller (the EBP chain or ESP arithmetic from the GC info), and the references it reports.

Chapter 16's widget pages through :func:`walk_pages` with a slider (precomputed from one stopped
machine, so the static book has them too).
"""

from __future__ import annotations

import html

from gctoy.coreclr.gcrefs import decoded_method, pushed_arg_size, stack_size

__all__ = ["how_caller_is_found", "walk_pages"]

_STYLE = """<style>
.gctoy-walk { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.gctoy-walk td, .gctoy-walk th { padding: 1px 8px; white-space: pre; text-align: left; }
.gctoy-walk tr.now { background: rgba(240, 180, 0, 0.40); }
.gctoy-walk .how { border-left: 4px solid rgba(60, 120, 230, 0.7); padding: 4px 8px; margin: 6px 0; }
</style>"""


def how_caller_is_found(frame, blob: bytes) -> str:
    """One sentence: how the walker gets from this frame to its caller."""
    hdr = decoded_method(blob).info.header
    if hdr.ebp_frame:
        return (
            f"EBP frame: the return address is at EBP+4 = {frame.ebp + 4:#x}, and the caller's EBP is the "
            f"word at EBP = {frame.ebp:#x}"
        )
    pushed = pushed_arg_size(blob, frame.code_offset)
    size = stack_size(hdr)
    return (
        f"ESP frame: the return address is at ESP + {pushed} (arguments pushed here, from the pointer table) "
        f"+ {size} (the frame, from the header) = {frame.esp + pushed + size:#x}; EBP passes through unchanged"
    )


def walk_pages(frames, methods, names: dict[int, str]) -> list[str]:
    """Page ``i``: the frames walked so far, the ``i``-th marked, with how its caller is found and its references."""
    pages = []
    blobs = [methods.lookup(f.method + 1)[1] for f in frames]
    for i, frame in enumerate(frames):
        rows = []
        for j, f in enumerate(frames[: i + 1]):
            cls = "now" if j == i else ""
            rows.append(
                f'<tr class="{cls}"><td>{j}</td><td>@{html.escape(names.get(f.method, hex(f.method)))}</td>'
                f"<td>{f.code_offset:04X}</td><td>{f.esp:#x}</td><td>{f.ebp:#x}</td>"
                f"<td>{len(f.refs)}</td></tr>"
            )
        refs = (
            "".join(
                f"<tr><td>{html.escape(r.kind)}</td><td>{html.escape(r.location)}</td>"
                f"<td>{'' if r.address is None else hex(r.address)}</td>"
                f"<td>{'' if r.value is None else hex(r.value)}</td><td>{'interior' if r.interior else ''}"
                f"{' pinned' if r.pinned else ''}</td></tr>"
                for r in frame.refs
            )
            or "<tr><td>no references</td></tr>"
        )
        last = i == len(frames) - 1
        how = (
            "the outermost managed frame: its caller is the runtime's entry, where the walk stops"
            if last
            else how_caller_is_found(frame, blobs[i])
        )
        pages.append(
            f'{_STYLE}<div class="gctoy-walk"><div>frame {i + 1} of {len(frames)}</div>'
            f"<table><tr><th>#</th><th>method</th><th>offset</th><th>ESP</th><th>EBP</th><th>refs</th></tr>"
            f'{"".join(rows)}</table><div class="how">{html.escape(how)}</div>'
            f"<table><tr><th>kind</th><th>where</th><th>slot</th><th>value</th><th></th></tr>{refs}</table></div>"
        )
    return pages
