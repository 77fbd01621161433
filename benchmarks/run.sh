#!/usr/bin/env bash
# The wrapper's overhead against C: builds the C loop (benchmarks/native/inproc_loop.c) and the
# benchmark program, then runs the C loop and the program's "overhead" mode alternately, three
# times each, in this one invocation (the machine is shared and noisy: only figures measured
# side by side compare). Both time the same inproc PAIR send-then-receive steps with the same
# iteration count and sizes. Writes benchmarks/results/overhead.md: per size the median native
# ns/op, the median managed ns/op and managed/native (goal: at most 1.15), plus the managed
# raw-P/Invoke path (timed in the same process right after the public API, so managed/raw is
# the wrapper's own share, less exposed to the machine's noise) and every run's figures.
#   bash benchmarks/run.sh [iterations]     (default 1000000; RUNS=5 for more alternations)
# BASELINE=<git revision> also builds that revision's benchmark program (against this checkout's
# native/build, so both load the same libzlink.so) and runs it in every alternation, before or
# after this tree's program by turns; the report then compares the two ("before" = BASELINE).
#   BASELINE=main bash benchmarks/run.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

iterations=${1:-1000000}
runs=${RUNS:-3}
goal=1.15
results="$root/benchmarks/results"
report="$results/overhead.md"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "run: building the C loop and NetZlink.Benchmarks (Release)"
bash benchmarks/run-native-loop.sh --build-only
dotnet build NetZlink.Benchmarks -c Release --nologo -v quiet >"$work/build.log" 2>&1 \
  || { cat "$work/build.log"; exit 1; }
baseline=${BASELINE:-}
if [ -n "$baseline" ]; then
  echo "run: building NetZlink.Benchmarks at $baseline ($(git rev-parse --short "$baseline"))"
  mkdir -p "$work/before/native"
  git archive "$baseline" | tar -x -C "$work/before"
  ln -s "$root/native/build" "$work/before/native/build"
  dotnet build "$work/before/NetZlink.Benchmarks" -c Release --nologo -v quiet >"$work/build-before.log" 2>&1 \
    || { cat "$work/build-before.log"; exit 1; }
fi

# The binding must load the same library the C loop links, not one named elsewhere.
unset NETZLINK_NATIVE_LIBRARY
managed_run() {
  echo "run $run/$runs: managed"
  dotnet run -c Release --no-build --project NetZlink.Benchmarks -- overhead "$iterations" | tee -a "$work/managed.txt"
}
before_run() {
  echo "run $run/$runs: managed, before ($baseline)"
  dotnet run -c Release --no-build --project "$work/before/NetZlink.Benchmarks" -- overhead "$iterations" | tee -a "$work/before.txt"
}
for run in $(seq 1 "$runs"); do
  echo "run $run/$runs: native"
  bash benchmarks/run-native-loop.sh "$iterations" | tee -a "$work/native.txt"
  if [ -z "$baseline" ]; then
    managed_run
  elif [ $((run % 2)) -eq 1 ]; then
    before_run
    managed_run
  else
    managed_run
    before_run
  fi
done

# median KIND SIZE FILE: the median ns_per_op of the lines "KIND size=SIZE ..." in FILE.
median() {
  grep "^$1 size=$2 " "$3" | sed 's/.*ns_per_op=\([0-9.]*\).*/\1/' | sort -n \
    | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# ratio_median KIND_A FILE_A KIND_B FILE_B SIZE: the median over runs of run i's A / run i's B
# (pairs taken by run order: the .NET process's own managed/raw pair, or the alternated C and .NET runs).
ratio_median() {
  paste -d ' ' <(grep "^$1 size=$5 " "$2" | sed 's/.*ns_per_op=\([0-9.]*\).*/\1/') \
                <(grep "^$3 size=$5 " "$4" | sed 's/.*ns_per_op=\([0-9.]*\).*/\1/') \
    | awk '{ print $1 / $2 }' | sort -n \
    | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# figures FILE SIZE: "managed ns/op, managed / native, managed / raw" (medians) of the .NET program whose lines are in FILE.
figures() {
  echo "$(median managed "$2" "$1") $(ratio_median managed "$1" native "$work/native.txt" "$2") $(ratio_median managed "$1" raw "$1" "$2")"
}
# runs KIND SIZE FILE: every run's ns_per_op, in run order.
all_runs() {
  grep "^$1 size=$2 " "$3" | sed 's/.*ns_per_op=\([0-9.]*\).*/\1/' | paste -sd ' ' | sed 's/ /, /g'
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
{
  echo "# Managed wrapper overhead against C (inproc PAIR)"
  echo
  echo "Written by \`bash benchmarks/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'). Each side ran $runs times,"
  echo "alternately (C, .NET, C, .NET, ...), in one invocation; ns/op figures are medians of the $runs runs,"
  echo "ratios are medians of the $runs runs' own ratios (run i's .NET against run i's C)."
  echo "One op = one \`send\` + one \`recv\` (DONTWAIT) of SIZE bytes over inproc PAIR on one thread,"
  echo "$iterations ops per size after a 0.5 s warm-up, timed in 20 blocks; a run's figure is its fastest"
  echo "block (noise on this shared machine only adds time). In the .NET process the public API and raw"
  echo "P/Invoke take turns block by block, so **managed / raw** (the wrapper's own share) is the steadiest"
  echo "column; managed / native compares two processes and moves with the machine (raw / native, the same"
  echo "native calls from .NET, shows how much). Native: \`benchmarks/native/inproc_loop.c\` on"
  echo "libzlink. Managed: \`Socket.TrySend\` + \`Socket.TryReceive\` (\`NetZlink.Benchmarks overhead\`);"
  echo "raw P/Invoke: the same program calling \`zlink_send\`/\`zlink_recv\` directly through its own declarations"
  echo "(\`NetZlink.Benchmarks/RawZlink.cs\`, resolved to the library file the binding loaded) on a raw PAIR"
  echo "made like the public one (\`RawPair.cs\`)."
  echo
  echo "Machine: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr), .NET SDK $(dotnet --version),"
  echo "$(${CC:-cc} --version | head -n 1). $(grep -m1 '^# libzlink' "$work/native.txt" | sed 's/^# //'), loaded by .NET from"
  echo "\`$(grep -m1 '^# libzlink' "$work/managed.txt" | sed 's/.* from //; s|'"$root"'/||')\`."
  echo
  echo "| Size (B) | native ns/op | managed ns/op | managed / native | raw P/Invoke ns/op | raw / native | managed / raw |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  for size in 64 1024 8192; do
    n=$(median native "$size" "$work/native.txt")
    r=$(median raw "$size" "$work/managed.txt")
    rn=$(ratio_median raw "$work/managed.txt" native "$work/native.txt" "$size")
    read -r m mn mr <<<"$(figures "$work/managed.txt" "$size")"
    awk -v s="$size" -v n="$n" -v m="$m" -v r="$r" -v mn="$mn" -v rn="$rn" -v mr="$mr" -v g="$goal" 'BEGIN {
      printf "| %s | %.1f | %.1f | **%.2f**%s | %.1f | %.2f | **%.2f** |\n", s, n, m, mn, (mn <= g ? "" : " (over " g ")"), r, rn, mr
    }'
  done
  echo
  echo "Goal: managed / native at most $goal."
  echo
  echo "Every run (ns/op, in run order$([ -z "$baseline" ] || echo '; before: the BASELINE program, below')):"
  echo
  echo "| Size (B) | native | managed | raw P/Invoke |$([ -z "$baseline" ] || echo ' before: managed | before: raw P/Invoke |')"
  echo "|---:|---|---|---|$([ -z "$baseline" ] || echo '---|---|')"
  for size in 64 1024 8192; do
    before=""
    [ -z "$baseline" ] || before=" $(all_runs managed "$size" "$work/before.txt") | $(all_runs raw "$size" "$work/before.txt") |"
    echo "| $size | $(all_runs native "$size" "$work/native.txt") | $(all_runs managed "$size" "$work/managed.txt") | $(all_runs raw "$size" "$work/managed.txt") |$before"
  done
  if [ -n "$baseline" ]; then
    echo
    echo "## Before ($baseline, $(git rev-parse --short "$baseline")) and after ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- NetZlink NetZlink.Benchmarks || echo ' with uncommitted changes')), same invocation"
    echo
    echo "The two programs ran by turns in every alternation (before first in odd runs, after first in even"
    echo "ones), each timing its public API against raw P/Invoke block by block."
    echo
    echo "| Size (B) | before managed ns/op | after managed ns/op | before managed / native | after managed / native | before managed / raw | after managed / raw |"
    echo "|---:|---:|---:|---:|---:|---:|---:|"
    for size in 64 1024 8192; do
      read -r bm bn br <<<"$(figures "$work/before.txt" "$size")"
      read -r am an ar <<<"$(figures "$work/managed.txt" "$size")"
      echo "| $size | $bm | $am | $bn | $an | $br | $ar |"
    done
  fi
} >"$report"

echo
cat "$report"
echo "run: wrote ${report#"$root"/}"
