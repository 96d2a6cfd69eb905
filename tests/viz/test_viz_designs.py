"""Chapter 17's pages: the three designs measured on the same program as live pointers grow."""

from __future__ import annotations

from gctoy.viz.designs import design_pages, measure_designs


def test_costs_grow_as_the_designs_say_and_pages_show_them():
    points = measure_designs(live_counts=(0, 4), n=2)
    by = {(p.design, p.live): p for p in points}
    assert len(points) == 6
    # the stack-map and shadow-stack designs pay per live pointer at a call; x86 GC info pays nothing there
    assert by["statepoint", 4].per_call > by["statepoint", 0].per_call
    assert by["shadow-stack", 4].per_call > by["shadow-stack", 0].per_call
    assert by["x86-gcinfo", 4].per_call == by["x86-gcinfo", 0].per_call
    assert by["statepoint", 4].metadata_bytes > by["statepoint", 0].metadata_bytes
    pages = design_pages(points)
    assert len(pages) == 2 and "4 pointers live" in pages[1]
    for p in points:
        assert f"{p.per_call:g}" in pages[0 if p.live == 0 else 1]


def test_points_from_rows_keep_the_measured_figures_and_add_sizes():
    from gctoy.viz.designs import points_from_rows

    points = points_from_rows([(0, [39.0, 39.0, 75.0]), (2, [51.0, 59.0, 75.0])], n=2)
    assert [(p.design, p.live, p.per_call) for p in points][:3] == [("statepoint", 0, 39.0), ("shadow-stack", 0, 39.0),
                                                                    ("x86-gcinfo", 0, 75.0)]
    assert all(p.code_bytes > 0 for p in points)
    assert next(p for p in points if p.design == "shadow-stack" and p.live == 2).metadata_bytes > 0
