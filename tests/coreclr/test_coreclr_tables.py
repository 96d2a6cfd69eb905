"""`gctoy.coreclr.tables` holds CoreCLR's published tables; it must equal the extracted JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gctoy.coreclr import gen_tables, tables
from oracles import CORECLR_TABLES, skip_missing

REPO_ROOT = Path(__file__).resolve().parents[2]


#: the tables tables.py is generated from, copied from CoreCLR's extracted tables (see its "_sources")
TABLES_COPY = Path(__file__).resolve().parent / "data" / "coreclr_tables.json"


@pytest.fixture(scope="module")
def tables_json() -> dict:
    """The repository's copy of CoreCLR's tables (tests/coreclr/data/coreclr_tables.json)."""
    return json.loads(TABLES_COPY.read_text(encoding="utf-8"))


def test_copy_equals_the_reference_tables(tables_json):
    """The copy is CoreCLR's extracted tables, unchanged: ../shared/reference/coreclr/tables.json
    beside the repository, or $GCTOY_CORECLR_TABLES."""
    configured = os.environ.get("GCTOY_CORECLR_TABLES")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "reference" / "coreclr" / "tables.json"
    if not path.is_file():
        skip_missing(CORECLR_TABLES, f"not found at {path} (set GCTOY_CORECLR_TABLES)")
    reference = json.loads(path.read_text(encoding="utf-8"))
    kept = [key for key in tables_json if not key.startswith("_")]
    assert set(kept) == {"infoHdrShortcut", "infoHdrLookup", "callPatternTable", "callCommonDelta", "constants"}
    for key in kept:
        assert tables_json[key] == reference[key], key
    for key, source in tables_json["_sources"].items():
        assert reference["_sources"][key] == source, key


def test_copy_has_the_published_shapes(tables_json):
    assert len(tables_json["infoHdrShortcut"]) == 128
    assert len(tables_json["callPatternTable"]["entries"]) == 80
    assert tables_json["callCommonDelta"] == [6, 8, 10, 12]


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
