#!/usr/bin/env bash
# Where a stack's CPU goes, per packet: runs one s2 echo (server and client in separate processes)
# and counts, with `perf stat` on each process for a window inside the measured phase, its CPU
# time and its system calls by kind (sendto, recvfrom, epoll_wait, poll, ...), then divides by the
# packets echoed in that window (the client's s2 throughput times the window). The counts are
# kernel tracepoints, so they are exact; perf's own overhead in counting mode is small.
#
#   bash benchmarks/syscall-profile.sh [--stack netzlink|dotnet|c-epoll|c-uring] [--ccu N] [--window S]
#                                      [--port P] [--idle] [--transport tcp|ws]
#                                      [-- extra client flags, e.g. --shards 1]
#
# Prints one line per side, e.g.
#   netzlink client: packets/s=1583970 cpu_us/packet=0.704 cores=1.11 syscalls/packet=0.174 sendto=0.022 ...
# --transport: the s2 run's transport for both processes (tcp by default; ws for the ws:// data
# path; tls and wss need certificates, which `compare` makes, so they are not offered here).
# --idle: the same connections nearly idle instead (an open-model s2 at --rate 0.001, one packet
# per 1,000 s over all of them); prints per second instead of per packet, e.g.
#   netzlink client idle: cores=0.002 syscalls/s=12 poll=6.0 epoll_wait=6.0 ...
# Needs perf (Debian: linux-perf) and permission to count tracepoints (root, or
# kernel.perf_event_paranoid <= 1); says so and exits 2 when it has neither.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

stack=netzlink ccu=10000 window=6 port=29500 idle=0 transport=tcp
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --stack) stack=$2; shift 2 ;;
    --ccu) ccu=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --idle) idle=1; shift ;;
    --transport) transport=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "syscall-profile: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done
case $stack in netzlink|dotnet|c-epoll|c-uring) ;; *) echo "syscall-profile: --stack must be netzlink, dotnet, c-epoll or c-uring, not '$stack'" >&2; exit 1 ;; esac
case $transport in tcp|ws) ;; *) echo "syscall-profile: --transport must be tcp or ws, not '$transport'" >&2; exit 1 ;; esac
# c-epoll and c-uring are limit_echo on its two I/O layers (--io epoll|uring), both sides
io=
case $stack in c-epoll) io=epoll ;; c-uring) io=uring ;; esac
[ "$transport" = tcp ] || [ -z "$io" ] || { echo "syscall-profile: --transport ws needs a NetZlink.Stress stack (netzlink or dotnet)" >&2; exit 1; }
[ "$idle" = 0 ] || [ -z "$io" ] || { echo "syscall-profile: --idle needs a NetZlink.Stress stack (netzlink or dotnet)" >&2; exit 1; }
[ "$idle" = 0 ] || extra=(--rate 0.001 "${extra[@]}")

events=task-clock,context-switches,raw_syscalls:sys_enter
for call in sendto recvfrom epoll_wait poll read write epoll_ctl futex io_uring_enter; do
  events+=",syscalls:sys_enter_$call"
done
if ! command -v perf >/dev/null; then
  echo "syscall-profile: perf is not installed (Debian package linux-perf)" >&2; exit 2
fi
if ! perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1; then
  echo "syscall-profile: perf may not count the raw_syscalls tracepoint here (run as root or lower kernel.perf_event_paranoid)" >&2; exit 2
fi

dll=$root/NetZlink.Stress/bin/Release/net10.0/NetZlink.Stress.dll
limit=$root/native/build/bench/limit_echo
[ -f "$dll" ] || { echo "syscall-profile: build first: dotnet build NetZlink.Stress -c Release" >&2; exit 2; }
[ -z "$io" ] || [ -x "$limit" ] || { echo "syscall-profile: build first: cmake --build native/build --target limit_echo" >&2; exit 2; }

work=$(mktemp -d)
source "$root/scripts/echo-server-lib.sh"
cleanup() { echo_server_stop; rm -rf "$work"; }
trap cleanup EXIT

warmup=3
[ "$idle" = 0 ] || warmup=0
measure=$((window + 6))
if [ -n "$io" ]; then
  echo_server_start "$work/server.log" "$limit" server --io "$io" --port "$port" --quiet || exit 2
else
  echo_server_start "$work/server.log" dotnet "$dll" --role server --exit-on-stdin-eof --stack "$stack" --port "$port" --transport "$transport" || exit 2
fi
server_pid=$echo_server_pid

if [ -n "$io" ]; then
  "$limit" client --io "$io" --scenario s2 --port "$port" --ccu "$ccu" --warmup "$warmup" --measure "$measure" \
    --timeseries-csv "$work/ts.csv" "${extra[@]}" >"$work/client.log" 2>&1 &
else
  dotnet "$dll" --role client --stack "$stack" --transport "$transport" --scenario s2 --port "$port" --ccu "$ccu" --warmup "$warmup" \
    --measure "$measure" --timeseries-csv "$work/ts.csv" --quiet "${extra[@]}" >"$work/client.log" 2>&1 &
fi
client_pid=$!

# Start counting 3 s into the measured phase (the time series names the phase of each second).
for _ in $(seq 1 1200); do
  grep -q measure "$work/ts.csv" 2>/dev/null && break
  kill -0 "$client_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q measure "$work/ts.csv" 2>/dev/null || { echo "syscall-profile: the client never reached its measured phase:" >&2; cat "$work/client.log" >&2; exit 2; }
sleep 3
timeout -s INT "$window" perf stat -e "$events" -p "$client_pid" -o "$work/client.perf" &
client_perf=$!
timeout -s INT "$window" perf stat -e "$events" -p "$server_pid" -o "$work/server.perf" || true
wait "$client_perf" || true
wait "$client_pid" || true

if [ -n "$io" ]; then
  grep refused "$work/client.log" "$work/server.log" >&2 && { echo "syscall-profile: io_uring was refused, so this is not c-uring" >&2; exit 2; }
  # limit_echo prints raw counts; NetZlink.Stress judges them and prints the RESULT line.
  result=$(dotnet "$dll" counts "$work/client.log" 2>&1 | grep '^RESULT' || true)
else
  result=$(grep '^RESULT' "$work/client.log" || true)
fi
[ -n "$result" ] || { echo "syscall-profile: the client printed no RESULT:" >&2; cat "$work/client.log" >&2; exit 2; }
echo "$result" | cut -c1-200
rate=$(echo "$result" | sed -E 's/.*throughput=([0-9.]+).*/\1/')

for side in client server; do
  awk -v side="$side" -v stack="$stack" -v rate="$rate" -v idle="$idle" '
    /seconds time elapsed/ { elapsed = $1 }
    $2 == "msec" && $3 == "task-clock" { gsub(",", "", $1); cpu_ms = $1 }
    $2 ~ /^(raw_)?syscalls:sys_enter/ || $2 == "context-switches" {
      gsub(",", "", $1); name = $2; sub(/^syscalls:sys_enter_/, "", name); sub(/^raw_syscalls:sys_enter$/, "all", name)
      count[name] = $1; order[++n] = name
    }
    END {
      if (idle) {
        line = sprintf("%s %s idle: cores=%.3f syscalls/s=%.0f", stack, side, cpu_ms / 1000 / elapsed, count["all"] / elapsed)
        for (i = 1; i <= n; i++) if (order[i] != "all" && count[order[i]] > 0) line = line sprintf(" %s=%.1f", order[i], count[order[i]] / elapsed)
        print line
        exit
      }
      packets = rate * elapsed
      if (packets <= 0) { print stack " " side ": no packets in the window"; exit }
      line = sprintf("%s %s: packets/s=%.0f cpu_us/packet=%.3f cores=%.2f syscalls/packet=%.3f", stack, side, rate,
        cpu_ms * 1000 / packets, cpu_ms / 1000 / elapsed, count["all"] / packets)
      for (i = 1; i <= n; i++) if (order[i] != "all" && count[order[i]] > 0) line = line sprintf(" %s=%.3f", order[i], count[order[i]] / packets)
      print line
    }' "$work/$side.perf"
done
