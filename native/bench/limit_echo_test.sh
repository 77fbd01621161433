#!/bin/sh
# ctest test_limit_echo: runs limit_echo's client against its own server at a small ccu and
# checks that s0, s1 and s2 each print one COUNTS line (the raw counts NetZlink.Stress judges)
# with every connection up, echoes back, nothing lost or misbehaving and the latency samples
# where there are some, the cold-start fields (version 3: startup times, the first echoes'
# round trips), that the time series is written, that the server prints its own times
# (SERVER_TIME) when it stops, and that a bad or retired flag is refused with exit code 1.
# A second argument (epoll or uring, default epoll) runs both sides on that --io layer; a layer
# that was refused (limit_echo's "refused" line, then epoll) fails the test.
# ZLINK_TEST_EMULATOR (set by ctest in a cross build, e.g. "qemu-aarch64-static -L <prefix>")
# goes before every run of the program.
set -u
bin=$1
emu=${ZLINK_TEST_EMULATOR:-}
io=${2:-epoll}
dir=$(mktemp -d)
fifo=$dir/stdin
mkfifo "$fifo"
# The server stops when its stdin pipe reaches end-of-file: hold the pipe open with fd 9.
$emu "$bin" server --io "$io" --port 0 --quiet --latency-sample-rate 1 <"$fifo" >"$dir/ready" 2>"$dir/server.err" &
server=$!
exec 9>"$fifo"
cleanup() { exec 9>&- 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# value NAME LINE: the value of NAME= in LINE
value() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

i=0
while ! grep -q '^READY port=' "$dir/ready"; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "server printed no READY line"; sleep 0.05
done
port=$(sed -n 's/^READY port=//p' "$dir/ready")

for s in s0 s1 s2; do
  out=$($emu "$bin" client --io "$io" --scenario $s --port "$port" --ccu 20 --warmup 0.3 --measure 0.5 --quiet \
        --timeseries-csv "$dir/$s.ts.csv" 2>"$dir/client.err")
  rc=$?
  ! grep -q refused "$dir/client.err" || fail "$s: $(cat "$dir/client.err")"
  echo "$out" | cut -c1-400
  [ $rc -eq 0 ] || fail "$s: exit code $rc"
  [ "$(echo "$out" | grep -c '^COUNTS ')" -eq 1 ] || fail "$s: not exactly one COUNTS line"
  ! echo "$out" | grep -q '^RESULT ' || fail "$s: limit_echo judges nothing, so prints no RESULT line"
  line=$(echo "$out" | grep '^COUNTS ')
  [ "$(value version "$line")" = 4 ] || fail "$s: version"
  [ "$(value scenario "$line")" = $s ] || fail "$s: scenario"
  [ "$(value io "$line")" = "$io" ] || fail "$s: io= is not $io"
  want=20; [ $s = s0 ] && want=1
  [ "$(value connected "$line")" = $want ] || fail "$s: connected is not $want"
  for zero in connect_failed connect_timed_out disconnected in_flight gating_violation bad_echoes peer_closed \
              protocol_errors lost late drain_timeout unsent interrupted rate; do
    [ "$(value $zero "$line")" = 0 ] || fail "$s: $zero is not 0"
  done
  [ "$(value drain_wait "$line")" = none ] || fail "$s: drain_wait"
  echo "$line" | grep -Eq ' cpu_us=[0-9]+ peak_rss_kb=[1-9][0-9]* startup_to_connected_ns=[1-9][0-9]* startup_to_first_echo_ns=[0-9]+ errors_by_errno= first_n_ns=[0-9:,]* latency_ns=' \
    || fail "$s: usage, startup and errno fields"
  recv=$(value received_measured "$line")
  samples=$(value latency_ns "$line")
  first=$(value first_n_ns "$line")
  if [ $s = s1 ]; then
    [ "$recv" = 0 ] && [ -z "$samples" ] && [ "$(value throughput_ns "$line")" = 0 ] || fail "s1 moved packets"
    [ -z "$first" ] && [ "$(value startup_to_first_echo_ns "$line")" = 0 ] || fail "s1 has first echoes"
  else
    # the first echo comes after the first connection; the first 100 echoes are timed (s0: its one)
    [ "$(value startup_to_first_echo_ns "$line")" -gt "$(value startup_to_connected_ns "$line")" ] || fail "$s: first echo before connected"
    nfirst=$(echo "$first" | tr ',' '\n' | awk -F: '{ s += $2 } END { print s }')
    wantfirst=100; [ $s = s0 ] && wantfirst=1
    [ "$nfirst" -eq $wantfirst ] || fail "$s: $nfirst first echoes timed, not $wantfirst"
    [ "$recv" -gt 0 ] || fail "$s: nothing received"
    [ "$(value sent_measured "$line")" = "$recv" ] || fail "$s: sent_measured != received_measured"
    [ "$(value throughput_ns "$line")" -gt 0 ] || fail "$s: throughput_ns"
    echo "$samples" | grep -Eq '^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$' || fail "$s: latency_ns is not value:count pairs"
    # every recv/latency_sample_rate-th measured echo is timed (s0: its one echo)
    rate=$(value latency_sample_rate "$line")
    n=$(echo "$samples" | tr ',' '\n' | awk -F: '{ s += $2 } END { print s }')
    [ "$n" -eq $((recv / rate)) ] || fail "$s: $n latency samples for $recv echoes at 1 in $rate"
  fi
  head -1 "$dir/$s.ts.csv" | grep -q '^elapsed,phase,sent_per_s,recv_per_s,inflight,rss_mb,gc_heap_mb$' || fail "$s: time series header"
done
[ "$(value measure_s "$line")" = 0.5 ] && [ "$(value throughput_ns "$line")" = 500000000 ] || fail "s2: measured seconds"

# --rate: the open model. 2000 packets/s over 20 connections for 0.5 s measured is exactly 1000
# measured packets, all echoed, nothing lost; a packet's latency counts from its due time.
out=$($emu "$bin" client --io "$io" --scenario s2 --port "$port" --ccu 20 --warmup 0.3 --measure 0.5 --rate 2000 --quiet \
      --latency-sample-rate 1)
rc=$?
line=$(echo "$out" | grep '^COUNTS ')
echo "$line" | cut -c1-400
[ $rc -eq 0 ] || fail "--rate: exit code $rc"
[ "$(value rate "$line")" = 2000 ] || fail "--rate: rate= is not 2000"
[ "$(value sent_measured "$line")" = 1000 ] || fail "--rate: sent_measured is not rate x measure (1000)"
[ "$(value received_measured "$line")" = 1000 ] || fail "--rate: received_measured is not 1000"
for zero in lost in_flight unsent drain_timeout; do
  [ "$(value $zero "$line")" = 0 ] || fail "--rate: $zero is not 0"
done
for bad in "--scenario s1 --rate 100" "--rate -1" "--rate fast" "--rate 0.0001"; do
  # shellcheck disable=SC2086
  $emu "$bin" client $bad >/dev/null 2>"$dir/err"
  [ $? -eq 1 ] || fail "client $bad should exit 1"
  grep -q -- '--rate' "$dir/err" || fail "client $bad message: $(cat "$dir/err")"
done
# a port is 16 bits: 70000 must not become 4464
for role in server client; do
  $emu "$bin" $role --port 70000 >/dev/null 2>"$dir/err" </dev/null
  [ $? -eq 1 ] || fail "$role --port 70000 should exit 1"
  grep -q -- '--port must be a whole number from' "$dir/err" || fail "$role --port 70000 message: $(cat "$dir/err")"
done

# The server stops at the end of its stdin and prints its own times: with --latency-sample-rate 1
# every read, so at least one per read of the s2 run above, each a whole number of ns.
exec 9>&-
wait "$server"
! grep -q refused "$dir/server.err" || fail "server: $(cat "$dir/server.err")"
times=$(grep '^SERVER_TIME ' "$dir/ready")
echo "$times" | cut -c1-200
[ "$(value version "$times")" = 1 ] || fail "SERVER_TIME version"
tn=$(value time_ns "$times")
echo "$tn" | grep -Eq '^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$' || fail "SERVER_TIME time_ns is not value:count pairs"
[ "$(echo "$tn" | tr ',' '\n' | awk -F: '{ s += $2 } END { print s }')" = "$(value samples "$times")" ] || fail "SERVER_TIME samples != its counts"
[ "$(value samples "$times")" -gt 0 ] || fail "SERVER_TIME timed nothing"

if [ "$io" = uring ]; then
  [ "$($emu "$bin" probe --io uring)" = "io=uring ok" ] || fail "probe --io uring: $($emu "$bin" probe --io uring)"
fi
$emu "$bin" client --io poll >/dev/null 2>"$dir/err"
[ $? -eq 1 ] || fail "--io poll should exit 1"
grep -q -- '--io must be epoll or uring' "$dir/err" || fail "--io poll message: $(cat "$dir/err")"
$emu "$bin" client --ccu 0 >/dev/null 2>"$dir/err"
[ $? -eq 1 ] || fail "--ccu 0 should exit 1"
grep -q -- '--ccu must be' "$dir/err" || fail "--ccu 0 message: $(cat "$dir/err")"
$emu "$bin" client --summary-json "$dir/x.json" >/dev/null 2>"$dir/err"
[ $? -eq 1 ] || fail "--summary-json (NetZlink.Stress writes the files now) should exit 1"
echo "limit_echo ($io): OK"
