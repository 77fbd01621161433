#!/usr/bin/env bash
# Cold start of NetZlink.Stress built three ways, beside the C limit row: s0 (one connection, one
# echo, a fresh server and client process each time) through `compare`, which stamps every client
# as it starts it, so startup_to_* count from the launch. Variants:
#   jit  framework-dependent apphost (dotnet publish), the JIT compiles everything at run time
#   r2r  ReadyToRun (-p:PublishReadyToRun=true): precompiled code, the JIT only for what it lacks
#   aot  native AOT (-p:PublishAot=true): no JIT at all
#   c    native/build/bench/limit_echo (the c-epoll stack)
# compare runs each .NET variant's server and client through NETZLINK_STRESS_BINARY. The variants
# alternate within each round (the machine is shared: noise hits all of them alike), RUNS rounds.
#
#   bash benchmarks/cold-start.sh                 # build, check the AOT binary, 5 rounds, print the table
#   RUNS=9 STACK=dotnet bash benchmarks/cold-start.sh
#   SKIP_BUILD=1 bash benchmarks/cold-start.sh    # reuse OUT's builds
#
# Prints every run and the medians; exits 1 when a build has a warning or the AOT binary fails its
# checks, 2 when a run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
STACK=${STACK:-netzlink}
OUT=${OUT:-/tmp/netzlink-cold-start}
P=NetZlink.Stress
mkdir -p "$OUT"

build() { # name, publish flags...
  local name=$1; shift
  echo "cold-start: publishing $name: dotnet publish $P -c Release $* -o $OUT/$name" >&2
  dotnet publish "$P" -c Release "$@" -o "$OUT/$name" >"$OUT/$name.log" 2>&1 || { tail -20 "$OUT/$name.log" >&2; exit 1; }
  # the build treats warnings as errors; a trim or AOT warning would still be worth failing on here
  if grep -E 'warning (IL|CS)[0-9]+' "$OUT/$name.log" >&2; then echo "cold-start: $name has warnings" >&2; exit 1; fi
}

if [ -z "${SKIP_BUILD:-}" ]; then
  bash scripts/setup.sh >/dev/null
  cmake --build native/build --target limit_echo >/dev/null
  build jit
  build r2r -r linux-x64 --self-contained false -p:PublishReadyToRun=true
  build aot -r linux-x64 -p:PublishAot=true
fi

# The AOT binary does everything the tool does, not just start: flags, both stacks, a fault
# server, the merge path (HdrHistogram's log reader, which builds histograms by reflection), counts.
aot=$OUT/aot/$P
check() { echo "cold-start: aot check: $*" >&2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$aot" --help | grep -q -- '--latency-sample-rate' || { check "--help"; exit 1; }
! "$aot" --ccu abc 2>"$work/err" && grep -q -- '--ccu must be a whole number' "$work/err" || { check "bad flag"; exit 1; }
"$aot" --scenario s0 --quiet | grep -q 'pass_fail=PASS' || { check "s0"; exit 1; }
"$aot" --scenario s2 --stack dotnet --ccu 20 --warmup 0.3 --measure 0.5 --rate 2000 --start-at "$(date +%s)" \
  --summary-json "$work/a.json" --json-histogram --quiet 2>/dev/null | grep -q 'pass_fail=PASS' || { check "s2 dotnet open model"; exit 1; }
"$aot" merge --summary-json "$work/m.json" "$work/a.json" | grep -q 'pass_fail=PASS' || { check "merge"; exit 1; }
# these two FAIL on purpose (exit code 2): their output is what is checked
out=$("$aot" --scenario s2 --ccu 4 --warmup 0 --measure 0.5 --fault garbage --fault-every 4 --quiet || true)
echo "$out" | grep -q 'protocol_errors=1' || { check "fault"; exit 1; }
out=$(native/build/bench/limit_echo client --scenario s0 --port 1 --connect-retries 0 --quiet 2>/dev/null | "$aot" counts - || true)
echo "$out" | grep -q 'fail_reason=connect_fail' || { check "counts"; exit 1; }
echo "cold-start: aot checks passed" >&2

run() { # variant round -> one line: variant round s0_rtt_us startup_to_connected_ms startup_to_first_echo_ms server_p50_us
  local v=$1 i=$2 dir="$OUT/runs/$1-$2" stack=$STACK bin=""
  rm -rf "$dir"; mkdir -p "$OUT/runs"
  if [ "$v" = c ]; then stack=c-epoll; bin=$aot; else bin=$OUT/$v/$P; fi
  NETZLINK_STRESS_BINARY=$bin "$bin" compare --stacks "$stack" --scenarios s0 --quiet --out "$dir" >/dev/null 2>"$dir.err" \
    || { echo "cold-start: $v round $i failed: $(tail -3 "$dir.err")" >&2; return 2; }
  python3 - "$dir/$stack/s0/summary.json" "$v" "$i" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], s["p50_us"], s["startup_to_connected_ms"], s["startup_to_first_echo_ms"], s["server_p50_us"])
PY
}

: >"$OUT/runs.txt"
for i in $(seq 1 "$RUNS"); do
  for v in jit r2r aot c; do
    run "$v" "$i" | tee -a "$OUT/runs.txt"
  done
done

python3 - "$OUT/runs.txt" "$STACK" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
names = {"jit": f"{sys.argv[2]} JIT", "r2r": f"{sys.argv[2]} ReadyToRun", "aot": f"{sys.argv[2]} native AOT", "c": "c-epoll (limit_echo)"}
cols = ["s0 round trip µs", "startup to connected ms", "startup to first echo ms", "server µs"]
print("| variant | " + " | ".join(f"{c} (median; all runs)" for c in cols) + " |")
print("|---|" + "---|" * len(cols))
med = {}
for v in ["jit", "r2r", "aot", "c"]:
    vals = [[float(r[k]) for r in rows if r[0] == v] for k in range(2, 6)]
    med[v] = [statistics.median(x) for x in vals]
    print(f"| {names[v]} | " + " | ".join(f"**{statistics.median(x):.2f}**; " + ", ".join(f"{y:.2f}" for y in x) for x in vals) + " |")
print()
for v in ["jit", "r2r", "aot"]:
    print(f"{names[v]} / c-epoll, median s0 round trip: {med[v][0] / med['c'][0]:.2f}; startup to first echo: {med[v][2] / med['c'][2]:.2f}")
PY
