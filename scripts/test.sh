#!/usr/bin/env bash
# The whole test suite: set-up, the native library's own C tests (ctest, the same suite
# cross-built for linux-arm64 under qemu-user, then again under ASan + LSan + UBSan), a short
# libFuzzer smoke of the native entry points, the .NET tests
# (binding, engine, stress CLI end to end) and the package smoke test. This is the command the
# README gives and .ci/run calls. Ends with one "N passed, N failed" line over everything.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup.sh || { echo "setup failed"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

# linux-arm64: libzlink.so cross-built for aarch64 and its whole ctest suite run under
# qemu-aarch64-static (scripts/native-arm64.sh; pack-smoke below packs and runs that library).
# The build is CPU work and the x64 ctest run below mostly waits on sockets and timers, so the
# build runs beside it. Its output stays in artifacts/native-arm64.log; its ctest run is counted
# apart from the x64 one.
mkdir -p artifacts
arm64log=artifacts/native-arm64.log
bash scripts/native-arm64.sh build >"$arm64log" 2>&1 &
arm64_build=$!

echo "== native tests (ctest)"
ctest --test-dir native/build --output-on-failure --timeout 300 2>&1 | tee -a "$log" || status=1

echo "== native tests on linux-arm64 (cross-built, under qemu-aarch64-static)"
if wait "$arm64_build"; then
  grep -E '^(native-arm64|libzmq|native-lib-check \(arm64\)): ' "$arm64log"
  bash scripts/native-arm64.sh 2>&1 | tee -a "$arm64log" | grep -E '^native-arm64: (ctest|PASS|FAIL)|tests failed out of|Test +#'
else
  tail -n 30 "$arm64log"
fi
tail -n 1 "$arm64log" | grep -q '^native-arm64: PASS' || status=1

# The same tests again on an AddressSanitizer + LeakSanitizer + UBSan build (native/build-asan):
# any memory error, leak or undefined behaviour fails the test. Its own ctest log stays in
# native/build-asan; one "memcheck asan: ... passed=N failed=N skipped=N" line comes here.
echo "== native tests under ASan + LSan + UBSan"
bash scripts/native-memcheck.sh asan 2>&1 | tee -a "$log" || status=1

# Each libFuzzer target for a few seconds on its seed corpus (scripts/fuzz.sh; longer runs are
# documented in docs/native.md): one "fuzz <target>: PASS|FAIL" line each.
echo "== native fuzz smoke"
bash scripts/fuzz.sh "${NETZLINK_FUZZ_SECONDS:-10}" 2>&1 | tee -a "$log" || status=1

echo "== .NET tests"
if dotnet build NetZlink.sln -c Release --nologo -v quiet; then
  # detailed verbosity prints each test's output (the allocation figures among them)
  dotnet test NetZlink.sln -c Release --no-build --nologo --logger "console;verbosity=detailed" 2>&1 | tee -a "$log" \
    || status=1
else
  echo "dotnet build failed"; status=1
fi

# pack-smoke also checks that the packaged libzlink.so needs only glibc and libstdc++ and runs
# with the system's libzmq hidden; its whole output stays in artifacts/pack-smoke.log.
echo "== package smoke test"
if bash scripts/pack-smoke.sh 2>&1 | tee artifacts/pack-smoke.log | tee -a "$log" | tail -3 | grep -q "pack-smoke: OK"; then
  grep '^pack-smoke: ' artifacts/pack-smoke.log | grep -v 'dotnet pack' | tail -4
  echo "pack-smoke passed" | tee -a "$log"
else
  tail -n 20 artifacts/pack-smoke.log
  echo "pack-smoke FAILED" | tee -a "$log"; status=1
fi

# Totals: ctest's "N tests failed out of M" less its "***Skipped" entries (the native interop
# tests exit 77 when a peer they need is missing); dotnet's "Total tests: T" followed by
# "Passed: P" / "Failed: F" lines per test assembly. Skipped tests are counted apart.
passed=0; failed=0; skipped=0
read -r cfail ctotal < <(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$log" | tail -1 | awk '{print $1, $6}')
# a ctest entry whose peer is missing (the interop tests) exits 77: skipped, not passed
skipped=$(grep -c '\*\*\*Skipped' "$log")
if [ -n "${ctotal:-}" ]; then passed=$((passed + ctotal - cfail - skipped)); failed=$((failed + cfail)); fi
read -r dp df < <(awk '/^Total tests: /{t=1; next} t && /^ +Passed: /{p+=$2} t && /^ +Failed: /{f+=$2} /^ +Skipped: |^ Total time: /{t=0} END{print p+0, f+0}' "$log")
passed=$((passed + dp)); failed=$((failed + df))
if grep -q "pack-smoke passed" "$log"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# the ASan ctest run: its passed/failed counts (a failed build counts as one failure)
read -r ap af as <<<"$(sed -n 's/^memcheck asan: .* passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\) .*/\1 \2 \3/p' "$log" | tail -1)"
if [ -n "${ap:-}" ]; then
  passed=$((passed + ap)); failed=$((failed + af)); skipped=$((skipped + ${as:-0}))
  if [ "$af" -eq 0 ] && grep -q '^memcheck asan: FAIL' "$log"; then failed=$((failed + 1)); fi
else
  failed=$((failed + 1))
fi
# the linux-arm64 ctest run under qemu (a failure before ctest, such as the build, counts as one)
read -r afail atotal < <(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$arm64log" | tail -1 | awk '{print $1, $6}')
askipped=$(grep -c '\*\*\*Skipped' "$arm64log")
if [ -n "${atotal:-}" ]; then
  passed=$((passed + atotal - afail - askipped)); failed=$((failed + afail)); skipped=$((skipped + askipped))
else
  failed=$((failed + 1))
fi
# the fuzz smoke: one test per target (a failed build counts as one failure)
passed=$((passed + $(grep -c '^fuzz fuzz_[a-z_]*: PASS' "$log")))
failed=$((failed + $(grep -c '^fuzz fuzz_[a-z_]*: FAIL' "$log")))
if grep -q '^fuzz: build FAILED' "$log"; then failed=$((failed + 1)); fi
[ "$failed" -eq 0 ] || status=1
if [ "$skipped" -gt 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"; else echo "$passed passed, $failed failed"; fi
exit $status
