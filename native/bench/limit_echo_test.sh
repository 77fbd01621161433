#!/bin/sh
# ctest test_limit_echo: runs limit_echo's client against its own server at a small ccu and
# checks that s0, s1 and s2 each print a RESULT line with pass_fail=PASS and the fields the
# compare report reads, that the JSON and the time series are written, and that a bad flag
# is refused with exit code 1.
set -u
bin=$1
dir=$(mktemp -d)
fifo=$dir/stdin
mkfifo "$fifo"
# The server stops when its stdin pipe reaches end-of-file: hold the pipe open with fd 9.
"$bin" server --port 0 --quiet <"$fifo" >"$dir/ready" &
server=$!
exec 9>"$fifo"
cleanup() { exec 9>&-; wait "$server" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

i=0
while ! grep -q '^READY port=' "$dir/ready"; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "server printed no READY line"; sleep 0.05
done
port=$(sed -n 's/^READY port=//p' "$dir/ready")

for s in s0 s1 s2; do
  out=$("$bin" client --scenario $s --port "$port" --ccu 20 --warmup 0.3 --measure 0.5 --quiet \
        --summary-json "$dir/$s.json" --metrics-csv "$dir/m.csv" --timeseries-csv "$dir/$s.ts.csv")
  rc=$?
  echo "$out"
  line=$(echo "$out" | grep '^RESULT ') || fail "$s: no RESULT line"
  echo "$line" | grep -q " scenario=$s " || fail "$s: scenario field"
  echo "$line" | grep -q ' pass_fail=PASS ' || fail "$s: not PASS"
  echo "$line" | grep -q ' stack=c-epoll ' || fail "$s: stack field"
  [ $rc -eq 0 ] || fail "$s: exit code $rc"
  grep -q '"pass_fail": "PASS"' "$dir/$s.json" || fail "$s: JSON lacks pass_fail"
  head -1 "$dir/$s.ts.csv" | grep -q '^elapsed,phase,sent_per_s,recv_per_s,inflight,rss_mb,gc_heap_mb$' || fail "$s: time series header"
done
echo "$out" | grep '^RESULT ' | grep -q ' connect_success=20 ' || fail "s2: not all 20 connected"
echo "$out" | grep '^RESULT ' | grep -Eq ' recv=[1-9]' || fail "s2: nothing received"
[ "$(wc -l <"$dir/m.csv")" -eq 4 ] || fail "CSV: expected a header and 3 rows"
head -1 "$dir/m.csv" | grep -q '^scenario_id,transport,ccu,inflight,size,connect_success,' || fail "CSV header"

"$bin" client --ccu 0 >/dev/null 2>"$dir/err"
[ $? -eq 1 ] || fail "--ccu 0 should exit 1"
grep -q -- '--ccu must be' "$dir/err" || fail "--ccu 0 message: $(cat "$dir/err")"
echo "limit_echo: OK"
