#!/usr/bin/env bash
# Checks the NuGet package end to end: packs NetZlink into artifacts/packages, checks that the
# package carries runtimes/linux-x64/native/libzlink.so and that this library, as unzipped from
# the package, needs nothing beyond glibc and libstdc++ (ldd: only linux-vdso, ld-linux, libc,
# libstdc++, libm, libgcc_s, libpthread, libdl, librt; no libzmq) and exports only zlink_*.
# Then creates a fresh console app in a temp directory with its own nuget.config (the local
# package folder + the default source, and its own package cache so no stale NetZlink is
# reused), adds the package, and sends and receives one message over inproc PAIR and one over
# tcp PAIR (both libzmq sockets), checking that no libzmq.so was mapped into the process:
#   1. with LD_LIBRARY_PATH and NETZLINK_NATIVE_LIBRARY unset;
#   2. the same, in a private mount namespace (unshare -m) where every libzmq.so.5* of the
#      system is hidden under an empty file. Skipped, with one line saying why, when unshare or
#      the bind mount is refused or the system has no libzmq.so.5.
# Prints "pack-smoke: OK" on success.
# Needs native/build/libzlink.so (bash scripts/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [ ! -f native/build/libzlink.so ]; then
  echo "pack-smoke: native/build/libzlink.so is missing; run bash scripts/setup.sh first" >&2
  exit 1
fi

packages="$root/artifacts/packages"
echo "pack-smoke: dotnet pack NetZlink -c Release -o artifacts/packages"
dotnet pack NetZlink -c Release -o "$packages" --nologo -v quiet
version=$(sed -n 's:.*<Version>\(.*\)</Version>.*:\1:p' NetZlink/NetZlink.csproj | head -n 1)
package="$packages/NetZlink.$version.nupkg"
# (the listing is read whole first: grep -q ending the pipe early would kill unzip with SIGPIPE,
# which pipefail would report as a missing file)
listing=$(unzip -Z1 "$package")
if ! grep -qx 'runtimes/linux-x64/native/libzlink\.so' <<<"$listing"; then
  echo "pack-smoke: $package does not carry runtimes/linux-x64/native/libzlink.so" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The packaged library's dependencies: what every glibc Linux x64 has, nothing else.
unzip -q "$package" runtimes/linux-x64/native/libzlink.so -d "$work/unpacked"
packaged=$work/unpacked/runtimes/linux-x64/native/libzlink.so
deps=$(env -u LD_LIBRARY_PATH ldd "$packaged")
echo "pack-smoke: ldd of the packaged libzlink.so ($(stat -c %s "$packaged") bytes):"
echo "$deps"
allowed='^(linux-vdso\.so\.1|(/lib64/)?ld-linux-x86-64\.so\.2|libc\.so\.6|libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1)$'
unexpected=$(echo "$deps" | awk '{print $1}' | grep -Ev "$allowed" || true)
if [ -n "$unexpected" ] || grep -qiE 'not found|zmq' <<<"$deps"; then
  echo "pack-smoke: the packaged libzlink.so needs more than glibc and libstdc++: $(echo $unexpected)" >&2
  exit 1
fi
exported=$(nm -D --defined-only "$packaged" | awk '{print $3}' | grep -v '^zlink_' || true)
if [ -n "$exported" ]; then
  echo "pack-smoke: the packaged libzlink.so exports more than zlink_*: $(echo $exported | cut -c1-300)" >&2
  exit 1
fi
echo "pack-smoke: dependencies ok (glibc and libstdc++ only, no libzmq); exports only zlink_* ($(nm -D --defined-only "$packaged" | wc -l) symbols)"

cat > "$work/nuget.config" <<XML
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <config>
    <add key="globalPackagesFolder" value="$work/packages" />
  </config>
  <packageSources>
    <clear />
    <add key="local" value="$packages" />
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
  </packageSources>
</configuration>
XML

cd "$work"
dotnet new console -n PackSmoke -o app >/dev/null
cd app
dotnet add package NetZlink --version "$version" >/dev/null
cat > Program.cs <<'CS'
// Sends and receives one message over inproc PAIR and one over tcp PAIR (libzmq sockets, built
// into libzlink.so) through the NetZlink package; fails if any libzmq.so is mapped in the process.
using System.Text;
using NetZlink;

using var context = new ZlinkContext();
string text = RoundTrip("inproc://pack-smoke", "hello from the package");
string overTcp = RoundTrip("tcp://127.0.0.1:*", "hello over tcp");
string? systemZmq = File.ReadLines("/proc/self/maps").Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries))
    .Where(f => f.Length >= 6 && Path.GetFileName(f[5]).StartsWith("libzmq")).Select(f => f[5]).FirstOrDefault();
Console.WriteLine($"received \"{text}\" and \"{overTcp}\" with libzlink {ZlinkLibrary.Version} from {ZlinkLibrary.LoadedFrom}; " +
    (systemZmq is null ? "no libzmq.so mapped" : $"{systemZmq} mapped"));
return text == "hello from the package" && overTcp == "hello over tcp" && systemZmq is null ? 0 : 1;

string RoundTrip(string endpoint, string message)
{
    using var server = context.CreateSocket(ZlinkSocketType.Pair);
    using var client = context.CreateSocket(ZlinkSocketType.Pair);
    server.Bind(endpoint);
    client.Connect(server.LastEndpoint);
    client.Send(Encoding.UTF8.GetBytes(message));
    var buffer = new byte[64];
    int size = server.Receive(buffer);
    return Encoding.UTF8.GetString(buffer, 0, size);
}
CS

# The package alone must be enough: no override of where the native library comes from, no
# library path.
check_output() {
  echo "$1"
  case "$1" in
    *"from $work/"*"; no libzmq.so mapped"*) ;;
    *) echo "pack-smoke: the native library was not loaded from the app's own output, or a libzmq.so was ($2)" >&2; exit 1 ;;
  esac
}
output=$(env -u NETZLINK_NATIVE_LIBRARY -u LD_LIBRARY_PATH dotnet run -c Release) ||
  { echo "$output"; echo "pack-smoke: the app failed (LD_LIBRARY_PATH unset)" >&2; exit 1; }
check_output "$output" "LD_LIBRARY_PATH unset"

# Again with the system's libzmq out of reach: every libzmq.so.5* (the real files behind the
# links) under an empty file, in a mount namespace of this command only.
dll=$(find "$work/app/bin/Release" -name PackSmoke.dll | head -n 1)
mapfile -t zmq_files < <(for f in /usr/lib/x86_64-linux-gnu/libzmq.so.5* /lib/x86_64-linux-gnu/libzmq.so.5*; do
  [ -e "$f" ] && readlink -f "$f"; done | sort -u)
: >"$work/empty"; : >"$work/probe"
ns=(unshare -m --propagation private)
[ "$(id -u)" -eq 0 ] || ns=(unshare -r -m --propagation private)
if [ ${#zmq_files[@]} -eq 0 ]; then
  echo "pack-smoke: hidden-libzmq run skipped: this machine has no libzmq.so.5 to hide (the run above had none either)"
elif ! why=$("${ns[@]}" mount --bind "$work/empty" "$work/probe" 2>&1); then
  echo "pack-smoke: hidden-libzmq run skipped: ${ns[*]} with a bind mount was refused ($(echo "$why" | head -n 1))"
else
  output=$("${ns[@]}" sh -c '
    empty=$1 dll=$2; shift 2
    for f in "$@"; do mount --bind "$empty" "$f" && [ ! -s "$f" ] || { echo "could not hide $f"; exit 1; }; done
    exec env -u NETZLINK_NATIVE_LIBRARY -u LD_LIBRARY_PATH dotnet "$dll"' sh "$work/empty" "$dll" "${zmq_files[@]}" 2>&1) ||
    { echo "$output"; echo "pack-smoke: the app failed with the system libzmq hidden (${zmq_files[*]})" >&2; exit 1; }
  check_output "$output" "system libzmq hidden"
  echo "pack-smoke: ran with the system libzmq hidden (${zmq_files[*]} under an empty file, ${ns[*]})"
fi
echo "pack-smoke: OK"
