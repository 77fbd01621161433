#!/usr/bin/env bash
# Builds the native library's libFuzzer targets (clang-14, ASan + UBSan, native/build-fuzz) and
# runs each for SECONDS (default 60) on its committed seed corpus (native/fuzz/corpus/<target>)
# plus what earlier runs found (native/build-fuzz/corpus/<target>). Prints one line per target
# ("fuzz <target>: PASS ..." or "FAIL ...", with the reproducer's path) and exits 1 if any failed.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   e.g. scripts/fuzz.sh 600 fuzz_stream_recv
# Without TARGETs: every native/fuzz/*.c that defines LLVMFuzzerTestOneInput.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

seconds=${1:-60}
shift || true
case "$seconds" in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2 ;; esac
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # every target: each native/fuzz source that defines the libFuzzer entry point
  for source in $(grep -l LLVMFuzzerTestOneInput native/fuzz/*.c); do
    targets+=("$(basename "$source" .c)")
  done
fi

# clang-14 links -fsanitize=fuzzer only with Debian's compiler-rt archives
apt_packages=(clang-14 libclang-rt-14-dev cmake make)
source scripts/apt-need.sh
apt_need "${apt_packages[@]}" >/dev/null || { echo "fuzz: cannot install ${apt_packages[*]}"; exit 1; }
# the targets link the same static libzmq as libzlink.so (built once, then cached)
bash scripts/libzmq.sh || { echo "fuzz: build FAILED (libzmq)"; exit 1; }

build=native/build-fuzz
echo "fuzz: building $build"
if ! { cmake -S native -B "$build" -DZLINK_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
       cmake --build "$build" -j"$(nproc)" >"$build/build.log" 2>&1; }; then
  cat "$build/build.log" >&2 2>/dev/null
  echo "fuzz: build FAILED"
  exit 1
fi

# inputs past these lengths add time, not paths
declare -A max_len=([fuzz_endpoint]=2048 [fuzz_sockopt]=2048 [fuzz_stream_send]=4096
                    [fuzz_stream_multi]=4096 [fuzz_stream_recv]=16384 [fuzz_zmp]=8192)
failed=0
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  committed=native/fuzz/corpus/$name
  if [ ! -x "$build/$t" ] || [ ! -d "$committed" ]; then
    echo "fuzz $t: FAIL (no such target)"; failed=1; continue
  fi
  corpus=$build/corpus/$name
  artifacts=$build/artifacts/$name
  log=$build/logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  dict=()
  [ -f "native/fuzz/$name.dict" ] && dict=(-dict="native/fuzz/$name.dict")
  # -timeout: one input taking 30 s is a hang (the harness's own waits end at 10 s);
  # -rss_limit_mb: ASan's quarantine alone takes a few hundred MB
  "$build/$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 \
    -max_len="${max_len[$t]:-4096}" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "${dict[@]}" "$corpus" "$committed" >"$log" 2>&1
  rc=$?
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+')
  if [ $rc -eq 0 ]; then
    echo "fuzz $t: PASS ${seconds}s runs=${runs:-0} cov=${cov:-0} corpus=$(find "$corpus" -type f | wc -l)"
  else
    failed=1
    artifact=$(grep -Eo "Test unit written to [^ ]+" "$log" | tail -1 | cut -d' ' -f5)
    echo "fuzz $t: FAIL (exit $rc) after ${runs:-?} runs; log $log; reproducer ${artifact:-none}"
    grep -E "ERROR: |FUZZ_ASSERT|SUMMARY:|never came" "$log" | head -5 | sed 's/^/    /'
  fi
done
exit $failed
