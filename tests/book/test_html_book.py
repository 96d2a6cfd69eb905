"""The HTML book: it builds without a network, and its widgets work in Chromium with no network.

The book is built once per test session, with the same function as `./run.sh html`
(`book_build.build_html`), into a temporary folder.  The browser tests open the built pages
from `file://` in Debian's Chromium driven by Playwright, with every request that is not a
`file:` URL aborted and recorded: a page passes only if it needed nothing from the network.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import book_build as book
from book_build import BookError, BuildReport
from browser_support import SHOWN_TEXT, drag_slider

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK_DIR = REPO_ROOT / "book"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _widget_notebooks() -> list[str]:
    """Stems of the notebooks whose saved outputs hold at least one widget view."""
    stems = []
    for path in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        outputs = (o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
        if any(WIDGET_VIEW in o.get("data", {}) for o in outputs):
            stems.append(path.stem)
    return stems


WIDGET_NOTEBOOKS = _widget_notebooks()


def _chapter(number: str) -> str:
    """The page of chapter `number` ("09"), relative to the site."""
    matches = sorted((REPO_ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    assert len(matches) == 1, f"expected one notebook {number}_*.ipynb, found {matches}"
    return f"notebooks/{matches[0].stem}.html"


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> BuildReport:
    """The book built by `book_build.build_html` into a temporary folder (vendoring first)."""
    try:
        book.vendor(BOOK_DIR)
    except BookError as error:
        pytest.skip(f"the book's JavaScript is not vendored and cannot be fetched now: {error}")
    out = tmp_path_factory.mktemp("book")
    stale = out / "_build" / "html" / "_static" / "vendor" / "left-over-from-an-old-pin.js"
    stale.parent.mkdir(parents=True)
    stale.write_text("1;\n")
    return book.build_html(BOOK_DIR, out_dir=out, vendor_first=False)


# ---------------------------------------------------------------- the build


def test_every_notebook_and_the_intro_has_a_page(built_book):
    site = built_book.html_dir
    assert set(built_book.pages) == {"intro.html"} | {
        f"notebooks/{nb.stem}.html" for nb in (REPO_ROOT / "notebooks").glob("*.ipynb")
    } | {f"notebooks/{md.stem}.html" for md in (REPO_ROOT / "notebooks").glob("*.md")}
    assert {"notebooks/glossary.html", "notebooks/course_syllabus.html", "notebooks/course_coverage.html"} <= set(
        built_book.pages)
    for page in built_book.pages:
        text = (site / page).read_text()
        assert "<h1>" in text or "<h1 " in text, f"{page} has no title"
    # the navigation links every chapter
    intro = (site / "intro.html").read_text()
    for page in built_book.pages[1:]:
        assert page in intro, f"the intro's navigation does not link {page}"


def test_solutions_are_collapsed_on_the_pages(built_book):
    """The answer cells' inputs are inside a closed <details> (myst-nb's hide-input), one per solution cell."""
    from gctoy.course import load_chapter

    for page in built_book.pages:
        if not page.startswith("notebooks/") or not (REPO_ROOT / page.replace(".html", ".ipynb")).is_file():
            continue
        chapter = load_chapter(REPO_ROOT / page.replace(".html", ".ipynb"))
        solutions = sum(1 for c in chapter.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution") is True)
        text = (built_book.html_dir / page).read_text()
        hidden = len(re.findall(r"<details class=\"[^\"]*\bhide above-input\">", text))
        assert hidden == solutions, f"{page}: {hidden} collapsed inputs for {solutions} solution cells"
        assert not re.search(r"<details class=\"[^\"]*hide above-input\" open", text), f"{page}: a solution is open"


def test_no_page_declares_an_inline_script_twice(built_book):
    """sphinx-thebe's `const THEBE_JS_URL = ...` used to be on every page twice (a browser error)."""
    for page in built_book.pages:
        text = (built_book.html_dir / page).read_text()
        inline = re.findall(r"<script>(.*?)</script>", text, re.S)
        repeated = {body[:60] for body in inline if inline.count(body) > 1}
        assert not repeated, f"{page}: inline scripts repeated: {sorted(repeated)}"
        assert text.count("const THEBE_JS_URL") <= 1, page


def test_glossary_links_land_on_their_terms(built_book):
    """A chapter's link glossary.md#term becomes glossary.html#term, and the glossary page has that id."""
    site = built_book.html_dir
    glossary = (site / "notebooks" / "glossary.html").read_text()
    ids = set(re.findall(r'id="([^"]+)"', glossary))
    links = set()
    for page in built_book.pages:
        links |= set(re.findall(r'href="(?:[^"#]*/)?glossary\.html#([^"]+)"', (site / page).read_text()))
    assert len(links) >= 10, f"only {len(links)} distinct glossary links in the built book"
    missing = sorted(links - ids)
    assert not missing, f"glossary links with no target: {missing}"


def test_the_build_starts_from_an_empty_site(built_book):
    assert not (built_book.html_dir / "_static" / "vendor" / "left-over-from-an-old-pin.js").exists()
    assert (built_book.html_dir / "_static" / "vendor" / "html-manager" / "embed-amd.js").is_file()


class _LocalAssets(HTMLParser):
    """Collects the local files a page loads (script src, link href other than navigation)."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        url = None
        if tag == "script":
            url = values.get("src")
        elif tag == "link" and values.get("rel") in ("stylesheet", "preload", "icon", "shortcut icon"):
            url = values.get("href")
        elif tag == "img":
            url = values.get("src")
        if url and not url.startswith("data:"):
            self.files.append(urlsplit(url).path)


def test_pages_load_only_local_files_and_every_one_exists(built_book):
    site = built_book.html_dir
    assert book.remote_assets(site) == []
    checked = 0
    for page in built_book.pages:
        parser = _LocalAssets()
        parser.feed((site / page).read_text())
        for url in parser.files:
            assert not url.startswith("/"), f"{page}: absolute path {url}"
            assert ((site / page).parent / url).is_file(), f"{page}: {url} does not exist in the site"
            checked += 1
    assert checked > 20 * len(built_book.pages)


@pytest.mark.parametrize("stem", WIDGET_NOTEBOOKS)
def test_widget_pages_carry_the_saved_state_and_one_widget_manager(built_book, stem):
    text = (built_book.html_dir / "notebooks" / f"{stem}.html").read_text()
    # the state saved in the notebook is on the page, with the model of every view in it
    states = re.findall(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', text, re.S)
    assert len(states) == 1
    models = json.loads(states[0])["state"]
    views = re.findall(rf'<script type="{re.escape(WIDGET_VIEW)}">(.*?)</script>', text, re.S)
    assert views
    for view in views:
        assert json.loads(view)["model_id"] in models
    assert any(m["model_name"] == "LinkModel" for m in models.values()), "no jslink: nothing would react"
    tags = re.findall(r"<script[^>]*\bsrc=[^>]*>", text)
    scripts = [re.search(r'src="([^"]+)"', tag).group(1) for tag in tags]
    managers = [s for s in scripts if "html-manager" in s]
    assert [urlsplit(s).path for s in managers] == ["../_static/vendor/html-manager/embed-amd.js"]
    assert sum("require.js" in s for s in scripts) == 1
    # FontAwesome's observer must be configured off before the theme's script runs: ours is a
    # plain script, the theme's is deferred (run after the whole page is parsed).
    fa_config = [tag for tag in tags if "vendor/fa-config.js" in tag]
    fontawesome = [tag for tag in tags if "fontawesome.js" in tag]
    assert len(fa_config) == 1 and "defer" not in fa_config[0] and "async" not in fa_config[0]
    assert all("defer" in tag for tag in fontawesome)


def test_the_chosen_widget_notebooks_are_the_steppers_and_choosers():
    for number in ("09", "11", "12", "15"):
        assert any(stem.startswith(number + "_") for stem in WIDGET_NOTEBOOKS), f"chapter {number} lost its widget"


# ---------------------------------------------------------------- in the browser


@dataclass
class Visit:
    """An open page, with the requests that were aborted or failed and the script errors."""

    page: object
    blocked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def assert_self_contained(self) -> None:
        """Nothing was fetched from the network and every local file was found."""
        assert self.blocked == [], f"the page asked the network for {self.blocked}"
        assert self.failed == [], f"requests failed: {self.failed}"


@pytest.fixture
def visit(browser, built_book) -> Iterator:
    """Open a page of the built site with every non-`file:` request aborted."""
    opened = []

    def open_page(relative: str, site: Path | None = None) -> Visit:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(20000)
        record = Visit(page)

        def route(request_route) -> None:
            url = request_route.request.url
            if url.startswith("file:"):
                request_route.continue_()
            else:
                record.blocked.append(url)
                request_route.abort()

        page.route("**/*", route)
        page.on("requestfailed", lambda request: record.failed.append(request.url)
                if request.url.startswith("file:") else None)
        page.on("pageerror", lambda error: record.errors.append(str(error)))
        page.goto(((site or built_book.html_dir) / relative).as_uri())
        opened.append(page)
        return record

    yield open_page
    for page in opened:
        page.close()


def _widget_outputs(page):
    """The output areas that hold a widget view, once every view has been drawn."""
    outputs = page.locator(f".cell_output:has(script[type='{WIDGET_VIEW}'])")
    page.wait_for_function(
        """(selector) => {
             const views = document.querySelectorAll(selector);
             return views.length > 0 && Array.from(views).every(
                 s => s.parentElement.querySelector('.jupyter-widgets') !== null);
           }""",
        arg=f"script[type='{WIDGET_VIEW}']",
    )
    return outputs


def _stepper_state(output) -> tuple[int, int]:
    found = re.search(r"state (\d+)/(\d+)", output.inner_text())
    assert found, "the stepper shows no 'state N/M' line"
    return int(found.group(1)), int(found.group(2))


@pytest.mark.browser
@pytest.mark.parametrize("stem", WIDGET_NOTEBOOKS)
def test_each_widget_is_drawn_once_and_reacts_without_a_kernel(visit, stem):
    """Every saved view is drawn exactly once; its slider or toggle buttons change what it shows."""
    seen = visit(f"notebooks/{stem}.html")
    page = seen.page
    outputs = _widget_outputs(page)
    # The manager draws each view into a `div.widget-subarea` it inserts beside the view's
    # script; a second manager on the page would insert a second one.
    drawn = page.evaluate(
        f"""() => Array.from(document.querySelectorAll("script[type='{WIDGET_VIEW}']")).map(
                s => Array.from(s.parentElement.querySelectorAll('.jupyter-widgets')).filter(
                    e => !e.parentElement.closest('.jupyter-widgets')).length)"""
    )
    assert drawn and all(n == 1 for n in drawn), f"widgets drawn {drawn} times"
    output = outputs.first
    before = output.evaluate(SHOWN_TEXT)
    if output.locator(".noUi-handle").count():
        drag_slider(page, output, 1.5)
    else:
        buttons = output.locator(".widget-toggle-button:not(.mod-active)")
        assert buttons.count() > 0, "the widget has neither a slider nor toggle buttons"
        buttons.last.click()
    page.wait_for_function(f"([el, old]) => ({SHOWN_TEXT})(el) !== old", arg=[output.element_handle(), before])
    if page.locator(".math").count():
        page.wait_for_selector("mjx-container")
    seen.assert_self_contained()
    assert seen.errors == [], f"script errors on the page: {seen.errors}"


@pytest.mark.browser
def test_chapter_04_graphs_fit_the_column_and_chapter_15_cells_have_room(visit):
    """Two layout defects seen at 1440x900: the last RS4GC phases drew a graph wider than the book's
    column (the right half needed sideways scrolling), and the GC-info explorer's cells had no padding."""
    seen = visit(_chapter("04"))
    output = _widget_outputs(seen.page).first
    drag_slider(seen.page, output, 1.5)                       # the last phase: the widest graph
    seen.page.wait_for_timeout(300)
    widths = output.evaluate("""el => Array.from(el.querySelectorAll('svg')).filter(s => s.getBoundingClientRect().width > 0)
        .map(s => [s.getBoundingClientRect().width, s.parentElement.getBoundingClientRect().width])""")
    assert widths, "no graph drawn"
    assert all(svg <= box + 1 for svg, box in widths), f"graph wider than its column: {widths}"
    seen = visit(_chapter("15"))
    output = _widget_outputs(seen.page).first
    padding = output.evaluate("""el => { const td = el.querySelector('table.gctoy-gcinfo td');
        const s = getComputedStyle(td); return [parseFloat(s.paddingLeft), parseFloat(s.paddingRight)]; }""")
    assert padding[0] >= 4 and padding[1] >= 8, f"explorer cells without room: {padding}"


@pytest.mark.browser
def test_chapter_12_strategy_table_fits_the_column(visit):
    """At 1440x900 the strategy table was 799 px wide in the 790-px column and scrolled sideways."""
    seen = visit(_chapter("12"))
    seen.page.set_viewport_size({"width": 1440, "height": 900})
    seen.page.wait_for_timeout(300)
    sizes = seen.page.evaluate("""() => {
        const table = Array.from(document.querySelectorAll('.cell_output table')).find(
            t => t.querySelector('th') && t.querySelector('th').innerText.trim() === 'strategy');
        if (!table) return null;
        const column = table.closest('article') || table.closest('main');
        const output = table.closest('.cell_output');
        return {table: table.getBoundingClientRect().width, column: column.getBoundingClientRect().width,
                output: output.getBoundingClientRect().width,
                scrolls: [output, ...output.querySelectorAll('*')].filter(
                    e => e.contains(table) && e.scrollWidth > e.clientWidth + 1).map(e => e.className)};
    }""")
    assert sizes is not None, "no strategy table on the page"
    assert sizes["table"] <= sizes["output"] + 0.5 and sizes["table"] <= sizes["column"] + 0.5, sizes
    assert sizes["scrolls"] == [], f"the table scrolls sideways: {sizes}"


@pytest.mark.browser
@pytest.mark.parametrize("number", ["09", "17"])
def test_play_buttons_carry_their_tooltip(visit, number):
    """ipywidgets 8 writes a Play widget's tooltip into its title only when it has no description."""
    seen = visit(_chapter(number))
    play = _widget_outputs(seen.page).locator(".widget-play").first
    title = play.get_attribute("title") or ""
    assert title.startswith("play"), f"Play/Stop/Repeat have no tooltip: {title!r}"
    assert seen.errors == [], seen.errors


@pytest.mark.browser
def test_chapter_03_slider_counts_phases_as_its_pages_do(visit):
    """The RS4GC stepper's pages say "phase 1 of 7"; its slider used to start at 0."""
    seen = visit(_chapter("03"))
    output = _widget_outputs(seen.page).first
    readout = output.locator(".widget-readout").first.inner_text().strip()
    shown = output.evaluate(SHOWN_TEXT)
    assert readout == "1" and "phase 1 of" in shown, (readout, shown[:200])


@pytest.mark.browser
def test_chapter_09_stepper_slider_and_play_change_the_state(visit):
    seen = visit(_chapter("09"))
    output = _widget_outputs(seen.page).first
    first, last = _stepper_state(output)
    assert first == 0 and last > 5
    drag_slider(seen.page, output, 1.5)
    seen.page.wait_for_function("el => /state (\\d+)\\/\\1\\b/.test(el.innerText)", arg=output.element_handle())
    assert _stepper_state(output) == (last, last)
    assert output.locator(".widget-readout").inner_text().strip() == str(last)
    drag_slider(seen.page, output, -0.5)
    seen.page.wait_for_function("el => /state 0\\//.test(el.innerText)", arg=output.element_handle())
    # Play is linked to the slider, which is linked to the pages: pressing it walks the states
    output.locator(".widget-play button").first.click()
    seen.page.wait_for_function("el => /state [1-9]\\d*\\//.test(el.innerText)", arg=output.element_handle())
    assert output.locator(".widget-readout").inner_text().strip() != "0"
    seen.assert_self_contained()


@pytest.mark.browser
def test_chapter_15_offset_slider_pages_through_the_code_offsets(visit):
    seen = visit(_chapter("15"))
    output = _widget_outputs(seen.page).first
    shown = set()
    for fraction in (-0.5, 1.5, 0.5):
        drag_slider(seen.page, output, fraction)
        seen.page.wait_for_timeout(100)
        # the readout is hexadecimal, as the page is (it used to be decimal beside a hex page)
        readout = int(output.locator(".widget-readout").inner_text().strip(), 16)
        expected = f"code offset {readout:04X}"
        seen.page.wait_for_function("([el, t]) => el.innerText.includes(t)", arg=[output.element_handle(), expected])
        shown.add(readout)
    assert 0 in shown and len(shown) == 3, f"offsets shown: {sorted(shown)}"
    seen.assert_self_contained()


@pytest.mark.browser
def test_chapter_12_toggle_buttons_switch_the_safe_point_pages(visit):
    seen = visit(_chapter("12"))
    output = _widget_outputs(seen.page).first
    names = [b.inner_text().strip() for b in output.locator(".widget-toggle-button").all()]
    assert len(names) >= 3
    for name in names[:-1] + names[-1:]:
        output.locator(".widget-toggle-button", has_text=re.compile(f"^{re.escape(name)}$")).click()
        seen.page.wait_for_function(
            "([el, t]) => el.innerText.includes(t)", arg=[output.element_handle(), f"{name}: "]
        )
        assert output.locator(".widget-toggle-button.mod-active").inner_text().strip() == name
    seen.assert_self_contained()


@pytest.mark.browser
def test_every_page_without_widgets_opens_without_the_network(visit, built_book):
    """Each page loads all it asks for (styles, scripts, fonts, images) from the site.

    The pages with widgets are opened, and checked the same way, by the tests above.
    """
    first = visit("intro.html")
    first.page.wait_for_load_state("load")
    widget_pages = {f"notebooks/{stem}.html" for stem in WIDGET_NOTEBOOKS}
    for relative in [p for p in built_book.pages[1:] if p not in widget_pages]:
        first.page.goto((built_book.html_dir / relative).as_uri(), wait_until="load")
        assert first.page.locator("h1").count() >= 1, relative
    # not even sphinx-thebe's doubled `const THEBE_JS_URL` (tools/book_sphinx.py keeps one copy)
    assert first.errors == [], first.errors
    first.assert_self_contained()


@pytest.fixture(scope="session")
def math_book(tmp_path_factory, built_book) -> BuildReport:
    """A one-page book with the real configuration and vendored files, and some math on it."""
    folder = tmp_path_factory.mktemp("mathbook")
    # the book's extension is found relative to the configuration: point the copy at the real one
    config = (BOOK_DIR / "_config.yml").read_text()
    assert "book_sphinx: ../tools" in config
    (folder / "_config.yml").write_text(config.replace("book_sphinx: ../tools",
                                                      f"book_sphinx: {(BOOK_DIR.parent / 'tools').resolve()}"))
    (folder / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    (folder / "intro.md").write_text(textwrap.dedent(r"""
        # Math

        Inline $x^2 + y_1$ and a display:

        $$
        \sum_{i=0}^{n} i = \frac{n(n+1)}{2}
        $$
        """))
    for name in (book.VENDOR_ROOT, book.VENDOR_EXTRA):
        (folder / name).symlink_to(BOOK_DIR / name, target_is_directory=True)
    return book.build_html(folder, out_dir=folder / "out", vendor_first=False)


@pytest.mark.browser
def test_mathjax_renders_offline(visit, math_book):
    page_text = (math_book.html_dir / "intro.html").read_text()
    assert "_static/vendor/mathjax/es5/tex-mml-chtml.js" in page_text
    seen = visit("intro.html", site=math_book.html_dir)
    seen.page.wait_for_selector("mjx-container >> nth=1")
    assert seen.page.locator("mjx-container").count() == 2
    assert seen.page.locator("mjx-container[display='true']").count() == 1
    assert "$x^2" not in seen.page.locator("article").inner_text()
    seen.assert_self_contained()
