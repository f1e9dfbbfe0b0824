#!/usr/bin/env bash
# The whole test suite, as on CI: system packages, Python packages, lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/install-system-deps.sh
python -m pip install --quiet --disable-pip-version-check -e '.[test]'

echo "== ruff"; python -m ruff check sheetsync tests benchmarks
echo "== mypy (strict on sheetsync/rules and sheetsync/core)"; python -m mypy sheetsync/rules sheetsync/core
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
