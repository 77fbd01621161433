#!/usr/bin/env bash
# Does every set-up step a bare Debian machine of this kind needs: the apt packages
# (libzmq, the C toolchain, cmake, clang for the fuzz targets), the native libzlink build
# and the .NET restore.
# Safe to run again: each step is skipped or incremental when already done.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

config=${NETZLINK_NATIVE_CONFIG:-Release}
# clang-14 + libclang-rt-14-dev: the fuzz smoke of scripts/test.sh (libFuzzer, ASan, UBSan)
apt_packages=(libzmq3-dev pkg-config cmake g++ make unzip clang-14 libclang-rt-14-dev)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

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
