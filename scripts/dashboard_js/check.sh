#!/usr/bin/env bash
# Check the dashboard's scripts with the npm tools package-lock.json pins (ADR-0154): ESLint for names (no-undef:
# every name a file uses is declared in it, is a browser global, or is listed in its `/* global ... */` comment),
# TypeScript's checker on the JavaScript (types from JSDoc), and Prettier's formatting. Needs `npm ci` first;
# runs offline. The directory to check is the first argument (the dashboard's assets/js by default), so a test can
# check a copy.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="$(cd "${1:-$root/packages/tsumugi-scheduler/src/tsumugi_scheduler/dashboard/assets/js}" && pwd)"
bin="$root/node_modules/.bin"
shopt -s nullglob
files=("$dir"/*.js)
if [ "${#files[@]}" -eq 0 ]; then
  echo "error: no .js files in $dir" >&2
  exit 1
fi
echo "-- eslint"
(cd "$dir" && "$bin/eslint" --no-warn-ignored --max-warnings 0 --config "$here/eslint.config.mjs" -- *.js)
echo "-- tsc (checkJs)"
"$bin/tsc" --noEmit --allowJs --checkJs --skipLibCheck --target ES2022 --lib ES2022,DOM,DOM.Iterable \
  --pretty false "${files[@]}"
echo "-- prettier"
"$bin/prettier" --config "$here/prettierrc.json" --no-editorconfig --check "${files[@]}"
