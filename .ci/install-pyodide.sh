#!/usr/bin/env bash
# Pyodide for the tests that run the workbook path in Node (tests/test_pyodide.py) and for
# benchmarks/bench_pyodide.py: the pinned `pyodide` npm package and the pure wheels the
# workbook path needs (openpyxl, et_xmlfile), all in .cache/pyodide (git-ignored), so the
# test itself loads everything from local files and fetches nothing (tests/test_web_page.py serves the
# same folder to headless Chromium), and xlwings' pure wheel for the xlwings Lite scripts' test.
# Quick no-op when present.
#   PYODIDE_VERSION   0.27.x ships Python 3.12 and runs on Node >= 18 (Debian's nodejs is 20)
set -euo pipefail
cd "$(dirname "$0")/.."

# the versions are pinned once, in sheetsync/web/__init__.py (the web page loads the same Pyodide)
eval "$(python -c 'import sheetsync.web as w; print(f"PYODIDE_VERSION={w.PYODIDE_VERSION} OPENPYXL_VERSION={w.OPENPYXL_VERSION} ET_XMLFILE_VERSION={w.ET_XMLFILE_VERSION} XLWINGS_VERSION={w.XLWINGS_VERSION}")')"
cache=.cache/pyodide

if [ -f "$cache/node_modules/pyodide/pyodide.asm.wasm" ] \
    && grep -q "\"version\": \"$PYODIDE_VERSION\"" "$cache/node_modules/pyodide/package.json" \
    && [ -f "$cache/wheels/openpyxl-$OPENPYXL_VERSION-py2.py3-none-any.whl" ] \
    && [ -f "$cache/wheels/et_xmlfile-$ET_XMLFILE_VERSION-py3-none-any.whl" ] \
    && [ -f "$cache/lite-wheels/xlwings-$XLWINGS_VERSION-py3-none-any.whl" ]; then
    echo "pyodide $PYODIDE_VERSION already in $cache"
    exit 0
fi

if ! command -v npm >/dev/null; then
    echo "npm is missing: install Debian's nodejs and npm (.ci/install-system-deps.sh)" >&2
    exit 1
fi

mkdir -p "$cache/wheels" "$cache/lite-wheels"
echo "installing pyodide $PYODIDE_VERSION into $cache"
npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error "pyodide@$PYODIDE_VERSION"
python -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest "$cache/wheels" "openpyxl==$OPENPYXL_VERSION" "et_xmlfile==$ET_XMLFILE_VERSION"
# xlwings' pure wheel, as xlwings Lite provides it, for the scripts' test under Pyodide
# (tests/test_lite_pyodide.py); kept apart, since the page and the workbook path don't load it
# (--platform any: pip would take this machine's compiled wheel otherwise)
python -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform any --python-version 3.12 --dest "$cache/lite-wheels" "xlwings==$XLWINGS_VERSION"
