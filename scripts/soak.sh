#!/usr/bin/env bash
# Soak: one long s2 run (default 10 minutes measured at ccu 2000) with the echo server and the
# client in separate processes, sampling memory every 10 s, then a verdict on whether it stayed
# flat. The client's resident set and managed heap come from its own --timeseries-csv (rss_mb,
# gc_heap_mb, one row a second); the server's resident set is read here from /proc/<pid>/status.
#
#   bash scripts/soak.sh                                   # 10 min, ccu 2000, netzlink both ends
#   bash scripts/soak.sh --minutes 2 --ccu 500 --out /tmp/soak --stack dotnet
#   bash scripts/soak.sh --minutes 10 -- --inflight 10     # after --: more NetZlink.Stress flags
#
# Writes DIR/client-timeseries.csv, DIR/server-rss.csv, DIR/summary.json (with DIR/summary.hgrm,
# the latency distribution), DIR/stdout.txt and
# DIR/soak.md (the 10-s samples and the verdict). Exit code: the client's (0 = PASS), or 3 when
# the run passed but memory grew: more than 10% and more than 8 MB from the first minute of the
# measured phase to the last, in any of client RSS, client GC heap or server RSS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

minutes=10 ccu=2000 stack=netzlink out="" port=27190 extra=()
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --ccu) ccu=$2; shift 2 ;;
    --stack) stack=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --help|-h) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "soak.sh: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done
[[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "soak.sh: --minutes must be a positive number, got '$minutes'" >&2; exit 1; }
[[ "$ccu" =~ ^[1-9][0-9]*$ ]] || { echo "soak.sh: --ccu must be a positive integer, got '$ccu'" >&2; exit 1; }
out=${out:-$(mktemp -d /tmp/netzlink-soak.XXXXXX)}
mkdir -p "$out"
measure=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')

bash scripts/setup.sh >/dev/null
dotnet build NetZlink.Stress -c Release --nologo -v quiet >/dev/null
tool=(dotnet NetZlink.Stress/bin/Release/net10.0/NetZlink.Stress.dll)

source scripts/echo-server-lib.sh
sampler=""
cleanup() {
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  echo_server_stop
}
trap cleanup EXIT
echo_server_start "$out/server.txt" "${tool[@]}" --role server --exit-on-stdin-eof --stack "$stack" --port "$port" --quiet || exit 2
server=$echo_server_pid

echo "elapsed,server_rss_mb" >"$out/server-rss.csv"
(
  SECONDS=0
  while kill -0 "$server" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$server/status" 2>/dev/null || true)
    echo "$SECONDS,${rss:-0}" >>"$out/server-rss.csv"
    sleep 10
  done
) &
sampler=$!

echo "soak: s2, stack $stack, ccu $ccu, $minutes min measured; samples every 10 s into $out" >&2
status=0
"${tool[@]}" --role client --stack "$stack" --scenario s2 --port "$port" --ccu "$ccu" --warmup 10 \
  --measure "$measure" --timeseries-csv "$out/client-timeseries.csv" --summary-json "$out/summary.json" \
  --quiet "${extra[@]}" | tee "$out/stdout.txt" || status=$?

# Every 10th client row, the server sample nearest in time, and the first-vs-last-minute verdict.
awk -F, -v minutes="$minutes" -v ccu="$ccu" -v stack="$stack" '
  FNR == 1 { next }
  FILENAME ~ /server-rss/ { st[++ns] = $1; sr[ns] = $2; next }
  $2 == "measure" {
    n++; t[n] = $1; rps[n] = $4; rss[n] = $6; gc[n] = $7
  }
  function server_at(x,   i, best, d, bd) {
    best = 0; bd = 1e18
    for (i = 1; i <= ns; i++) { d = st[i] - x; if (d < 0) d = -d; if (d < bd) { bd = d; best = sr[i] } }
    return best
  }
  function window_mean(arr, from, to,   i, s, k) {
    s = 0; k = 0
    for (i = from; i <= to; i++) { s += arr[i]; k++ }
    return k ? s / k : 0
  }
  function growth(name, a, b) {
    d = b - a; pct = a > 0 ? 100 * d / a : 0
    printf "| %s | %.1f | %.1f | %+.1f | %+.1f%% |\n", name, a, b, d, pct
    if (d > 8 && pct > 10) grew = grew (grew ? ", " : "") name
  }
  END {
    printf "# Soak: s2, stack %s, ccu %d, %s min measured\n\n", stack, ccu, minutes
    print "| measured s | recv/s | client rss_mb | client gc_heap_mb | server rss_mb |"
    print "|---|---|---|---|---|"
    for (i = 1; i <= n; i += 10)
      printf "| %d | %.0f | %.1f | %.1f | %.1f |\n", i, rps[i], rss[i], gc[i], server_at(t[i])
    if (n < 120) { print "\nverdict: too short to judge (fewer than 2 measured minutes)"; exit 0 }
    for (i = 1; i <= n; i++) srv[i] = server_at(t[i])
    print "\nMeans over the first and the last measured minute:\n"
    print "| figure | first minute | last minute | change | change % |"
    print "|---|---|---|---|---|"
    growth("client rss_mb", window_mean(rss, 1, 60), window_mean(rss, n - 59, n))
    growth("client gc_heap_mb", window_mean(gc, 1, 60), window_mean(gc, n - 59, n))
    growth("server rss_mb", window_mean(srv, 1, 60), window_mean(srv, n - 59, n))
    if (grew) { printf "\nverdict: GREW (%s)\n", grew; exit 3 }
    print "\nverdict: flat"
  }' "$out/server-rss.csv" "$out/client-timeseries.csv" | tee "$out/soak.md" || { rc=$?; [ "$rc" -eq 3 ] && [ "$status" -eq 0 ] && status=3; }
echo "soak: files in $out" >&2
exit "$status"
