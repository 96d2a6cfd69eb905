#!/usr/bin/env bash
# gctoy's one entry point: set everything up, then open the book, run the tests or the benchmarks.
#
#   ./run.sh book [JUPYTER-LAB-ARGS...]   JupyterLab on notebooks/  (e.g. --no-browser --ip=127.0.0.1)
#   ./run.sh test [PYTEST-ARGS...]        every test: tests/ and the notebooks under nbval
#   ./run.sh html                         the HTML book in book/_build/html, readable with no network
#   ./run.sh bench [ARGS...]              bench/run_all.py
#   ./run.sh nightly [PYTEST-ARGS...]     the long randomised tests (5000 programs vs LLVM, 200k fuzz inputs per
#                                         fuzzer, 1000 generated programs per runtime design)
#   ./run.sh student [OUT]                the student release of the book (nbgrader; solutions removed) in
#                                         student/ (git-ignored), or OUT
#   ./run.sh setup                        only the setup
#
# Setup, done each time and quick when nothing changed:
#   1. Debian packages: graphviz (`dot`), llvm-14 and llvm (`opt`, `llc`, `llvm-readobj`, `lli`), and
#      llvm-19 if it can be had (optional). Installed with apt-get when we are root or have
#      passwordless sudo; otherwise a message says what is missing. GCTOY_NO_APT=1 skips this step.
#      Also chromium (optional): the browser tests of the HTML book's widgets.
#      With GCTOY_REQUIRE_ORACLES=1 (as in CI) nothing is optional: a tool that cannot be installed
#      is an error here, and a test that would be skipped for a missing tool or reference data fails.
#   2. A virtual environment in .venv with `pip install -e '.[test,book]'`, re-run only when
#      pyproject.toml changes; then gctoy's bytecode is brought up to date (compileall).
#   3. For `html` only: the book's JavaScript (require.js, the ipywidgets HTML manager, MathJax),
#      fetched once with `npm pack` into book/_vendor_root (git-ignored; see tools/book_build.py).
#      After that, building and reading the book need no network.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
STAMP="$VENV/.gctoy-installed"

say() { printf 'run.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
}

# ---------------------------------------------------------------- system packages

APT_PREFIX=()
APT_UPDATED=0   # 1 after a successful `apt-get update`, 2 after a failed one

apt_usable() {
    command -v apt-get >/dev/null 2>&1 || return 1
    if [ "$(id -u)" -eq 0 ]; then
        APT_PREFIX=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        APT_PREFIX=(sudo -n)
    else
        return 1
    fi
}

apt_install() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        say "apt-get update"
        if "${APT_PREFIX[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq; then
            APT_UPDATED=1
        else
            APT_UPDATED=2
        fi
    fi
    [ "$APT_UPDATED" -eq 1 ] || return 1
    say "apt-get install $*"
    "${APT_PREFIX[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# True when LLVM release $1 has opt, llc, llvm-readobj and lli in Debian's versioned directory.
have_llvm() {
    local v="$1" tool
    for tool in opt llc llvm-readobj lli; do
        [ -x "/usr/lib/llvm-$v/bin/$tool" ] || return 1
    done
}

have_chromium() {
    command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1
}

have_unversioned_llvm() {
    local tool
    for tool in opt llc llvm-readobj; do
        command -v "$tool" >/dev/null 2>&1 || return 1
    done
}

oracles_required() {
    [ "${GCTOY_REQUIRE_ORACLES:-0}" = "1" ]
}

# A tool that could not be had: an error when the oracles are required, else a warning.
missing_tool() {
    if oracles_required; then
        die "$1 (GCTOY_REQUIRE_ORACLES=1: the tests that need it would fail)"
    fi
    say "warning: $1; the tests that need it will be skipped"
}

setup_system() {
    if [ "${GCTOY_NO_APT:-0}" = "1" ]; then
        return 0
    fi
    local needed=() missing=()
    if ! command -v dot >/dev/null 2>&1; then
        needed+=(graphviz); missing+=("dot (Graphviz)")
    fi
    if ! have_llvm 14; then
        needed+=(llvm-14); missing+=("opt/llc/llvm-readobj/lli of LLVM 14")
    fi
    if ! have_unversioned_llvm; then
        needed+=(llvm); missing+=("opt/llc/llvm-readobj on PATH")
    fi
    local want_llvm19=0
    have_llvm 19 || want_llvm19=1
    local want_chromium=0
    have_chromium || want_chromium=1

    if [ "${#needed[@]}" -eq 0 ] && [ "$want_llvm19" -eq 0 ] && [ "$want_chromium" -eq 0 ]; then
        return 0
    fi

    if apt_usable; then
        if [ "${#needed[@]}" -gt 0 ]; then
            if ! apt_install "${needed[@]}"; then
                missing_tool "could not install ${needed[*]}"
            fi
        fi
        if [ "$want_llvm19" -eq 1 ]; then
            if ! apt_install llvm-19; then
                missing_tool "llvm-19 could not be installed (the LLVM 19, opaque pointer, differential tests)"
            fi
        fi
        if [ "$want_chromium" -eq 1 ]; then
            if ! apt_install chromium; then
                missing_tool "chromium could not be installed (the browser tests of the HTML book)"
            fi
        fi
    elif oracles_required; then
        local list all=("${missing[@]}")
        [ "$want_llvm19" -eq 0 ] || all+=("LLVM 19")
        [ "$want_chromium" -eq 0 ] || all+=("Chromium")
        list="$(printf '%s, ' "${all[@]}")"
        die "missing: ${list%, }, and apt-get cannot be used here (GCTOY_REQUIRE_ORACLES=1: the tests that need them would fail)." \
            "Install: sudo apt-get install ${needed[*]} llvm-19 chromium"
    elif [ "${#needed[@]}" -gt 0 ]; then
        local list
        list="$(printf '%s, ' "${missing[@]}")"
        list="${list%, }"
        say "missing: $list. Install the Debian packages ${needed[*]} (and optionally llvm-19 and chromium):" \
            "sudo apt-get install ${needed[*]} llvm-19 chromium. Continuing; the tests that need them are skipped with a reason."
    else
        [ "$want_llvm19" -eq 0 ] ||
            say "note: LLVM 19 is not installed (optional; apt-get install llvm-19 enables the opaque-pointer differential tests)"
        [ "$want_chromium" -eq 0 ] ||
            say "note: Chromium is not installed (optional; apt-get install chromium enables the HTML book's browser tests)"
    fi
}

# ---------------------------------------------------------------- Python environment

python_ok() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.11 python3 python3.12 python3.13 python3.14; do
        [ -n "$candidate" ] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if python_ok "$candidate"; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

pyproject_hash() {
    sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1
}

setup_venv() {
    if [ -e "$VENV" ] && ! python_ok "$VENV/bin/python"; then
        say "the environment in .venv is broken or too old; recreating it"
        rm -rf "$VENV"
    fi
    if [ ! -e "$VENV" ]; then
        local py
        py="$(find_python)" || die "Python 3.11 or newer is needed (none of python3.11, python3 qualifies; set PYTHON=/path/to/python3.11)"
        say "creating .venv with $py ($("$py" --version 2>&1))"
        if ! "$py" -m venv "$VENV"; then
            rm -rf "$VENV"
            # Debian's Python ships venv's pip bootstrap separately, in python3.X-venv.
            local venv_pkg
            venv_pkg="python$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
            if [ "${GCTOY_NO_APT:-0}" != "1" ] && apt_usable && apt_install "$venv_pkg" \
                && "$py" -m venv "$VENV"; then
                :
            else
                rm -rf "$VENV"
                die "'$py -m venv' failed; on Debian/Ubuntu install $venv_pkg"
            fi
        fi
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
    fi
    local want have=""
    want="$(pyproject_hash)"
    [ -f "$STAMP" ] && have="$(cat "$STAMP")"
    if [ "$want" != "$have" ]; then
        say "pip install -e '.[test,book]' (first time or pyproject.toml changed; this takes a few minutes)"
        "$VENV/bin/python" -m pip install --quiet -e "$ROOT[test,book]"
        printf '%s\n' "$want" > "$STAMP"
    fi
}

setup() {
    setup_system
    setup_venv
    # Bytecode for gctoy's own modules, as pip writes it for installed packages: with an editable
    # install and PYTHONDONTWRITEBYTECODE set, every `gctoy` command would otherwise compile the
    # whole package again before it starts (a few tenths of a second). Only stale files are redone.
    "$VENV/bin/python" -m compileall -q -j 0 "$ROOT/gctoy" >/dev/null
}

# ---------------------------------------------------------------- commands

cmd_test() {
    # Default targets: tests/ and, once there are any, the notebooks. Paths given on the
    # command line (`./run.sh test tests/test_errors.py -x`) replace them.
    local targets=(tests) arg
    if compgen -G "notebooks/*.ipynb" >/dev/null; then
        targets+=(notebooks)
    fi
    for arg in "$@"; do
        case "$arg" in -*) continue ;; esac
        if [ -e "${arg%%::*}" ]; then
            targets=()
            break
        fi
    done
    # One pytest run: the nbval options only affect .ipynb files, and --dist loadscope keeps
    # the cells of one notebook on one worker (they share a kernel).
    local status=0
    "$VENV/bin/python" -m pytest -p no:cacheprovider -n 2 --dist loadscope \
        --nbval-lax --nbval-current-env \
        --nbval-sanitize-with tests/nbval_sanitize.cfg \
        --nbval-cell-timeout 120 \
        "$@" ${targets[@]+"${targets[@]}"} || status=$?
    if [ "$status" -eq 5 ]; then
        say "error: pytest collected no tests"
    fi
    return "$status"
}

cmd_book() {
    local dir=notebooks
    if [ ! -d "$dir" ]; then
        say "no notebooks/ folder yet; opening JupyterLab on the repository root"
        dir=.
    fi
    local extra=()
    if [ "$(id -u)" -eq 0 ]; then
        extra+=(--allow-root)
    fi
    # The chapters are the project's own: trust them, so that JupyterLab draws their saved widgets when
    # a chapter opens (an untrusted notebook shows only the widgets' text until its cells are run).
    if compgen -G "$dir/*.ipynb" >/dev/null; then
        "$VENV/bin/jupyter" trust "$dir"/*.ipynb >/dev/null 2>&1 || say "warning: could not trust the notebooks"
    fi
    exec "$VENV/bin/jupyter" lab "${extra[@]}" "$@" "$dir"
}

cmd_html() {
    # Vendors the JavaScript on first use (npm pack; later runs use the copy), builds with
    # Jupyter Book 1.x from the committed outputs and widget states, and checks that every page
    # is there and loads nothing from the network.
    "$VENV/bin/python" tools/book_build.py build book
}

cmd_nightly() {
    # The long versions of the randomised tests: many more generated programs against LLVM 14
    # and many more fuzzed inputs than the fixed-seed runs of `./run.sh test`.
    GCTOY_DIFF_COUNT="${GCTOY_DIFF_COUNT:-5000}" GCTOY_FUZZ_COUNT="${GCTOY_FUZZ_COUNT:-200000}" \
    GCTOY_RUN_COUNT="${GCTOY_RUN_COUNT:-1000}" GCTOY_RANDOM_PROPERTIES=1 \
        cmd_test tests/passes/test_rs4gc_differential.py tests/ir/test_fuzz_parser.py \
        tests/passes/test_verify_safepoints.py tests/coreclr/test_coreclr_blob_fuzz.py \
        tests/coreclr/test_coreclr_ptrtab_fuzz_a.py tests/coreclr/test_coreclr_ptrtab_fuzz_b.py \
        tests/runtime/test_runtime_differential.py tests/runtime/test_runtime_shadow_stack_generated.py \
        tests/hard_input/test_run_damaged_objects.py tests/hard_input/test_cli_fuzz.py "$@"
}

cmd_bench() {
    if [ ! -f bench/run_all.py ]; then
        say "no benchmarks yet (bench/run_all.py does not exist)"
        return 0
    fi
    "$VENV/bin/python" bench/run_all.py "$@"
}

cmd_student() {
    "$VENV/bin/python" -m gctoy.course release "$@"
}

main() {
    local command="${1:-}"
    [ "$#" -gt 0 ] && shift
    case "$command" in
        test)  setup; cmd_test "$@" ;;
        book)  setup; cmd_book "$@" ;;
        html)  setup; cmd_html ;;
        bench) setup; cmd_bench "$@" ;;
        nightly) setup; cmd_nightly "$@" ;;
        student) setup; cmd_student "$@" ;;
        setup) setup ;;
        -h|--help|help) usage ;;
        *) usage >&2; exit 2 ;;
    esac
}

# Sourcing the file (as tests/test_run_sh.py does) defines the functions without running anything.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
