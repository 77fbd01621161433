#!/usr/bin/env bash
# Makes wslay (the WebSocket frame layer under ws:// and wss:// of STREAM sockets) available to
# native/CMakeLists.txt, in the first of these ways that works:
#   static  wslay 1.1.1 from Debian's own source package (apt-get source wslay), built as a
#           static PIC archive with hidden symbols into native/build-wslay/install (include/,
#           lib/libwslay.a); libzlink.so carries it inside and needs no libwslay at run time.
#   dlopen  when the source cannot be fetched (some mirrors serve no source for it): Debian's
#           libwslay-dev (header only used) and libwslay1; libzlink.so then opens libwslay.so.1
#           when a ws:// endpoint is first used and has no link-time dependency on it, so
#           zlink_has("ws") is 0 where libwslay1 is not installed.
# Neither: CMake builds without ws (zlink_has("ws") is 0, ws:// is EPROTONOSUPPORT); this script
# then still exits 0, so setup goes on.
# native/build-wslay/ is ignored by git; its stamp (Debian version + compiler) keys the cache;
# delete the folder to fetch and build again. The deb-src entry apt-get source needs is the one
# scripts/libzmq.sh adds (it runs first in scripts/setup.sh).
# Usage: scripts/wslay.sh   (scripts/setup.sh, fuzz.sh and native-memcheck.sh run it)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/apt-need.sh

dir=native/build-wslay
prefix=$dir/install
stamp=$prefix/netzlink-wslay.stamp
upstream=1.1.1
cflags="-O2 -fPIC -fvisibility=hidden -fstack-protector-strong -D_FORTIFY_SOURCE=2"

source_dir() { find "$dir/src" -mindepth 1 -maxdepth 1 -type d -name 'wslay-*' 2>/dev/null | head -n 1; }
debian_version() { find "$dir/src" -maxdepth 1 -name 'wslay_*.dsc' | sed 's:.*/wslay_\(.*\)\.dsc$:\1:' | head -n 1; }
want() { echo "wslay $(debian_version) $(cc --version | head -n 1) $cflags"; }

fallback() {
  echo "wslay: $1; using Debian's libwslay1 through dlopen instead (libwslay-dev for the header)"
  rm -rf "$prefix"
  apt_need libwslay-dev libwslay1 >/dev/null || echo "wslay: cannot install libwslay-dev libwslay1: ws:// is off"
  exit 0
}

if [ -f "$stamp" ] && [ -f "$prefix/lib/libwslay.a" ] && [ "$(cat "$stamp")" = "$(want)" ]; then
  echo "wslay: cached ($(cat "$stamp"))"
  exit 0
fi
apt_need dpkg-dev cmake make >/dev/null || fallback "cannot install dpkg-dev"
if [ -z "$(source_dir)" ]; then
  rm -rf "$dir/src.tmp"
  mkdir -p "$dir/src.tmp"
  chmod 777 "$dir/src.tmp" # apt's _apt user downloads into it
  (cd "$dir/src.tmp" && apt-get source -qq wslay >fetch.log 2>&1) ||
    fallback "apt-get source wslay failed ($(grep -m1 -E '^E:' "$dir/src.tmp/fetch.log" || echo 'see fetch.log'))"
  rm -rf "$dir/src"
  mv "$dir/src.tmp" "$dir/src"
fi
src=$(source_dir)
[ -n "$src" ] && grep -q "$upstream" <<<"$src" || fallback "the fetched source is not wslay $upstream"
log=$dir/build.log
rm -rf "$dir/build"
if cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=$cflags" \
     -DWSLAY_STATIC=ON -DWSLAY_SHARED=OFF -DWSLAY_TESTS=OFF -DWSLAY_EXAMPLES=OFF \
     -DCMAKE_INSTALL_PREFIX="$root/$prefix" -DINSTALL_LIB_DIR=lib >"$log" 2>&1 &&
   cmake --build "$dir/build" >>"$log" 2>&1 && cmake --install "$dir/build" >>"$log" 2>&1 &&
   [ -f "$prefix/lib/libwslay.a" ]; then
  want >"$stamp"
  echo "wslay: built $prefix/lib/libwslay.a (Debian wslay $(debian_version))"
else
  tail -n 20 "$log" >&2
  fallback "building wslay failed (log: $log)"
fi
