#!/usr/bin/env bash
# Set up and run every check and the whole test suite. Needs only Python 3.11+ with pip (installs uv itself).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m uv --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check "uv==0.13.8"
fi
uv() { python3 -m uv "$@"; }
uv sync --frozen --quiet
echo "== ruff"
uv run --frozen ruff check .
echo "== import contracts"
uv run --frozen lint-imports
echo "== pyright (strict on packages and services)"
uv run --frozen pyright
echo "== pytest"
uv run --frozen pytest "$@"
