#!/usr/bin/env bash
# linux-arm64: cross-builds libzlink.so for aarch64 on this x86-64 Debian machine and runs its
# ctest suite under qemu-user-static.
#   - installs what it needs through scripts/apt-need.sh: Debian's aarch64 cross compilers,
#     qemu-user-static, and (multiarch: dpkg --add-architecture arm64 once) the arm64 builds of
#     libssl-dev, liburing-dev and libstdc++6, so OpenSSL 3 and liburing go into the library
#     statically exactly as on x64;
#   - builds the same patched libzmq as x64 with "scripts/libzmq.sh arm64"
#     (native/build-libzmq-arm64/, cached like the x64 one);
#   - configures native/ with native/cmake/aarch64-linux-gnu.cmake into native/build-arm64/
#     and builds it;
#   - checks the library as scripts/pack-smoke.sh checks the x64 one (scripts/native-lib-check.sh:
#     an AArch64 ELF whose NEEDED entries are glibc's and libstdc++'s only, exporting only zlink_*);
#   - runs ctest under qemu-aarch64-static (the toolchain file's emulator).
# Usage: scripts/native-arm64.sh [test|build]
#   test (default; scripts/test.sh runs it): build, check, then every ctest entry of
#     native/build-arm64 under qemu (35 entries, under a minute on 2 cores: docs/native.md)
#   build: build and check only
# The last line is "native-arm64: PASS ..." or "native-arm64: FAIL ...".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

mode=${1:-test}
case $mode in test | build) ;; *) echo "usage: $0 [test|build]" >&2; exit 2 ;; esac
config=${NETZLINK_NATIVE_CONFIG:-Release}
build=native/build-arm64
start=$SECONDS

source scripts/apt-need.sh
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "native-arm64: dpkg --add-architecture arm64 (Debian's arm64 packages next to the amd64 ones)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo dpkg --add-architecture arm64
fi
# (apt_need runs apt-get update before installing, which reads the arm64 package lists)
apt_need gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static \
  libssl-dev:arm64 liburing-dev:arm64 libstdc++6:arm64 cmake make patch

bash scripts/libzmq.sh arm64

echo "native-arm64: building native/ for linux-arm64 ($config) into $build"
mkdir -p "$build"
cmake -S native -B "$build" -DCMAKE_BUILD_TYPE="$config" \
  -DCMAKE_TOOLCHAIN_FILE="$root/native/cmake/aarch64-linux-gnu.cmake" \
  -DZLINK_LIBZMQ_PREFIX="$root/native/build-libzmq-arm64/install" >"$build/netzlink-configure.log" 2>&1 ||
  { cat "$build/netzlink-configure.log" >&2; echo "native-arm64: FAIL (configure)"; exit 1; }
grep -E '^-- (io_uring|tls://|interop|libzmq)' "$build/netzlink-configure.log" | sed 's/^-- /native-arm64: /'
cmake --build "$build" -j2 >"$build/netzlink-build.log" 2>&1 ||
  { tail -n 30 "$build/netzlink-build.log" >&2; echo "native-arm64: FAIL (build; log: $build/netzlink-build.log)"; exit 1; }
echo "native-arm64: built in $((SECONDS - start)) s"

bash scripts/native-lib-check.sh arm64 "$build/libzlink.so" ||
  { echo "native-arm64: FAIL (library check)"; exit 1; }
[ "$mode" = build ] && { echo "native-arm64: PASS (built and checked; no tests run)"; exit 0; }

tests_start=$SECONDS
echo "native-arm64: ctest under qemu-aarch64-static"
ctest --test-dir "$build" --output-on-failure && rc=0 || rc=$?
echo "native-arm64: ctest took $((SECONDS - tests_start)) s"
if [ "$rc" -eq 0 ]; then
  echo "native-arm64: PASS ($((SECONDS - start)) s in all)"
else
  echo "native-arm64: FAIL (ctest exit $rc)"
fi
exit "$rc"
