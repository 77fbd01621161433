#!/usr/bin/env bash
# The whole test suite: set-up, the native library's own C tests (ctest), then the
# .NET tests. This is the command the README gives and .ci/run calls.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup.sh

echo "== native tests (ctest)"
ctest --test-dir native/build --output-on-failure --timeout 300

echo "== .NET tests"
dotnet build NetZlink.sln -c Release --nologo -v quiet
dotnet test NetZlink.sln -c Release --no-build --nologo \
  --logger "console;verbosity=normal" -- NUnit.ConsoleOut=1
