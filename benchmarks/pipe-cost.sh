#!/usr/bin/env bash
# What a connection costs through the engine's three receive APIs (callback handler, EngineChannel,
# EngineChannel with an IDuplexPipe per connection): managed bytes per connection and echo
# packets/s, at 10,000 connections (or $1) against the stress tool's echo server in another process
# (one process could not hold both ends of 10,000 connections under a 20,000-descriptor limit).
# Usage: bash benchmarks/pipe-cost.sh [connections=10000] [rounds=20]
set -euo pipefail
cd "$(dirname "$0")/.."
port=27190
log=$(mktemp)
dotnet build -c Release NetZlink.Stress -v quiet --nologo >/dev/null
dotnet build -c Release benchmarks/pipe-cost -v quiet --nologo >/dev/null
NetZlink.Stress/bin/Release/net10.0/NetZlink.Stress --role server --port "$port" >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q READY "$log" && break; sleep 0.2; done
benchmarks/pipe-cost/bin/Release/net10.0/PipeCost "tcp://127.0.0.1:$port" "${1:-10000}" "${2:-20}"
