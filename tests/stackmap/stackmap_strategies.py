"""Hypothesis strategies for `StackMap` values that the v3 encoding can hold."""

from __future__ import annotations

from hypothesis import strategies as st

from gctoy.stackmap import LiveOut, Location, LocationKind, StackMap, StackMapRecord, StkSizeRecord

U16 = st.integers(0, 2**16 - 1)
U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)
I32 = st.integers(-(2**31), 2**31 - 1)


def locations(num_constants: int) -> st.SearchStrategy[Location]:
    """Any location; ConstantIndex only when the pool is non-empty, and then inside it."""
    kinds = [k for k in LocationKind if k != LocationKind.CONSTANT_INDEX or num_constants]
    plain = st.builds(Location, st.sampled_from([k for k in kinds if k != LocationKind.CONSTANT_INDEX]),
                      U16, U16, I32)
    if not num_constants:
        return plain
    indexed = st.builds(Location, st.just(LocationKind.CONSTANT_INDEX), U16, U16,
                        st.integers(0, num_constants - 1))
    return st.one_of(plain, indexed)


records_for = lambda num_constants: st.builds(  # noqa: E731
    StackMapRecord, U64, U32, U16,
    st.lists(locations(num_constants), max_size=7).map(tuple),
    st.lists(st.builds(LiveOut, U16, st.integers(0, 255)), max_size=5).map(tuple),
)


@st.composite
def stackmaps(draw) -> StackMap:
    """A StackMap whose functions' record counts add up to its records."""
    constants = tuple(draw(st.lists(U64, max_size=5)))
    counts = draw(st.lists(st.integers(0, 3), max_size=4))
    functions = tuple(StkSizeRecord(draw(U64), draw(U64), n) for n in counts)
    records = tuple(draw(records_for(len(constants))) for _ in range(sum(counts)))
    return StackMap(3, functions, constants, records)
