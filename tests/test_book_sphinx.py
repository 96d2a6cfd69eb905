"""tools/book_sphinx.py: repeated scripts are dropped, the first of each kept in order."""

from sphinx.builders.html._assets import _JavaScript

from book_sphinx import unique_scripts


def test_repeated_inline_and_file_scripts_are_dropped():
    body = _JavaScript("", body="const THEBE_JS_URL = 1")
    scripts = [_JavaScript("a.js"), body, _JavaScript("b.js", **{"async": "async"}), _JavaScript(None, body="const THEBE_JS_URL = 1"),
               _JavaScript("a.js"), _JavaScript("b.js")]
    kept = unique_scripts(scripts)
    assert [(s.filename, s.attributes) for s in kept] == [("a.js", {}), ("", {"body": "const THEBE_JS_URL = 1"}),
                                                          ("b.js", {"async": "async"}), ("b.js", {})]
