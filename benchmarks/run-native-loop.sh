#!/usr/bin/env bash
# Builds benchmarks/native/inproc_loop.c with cc against native/build/libzlink.so (headers from
# native/include, the library found through an rpath, so no LD_LIBRARY_PATH is needed) into
# benchmarks/native/build/inproc_loop, then runs it with the given arguments.
#   bash benchmarks/run-native-loop.sh [iterations]     build if needed, then run
#   bash benchmarks/run-native-loop.sh --build-only     build if needed
# Needs native/build/libzlink.so (bash scripts/setup.sh). native/CMakeLists.txt is not involved.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
library_dir="$root/native/build"
source_file="$root/benchmarks/native/inproc_loop.c"
binary="$root/benchmarks/native/build/inproc_loop"

if [ ! -f "$library_dir/libzlink.so" ]; then
  echo "run-native-loop: $library_dir/libzlink.so is missing; run bash scripts/setup.sh first" >&2
  exit 1
fi

if [ ! -x "$binary" ] || [ "$source_file" -nt "$binary" ] || [ "$root/native/include/zlink.h" -nt "$binary" ]; then
  mkdir -p "$(dirname "$binary")"
  ${CC:-cc} -O2 -std=c11 -Wall -Wextra -Werror \
    -I"$root/native/include" "$source_file" -o "$binary" \
    -L"$library_dir" -lzlink -Wl,-rpath,"$library_dir"
fi

if [ "${1:-}" = "--build-only" ]; then
  exit 0
fi
exec "$binary" "$@"
