#!/usr/bin/env bash
# Gateway request/reply and SPOT publish figures: NetZlink's managed services against zlink 1.3's
# C services, run alternately on this machine (docs/benchmarks.md, "The service layer").
#   scripts/services-bench.sh [rounds] [count] [size]        (defaults: 3 rounds, 50000, 64 bytes)
# Needs ZLINK_REFERENCE_LIBRARY (a real zlink 1.3 libzlink.so) and a built solution (Release).
# Each round runs, one after another: zlink's C services (native/tests/interop/zlink_services_peer.c
# bench-*), NetZlink's managed services on NetZlink's library, and the same managed services on
# zlink's library. Every run is one process over tcp on 127.0.0.1; see the peer's comment for what
# is measured. Prints every run, then the median of each column.
# The managed runs use fully optimizing JIT from the start (DOTNET_TieredCompilation=0) and run
# their measured loop unmeasured first (WarmUpMs in NetZlink.ServicesPeer/Program.cs): a run is a
# second or two, too short for tiered compilation to reach its steady state on a loaded machine,
# and the C peer is compiled ahead of time. Same shapes, sizes and in-flight windows as the C peer.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
count=${2:-50000}
size=${3:-64}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "rounds: a whole number of 1 or more, not '$rounds'" >&2; exit 2; }
[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "count: a whole number of messages, 1 or more, not '$count'" >&2; exit 2; }
[[ $size =~ ^[1-9][0-9]*$ ]] || { echo "size: a whole number of bytes, 1 or more, not '$size'" >&2; exit 2; }
: "${ZLINK_REFERENCE_LIBRARY:?set ZLINK_REFERENCE_LIBRARY to a real zlink 1.3 libzlink.so}"
peer_dll=${SERVICES_PEER_DLL:-"$root/NetZlink.ServicesPeer/bin/Release/net10.0/NetZlink.ServicesPeer.dll"}
[ -f "$peer_dll" ] || { echo "build the solution first (dotnet build NetZlink.sln -c Release)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$root/scripts/bench-rounds.sh"
cc -O2 -o "$work/peer" "$root/native/tests/interop/zlink_services_peer.c" -ldl -lpthread

run() { # kind shape -> "rate p50 p99"
  local out
  case $1 in
    zlink) out=$(ZLINK_REFERENCE_LIBRARY="$ZLINK_REFERENCE_LIBRARY" "$work/peer" "bench-$2" "$count" "$size") ;;
    netzlink) out=$(DOTNET_TieredCompilation=0 dotnet "$peer_dll" "bench-$2" "$count" "$size") ;;
    managed-on-zlink) out=$(DOTNET_TieredCompilation=0 NETZLINK_NATIVE_LIBRARY="$ZLINK_REFERENCE_LIBRARY" dotnet "$peer_dll" "bench-$2" "$count" "$size") ;;
  esac
  echo "$out" | sed -n 's/^RESULT [a-z]* msgs_per_s=\([0-9.]*\) rtt_p50_us=\([0-9.]*\) rtt_p99_us=\([0-9.]*\)$/\1 \2 \3/p'
}

echo "rounds=$rounds count=$count size=$size load: $(cut -d' ' -f1-3 /proc/loadavg)"
rounds_alternate "$work" "$rounds" "gateway spot" "zlink netzlink managed-on-zlink"
echo
echo "| shape | implementation | msgs/s | rtt p50 us | rtt p99 us |"
echo "|---|---|---|---|---|"
rounds_table "$work" "gateway spot" "zlink netzlink managed-on-zlink" 3
