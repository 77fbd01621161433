#!/usr/bin/env bash
# Does every set-up step a bare Debian machine of this kind needs: the apt packages
# (libzmq, the C toolchain, cmake, clang for the fuzz targets), the native libzlink build
# and the .NET restore.
# Safe to run again: each step is skipped or incremental when already done.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

config=${NETZLINK_NATIVE_CONFIG:-Release}
# clang-14 + libclang-rt-14-dev: the fuzz smoke of scripts/test.sh (libFuzzer, ASan, UBSan);
# liburing-dev: the STREAM engine's io_uring backend (linked statically)
# libssl-dev: tls:// on STREAM sockets (OpenSSL 3, linked dynamically)
apt_packages=(libzmq3-dev pkg-config cmake g++ make unzip clang-14 libclang-rt-14-dev liburing-dev libssl-dev)

source scripts/apt-need.sh
apt_need "${apt_packages[@]}"

if ! command -v dotnet >/dev/null 2>&1; then
  echo "setup: the .NET SDK (see global.json) is not on PATH; install it first" >&2
  exit 1
fi

echo "setup: building native/ ($config)"
cmake -S native -B native/build -DCMAKE_BUILD_TYPE="$config" >/dev/null
cmake --build native/build -j"$(nproc)"

echo "setup: dotnet restore"
dotnet restore NetZlink.sln --nologo -v quiet
echo "setup: done"
