#!/usr/bin/env bash
# Mutation testing (mutmut, ADR-0088): change the code one small edit at a time and check a test notices.
#
#   bash scripts/mutation.sh                       # every module of tsumugi_core
#   bash scripts/mutation.sh throttle cron         # named tsumugi_core modules
#   bash scripts/mutation.sh tsumugi_scheduler.retention   # any importable module of the workspace
#
# Prints, per module, the score (killed / all mutants) and every surviving mutant with its diff; survivors
# listed in scripts/mutation-equivalents.txt (equivalent mutants: they cannot change behaviour) are shown
# apart and counted in a second score. Tests run: MUTATION_TESTS (default: tests/unit/core and the core's
# property tests for tsumugi_core, tests/unit otherwise). MUTATION_JOBS parallel test processes (default 2).
# Each module runs in its own scratch folder under .mutation/ (kept for `mutmut show`/`mutmut browse` there).
# CPU heavy (minutes per module): not run by CI.
# mutmut imports the tests once and forks a process per mutant: whatever a test module computes from the code
# under test at import (e.g. a schema compiled into a module constant) never sees a mutant. Compute it in the test.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
export PATH
python3 -m uv sync --frozen --quiet
py="$root/.venv/bin/python"
jobs="${MUTATION_JOBS:-2}"

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
  for f in packages/tsumugi-core/src/tsumugi_core/*.py; do
    name="$(basename "$f" .py)"
    [ "$name" = "__init__" ] || modules+=("tsumugi_core.$name")
  done
fi

summary=()
for module in "${modules[@]}"; do
  case "$module" in *.*) ;; *) module="tsumugi_core.$module" ;; esac
  # The file and the import root it lives under (the folder holding the top-level package).
  if ! located="$("$py" - "$module" <<'EOF'
import importlib.util, pathlib, sys
name = sys.argv[1]
try:
    spec = importlib.util.find_spec(name)
except ModuleNotFoundError:
    spec = None
if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
    sys.exit(f"mutation.sh: no Python module named {name!r} in this workspace")
origin = pathlib.Path(spec.origin).resolve()
depth = name.count(".") + (1 if origin.name == "__init__.py" else 0)
print(origin.parents[depth], origin.relative_to(origin.parents[depth]), sep="\n")
EOF
)"; then
    exit 2
  fi
  src_root="$(sed -n 1p <<<"$located")"
  rel_file="$(sed -n 2p <<<"$located")"
  package="${rel_file%%/*}"
  if [ -n "${MUTATION_TESTS:-}" ]; then
    read -r -a tests <<<"$MUTATION_TESTS"
  elif [ "$package" = "tsumugi_core" ]; then
    # The core's unit and property tests; the property tests that drive a whole shard engine are left out
    # (about 5 s a mutant they cover), so a core score is a lower bound: add them with MUTATION_TESTS.
    tests=(tests/unit/core tests/property/test_core_properties.py tests/property/test_invariants.py)
  else
    tests=(tests/unit)
  fi

  work="$root/.mutation/$module"
  rm -rf "$work"
  mkdir -p "$work/src"
  cp -r "$src_root/$package" "$work/src/"
  # Tests are copied whole (helpers import each other as tests.*), with the docs and D1 migrations some of
  # them read (found from the test file's folder, so they go beside the tests in mutmut's copy too).
  (cd "$root" && tar --exclude=__pycache__ -cf - tests docs migrations) | (cd "$work" && tar -xf -)
  {
    # The project's own pytest settings (warnings are errors), then mutmut's.
    sed -n '/^\[tool.pytest.ini_options\]/,/^\[/{/^\[tool.pytest.ini_options\]/p;/^\[/!p}' "$root/pyproject.toml"
    echo "[tool.mutmut]"
    echo "source_paths = [\"src\"]"
    echo "only_mutate = [\"src/$rel_file\"]"
    echo 'also_copy = ["docs", "migrations"]'
    printf 'pytest_add_cli_args_test_selection = ['; printf '"%s", ' "${tests[@]}"; echo ']'
    echo 'pytest_add_cli_args = ["-p", "no:cacheprovider", "--hypothesis-seed=0", "-q"]'
  } >"$work/pyproject.toml"

  echo "== $module ($rel_file) against ${tests[*]}"
  if ! (cd "$work" && nice -n 10 "$py" -m mutmut run --max-children "$jobs" >"$work/run.log" 2>&1); then
    if grep -q "could not find any test case for any mutant" "$work/run.log"; then
      # e.g. a module of Protocols only: nothing of it runs, so no test can reach a mutant of it.
      summary+=("$(printf '%-34s no mutant is reached by any selected test (nothing to score)' "$module")")
      continue
    fi
    tail -30 "$work/run.log"
    echo "mutation.sh: mutmut failed on $module (log: $work/run.log)" >&2
    exit 1
  fi
  (cd "$work" && "$py" -m mutmut export-cicd-stats >/dev/null && "$py" -m mutmut results --all true >results.txt)
  line="$("$py" "$root/scripts/mutation_report.py" "$work" "$module" "$root/scripts/mutation-equivalents.txt")"
  summary+=("$line")
done

echo
echo "== mutation score per module (killed / mutants; with listed equivalents left out)"
printf '%s\n' "${summary[@]}"
printf '%s\n' "${summary[@]}" | awk '$3 == "killed" { split($2, n, "/"); k += n[1]; t += n[2]; e += $6 }
  END { if (t) printf "%-34s %4d/%-4d killed %6.1f %%   %d equivalent: %6.1f %% without equivalents\n",
        "all", k, t, 100 * k / t, e, 100 * k / (t - e) }'
