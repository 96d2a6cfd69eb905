"""tools/book_build.py without a network or a browser: copy rules, digest checks, npm failures, asset scan."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import stat
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import book_build as book
from book_build import BookError, CopyRule, VendoredPackage
from gctoy.errors import GCToyError

REPO_ROOT = Path(__file__).resolve().parents[2]


def _tarball(path: Path, files: dict[str, bytes]) -> str:
    """Write a gzipped tarball like `npm pack` does and return its npm-style sha512 digest."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())
    return "sha512-" + base64.b64encode(hashlib.sha512(buffer.getvalue()).digest()).decode()


def _fake_npm(tmp_path: Path, script: str) -> str:
    """A stand-in `npm` executable running the given shell script."""
    npm = tmp_path / "npm"
    npm.write_text("#!/bin/sh\n" + script)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    return str(npm)


# ---------------------------------------------------------------- copy rules


def test_a_file_rule_takes_exactly_that_file():
    rule = CopyRule("package/require.js", "require.js")
    assert rule.target("package/require.js") == "require.js"
    assert rule.target("package/require.json") is None
    assert rule.target("package/bin/r.js") is None


def test_a_folder_rule_keeps_the_tree_and_drops_what_is_excluded():
    rule = CopyRule("package/es5/", "mathjax/es5", ("*.js", "output/svg*"))
    assert rule.target("package/es5/input/tex/extensions/ams.js") == "mathjax/es5/input/tex/extensions/ams.js"
    assert rule.target("package/es5/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff") is not None
    # a pattern without "/" names files at the top of the folder only
    assert rule.target("package/es5/tex-svg.js") is None
    assert rule.target("package/es5/output/svg.js") is None
    assert rule.target("package/es5/output/svg/fonts/tex.js") is None
    assert rule.target("package/other/x.js") is None


SEGMENT = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=8).filter(lambda t: t not in (".", ".."))


@given(st.lists(SEGMENT, min_size=1, max_size=4), st.lists(SEGMENT, min_size=1, max_size=4))
def test_a_folder_rule_moves_the_tree_below_dest_unchanged(prefix_parts, rest_parts):
    prefix, rest = "/".join(prefix_parts) + "/", "/".join(rest_parts)
    rule = CopyRule(prefix, "out")
    assert rule.target(prefix + rest) == "out/" + rest
    assert rule.target(rest) in (None, "out/" + rest[len(prefix):])
    file_rule = CopyRule(prefix + rest, "one")
    assert file_rule.target(prefix + rest) == "one"
    assert file_rule.target(prefix + rest + "x") is None and file_rule.target(prefix + rest + "/x") is None


def test_the_pins_name_exact_versions_and_sha512_digests():
    names = [p.name for p in book.VENDORED]
    assert names == ["requirejs", "@jupyter-widgets/html-manager", "mathjax"]
    for package in book.VENDORED:
        assert package.version.count(".") == 2 and not package.version.startswith(("^", "~"))
        assert package.integrity.startswith("sha512-")
        assert len(base64.b64decode(package.integrity[7:])) == 64


def test_the_config_points_at_the_vendored_files_and_not_at_static():
    """book/_config.yml must name the files `vendor()` writes, outside a `_static` folder."""
    config = (REPO_ROOT / "book" / "_config.yml").read_text()
    assert 'html_static_path: ["_vendor_root"]' in config
    assert 'html_extra_path: ["_vendor_extra"]' in config
    assert "vendor/html-manager/embed-amd.js" in config and "vendor/require.js" in config
    assert "mathjax_path: vendor/mathjax/es5/tex-mml-chtml.js" in config
    assert 'html_js_files: ["vendor/fa-config.js"]' in config
    assert not (REPO_ROOT / "book" / "_static").exists()


# ---------------------------------------------------------------- vendor() with a stand-in npm


@pytest.fixture
def small_pins(tmp_path, monkeypatch):
    """Replace the pins by one tiny package whose tarball a fake npm copies into place."""
    store = tmp_path / "store"
    store.mkdir()
    digest = _tarball(
        store / "demo-pkg-1.2.3.tgz",
        {
            "package/dist/a.js": b"A",
            "package/dist/a.js.map": b"M",
            "package/dist/f.woff2": b"F",
            "package/README": b"R",
        },
    )
    pins = (VendoredPackage("demo-pkg", "1.2.3", digest, (CopyRule("package/dist/", "html-manager", ("*.map",)),)),)
    monkeypatch.setattr(book, "VENDORED", pins)
    # npm pack --json --pack-destination DEST SPEC...: copy the tarball to DEST
    npm = _fake_npm(tmp_path, f'cp "{store}/demo-pkg-1.2.3.tgz" "$4/"\necho "[]"\n')
    return npm, digest


def test_vendor_unpacks_what_the_rules_select_and_stamps_it(tmp_path, small_pins):
    npm, digest = small_pins
    book_dir = tmp_path / "bk"
    book_dir.mkdir()
    target = book.vendor(book_dir, npm=npm)
    assert target == book_dir / "_vendor_root" / "vendor"
    assert (target / "html-manager" / "a.js").read_bytes() == b"A"
    assert not (target / "html-manager" / "a.js.map").exists()
    assert not (target / "README").exists()
    assert (target / "fa-config.js").read_text() == book.FA_CONFIG
    stamp = json.loads((target / book.STAMP_NAME).read_text())
    assert [(p["name"], p["version"], p["integrity"]) for p in stamp["packages"]] == [("demo-pkg", "1.2.3", digest)]
    assert book.is_vendored(book_dir)
    for page_dir in ("", "notebooks"):
        assert (book_dir / "_vendor_extra" / page_dir / "@jupyter-widgets/html-manager/dist/f.woff2").exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["vendor"]


def test_vendor_does_not_ask_npm_again_once_the_stamp_matches(tmp_path, small_pins):
    npm, _ = small_pins
    book_dir = tmp_path / "bk"
    book_dir.mkdir()
    book.vendor(book_dir, npm=npm)
    (tmp_path / "other").mkdir()
    failing = _fake_npm(tmp_path / "other", "exit 7\n")
    assert book.vendor(book_dir, npm=failing) == book.vendor_dir(book_dir)
    with pytest.raises(BookError, match="npm pack failed"):
        book.vendor(book_dir, npm=failing, force=True)
    assert (book.vendor_dir(book_dir) / "html-manager" / "a.js").exists(), "a failed refresh keeps the old copy"


def test_changed_copy_rules_make_the_folder_stale(tmp_path, small_pins, monkeypatch):
    npm, _ = small_pins
    book.vendor(tmp_path, npm=npm)
    pin = book.VENDORED[0]
    rules = (CopyRule("package/dist/", "html-manager", ("*.map", "*.woff2")),)
    monkeypatch.setattr(book, "VENDORED", (VendoredPackage(pin.name, pin.version, pin.integrity, rules),))
    assert not book.is_vendored(tmp_path)
    book.vendor(tmp_path, npm=npm)
    assert book.is_vendored(tmp_path)
    assert not (book.vendor_dir(tmp_path) / "html-manager" / "f.woff2").exists()
    assert not list((tmp_path / "_vendor_extra").rglob("f.woff2")), "stale fonts are removed"


def test_a_tarball_with_another_digest_is_refused(tmp_path, small_pins, monkeypatch):
    npm, _ = small_pins
    wrong = "sha512-" + base64.b64encode(bytes(64)).decode()
    pin = book.VENDORED[0]
    monkeypatch.setattr(book, "VENDORED", (VendoredPackage(pin.name, pin.version, wrong, pin.rules),))
    with pytest.raises(BookError, match="differs from the pinned"):
        book.vendor(tmp_path, npm=npm)
    assert not book.is_vendored(tmp_path)


def test_missing_npm_gives_one_clear_error(tmp_path):
    with pytest.raises(BookError, match=r"npm not found .*npm registry") as caught:
        book.vendor(tmp_path, npm=str(tmp_path / "no-such-npm"))
    assert isinstance(caught.value, GCToyError)


def test_an_unreachable_registry_gives_one_clear_error(tmp_path):
    npm = _fake_npm(tmp_path, 'echo "npm error code ENOTFOUND registry.npmjs.org" >&2\nexit 1\n')
    with pytest.raises(BookError, match=r"(?s)a network is needed once.*ENOTFOUND"):
        book.vendor(tmp_path / "x", npm=npm)


def test_npm_json_error_summary_is_quoted(tmp_path):
    """With --json, npm reports a failure as a JSON object on standard output."""
    body = '{"error": {"code": "EAI_AGAIN", "summary": "request to https://registry.npmjs.org/requirejs failed"}}'
    npm = _fake_npm(tmp_path, f"echo '{body}'\necho 'npm error A complete log of this run' >&2\nexit 1\n")
    with pytest.raises(BookError) as caught:
        book.vendor(tmp_path / "x", npm=npm)
    assert str(caught.value).endswith("EAI_AGAIN: request to https://registry.npmjs.org/requirejs failed")
    assert "complete log" not in str(caught.value)


def test_npm_is_asked_to_use_its_cache_and_to_give_up_quickly(tmp_path):
    args = tmp_path / "args"
    npm = _fake_npm(tmp_path, f'echo "$@" > "{args}"\nexit 1\n')
    with pytest.raises(BookError):
        book.vendor(tmp_path / "x", npm=npm)
    words = args.read_text().split()
    assert words[:3] == ["pack", "--json", "--pack-destination"]
    assert [p.spec for p in book.VENDORED] == words[4:4 + len(book.VENDORED)]
    assert "--prefer-offline" in words and "--fetch-retries=1" in words


def test_cli_reports_errors_without_a_traceback(tmp_path, capsys):
    status = book.main(["vendor", str(tmp_path), "--npm", str(tmp_path / "absent")])
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith("book_build: error: npm not found") and "Traceback" not in err


# ---------------------------------------------------------------- build preconditions, asset scan


def test_build_refuses_a_folder_without_config(tmp_path):
    with pytest.raises(BookError, match="no _config.yml"):
        book.build_html(tmp_path, vendor_first=False)


def test_build_refuses_a_static_folder(tmp_path):
    (tmp_path / "_config.yml").write_text("title: t\n")
    (tmp_path / "_static").mkdir()
    with pytest.raises(BookError, match="drawn|draw every widget several times"):
        book.build_html(tmp_path, vendor_first=False)


def test_build_refuses_to_run_without_the_vendored_files(tmp_path):
    (tmp_path / "_config.yml").write_text("title: t\n")
    with pytest.raises(BookError, match="missing or stale"):
        book.build_html(tmp_path, vendor_first=False)


def test_remote_assets_finds_scripts_links_and_data_urls_but_not_text(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.html").write_text(
        '<html><head>\n<script src="_static/x.js"></script>\n'
        '<script src="https://cdn.example/y.js"></script>\n'
        '<link rel="stylesheet" href="//fonts.example/z.css">\n'
        '<script>var url = "https://unpkg.com/thebe";</script>\n'
        '</head><body><a href="https://example.org/">a link is not an asset</a></body></html>\n'
    )
    (tmp_path / "sub" / "b.html").write_text(
        '<img src="http://img.example/p.png">\n<div data-cdn="https://c.example/"></div>'
    )
    assert book.remote_assets(tmp_path) == [
        "a.html:3: https://cdn.example/y.js",
        "a.html:4: //fonts.example/z.css",
        "sub/b.html:1: http://img.example/p.png",
        "sub/b.html:2: https://c.example/",
    ]


def test_expected_pages_are_the_intro_one_per_notebook_and_the_course_pages():
    pages = book.expected_pages(REPO_ROOT / "book")
    notebooks = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
    markdown = sorted((REPO_ROOT / "notebooks").glob("*.md"))
    assert pages[0] == "intro.html"
    assert pages[1:] == [f"notebooks/{nb.stem}.html" for nb in notebooks] + [f"notebooks/{md.stem}.html" for md in markdown]
    assert len(notebooks) >= 18 and {"glossary", "course_syllabus"} <= {md.stem for md in markdown}


def test_gitignore_keeps_the_vendored_folders_out_of_the_repository():
    lines = (REPO_ROOT / ".gitignore").read_text().splitlines()
    assert "book/_vendor_root/" in lines and "book/_vendor_extra/" in lines


def test_vendor_folder_size_is_measured(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"12345")
    (tmp_path / "g").write_bytes(b"123")
    assert book.folder_size(tmp_path) == 8
