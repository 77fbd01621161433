#!/usr/bin/env bash
# Set-up, a Release build, then `NetZlink.Stress compare`: s0, s1 and s2 on the netzlink, dotnet
# and c-epoll (native/build/bench/limit_echo) stacks with the same flags, each run a separate
# server and client process, and DIR/report.md + DIR/report.html. Without arguments it runs the
# reference profile (ccu 10000, 10 s measured); arguments replace that, e.g.
#   bash scripts/compare.sh --out /tmp/cmp --ccu 1000 --warmup 2 --measure 5
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup.sh
cmake --build native/build --target limit_echo -j2
dotnet build NetZlink.Stress -c Release --nologo -v quiet
exec dotnet NetZlink.Stress/bin/Release/net10.0/NetZlink.Stress.dll compare "$@"
