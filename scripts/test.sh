#!/usr/bin/env bash
# The whole test suite: set-up, the native library's own C tests (ctest), the .NET tests
# (binding, engine, stress CLI end to end) and the package smoke test. This is the command the
# README gives and .ci/run calls. Ends with one "N passed, N failed" line over everything.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup.sh || { echo "setup failed"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

echo "== native tests (ctest)"
ctest --test-dir native/build --output-on-failure --timeout 300 2>&1 | tee -a "$log" || status=1

echo "== .NET tests"
if dotnet build NetZlink.sln -c Release --nologo -v quiet; then
  # detailed verbosity prints each test's output (the allocation figures among them)
  dotnet test NetZlink.sln -c Release --no-build --nologo --logger "console;verbosity=detailed" 2>&1 | tee -a "$log" \
    || status=1
else
  echo "dotnet build failed"; status=1
fi

echo "== package smoke test"
if bash scripts/pack-smoke.sh 2>&1 | tee -a "$log" | tail -3 | grep -q "pack-smoke: OK"; then
  echo "pack-smoke passed" | tee -a "$log"
else
  echo "pack-smoke FAILED" | tee -a "$log"; status=1
fi

# Totals: ctest's "N tests failed out of M"; dotnet's "Total tests: T" followed by
# "Passed: P" / "Failed: F" lines per test assembly.
passed=0; failed=0
read -r cfail ctotal < <(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$log" | tail -1 | awk '{print $1, $6}')
if [ -n "${ctotal:-}" ]; then passed=$((passed + ctotal - cfail)); failed=$((failed + cfail)); fi
read -r dp df < <(awk '/^Total tests: /{t=1; next} t && /^ +Passed: /{p+=$2} t && /^ +Failed: /{f+=$2} /^ +Skipped: |^ Total time: /{t=0} END{print p+0, f+0}' "$log")
passed=$((passed + dp)); failed=$((failed + df))
if grep -q "pack-smoke passed" "$log"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
[ "$failed" -eq 0 ] || status=1
echo "$passed passed, $failed failed"
exit $status
