#!/usr/bin/env bash
# Native memory checks of the whole ctest suite, two ways:
#   asan      builds native/ with AddressSanitizer + LeakSanitizer + UBSan (-DZLINK_SANITIZE=
#             address,undefined, Debug, into native/build-asan) and runs every ctest test there;
#             any memory error, leak or undefined behaviour fails its test.
#   valgrind  runs every ctest test of the normal build (native/build, made by scripts/setup.sh)
#             under valgrind memcheck with --leak-check=full; a memory error or a definitely or
#             possibly lost block fails the test (native/valgrind.supp: glibc's cached thread
#             stacks only). Logs: native/build/memcheck/<test>.<pid>.log.
#             Child processes are checked too, system tools (/bin, /usr/bin) are not; a test that
#             is a shell script (test_limit_echo) runs natively with the build's programs it
#             starts under valgrind; test_stream_emfile is skipped (see below).
# Usage: scripts/native-memcheck.sh [asan|valgrind|all]   (default all)
# Prints one "memcheck <kind>: PASS|FAIL tests=N passed=N failed=N skipped=N leaks=N errors=N seconds=N"
# line per kind and exits 1 if any failed.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

what=${1:-all}
case "$what" in asan | valgrind | all) ;; *) echo "usage: scripts/native-memcheck.sh [asan|valgrind|all]" >&2; exit 2 ;; esac
status=0

source scripts/apt-need.sh
need() { apt_need "$@" >/dev/null || { echo "memcheck: cannot install $*"; exit 1; }; }

run_asan() {
  local build=native/build-asan start=$SECONDS log
  need cmake g++ make
  # the same static libzmq as the normal build (built once, then cached; not instrumented)
  bash scripts/libzmq.sh || { echo "memcheck asan: FAIL (build)"; status=1; return; }
  echo "memcheck: building $build (ASan + LSan + UBSan)"
  cmake -S native -B "$build" -DCMAKE_BUILD_TYPE=Debug -DZLINK_SANITIZE=address,undefined >/dev/null &&
    cmake --build "$build" -j"$(nproc)" >"$build/build.log" 2>&1 ||
    { cat "$build/build.log"; echo "memcheck asan: FAIL (build)"; status=1; return; }
  log=$build/ctest.log
  # leaks are checked at every exit (LSan is on with ASan on x86-64 Linux); UBSan stops the test
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir "$build" --output-on-failure --timeout 300 -O "$log" >/dev/null 2>&1
  local total failed leaks errors skipped
  read -r failed total < <(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$log" | tail -1 | awk '{print $1, $6}')
  # a test whose peer is missing exits 77 (SKIP_RETURN_CODE): neither passed nor failed
  skipped=$(grep -c '\*\*\*Skipped' "$log")
  leaks=$(grep -c 'ERROR: LeakSanitizer' "$log")
  errors=$(grep -cE 'ERROR: AddressSanitizer|runtime error:' "$log")
  local verdict=PASS
  if [ -z "${total:-}" ] || [ "$failed" -ne 0 ] || [ "$leaks" -ne 0 ] || [ "$errors" -ne 0 ]; then
    verdict=FAIL; status=1
    grep -E 'ERROR: |runtime error:|SUMMARY:|\*\*\*Failed|Failed  ' "$log" | head -20 | sed 's/^/    /'
  fi
  echo "memcheck asan: $verdict tests=${total:-0} passed=$(( ${total:-0} - ${failed:-0} - skipped )) failed=${failed:-0} skipped=$skipped leaks=$leaks errors=$errors seconds=$((SECONDS - start)) log=$log"
}

# a program this build made (not a system interpreter such as /usr/bin/sh)
in_build() {
  case "$1" in "$root/native/build/"*) [ -x "$1" ] && [ ! -d "$1" ] ;; *) return 1 ;; esac
}

run_valgrind() {
  local build=native/build start=$SECONDS
  need valgrind python3
  if [ ! -f "$build/CTestTestfile.cmake" ]; then
    bash scripts/libzmq.sh >/dev/null &&
    cmake -S native -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build "$build" -j"$(nproc)" >/dev/null ||
      { echo "memcheck valgrind: FAIL (build)"; status=1; return; }
  fi
  local dir=$build/memcheck
  rm -rf "$dir"; mkdir -p "$dir"
  local total=0 passed=0 failed=0 leaks=0 errors=0 skipped=0
  # test_stream_emfile lowers RLIMIT_NOFILE to just above its highest descriptor; valgrind keeps
  # descriptors of its own at the top of the range and refuses that setrlimit (EPERM), so the
  # test cannot run under it (the asan run covers it).
  local -A skip=([test_stream_emfile]=1)
  # ctest's own list (name, command, working directory), so a new test is covered without
  # touching this script
  while IFS=$'\t' read -r name wd cmd; do
    if [ -n "${skip[$name]:-}" ]; then
      skipped=$((skipped + 1)); echo "  valgrind $name: skipped (lowers RLIMIT_NOFILE below valgrind's own descriptors)"
      continue
    fi
    total=$((total + 1))
    local -a argv vg
    IFS=$'\x1f' read -r -a argv <<<"$cmd"
    vg=(valgrind --suppressions="$root/native/valgrind.supp" --leak-check=full --show-leak-kinds=definite,possible
        --errors-for-leak-kinds=definite,possible --error-exitcode=99 --trace-children=yes
        --trace-children-skip='/bin/*,/usr/bin/*' --log-file="$root/$dir/$name.%p.log")
    if in_build "${argv[0]}"; then
      argv=("${vg[@]}" "${argv[@]}")
    else
      # a test script (test_limit_echo: sh script BINARY): the shell runs natively (its own
      # leaks are not ours) and each of the build's programs it is given runs under valgrind
      local i
      for i in "${!argv[@]}"; do
        if [ "$i" -gt 0 ] && in_build "${argv[$i]}"; then
          local wrap=$dir/wrap-$name-$i
          printf '#!/bin/sh\nexec %s "$@"\n' "$(printf '%q ' "${vg[@]}" "${argv[$i]}")" >"$wrap"
          chmod +x "$wrap"
          argv[$i]=$root/$wrap
        fi
      done
    fi
    (cd "${wd:-.}" && timeout 900 "${argv[@]}" >"$root/$dir/$name.out" 2>&1)
    local rc=$?
    # a leak record reads "N bytes in M blocks are definitely|possibly lost in loss record ...";
    # each process's "ERROR SUMMARY: N errors" counts those records too
    local l e
    l=$(cat "$dir/$name".*.log 2>/dev/null | grep -cE 'are (definitely|possibly) lost in loss record')
    e=$(cat "$dir/$name".*.log 2>/dev/null | grep -Eo 'ERROR SUMMARY: [0-9]+' | awk '{s += $3} END {print s + 0}')
    e=$((e - l))
    leaks=$((leaks + l)); errors=$((errors + e))
    if [ $rc -eq 0 ] && [ "$l" -eq 0 ] && [ "$e" -eq 0 ]; then
      passed=$((passed + 1)); echo "  valgrind $name: ok"
    else
      failed=$((failed + 1)); echo "  valgrind $name: FAILED (exit $rc, $l leak records, $e errors); see $dir/$name.*"
    fi
  done < <(ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    wd = next((p["value"] for p in t.get("properties", []) if p["name"] == "WORKING_DIRECTORY"), "")
    print(t["name"], wd, "\x1f".join(t["command"]), sep="\t")')
  local verdict=PASS
  if [ $total -eq 0 ] || [ $failed -ne 0 ]; then verdict=FAIL; status=1; fi
  echo "memcheck valgrind: $verdict tests=$total passed=$passed failed=$failed skipped=$skipped leaks=$leaks errors=$errors seconds=$((SECONDS - start)) logs=$dir"
}

case "$what" in
  asan) run_asan ;;
  valgrind) run_valgrind ;;
  all) run_asan; run_valgrind ;;
esac
exit $status
