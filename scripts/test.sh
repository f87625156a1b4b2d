#!/usr/bin/env bash
# Set up and run every check and the whole test suite. Needs Python 3.11+ with pip (installs uv itself) and
# Node.js 20+ with npm (installs the pinned wrangler).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m uv --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check "uv==0.13.8"
fi
# uv's own executable must be on PATH too (the packaging test builds a wheel with it).
PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
export PATH
uv() { python3 -m uv "$@"; }
# The dashboard's browser tests drive Debian's headless Chromium; install it when we can (root on Debian).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing chromium (Debian package) for the browser tests"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
uv sync --frozen --quiet
echo "== reference SDK wheel (read by the SDK conformance tests, never installed; ADR-0041)"
bash scripts/fetch-sdk-wheel.sh
# wrangler, pinned by package-lock.json (ADR-0040): `tsumugi deploy --dry-run` runs it in the tests, offline.
echo "== npm ci (wrangler)"
npm ci --no-audit --no-fund --loglevel=error
echo "== ruff"
uv run --frozen ruff check .
echo "== import contracts"
uv run --frozen lint-imports
echo "== pyright (strict on packages and services)"
uv run --frozen pyright -p .
echo "== pyright (standard on tests and benchmarks)"
uv run --frozen pyright -p pyright.tests.json
echo "== pytest"
uv run --frozen pytest "$@"
