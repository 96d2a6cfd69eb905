"""``gctoy gcinfo-x86``: dump, encode, spec and schema, and one clear error for bad input."""

from __future__ import annotations

import json

import pytest

from gctoy.cli import main
from gctoy.coreclr.spec import from_json, info_from_spec, spec_from_info, to_json
from gctoy.coreclr.gcdump import gcdump
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.method import MethodGCInfo, decode, encode

SOS_HEX = "36 D48CC7AA93F34005 14100C0844 F17972838B939B564A0E10E0F03138FF"
SOS = bytes.fromhex(SOS_HEX)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["gcinfo-x86", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------- dump


def test_dump_hex_with_spaces_and_split_arguments(capsys):
    code, out, err = run(capsys, "dump", "--legacy", *SOS_HEX.split())
    assert code == 0 and err == ""
    assert out == gcdump(SOS, legacy=True)
    code, out2, _ = run(capsys, "dump", "--legacy", SOS_HEX)
    assert code == 0 and out2 == out


def test_dump_file_hex_text_or_raw_bytes(capsys, tmp_path):
    text = tmp_path / "blob.txt"
    text.write_text("0x36, 0xD4 8C C7\nAA 93 F3 40 05 14 10 0C 08 44\nF17972838B939B564A0E10E0F03138FF\n")
    raw = tmp_path / "blob.bin"
    raw.write_bytes(SOS)
    for path in (text, raw):
        code, out, err = run(capsys, "dump", str(path), "--legacy")
        assert (code, err) == (0, "")
        assert out.splitlines()[1] == "    method      size   = 0036"


def test_dump_at_offset_lists_live_references(capsys):
    code, out, _ = run(capsys, "dump", SOS_HEX, "--legacy", "--at", "0x27", "--caller")
    assert code == 0
    tail = out.split("FF             | \n", 1)[1].splitlines()
    assert tail[0] == "    Offset 0027 is within the method's body"
    assert tail[1] == "Live references at 0027 (caller frame): 11"
    assert tail[2:4] == ["    register   ESI", "    register   EDI"]
    assert tail[-1] == "    untracked  [EBP-04H]"


def test_dump_modern_rules_reject_the_legacy_sample(capsys):
    code, out, err = run(capsys, "dump", SOS_HEX)
    assert code == 1 and out == ""
    assert err == ("<hex>: error: offset 0x9: argTabOffset is 20 but the no-GC, untracked and lifetime "
                   "tables take 6 bytes\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["dump", "36 D4 Z1"], "<hex>: error: HEX: not hex bytes: 'Z1'\n"),
    (["dump", "36 D"], "<hex>: error: HEX: not hex bytes: 'D'\n"),
    (["dump", "10 4F FF", "--at", "ten"], "<hex>: error: --at: not a number: 'ten'\n"),
    (["dump", "10 4F FF 00"], "<hex>: error: offset 0x3: 1 byte(s) after the pointer table's end byte\n"),
    (["dump", SOS_HEX, "--legacy", "--at", "0x37"],
     "<hex>: error: code offset 0x37 is past the method's end (method size 0x36)\n"),
    (["dump", SOS_HEX, "--legacy", "--at", "99999999999999999999"],
     "<hex>: error: code offset 0x56bc75e2d630fffff is past the method's end (method size 0x36)\n"),
])
def test_dump_errors(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (1, "", message)


def test_the_method_end_itself_is_an_offset_the_runtime_may_ask_about(capsys):
    code, out, _ = run(capsys, "dump", SOS_HEX, "--legacy", "--at", "0x36", "--caller")
    assert code == 0 and "Live references at 0036 (caller frame):" in out


def test_version_option_changes_the_reading(capsys):
    # Row 0x4F, then 0x4F (second code set) and code 0x04: version 5 reads it as isAsync with
    # return kind 0, version 4 as "no-GC region count 0", version 3 has no such code.
    blob = "10 CF CF 04 FF"
    assert run(capsys, "dump", blob, "--gcinfo-version", "5")[0] == 0
    assert run(capsys, "dump", blob, "--gcinfo-version", "4")[0] == 0
    code, _, err = run(capsys, "dump", blob, "--gcinfo-version", "3")
    assert code == 1 and "second-set header code 0x04 is invalid in GC info version 3" in err


# ----------------------------------------------------------------------------- encode / spec


def test_spec_then_encode_round_trips(capsys, tmp_path):
    code, out, _ = run(capsys, "spec", SOS_HEX, "--legacy")
    assert code == 0
    spec = json.loads(out)
    assert spec["method_size"] == 0x36 and spec["epilogs"] == [0x2E]
    assert spec["pointer_table"]["events"][0] == {"type": "RegLive", "offset": 17, "reg": "EDI",
                                                  "interior": False, "this": False}
    path = tmp_path / "sos.json"
    path.write_text(out)
    code, out, _ = run(capsys, "encode", str(path), "--legacy")
    assert (code, out) == (0, SOS.hex(" ").upper() + "\n")
    code, out, _ = run(capsys, "encode", str(path))  # the modern form of the same method
    assert code == 0 and bytes.fromhex(out) == encode(decode(SOS, legacy=True))


def _write(tmp_path, spec) -> str:
    path = tmp_path / "spec.json"
    path.write_text(spec if isinstance(spec, str) else json.dumps(spec))
    return str(path)


def test_encode_every_pointer_table_kind(capsys, tmp_path):
    specs = {
        "full": {"method_size": 20, "header": {"interruptible": True},
                 "pointer_table": {"events": [{"type": "RegLive", "offset": 3, "reg": "EBX"},
                                              {"type": "RegDead", "offset": 9, "reg": "EBX"}]}},
        "ebp": {"method_size": 40, "header": {"ebp_frame": True, "ebp_saved": True},
                "pointer_table": {"this_reg": "ESI",
                                  "calls": [{"offset": 8, "regs": ["ESI"], "arg_mask": 1},
                                            {"offset": 30, "arg_offsets": [{"offset": 4, "interior": True}]}]}},
        "esp": {"method_size": 40, "header": {"ebx_saved": True},
                "untracked": [{"offset": 4}], "lifetimes": [{"offset": 8, "begin": 2, "end": 9}],
                "pointer_table": {"events": [{"type": "Push", "offset": 4, "gc": True},
                                             {"type": "Call", "offset": 9, "arg_cnt": 1, "regs": ["EBX"]}]}},
    }
    for kind, spec in specs.items():
        code, out, err = run(capsys, "encode", _write(tmp_path, spec))
        assert (code, err) == (0, ""), kind
        info = decode(bytes.fromhex(out))
        assert spec_from_info(info)["pointer_table"] == to_json(info.pointer_table, type(info.pointer_table))
        assert info_from_spec(spec_from_info(info)) == info
        assert len(info.pointer_table.events if kind != "ebp" else info.pointer_table.calls) == 2


@pytest.mark.parametrize(("spec", "message"), [
    ("{", "spec.json:1:2: error: invalid JSON: Expecting property name enclosed in double quotes"),
    ("[1]", "spec.json: error: the method description must be a JSON object"),
    ({}, "spec.json: error: method_size: is required"),
    ({"method_size": "big"}, 'spec.json: error: method_size: must be an integer, got "big"'),
    ({"method_size": 4, "colour": 1}, "spec.json: error: colour: unknown key"),
    ({"method_size": 4, "header": {"untracked_cnt": 2}},
     "spec.json: error: header.untracked_cnt: is derived from the tables; leave it out"),
    ({"method_size": 4, "header": {"ebp_frame": 1}},
     "spec.json: error: header.ebp_frame: must be true or false, got 1"),
    ({"method_size": 4, "untracked": [{"offset": 6}]},
     "spec.json: error: untracked slot #0 offset 6 is not a multiple of 4"),
    ({"method_size": 4, "lifetimes": [{"offset": 8, "begin": 2}]}, "spec.json: error: lifetimes[0].end: is required"),
    ({"method_size": 4, "header": {"interruptible": True},
      "pointer_table": {"events": [{"offset": 1, "reg": "EAX"}]}},
     "spec.json: error: pointer_table.events[0]: needs \"type\": one of RegLive, RegDead, PushPtr"),
    ({"method_size": 4, "header": {"interruptible": True},
      "pointer_table": {"events": [{"type": "RegLive", "offset": 1, "reg": "EAX", "colour": 2}]}},
     "spec.json: error: pointer_table.events[0].colour: unknown field of RegLive"),
    ({"method_size": 4, "no_gc_regions": [{"offset": 1, "size": 1}]},
     "spec.json: error: no-GC regions need GC info version 4 or later"),
])
def test_encode_errors(capsys, tmp_path, spec, message):
    path = _write(tmp_path, spec)
    code, out, err = run(capsys, "encode", path, "--gcinfo-version", "3")
    assert code == 1 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(str(tmp_path / message))


def test_encode_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "encode", str(tmp_path / "nope.json"))
    assert code == 1 and err.endswith("nope.json: error: cannot read: No such file or directory\n")


def test_schema_names_every_pointer_table(capsys):
    code, out, _ = run(capsys, "schema")
    shapes = json.loads(out)
    assert code == 0
    assert set(shapes) == {"method", "pointer_table (full)", "pointer_table (ebp)", "pointer_table (esp)"}
    assert "untracked_cnt" not in shapes["method"]["header"]
    assert shapes["pointer_table (ebp)"]["type"] == "EbpTable"


def test_from_json_and_to_json_are_inverse_on_headers():
    hdr = InfoHdr(prolog_size=3, ebp_frame=True, return_kind=2)
    assert from_json(InfoHdr, to_json(hdr), "header") == hdr
    info = MethodGCInfo.create(8, hdr)
    assert info_from_spec(spec_from_info(info)) == info


def test_top_level_help_mentions_the_command(capsys):
    assert main([]) == 2
    assert "gcinfo-x86" in capsys.readouterr().out
