#!/usr/bin/env bash
# Download the pinned workers-runtime-sdk wheel into .cache/sdk-wheel/ (hash-checked, cached, never installed).
# The SDK conformance tests (tests/contract/test_sdk_*.py) read it with zipfile + ast; see ADR-0041.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=tests/contract/workers-runtime-sdk.txt
dest=.cache/sdk-wheel
want=$(sed -n 's/.*--hash=sha256:\([0-9a-f]\{64\}\).*/\1/p' "$requirements")
for wheel in "$dest"/*.whl; do
  if [ -f "$wheel" ] && [ "$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$wheel")" = "$want" ]; then
    echo "cached: $wheel"
    exit 0
  fi
done
rm -rf "$dest" && mkdir -p "$dest"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --require-hashes -r "$requirements" -d "$dest"
echo "downloaded: $(ls "$dest"/*.whl)"
