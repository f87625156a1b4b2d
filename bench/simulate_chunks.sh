#!/usr/bin/env bash
# A many-seed simulation run in chunks of 100 seeds, on one fixed commit, that can span sessions (ADR-0170).
#
# Usage: bench/simulate_chunks.sh COMMIT FIRST LAST
#   Runs bench/simulate.py --start S --seeds 100 for S = FIRST, FIRST+100, ... up to LAST (inclusive), each in
#   a worktree of COMMIT with its own environment (.sim-wt-<commit>/, ignored by git), and writes each chunk's
#   output to bench/results/simulate/<commit>/chunk_SSSSS.txt, whose first line is `commit <sha> seeds A..B`.
#   A chunk whose file already holds a RESULT line is skipped, so a run resumes where it stopped; files are
#   written whole (a stopped chunk leaves only a .tmp file). Two streams on two cores:
#     bench/simulate_chunks.sh 3e5b41a 0 4900 & bench/simulate_chunks.sh 3e5b41a 5000 9900 &
#   Totals: uv run python bench/simulate_totals.py bench/results/simulate/<commit>/chunk_*.txt
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 COMMIT FIRST LAST" >&2
  exit 2
fi
repo=$(git rev-parse --show-toplevel)
sha=$(git -C "$repo" rev-parse --verify "$1^{commit}")
short=${sha:0:7}
first=$2
last=$3
tree="$repo/.sim-wt-$short"
out="$repo/bench/results/simulate/$short"
mkdir -p "$out"

# Two streams may start at once: one makes the worktree and its environment, the other waits for it.
exec 9>"$repo/.sim-wt-$short.lock"
flock 9
if [ ! -d "$tree" ]; then
  git -C "$repo" worktree add --detach "$tree" "$sha" >/dev/null
fi
(cd "$tree" && uv sync --frozen --quiet)
flock -u 9

for ((start = first; start <= last; start += 100)); do
  file=$(printf '%s/chunk_%05d.txt' "$out" "$start")
  if [ -f "$file" ] && grep -q '^RESULT ' "$file"; then
    continue
  fi
  {
    echo "commit $sha seeds $start..$((start + 99))"
    (cd "$tree" && uv run --frozen python bench/simulate.py --start "$start" --seeds 100 2>&1) || true
  } >"$file.tmp"
  mv "$file.tmp" "$file"
done
