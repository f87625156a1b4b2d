#!/usr/bin/env bash
# Set up and run every check and the whole test suite. Needs Python 3.11+ with pip (installs uv itself) and
# Node.js 20+ with npm (installs the pinned wrangler and JavaScript checkers).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m uv --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check "uv==0.13.8"
fi
# uv's own executable must be on PATH too (the packaging test builds a wheel with it).
PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
export PATH
uv() { python3 -m uv "$@"; }
# Never download an interpreter (that is outside the package registries): use the ones installed here.
export UV_PYTHON_DOWNLOADS=never

# Python Workers run Python 3.13, so the suite runs under 3.13 as well as under the project's 3.11 (ADR-0090).
# Found on PATH (a pyenv shim that cannot run counts as absent) or in pyenv's versions folder.
find_python_313() {
  local candidate
  for candidate in "${TSUMUGI_PYTHON_313:-}" python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13; do
    [ -n "$candidate" ] || continue
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' >/dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}
if ! python_313="$(find_python_313)"; then
  echo "error: Python 3.13 not found (looked for TSUMUGI_PYTHON_313, python3.13 on PATH and" \
    "${PYENV_ROOT:-$HOME/.pyenv}/versions/3.13*). The suite must pass under 3.13, the Python that Python" \
    "Workers run; install it (e.g. 'pyenv install 3.13') or point TSUMUGI_PYTHON_313 at one." >&2
  exit 1
fi
# The dashboard's browser tests drive Debian's headless Chromium; install it when we can (root on Debian).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing chromium (Debian package) for the browser tests"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
uv sync --frozen --quiet
# Resolving the lock against the index fills uv's cache with the index pages, so the test that runs an `init`ed
# project with its own `uv run` resolves offline (tests/scaffold/test_acceptance_user_project.py, ADR-0112).
# `--refresh` makes uv read the index: a lock that satisfies the workspace is otherwise checked without it, and
# a fresh machine's cache then holds no index page (ADR-0168).
uv lock --check --refresh --quiet
UV_PROJECT_ENVIRONMENT=.venv-3.13 uv sync --frozen --quiet --python "$python_313"
# wrangler, pinned by package-lock.json (ADR-0040): `tsumugi deploy --dry-run` runs it in the tests, offline.
echo "== npm ci (wrangler, the dashboard's JavaScript checkers)"
npm ci --no-audit --no-fund --loglevel=error
# The dashboard's JavaScript: names (ESLint), types (tsc on JS with JSDoc), format (Prettier), ADR-0154.
echo "== dashboard JavaScript"
scripts/dashboard_js/check.sh
echo "== ruff"
uv run --frozen ruff check .
uv run --frozen ruff format --check .
echo "== import contracts"
uv run --frozen lint-imports
echo "== pyright (strict on packages and services)"
uv run --frozen pyright -p .
echo "== pyright (standard on tests and benchmarks)"
uv run --frozen pyright -p pyright.tests.json
# Lint and types once (they do not depend on the interpreter); the suite under each Python, warnings as errors.
echo "== pytest ($(.venv/bin/python -c 'import platform; print("Python", platform.python_version())'))"
# Both runs happen even when the first fails, so one CI run reports both; either failing fails the command.
status=0
uv run --frozen pytest "$@" || status=1
echo "== pytest (Python $("$python_313" -c 'import platform; print(platform.python_version())'), $python_313)"
UV_PROJECT_ENVIRONMENT=.venv-3.13 uv run --frozen --python "$python_313" pytest "$@" || status=1
exit "$status"
