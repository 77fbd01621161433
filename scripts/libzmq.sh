#!/usr/bin/env bash
# Builds the libzmq that libzlink.so carries inside it: libzmq 4.3.4 from Debian's own zeromq3
# source package (apt-get source, Debian's patches applied), as a static PIC archive configured
# for what libzlink offers: no libsodium (CURVE through libzmq's bundled tweetnacl), no PGM, NORM,
# GSSAPI, libbsd, WebSocket or draft API, no tests, docs or tools. native/CMakeLists.txt links it
# into libzlink.so with its symbols hidden, so the library needs nothing beyond glibc and libstdc++.
#
# ZMP: the socket types speak zlink 1.3's ZMP v1 instead of ZMTP. NetZlink's engine for it
# (native/libzmq/zmp_*.{hpp,cpp,h}) is copied into a copy of the unpacked source, and
# native/libzmq/zmp.patch (a few lines: libzmq's tcp/ipc connecter and listener create that engine
# in place of zmtp_engine_t, the ZMP_METADATA option, the two files in libzmq's CMake source list)
# is applied there before the build. See docs/native.md#zmp-on-the-libzmq-socket-types.
# native/libzmq/speed.patch follows it: fewer system calls per message in libzmq's I/O and
# application threads (docs/native.md#fewer-system-calls-per-message). native/libzmq/peers.patch
# builds the peer table (zmp_peers.*) and lets a monitor event carry the peer's routing id
# (docs/native.md#peers-of-the-zmp-socket-types).
#
# Everything lives in native/build-libzmq/ (ignored by git; shared by native/build, build-asan
# and build-fuzz): src/ (the unpacked source, kept as Debian ships it), zmp-src/ (the copy that
# is patched and built), build/ (CMake's build), install/ (include/zmq.h, lib/libzmq.a) and
# install/netzlink-libzmq.stamp (the source version, the settings and the SHA-256 of
# native/libzmq/, so a change to the engine or the patch builds again). A build whose stamp
# matches is reused; delete native/build-libzmq/ to fetch and build again.
#
# Fetching needs a deb-src entry for Debian's archive: when apt has none for zeromq3, this adds
# /etc/apt/sources.list.d/netzlink-deb-src.sources (or .list), a copy of the entry libzmq5 comes
# from with "deb-src" for "deb", then runs apt-get update. That, and installing dpkg-dev (which
# apt-get source unpacks with), needs root or sudo.
#
# linux-arm64: "scripts/libzmq.sh arm64" builds the same patched source with Debian's aarch64
# cross compilers through native/cmake/aarch64-linux-gnu.cmake (CMake's try_run checks run under
# qemu-user-static) into native/build-libzmq-arm64/ (zmp-src/, build/, install/, its own stamp);
# the fetched source stays in native/build-libzmq/src/ and is shared. scripts/native-arm64.sh
# runs it.
# Usage: scripts/libzmq.sh [x64|arm64]   (default x64: scripts/setup.sh, fuzz.sh and
# native-memcheck.sh run it)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

target=${1:-x64}
# srcdir: where Debian's source is fetched to (one copy for every target); dir: the target's build
srcdir=native/build-libzmq
case $target in
  x64) dir=$srcdir; cxx=c++; toolchain="" ;;
  arm64) dir=native/build-libzmq-arm64; cxx=aarch64-linux-gnu-g++; toolchain=native/cmake/aarch64-linux-gnu.cmake ;;
  *) echo "libzmq: unknown target '$target' (x64 or arm64)" >&2; exit 2 ;;
esac
prefix=$dir/install
stamp=$prefix/netzlink-libzmq.stamp
upstream=4.3.4
# libzmq's CMake options: static PIC archive only; CURVE kept (Debian's libzmq has it through
# libsodium, this one through libzmq's bundled tweetnacl); every optional external dependency
# off; no draft API (as Debian's build: libzlink uses none of it). -O2 and the hardening flags
# Debian builds its own libzmq with; no NDEBUG (Debian's build keeps asserts).
# Three things Debian's autotools build has and libzmq 4.3.4's CMake build lacks, given here:
#   -fvisibility=hidden (libzmq's configure adds it): lets GCC inline libzmq's own functions in
#     PIC code; without it an inproc PAIR send + receive of 64 bytes took about 8% longer than
#     with Debian's libzmq. zmq.h marks the zmq_* API visible anyway; the link hides it.
#   -DZMQ_HAVE_GETRANDOM (the CMake check runs, but its platform.hpp template has no line for
#     the result): without it tweetnacl holds a /dev/urandom descriptor while a context lives,
#     and zlink_ctx_new would retry opening it once a second forever when no descriptor is free.
#   -DHAVE_POSIX_MEMALIGN (not checked by CMake at all): the message pipes' chunks aligned to
#     cache lines, as in Debian's build.
# ZMQ_CV_IMPL=pthreads: libzmq's condition variable (used only by the thread-safe draft socket
# types) on pthreads rather than std::condition_variable, whose GCC 12 symbol would make
# libzlink.so need libstdc++ 12 (GLIBCXX_3.4.30) where libstdc++ 11 does otherwise.
cmake_args=(
  -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fvisibility=hidden -DZMQ_HAVE_GETRANDOM -DHAVE_POSIX_MEMALIGN"
  "-DCMAKE_C_FLAGS_RELEASE=-O2 -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fvisibility=hidden -DZMQ_HAVE_GETRANDOM -DHAVE_POSIX_MEMALIGN"
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DBUILD_SHARED=OFF -DBUILD_STATIC=ON
  -DBUILD_TESTS=OFF -DWITH_DOCS=OFF -DENABLE_CPACK=OFF -DENABLE_PRECOMPILED=OFF
  -DENABLE_DRAFTS=OFF -DENABLE_WS=OFF
  -DENABLE_CURVE=ON -DWITH_LIBSODIUM=OFF
  -DWITH_OPENPGM=OFF -DWITH_NORM=OFF -DWITH_VMCI=OFF -DWITH_LIBBSD=OFF
  -DZMQ_CV_IMPL=pthreads
  -DCMAKE_INSTALL_LIBDIR=lib
)

if [ -n "$toolchain" ]; then
  cmake_args+=("-DCMAKE_TOOLCHAIN_FILE=$root/$toolchain")
fi

source scripts/apt-need.sh
apt_need cmake g++ make
[ "$target" = x64 ] || apt_need g++-aarch64-linux-gnu qemu-user-static

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

have_deb_src() { apt-cache showsrc zeromq3 2>/dev/null | grep -q '^Package: zeromq3$'; }

# A deb-src copy of the apt entry that libzmq5's candidate comes from (same URI, suites,
# components and Signed-By, so apt sees no conflicting options for that source).
add_deb_src() {
  local uri
  uri=$(apt-cache madison libzmq5 2>/dev/null | awk -F'|' 'NR == 1 { split($3, a, " "); print a[1] }')
  if [ -z "$uri" ]; then
    echo "libzmq: apt knows no libzmq5, so which Debian archive to take zeromq3's source from is unknown" >&2
    return 1
  fi
  local deb822 oneline
  # deb822 stanzas (*.sources) whose Types has deb and whose URIs has the archive
  deb822=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v uri="$uri" '
    BEGIN { RS = "" }
    {
      n = split($0, L, "\n"); deb = 0; hit = 0
      for (i = 1; i <= n; i++) {
        if (L[i] ~ /^Types:/ && (" " substr(L[i], 7) " ") ~ /[ \t]deb[ \t]/) deb = 1
        if (L[i] ~ /^URIs:/) {
          m = split(substr(L[i], 6), U, /[ \t]+/)
          for (j = 1; j <= m; j++) { u = U[j]; sub(/\/$/, "", u); if (u == uri) hit = 1 }
        }
      }
      if (!deb || !hit) next
      for (i = 1; i <= n; i++) {
        if (L[i] ~ /^#/) continue
        if (L[i] ~ /^Types:/) L[i] = "Types: deb-src"
        print L[i]
      }
      print ""
    }')
  # one-line entries (sources.list, *.list): "deb [options] URI suite components"
  oneline=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v uri="$uri" '
    $1 == "deb" { for (i = 2; i <= NF; i++) { u = $i; sub(/\/$/, "", u); if (u == uri) { $1 = "deb-src"; print; next } } }')
  local file
  if [ -n "$deb822" ]; then
    file=/etc/apt/sources.list.d/netzlink-deb-src.sources
    printf '# Added by NetZlink scripts/libzmq.sh: Debian source packages (apt-get source zeromq3)\n%s\n' "$deb822" | $sudo tee "$file" >/dev/null
  elif [ -n "$oneline" ]; then
    file=/etc/apt/sources.list.d/netzlink-deb-src.list
    printf '# Added by NetZlink scripts/libzmq.sh: Debian source packages (apt-get source zeromq3)\n%s\n' "$oneline" | $sudo tee "$file" >/dev/null
  else
    echo "libzmq: no apt entry for $uri found to copy as deb-src" >&2
    return 1
  fi
  echo "libzmq: added $file (deb-src for $uri); apt-get update"
  $sudo apt-get update -qq
}

source_dir() { find "$srcdir/src" -mindepth 1 -maxdepth 1 -type d -name 'zeromq3-*' 2>/dev/null | head -n 1; }

fetch() {
  if [ -n "$(source_dir)" ]; then return 0; fi
  apt_need dpkg-dev
  if ! have_deb_src; then
    add_deb_src || return 1
    have_deb_src || { echo "libzmq: apt still has no source for zeromq3 after adding deb-src" >&2; return 1; }
  fi
  echo "libzmq: fetching Debian's zeromq3 source into $srcdir/src (apt-get source)"
  rm -rf "$srcdir/src.tmp"
  mkdir -p "$srcdir/src.tmp"
  # apt's _apt user downloads into the directory when it can write there (no "unsandboxed" warning)
  chmod 777 "$srcdir/src.tmp"
  (cd "$srcdir/src.tmp" && apt-get source -qq zeromq3 >fetch.log 2>&1) ||
    { cat "$srcdir/src.tmp/fetch.log" >&2; echo "libzmq: apt-get source zeromq3 failed" >&2; return 1; }
  chmod 755 "$srcdir/src.tmp"
  rm -rf "$srcdir/src"
  mv "$srcdir/src.tmp" "$srcdir/src"
}

# the Debian version of the unpacked source (from its .dsc) and libzmq's own version (zmq.h)
debian_version() { find "$srcdir/src" -maxdepth 1 -name 'zeromq3_*.dsc' | sed 's:.*/zeromq3_\(.*\)\.dsc$:\1:' | head -n 1; }
zmq_version() {
  awk '/^#define ZMQ_VERSION_(MAJOR|MINOR|PATCH)/ { v[$2] = $3 } END { print v["ZMQ_VERSION_MAJOR"] "." v["ZMQ_VERSION_MINOR"] "." v["ZMQ_VERSION_PATCH"] }' "$1/include/zmq.h"
}

# the engine's sources and the patch (what goes into the build; zmp_fuzz.cpp is the fuzz
# target's), as one hash of file names and contents
zmp_dir=native/libzmq
zmp_files=(zmp.patch speed.patch zmp_codec.hpp zmp_codec.cpp zmp_engine.hpp zmp_engine.cpp zmp_transport.h)
# the peer table and the routing id of monitor events (docs/native.md#peers-of-the-zmp-socket-types)
zmp_files+=(peers.patch zmp_peers.h zmp_peers.hpp zmp_peers.cpp)
# a ROUTER's CONNECT_ROUTING_ID naming a peer it still has: refused or handed over, no abort
zmp_files+=(router-connect-id.patch)
# the reason of a ZMP connection's DISCONNECTED event (docs/zlink-abi.md#monitoring)
zmp_files+=(reason.patch)
# the message path's per-message costs: msg_t's accessors inline, a metadata reference handed
# to a message without an atomic add (docs/native.md#the-router-path-per-message)
zmp_files+=(hotpath.patch)
zmp_hash() {
  (cd "$zmp_dir" && sha256sum "${zmp_files[@]}") | sha256sum | cut -c1-16
}

# what a build depends on besides the source: the target's compiler, the toolchain file's
# contents (its path differs from clone to clone) and the options
settings() {
  local tc=""
  [ -z "$toolchain" ] || tc=" toolchain $(cat "$toolchain" "$zmp_dir/cross-run-checks.patch" | sha256sum | cut -c1-16)"
  echo "zmp $(zmp_hash) $($cxx --version | head -n 1)$tc ${cmake_args[*]//$root\//}"
}

start=$SECONDS
if [ -f "$stamp" ] && [ -f "$prefix/lib/libzmq.a" ] && [ -n "$(source_dir)" ]; then
  want="zeromq3 $(debian_version) $(settings)"
  if [ "$(cat "$stamp")" = "$want" ]; then
    echo "libzmq: cached (zeromq3 $(debian_version), $prefix/lib/libzmq.a)"
    exit 0
  fi
  echo "libzmq: the cached build's settings differ from this script's; building again"
fi

fetch
src=$(source_dir)
version=$(zmq_version "$src")
if [ "$version" != "$upstream" ]; then
  echo "libzmq: $src is libzmq $version, not $upstream; delete $srcdir and check which zeromq3 apt offers" >&2
  exit 1
fi
want="zeromq3 $(debian_version) $(settings)"

# a fresh copy of the source with NetZlink's ZMP engine and patch in it
apt_need patch
patched=$dir/zmp-src
mkdir -p "$dir"
rm -rf "$patched"
cp -a "$src" "$patched"
for f in "${zmp_files[@]}"; do
  case $f in *.hpp | *.cpp | *.h) cp "$zmp_dir/$f" "$patched/src/" ;; esac
done
# the patches: the *.patch entries of zmp_files, in their order (one list), then the cross one
patches=()
for f in "${zmp_files[@]}"; do
  case $f in *.patch) patches+=("$f") ;; esac
done
[ -z "$toolchain" ] || patches+=(cross-run-checks.patch)
for p in "${patches[@]}"; do
  if ! patch -d "$patched" -p1 --quiet --no-backup-if-mismatch <"$zmp_dir/$p"; then
    echo "libzmq: $zmp_dir/$p does not apply to $src" >&2
    exit 1
  fi
done
src=$patched

echo "libzmq: configuring libzmq $version for $target (Debian zeromq3 $(debian_version)) with NetZlink's ZMP engine: static PIC, CURVE through tweetnacl; no libsodium, PGM, NORM, GSSAPI, drafts"
rm -rf "$dir/build" "$prefix"
mkdir -p "$dir/build"
log=$dir/build.log
if ! cmake -S "$src" -B "$dir/build" "${cmake_args[@]}" -DCMAKE_INSTALL_PREFIX="$root/$prefix" >"$log" 2>&1; then
  tail -n 30 "$log" >&2; echo "libzmq: configure failed (log: $log)" >&2; exit 1
fi
jobs=$(nproc)
echo "libzmq: building ($jobs jobs; a minute or two on 2 cores; log: $log)"
if ! cmake --build "$dir/build" -j"$jobs" >>"$log" 2>&1 || ! cmake --install "$dir/build" >>"$log" 2>&1; then
  tail -n 30 "$log" >&2; echo "libzmq: build failed (log: $log)" >&2; exit 1
fi
# A cross build must find what the native one finds (the run checks ran under the emulator):
# the same ZMQ_HAVE_* in platform.hpp, when the x64 build is there to compare with.
if [ "$target" != x64 ] && [ -f "$srcdir/build/platform.hpp" ]; then
  if ! differ=$(diff <(grep '^#define ZMQ_HAVE_' "$srcdir/build/platform.hpp") \
                     <(grep '^#define ZMQ_HAVE_' "$dir/build/platform.hpp")); then
    echo "libzmq: the $target build's platform.hpp differs from the x64 build's:" >&2
    echo "$differ" >&2
    exit 1
  fi
fi
echo "$want" >"$stamp"
echo "libzmq: built in $((SECONDS - start)) s: $prefix/lib/libzmq.a ($(du -k "$prefix/lib/libzmq.a" | cut -f1) KB)"
