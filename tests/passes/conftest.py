"""Fixtures shared by the pass tests."""
from __future__ import annotations

import pytest


@pytest.fixture(params=[14, 19], ids=lambda v: f"llvm{v}")
def llvm(request):
    """LLVM 14, then LLVM 19 (each skipped where it is not installed)."""
    return request.getfixturevalue(f"llvm{request.param}")
