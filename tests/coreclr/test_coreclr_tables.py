"""`gctoy.coreclr.tables` holds CoreCLR's published tables; it must equal the extracted JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gctoy.coreclr import gen_tables, tables

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tables_json() -> dict:
    """../shared/reference/coreclr/tables.json beside the repository ($GCTOY_CORECLR_TABLES overrides)."""
    configured = os.environ.get("GCTOY_CORECLR_TABLES")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "reference" / "coreclr" / "tables.json"
    if not path.is_file():
        pytest.skip(f"CoreCLR reference tables not found at {path} (set GCTOY_CORECLR_TABLES)")
    return json.loads(path.read_text())


def test_generated_module_equals_json(tables_json):
    values = gen_tables.extract(tables_json)
    for name, value in values.items():
        assert getattr(tables, name) == value, name
    # The file itself is exactly what the generator writes (nobody edited it by hand).
    generated = gen_tables.render(values)
    assert (REPO_ROOT / "gctoy" / "coreclr" / "tables.py").read_text() == generated


def test_shortcut_rows_match_json_field_by_field(tables_json):
    for row, entry in zip(tables.INFO_HDR_SHORTCUT, tables_json["infoHdrShortcut"], strict=True):
        assert dict(zip(tables.SHORTCUT_FIELDS, row)) == {f: int(entry[f]) for f in tables.SHORTCUT_FIELDS}
        assert entry["varPtrTableSizeIsPlaceholder"] == (row[-1] == 0xFFFF_FFFF)


def test_table_shapes():
    assert len(tables.INFO_HDR_SHORTCUT) == 128
    assert all(len(row) == len(tables.SHORTCUT_FIELDS) == 25 for row in tables.INFO_HDR_SHORTCUT)
    assert len(tables.CALL_PATTERN_TABLE) == 80
    assert tables.CALL_COMMON_DELTA == (6, 8, 10, 12)
    # Rows are sorted by prolog size and infoHdrLookup indexes those runs.
    prologs = [row[0] for row in tables.INFO_HDR_SHORTCUT]
    assert prologs == sorted(prologs)
    lookup = tables.INFO_HDR_LOOKUP
    assert len(lookup) == tables.CONSTANTS["IH_MAX_PROLOG_SIZE"] + 2
    for p in range(len(lookup) - 1):
        assert [i for i, q in enumerate(prologs) if q == p] == list(range(lookup[p], lookup[p + 1]))
    # No two rows are equal, so an exact match names exactly one shortcut byte.
    assert len(set(tables.INFO_HDR_SHORTCUT)) == 128
