#!/usr/bin/env bash
# Checks the NuGet package end to end: packs NetZlink into artifacts/packages, checks that the
# package carries runtimes/linux-x64/native/libzlink.so (and runtimes/linux-arm64/native/ when
# native/build-arm64 has one: scripts/native-arm64.sh) and that each library, as unzipped from
# the package, is built for its architecture, needs nothing beyond glibc and libstdc++ and
# exports only zlink_* (scripts/native-lib-check.sh: ldd on x64, the NEEDED entries on arm64).
# Then creates a fresh console app in a temp directory with its own nuget.config (the local
# package folder + the default source, and its own package cache so no stale NetZlink is
# reused), adds the package, and sends and receives one message over inproc PAIR and one over
# tcp PAIR (both libzmq sockets), checking that no libzmq.so was mapped into the process:
#   1. with LD_LIBRARY_PATH and NETZLINK_NATIVE_LIBRARY unset;
#   2. the same, in a private mount namespace (unshare -m) where every libzmq.so.5* of the
#      system is hidden under an empty file. Skipped, with one line saying why, when unshare or
#      the bind mount is refused or the system has no libzmq.so.5.
#   3. linux-arm64, when the package carries it: the same app published self-contained for
#      linux-arm64 (dotnet publish -r linux-arm64 --self-contained; the runtime pack comes from
#      the package source), run under qemu-aarch64-static, which finds the arm64 glibc and
#      libstdc++ of Debian's multiarch packages that native-arm64.sh installs. The app must say
#      it ran as Arm64 with the libzlink.so published next to it.
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
rids=(linux-x64)
if [ -f native/build-arm64/libzlink.so ]; then
  rids+=(linux-arm64)
else
  echo "pack-smoke: linux-arm64 not packed or run: no native/build-arm64/libzlink.so (bash scripts/native-arm64.sh builds it)"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Each packaged library: its architecture, its dependencies (what every glibc Linux of that
# architecture has, nothing else) and its exports.
for rid in "${rids[@]}"; do
  if ! grep -qx "runtimes/$rid/native/libzlink\.so" <<<"$listing"; then
    echo "pack-smoke: $package does not carry runtimes/$rid/native/libzlink.so" >&2
    exit 1
  fi
  unzip -q "$package" "runtimes/$rid/native/libzlink.so" -d "$work/unpacked"
  bash scripts/native-lib-check.sh "${rid#linux-}" "$work/unpacked/runtimes/$rid/native/libzlink.so" |
    sed 's/^native-lib-check/pack-smoke: packaged library/'
done

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
// into libzlink.so) through the NetZlink package, then one more over tcp with a receive that
// waits in the binding's epoll reactor (whose struct epoll_event differs between x64 and arm64);
// fails if any libzmq.so is mapped in the process.
using System.Text;
using NetZlink;

using var context = new ZlinkContext();
string text = RoundTrip("inproc://pack-smoke", "hello from the package");
string overTcp = RoundTrip("tcp://127.0.0.1:*", "hello over tcp");
string awaited = await RoundTripAsync("tcp://127.0.0.1:*", "hello, awaited");
string? systemZmq = File.ReadLines("/proc/self/maps").Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries))
    .Where(f => f.Length >= 6 && Path.GetFileName(f[5]).StartsWith("libzmq")).Select(f => f[5]).FirstOrDefault();
Console.WriteLine($"{System.Runtime.InteropServices.RuntimeInformation.ProcessArchitecture}: " +
    $"received \"{text}\", \"{overTcp}\" and \"{awaited}\" with libzlink {ZlinkLibrary.Version} from {ZlinkLibrary.LoadedFrom}; " +
    (systemZmq is null ? "no libzmq.so mapped" : $"{systemZmq} mapped"));
return text == "hello from the package" && overTcp == "hello over tcp" && awaited == "hello, awaited" && systemZmq is null ? 0 : 1;

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

async Task<string> RoundTripAsync(string endpoint, string message)
{
    using var server = context.CreateSocket(ZlinkSocketType.Pair);
    using var client = context.CreateSocket(ZlinkSocketType.Pair);
    server.Bind(endpoint);
    client.Connect(server.LastEndpoint);
    using var patience = new CancellationTokenSource(TimeSpan.FromSeconds(30));
    var buffer = new byte[64];
    ValueTask<int> receiving = server.ReceiveAsync(buffer, patience.Token); // nothing there yet: it waits
    await client.SendAsync(Encoding.UTF8.GetBytes(message), cancellationToken: patience.Token);
    int size = await receiving;
    return Encoding.UTF8.GetString(buffer, 0, size);
}
CS

# The package alone must be enough: no override of where the native library comes from, no
# library path.
# check_output OUTPUT WHAT [ARCH [DIR]]: the app ran as ARCH (X64) with the library from DIR
check_output() {
  echo "$1"
  case "$1" in
    "${3:-X64}: "*"from ${4:-$work/}"*"; no libzmq.so mapped"*) ;;
    *) echo "pack-smoke: the app did not run as ${3:-X64}, the native library was not loaded from the app's own output, or a libzmq.so was ($2)" >&2; exit 1 ;;
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

# linux-arm64: the app published self-contained for linux-arm64, run under qemu-user. Invariant
# globalization: the arm64 ICU is not installed here (an app on a real arm64 machine has its own).
if [[ " ${rids[*]} " == *" linux-arm64 "* ]]; then
  echo "pack-smoke: dotnet publish -r linux-arm64 --self-contained"
  publish_start=$SECONDS
  dotnet publish -c Release -r linux-arm64 --self-contained -p:InvariantGlobalization=true \
    -o "$work/arm64" --nologo -v quiet >"$work/publish.log" 2>&1 ||
    { cat "$work/publish.log"; echo "pack-smoke: dotnet publish -r linux-arm64 failed" >&2; exit 1; }
  [ -f "$work/arm64/libzlink.so" ] ||
    { echo "pack-smoke: the linux-arm64 publish has no libzlink.so next to the app" >&2; exit 1; }
  run_start=$SECONDS
  output=$(env -u NETZLINK_NATIVE_LIBRARY -u LD_LIBRARY_PATH -u QEMU_LD_PREFIX qemu-aarch64-static "$work/arm64/PackSmoke" 2>&1) ||
    { echo "$output"; echo "pack-smoke: the linux-arm64 app failed under qemu-aarch64-static" >&2; exit 1; }
  check_output "$output" "linux-arm64 under qemu" Arm64 "$work/arm64/libzlink.so"
  echo "pack-smoke: linux-arm64 app ran under qemu-aarch64-static (publish $((run_start - publish_start)) s, run $((SECONDS - run_start)) s)"
fi
echo "pack-smoke: OK"
