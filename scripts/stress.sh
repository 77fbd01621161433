#!/usr/bin/env bash
# Set-up, then the stress tool's default run: s2 at the reference profile (10,000 connections,
# 1 KB packets, 30 in flight), server and client in separate processes. Extra arguments are
# passed to the tool, e.g. `bash scripts/stress.sh --ccu 1000 --measure 5`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup.sh
exec dotnet run -c Release --project NetZlink.Stress -- --scenario s2 "$@"
