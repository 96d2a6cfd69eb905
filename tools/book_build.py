"""Build the HTML book so that neither the build nor the reading needs a network.

Jupyter Book 1.x pages load require.js, the ipywidgets HTML manager and MathJax from CDNs by
default.  A page opened without a network then shows no widget at all and raw ``\\(x^2\\)``.
This module fetches those three packages once from the npm registry (``npm pack``, versions
and tarball digests pinned below), unpacks the files the pages need into a git-ignored folder,
and runs ``jupyter-book build``, which copies them into the site.  ``book/_config.yml`` points
Sphinx and myst-nb at the local copies::

    book/
      _config.yml            html_static_path: [_vendor_root]; nb_ipywidgets_js -> vendor/...
      _vendor_root/          filled by `vendor()`, ignored by git, copied to _build/html/_static/
        vendor/
          VENDORED.json      which packages (name, version, digest) the folder holds
          fa-config.js       window.FontAwesomeConfig = {observeMutations: false}
          require.js         requirejs
          html-manager/      @jupyter-widgets/html-manager dist/ (embed-amd.js, fonts; no maps)
          mathjax/es5/       mathjax es5/ (tex-mml-chtml.js and what it loads lazily)
      _vendor_extra/         filled by `vendor()`, ignored by git, copied to _build/html/
        @jupyter-widgets/...             the widget icon fonts again, where the manager's
        notebooks/@jupyter-widgets/...   stylesheet asks for them (relative to each page)

Two traps decide this layout.  Jupyter Book injects a ``<script>`` for every ``*.js`` under
the static paths as soon as a ``book/_static`` folder exists, and three widget managers draw
every widget three times: the vendored files therefore live in ``_vendor_root``, and no
``_static`` folder may be added to ``book/``.  The pydata theme's FontAwesome script rewrites
``<i class="fa ...">`` icons through a MutationObserver, which breaks ``jslink`` between a
``Play``/``IntSlider`` and a ``Stack``; ``fa-config.js`` switches that observer off.

Run it as ``python tools/book_build.py build [BOOK_DIR]`` (what ``./run.sh html`` does),
``python tools/book_build.py vendor [BOOK_DIR]`` or ``python tools/book_build.py check [BOOK_DIR]``.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import hashlib
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gctoy.errors import GCToyError

VENDOR_ROOT = "_vendor_root"
VENDOR_EXTRA = "_vendor_extra"
STAMP_NAME = "VENDORED.json"
MANAGER_DIR = "html-manager"
FA_CONFIG = "window.FontAwesomeConfig = { observeMutations: false };\n"
NPM_TIMEOUT_S = 300
BUILD_TIMEOUT_S = 1800


class BookError(GCToyError):
    """The HTML book could not be vendored, built or checked; the message says why and where."""


def _excluded(rest: str, pattern: str) -> bool:
    """A pattern without `/` names files at the top of the prefix; one with `/` a whole path."""
    if "/" in pattern:
        return fnmatch.fnmatchcase(rest, pattern)
    return "/" not in rest and fnmatch.fnmatchcase(rest, pattern)


@dataclass(frozen=True)
class CopyRule:
    """Tarball files go below the vendor folder: `prefix` ending in `/` is a folder, else one file."""

    prefix: str
    dest: str
    exclude: tuple[str, ...] = ()

    def target(self, member: str) -> str | None:
        """The destination of tarball member `member`, or None when the rule does not take it."""
        if not self.prefix.endswith("/"):
            return self.dest if member == self.prefix else None
        if not member.startswith(self.prefix):
            return None
        rest = member[len(self.prefix) :]
        if not rest or any(_excluded(rest, pattern) for pattern in self.exclude):
            return None
        return f"{self.dest}/{rest}"


@dataclass(frozen=True)
class VendoredPackage:
    """An npm package the static pages need, pinned by version and by npm's sha512 digest."""

    name: str
    version: str
    integrity: str
    rules: tuple[CopyRule, ...]

    @property
    def spec(self) -> str:
        """The `name@version` that `npm pack` is given."""
        return f"{self.name}@{self.version}"


# html-manager 1.0.x is the manager for ipywidgets 8 (widget state format 2); 1.0.6 is the
# version myst-nb names.  Of its dist/ the pages need embed-amd.js (one self-contained AMD
# bundle) and the icon fonts; embed.js and libembed-amd.js are other builds of the same code
# (a page that loaded them too would run a second widget manager).  MathJax: only the es5
# tree, without the other combined bundles and the SVG output (the pages use
# tex-mml-chtml.js, which loads input/output parts on demand).
MANAGER_EXCLUDE = ("*.map", "embed.js", "*.embed.js", "libembed-amd.js", "*.svg", "*.eot")
VENDORED: tuple[VendoredPackage, ...] = (
    VendoredPackage(
        "requirejs",
        "2.3.7",
        "sha512-DouTG8T1WanGok6Qjg2SXuCMzszOo0eHeH9hDZ5Y4x8Je+9JB38HdTLT4/VA8OaUhBa0JPVHJ0pyBkM1z+pDsw==",
        (CopyRule("package/require.js", "require.js"),),
    ),
    VendoredPackage(
        "@jupyter-widgets/html-manager",
        "1.0.6",
        "sha512-+Mn+Ra8wyIHrYaUpfmf9A3dsLkt/NuwzPQN8sthdxBD35VV5cOJbpmgMhNR27n/rmP3mKyEe0PWCJrtZrXTXDQ==",
        (CopyRule("package/dist/", MANAGER_DIR, MANAGER_EXCLUDE),),
    ),
    VendoredPackage(
        "mathjax",
        "3.2.2",
        "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
        (
            CopyRule("package/es5/tex-mml-chtml.js", "mathjax/es5/tex-mml-chtml.js"),
            CopyRule("package/es5/", "mathjax/es5", ("*.js", "output/svg*")),
        ),
    ),
)


def vendor_dir(book_dir: Path) -> Path:
    """The folder the vendored JavaScript goes to: `book_dir/_vendor_root/vendor`."""
    return Path(book_dir) / VENDOR_ROOT / "vendor"


def _stamp() -> dict[str, object]:
    """What the vendor folder holds: the pins and the copy rules (a change to either re-vendors)."""
    return {
        "packages": [
            {
                "name": p.name,
                "version": p.version,
                "integrity": p.integrity,
                "rules": [[r.prefix, r.dest, list(r.exclude)] for r in p.rules],
            }
            for p in VENDORED
        ],
        "fa_config": FA_CONFIG,
    }


def is_vendored(book_dir: Path) -> bool:
    """True when the vendor folder holds exactly the pinned packages."""
    stamp = vendor_dir(book_dir) / STAMP_NAME
    try:
        return json.loads(stamp.read_text()) == _stamp()
    except (OSError, ValueError):
        return False


def _sri(path: Path) -> str:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode("ascii")


def _npm_error(stdout: str, stderr: str) -> str:
    """npm's own words for a failure: the summary of its JSON error, else its last lines."""
    try:
        error = json.loads(stdout)["error"]
        return f"{error['code']}: {error['summary']}"
    except (ValueError, KeyError, TypeError):
        lines = [line for line in stderr.strip().splitlines() if "complete log" not in line]
        return "\n".join(lines[-6:])


def _npm_pack(npm: str, packages: Sequence[VendoredPackage], dest: Path) -> dict[str, Path]:
    """Fetch the tarballs with `npm pack`; map each spec to its tarball, digest checked."""
    # --prefer-offline: tarballs already in npm's cache are used without asking the registry;
    # the retry settings make an unreachable registry fail in seconds instead of minutes.
    command = [
        npm,
        "pack",
        "--json",
        "--pack-destination",
        str(dest),
        *(p.spec for p in packages),
        "--prefer-offline",
        "--fetch-retries=1",
        "--fetch-retry-mintimeout=1000",
        "--fetch-retry-maxtimeout=4000",
        "--fetch-timeout=60000",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
    except FileNotFoundError:
        raise BookError(
            f"npm not found ({npm!r}): it is needed once, to fetch "
            + ", ".join(p.spec for p in packages)
            + " from the npm registry (Debian: apt-get install npm)"
        ) from None
    except subprocess.TimeoutExpired:
        raise BookError(f"npm pack timed out after {NPM_TIMEOUT_S} s (is the npm registry reachable?)") from None
    if done.returncode != 0:
        tail = _npm_error(done.stdout, done.stderr)
        raise BookError(
            "npm pack failed: could not fetch "
            + ", ".join(p.spec for p in packages)
            + f" from the npm registry (a network is needed once, for this step):\n{tail}"
        )
    tarballs: dict[str, Path] = {}
    for package in packages:
        prefix = package.name.lstrip("@").replace("/", "-")
        path = dest / f"{prefix}-{package.version}.tgz"
        if not path.is_file():
            raise BookError(f"npm pack did not write {path.name} for {package.spec}")
        got = _sri(path)
        if got != package.integrity:
            raise BookError(f"{package.spec}: tarball digest {got} differs from the pinned {package.integrity}")
        tarballs[package.spec] = path
    return tarballs


def _unpack(package: VendoredPackage, tarball: Path, out: Path) -> int:
    """Copy the members the package's rules select into `out`; return how many files."""
    count = 0
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue
            for rule in package.rules:
                target = rule.target(member.name)
                if target is None:
                    continue
                path = (out / target).resolve()
                if out.resolve() not in path.parents:
                    raise BookError(f"{package.spec}: member {member.name!r} would leave the vendor folder")
                source = archive.extractfile(member)
                if source is None:
                    raise BookError(f"{package.spec}: cannot read member {member.name!r}")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(source.read())
                count += 1
                break
    return count


def vendor(book_dir: Path, *, npm: str = "npm", force: bool = False) -> Path:
    """Fetch and unpack the pinned packages into `book_dir/_vendor_root/vendor` (once)."""
    book_dir = Path(book_dir)
    target = vendor_dir(book_dir)
    if is_vendored(book_dir) and not force:
        if not (book_dir / VENDOR_EXTRA).is_dir():
            _write_extra(book_dir)
        return target
    with tempfile.TemporaryDirectory(prefix="gctoy-vendor-") as tmp:
        tmp_path = Path(tmp)
        tarballs = _npm_pack(npm, VENDORED, tmp_path)
        staging = tmp_path / "vendor"
        staging.mkdir()
        for package in VENDORED:
            if _unpack(package, tarballs[package.spec], staging) == 0:
                raise BookError(f"{package.spec}: no file of the package matched the copy rules")
        (staging / "fa-config.js").write_text(FA_CONFIG)
        (staging / STAMP_NAME).write_text(json.dumps(_stamp(), indent=1) + "\n")
        # Swap the finished folder in with renames, so that a build running meanwhile sees
        # either the old complete folder or the new one, never a half-written one.
        target.parent.mkdir(parents=True, exist_ok=True)
        fresh = target.parent / f".vendor-new-{os.getpid()}"
        stale = target.parent / f".vendor-old-{os.getpid()}"
        shutil.copytree(staging, fresh)
        if target.exists():
            target.rename(stale)
        fresh.rename(target)
        shutil.rmtree(stale, ignore_errors=True)
    _write_extra(book_dir)
    return target


# The manager's stylesheet names its icon fonts by URLs relative to the page, first
# `@jupyter-widgets/html-manager/dist/<hash>.woff2`, then `@jupyter-widgets/<hash>.woff2`.
# The book's pages sit in two folders (intro.html at the top, the chapters in notebooks/), so
# the fonts are put at both places below both folders.  Browsers take the first format they
# support, woff2; woff is kept for older ones.
FONT_PAGE_DIRS = ("", "notebooks")
FONT_SUBDIRS = ("@jupyter-widgets/html-manager/dist", "@jupyter-widgets")
FONT_PATTERNS = ("*.woff2", "*.woff")


def _write_extra(book_dir: Path) -> None:
    """(Re)write the extra folder: the html-manager's icon fonts where its stylesheet looks."""
    source = vendor_dir(book_dir) / MANAGER_DIR
    if not source.is_dir():
        raise BookError(f"{source}: the vendored widget manager is missing")
    fonts = [f for f in sorted(source.iterdir()) if any(fnmatch.fnmatch(f.name, p) for p in FONT_PATTERNS)]
    extra = Path(book_dir) / VENDOR_EXTRA
    shutil.rmtree(extra, ignore_errors=True)
    for page_dir in FONT_PAGE_DIRS:
        for sub in FONT_SUBDIRS:
            dest = extra / page_dir / sub
            dest.mkdir(parents=True, exist_ok=True)
            for font in fonts:
                shutil.copyfile(font, dest / font.name)


def folder_size(path: Path) -> int:
    """The bytes of all files below `path`."""
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


# ---------------------------------------------------------------- checking built pages


class _AssetParser(html.parser.HTMLParser):
    """Collects the URLs a page loads: script src, link href (stylesheets, icons, preloads)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script" and values.get("src"):
            self.urls.append((self.getpos()[0], values["src"] or ""))
        elif tag == "link" and values.get("href") and values.get("rel") not in ("canonical",):
            self.urls.append((self.getpos()[0], values["href"] or ""))
        elif tag in ("img", "iframe", "source") and values.get("src"):
            self.urls.append((self.getpos()[0], values["src"] or ""))
        for name, value in attrs:
            if name.startswith("data-") and value and value.startswith(("http://", "https://", "//")):
                self.urls.append((self.getpos()[0], value))


def remote_assets(html_dir: Path) -> list[str]:
    """Every asset URL in the site's pages that points off the machine, as `page:line: url`."""
    found: list[str] = []
    for page in sorted(Path(html_dir).rglob("*.html")):
        parser = _AssetParser()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        for line, url in parser.urls:
            if url.startswith(("http://", "https://", "//")):
                found.append(f"{page.relative_to(html_dir)}:{line}: {url}")
    return found


def expected_pages(book_dir: Path) -> list[str]:
    """The HTML pages the book must have: the intro, one per notebook and one per Markdown page
    (the course kit and the glossary), relative to the site."""
    book_dir = Path(book_dir)
    pages = ["intro.html"]
    pages += [f"notebooks/{nb.stem}.html" for nb in sorted((book_dir / "notebooks").glob("*.ipynb"))]
    pages += [f"notebooks/{md.stem}.html" for md in sorted((book_dir / "notebooks").glob("*.md"))]
    return pages


@dataclass(frozen=True)
class BuildReport:
    """What `build_html` made: the site folder, its pages and how long the build took."""

    html_dir: Path
    pages: tuple[str, ...]
    seconds: float
    log: str


def build_html(
    book_dir: Path, *, out_dir: Path | None = None, vendor_first: bool = True, npm: str = "npm"
) -> BuildReport:
    """Vendor the JavaScript (unless told not to), build the book, check the site is offline.

    The site goes to `out_dir/_build/html` (`book_dir/_build/html` by default).
    """
    book_dir = Path(book_dir).resolve()
    if not (book_dir / "_config.yml").is_file():
        raise BookError(f"{book_dir}: no _config.yml (not a Jupyter Book folder)")
    if (book_dir / "_static").exists():
        raise BookError(
            f"{book_dir / '_static'}: Jupyter Book would inject every script under the static paths"
            " into each page and draw every widget several times; keep static files in "
            f"{VENDOR_ROOT}/ instead"
        )
    if vendor_first:
        vendor(book_dir, npm=npm)
    elif not is_vendored(book_dir):
        raise BookError(f"{vendor_dir(book_dir)}: the vendored JavaScript is missing or stale (run `vendor` first)")
    command = [
        sys.executable,
        "-c",
        "import sys; from jupyter_book.cli.main import main; sys.argv[0] = 'jupyter-book'; sys.exit(main())",
        "build",
        str(book_dir),
        "--builder",
        "html",
        "--all",
    ]
    if out_dir is not None:
        command += ["--path-output", str(Path(out_dir).resolve())]
    # --all: Sphinx copies static and extra files only when it writes some page, so an
    # incremental build after a fresh `vendor()` would keep a stale copy of them.  It never
    # deletes files, so the old site goes first (files vendored by an older pin would linger).
    html_dir = (Path(out_dir).resolve() if out_dir is not None else book_dir) / "_build" / "html"
    shutil.rmtree(html_dir, ignore_errors=True)
    start = time.monotonic()
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
    except subprocess.TimeoutExpired:
        raise BookError(f"jupyter-book build {book_dir} took more than {BUILD_TIMEOUT_S} s") from None
    seconds = time.monotonic() - start
    log = done.stdout + done.stderr
    if done.returncode != 0:
        tail = "\n".join(log.strip().splitlines()[-20:])
        raise BookError(f"jupyter-book build {book_dir} failed (exit {done.returncode}):\n{tail}")
    pages = expected_pages(book_dir)
    missing = [page for page in pages if not (html_dir / page).is_file()]
    if missing:
        raise BookError(f"{html_dir}: the build made no page for " + ", ".join(missing))
    remote = remote_assets(html_dir)
    if remote:
        raise BookError("pages load assets from the network:\n" + "\n".join(remote[:20]))
    return BuildReport(html_dir, tuple(pages), seconds, log)


# ---------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    """`python tools/book_build.py vendor|build|check [BOOK_DIR]`."""
    parser = argparse.ArgumentParser(prog="tools/book_build.py", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("vendor", "build", "check"))
    parser.add_argument("book_dir", nargs="?", default="book", type=Path)
    parser.add_argument("--npm", default=os.environ.get("NPM", "npm"), help="the npm command (default: npm)")
    args = parser.parse_args(argv)
    try:
        if args.action == "vendor":
            path = vendor(args.book_dir, npm=args.npm)
            print(f"vendored {', '.join(p.spec for p in VENDORED)} into {path} ({folder_size(path) / 1e6:.1f} MB)")
        elif args.action == "build":
            report = build_html(args.book_dir, npm=args.npm)
            print(f"built {len(report.pages)} pages into {report.html_dir} in {report.seconds:.1f} s")
        else:
            html_dir = Path(args.book_dir) / "_build" / "html"
            missing = [p for p in expected_pages(args.book_dir) if not (html_dir / p).is_file()]
            remote = remote_assets(html_dir)
            for page in missing:
                print(f"{html_dir / page}: error: missing page")
            for line in remote:
                print(f"{html_dir / line}: error: remote asset")
            if missing or remote:
                return 1
            print(f"{html_dir}: every page present, no remote assets")
    except BookError as error:
        print(f"book_build: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
