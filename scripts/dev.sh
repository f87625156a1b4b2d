#!/usr/bin/env bash
# Set up and run the local system: the local runtime with this repo's Workers (scheduler, performers, producer),
# the REST API and dashboard on http://127.0.0.1:8787. Needs only Python 3.11+ with pip (installs uv itself).
# Extra arguments go to `tsumugi dev` (e.g. --data-dir, --port).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m uv --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check "uv==0.13.8"
fi
# Only what running needs: no test or lint tools (the dev dependency group is left out).
python3 -m uv sync --frozen --quiet --no-dev
exec python3 -m uv run --frozen --no-dev tsumugi dev "$@"
