#!/usr/bin/env bash
# Does every set-up step a bare Debian machine of this kind needs: the apt packages (the C
# and C++ toolchain, cmake, clang for the fuzz targets), the libzmq that libzlink.so carries
# (built once from Debian's zeromq3 source by scripts/libzmq.sh, then cached), the native
# libzlink build and the .NET restore.
# Safe to run again: each step is skipped or incremental when already done.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

config=${NETZLINK_NATIVE_CONFIG:-Release}
# clang-14 + libclang-rt-14-dev: the fuzz smoke of scripts/test.sh (libFuzzer, ASan, UBSan);
# dpkg-dev: apt-get source (scripts/libzmq.sh); unzip: scripts/pack-smoke.sh;
# liburing-dev: the STREAM engine's io_uring backend (linked statically)
# libssl-dev: tls://, ws:// and wss:// on STREAM sockets (OpenSSL 3, linked statically into
# libzlink.so; see native/CMakeLists.txt)
# python3-websockets, openssl: peers of the native interop tests (native/tests/interop/: a
# WebSocket client and server nobody here wrote, openssl s_client/s_server and the certificates)
# and of the WebSocket conformance script (scripts/ws-conformance.py)
apt_packages=(cmake g++ make dpkg-dev unzip clang-14 libclang-rt-14-dev liburing-dev libssl-dev
  python3 python3-websockets openssl)

source scripts/apt-need.sh
apt_need "${apt_packages[@]}"

if ! command -v dotnet >/dev/null 2>&1; then
  echo "setup: the .NET SDK (see global.json) is not on PATH; install it first" >&2
  exit 1
fi

# Node's ws package, the other WebSocket peer of the interop tests, into
# native/tests/interop/node_modules (git-ignored) from the npm registry, when node and npm are
# there (the test skips without it)
if command -v npm >/dev/null 2>&1 && [ ! -f native/tests/interop/node_modules/ws/package.json ]; then
  echo "setup: npm install (native/tests/interop: ws)"
  npm install --prefix native/tests/interop --no-audit --no-fund --no-package-lock >/dev/null ||
    echo "setup: npm install failed; interop_ws_node will be skipped" >&2
fi

echo "setup: libzmq (static, built into libzlink.so)"
bash scripts/libzmq.sh

echo "setup: building native/ ($config)"
cmake -S native -B native/build -DCMAKE_BUILD_TYPE="$config" >/dev/null
cmake --build native/build -j"$(nproc)"

echo "setup: dotnet restore"
dotnet restore NetZlink.sln --nologo -v quiet
echo "setup: done"
