#!/usr/bin/env bash
# The whole test suite, as on CI: system packages, Python packages, lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/install-system-deps.sh
bash .ci/install-pyodide.sh
python -m pip install --quiet --disable-pip-version-check -e '.[test]'

echo "== ruff"; python -m ruff check sheetsync tests benchmarks
echo "== mypy (strict on sheetsync/core and the rule systems' engines and files)"
python -m mypy sheetsync/core sheetsync/systems/*/rules sheetsync/systems/*/files sheetsync/systems/*/reference.py \
  sheetsync/systems/*/system.py sheetsync/systems/hexwar/tracker/{layout,formulas,cells}.py \
  sheetsync/systems/exalted/tracker/{layout,formulas,cells}.py
echo "== import contracts (docs/ARCHITECTURE.md)"; lint-imports --no-cache
echo "== pytest"
set +e
python -m pytest -p no:cacheprovider "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$code"
