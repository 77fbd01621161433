#!/usr/bin/env bash
# Checks a libzlink.so as it ships: built for the named architecture, needing nothing beyond glibc
# and libstdc++ (no libzmq, libssl, libcrypto or liburing: those are linked in statically) and
# exporting only zlink_*.
#   x64:   ldd (every library the loader would map, dependencies of dependencies too): only
#          linux-vdso, ld-linux-x86-64, libc, libstdc++, libm, libgcc_s, libpthread, libdl, librt
#   arm64: ldd cannot run an aarch64 loader here, so the NEEDED entries of the dynamic section
#          (aarch64-linux-gnu-readelf -d): the same libraries, ld-linux-aarch64 for the loader
# Usage: scripts/native-lib-check.sh x64|arm64 LIBRARY   (scripts/pack-smoke.sh, native-arm64.sh)
set -euo pipefail
arch=$1
lib=$2
glibc='libc\.so\.6|libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1'
case $arch in
  x64)
    tools="" machine="Advanced Micro Devices X86-64"
    allowed="^(linux-vdso\.so\.1|(/lib64/)?ld-linux-x86-64\.so\.2|$glibc)$"
    deps=$(env -u LD_LIBRARY_PATH ldd "$lib")
    how="ldd" ;;
  arm64)
    tools=aarch64-linux-gnu- machine=AArch64
    allowed="^(ld-linux-aarch64\.so\.1|$glibc)$"
    deps=$(aarch64-linux-gnu-readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
    how="NEEDED" ;;
  *) echo "native-lib-check: unknown architecture '$arch' (x64 or arm64)" >&2; exit 2 ;;
esac
say() { echo "native-lib-check ($arch): $*"; }

got=$("${tools}readelf" -h "$lib" | sed -n 's/^ *Machine: *//p')
if [ "$got" != "$machine" ]; then
  say "$lib is built for '$got', not $machine" >&2
  exit 1
fi
say "$how of $lib ($(stat -c %s "$lib") bytes, $machine):"
echo "$deps"
unexpected=$(echo "$deps" | awk '{print $1}' | grep -Ev "$allowed" || true)
if [ -n "$unexpected" ] || grep -qiE 'not found|zmq|ssl|crypto|uring' <<<"$deps"; then
  say "$lib needs more than glibc and libstdc++: $(echo $unexpected)" >&2
  exit 1
fi
exported=$("${tools}nm" -D --defined-only "$lib" | awk '{print $3}' | grep -v '^zlink_' || true)
if [ -n "$exported" ]; then
  say "$lib exports more than zlink_*: $(echo $exported | cut -c1-300)" >&2
  exit 1
fi
say "dependencies ok (glibc and libstdc++ only, no libzmq, OpenSSL or liburing); exports only zlink_* ($("${tools}nm" -D --defined-only "$lib" | wc -l) symbols)"
