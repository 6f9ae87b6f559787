#!/bin/sh
# Give the image's python3 what sandboxed test runs need (pytest and the plugins fixes
# lean on), from the wheels in $1 (build/wheelhouse/testrunner), unless it has them.
# Run by deploy/Dockerfile as root, without network: bubblewrap sandboxes run tests with
# this python3 (Kaizen's own virtualenv is not what the sandbox runs). Debian's
# python3-pytest & co. (kaizen-sandbox-base) already have them; python:3.11-slim has none.
# pip runs from its wheel and is not installed: the image keeps no pip.
set -eu
# The python3 the sandbox's PATH finds (workers/sandbox/base.py SAFE_ENV), whatever the
# caller's PATH says (the image puts Kaizen's own virtualenv first).
PATH=/usr/local/bin:/usr/bin:/bin
export PATH
wheels="${1:?usage: install-test-runner.sh WHEEL_DIR}"
modules="pytest, pytest_timeout, coverage, pytest_asyncio, pytest_mock, hypothesis"
if python3 -c "import $modules" 2>/dev/null; then
    echo "python3 has the test runner already: $(python3 -m pytest --version 2>&1)"
    exit 0
fi
set -- "$wheels"/pip-*.whl
[ -f "$1" ] || { echo "no pip wheel in $wheels" >&2; exit 1; }
# --break-system-packages: Debian marks its python3 externally managed; these go to
# /usr/local, beside (never over) what apt installed.
python3 "$1/pip" install --no-index --find-links "$wheels" --no-cache-dir \
    --disable-pip-version-check --no-warn-script-location --break-system-packages \
    -r "$wheels/requirements.txt"
python3 -c "import $modules"
echo "installed the test runner: $(python3 -m pytest --version 2>&1)"
