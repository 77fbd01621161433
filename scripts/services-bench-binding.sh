#!/usr/bin/env bash
# NetZlink's services against zlink's own .NET binding, in the shapes of zlink's binding benchmark
# (its GATEWAY and SPOT patterns; NetZlink.ServicesPeer/BindingBench.cs says what each measures),
# run alternately on this machine (docs/benchmarks.md, "The service layer in zlink's binding-benchmark shapes").
#   scripts/services-bench-binding.sh [rounds] [size] [transport]     (defaults: 5 rounds, 64 bytes, tcp)
# Needs ZLINK_REFERENCE_LIBRARY (a real zlink 1.3 libzlink.so) and a built solution (Release).
# ZLINK_BINDING_BENCH, when set, is zlink's own binding benchmark (Zlink.BindingBench.dll, built
# from zlink's repository, bindings/dotnet/benchwithzlink): it then runs in the same alternation on
# zlink's library. Without it only NetZlink's two rows run. Every run uses the runtime's defaults
# (tiered compilation on, as each binding ships); DOTNET_* variables you set reach every run alike.
# Prints every run, then the median of each column.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-5}
size=${2:-64}
transport=${3:-tcp}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "rounds: a whole number of 1 or more, not '$rounds'" >&2; exit 2; }
[[ $size =~ ^[1-9][0-9]*$ ]] || { echo "size: a whole number of bytes, 1 or more, not '$size'" >&2; exit 2; }
case $transport in tcp|ipc|inproc) ;; *) echo "transport: tcp, ipc or inproc, not '$transport'" >&2; exit 2 ;; esac
: "${ZLINK_REFERENCE_LIBRARY:?set ZLINK_REFERENCE_LIBRARY to a real zlink 1.3 libzlink.so}"
peer_dll=${SERVICES_PEER_DLL:-"$root/NetZlink.ServicesPeer/bin/Release/net10.0/NetZlink.ServicesPeer.dll"}
[ -f "$peer_dll" ] || { echo "build the solution first (dotnet build NetZlink.sln -c Release)" >&2; exit 1; }
kinds="netzlink managed-on-zlink"
if [ -n "${ZLINK_BINDING_BENCH:-}" ]; then
  [ -f "$ZLINK_BINDING_BENCH" ] || { echo "ZLINK_BINDING_BENCH=$ZLINK_BINDING_BENCH: no such file" >&2; exit 1; }
  kinds="zlink-binding $kinds"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$root/scripts/bench-rounds.sh"

run() { # kind pattern -> "throughput latency"
  local out
  case $1 in
    zlink-binding) out=$(ZLINK_LIBRARY_PATH="$ZLINK_REFERENCE_LIBRARY" dotnet "$ZLINK_BINDING_BENCH" "$2" "$transport" "$size") ;;
    netzlink) out=$(dotnet "$peer_dll" "binding-${2,,}" "$transport" "$size") ;;
    managed-on-zlink) out=$(NETZLINK_NATIVE_LIBRARY="$ZLINK_REFERENCE_LIBRARY" dotnet "$peer_dll" "binding-${2,,}" "$transport" "$size") ;;
  esac
  local thr lat
  thr=$(echo "$out" | sed -n 's/^RESULT,[^,]*,[A-Z]*,[^,]*,[0-9]*,throughput,\([0-9.eE+-]*\)$/\1/p')
  lat=$(echo "$out" | sed -n 's/^RESULT,[^,]*,[A-Z]*,[^,]*,[0-9]*,latency,\([0-9.eE+-]*\)$/\1/p')
  if [ -z "$thr" ] || [ -z "$lat" ] || echo "$out" | grep -q '^LOSS'; then
    echo "$1 $2 did not finish cleanly:" >&2
    echo "$out" >&2
    exit 1
  fi
  printf '%.0f %.1f\n' "$thr" "$lat"
}

echo "rounds=$rounds size=$size transport=$transport load: $(cut -d' ' -f1-3 /proc/loadavg)"
rounds_alternate "$work" "$rounds" "GATEWAY SPOT" "$kinds"
echo
echo "| pattern | implementation | msgs/s (median) | latency us (median of means) |"
echo "|---|---|---|---|"
rounds_table "$work" "GATEWAY SPOT" "$kinds" 2
