#!/usr/bin/env bash
# Checks the NuGet package end to end: packs NetZlink into artifacts/packages, checks that the
# package carries runtimes/linux-x64/native/libzlink.so, creates a fresh console app in a temp
# directory with its own nuget.config (the local package folder + the default source, and its
# own package cache so no stale NetZlink is reused), adds the package, and sends and receives
# one message over inproc PAIR. Prints "pack-smoke: OK" on success.
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
if ! unzip -l "$package" | grep -q ' runtimes/linux-x64/native/libzlink\.so$'; then
  echo "pack-smoke: $package does not carry runtimes/linux-x64/native/libzlink.so" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
// Sends and receives one message over inproc PAIR through the NetZlink package.
using System.Text;
using NetZlink;

using var context = new Context();
using var server = context.CreateSocket(ZlinkSocketType.Pair);
using var client = context.CreateSocket(ZlinkSocketType.Pair);
server.Bind("inproc://pack-smoke");
client.Connect("inproc://pack-smoke");

client.Send("hello from the package"u8);
var buffer = new byte[64];
int size = server.Receive(buffer);
string text = Encoding.UTF8.GetString(buffer, 0, size);
Console.WriteLine($"received \"{text}\" with libzlink {ZlinkLibrary.Version} from {ZlinkLibrary.LoadedFrom}");
return text == "hello from the package" ? 0 : 1;
CS

# The package alone must be enough: no override of where the native library comes from.
output=$(env -u NETZLINK_NATIVE_LIBRARY dotnet run -c Release)
echo "$output"
case "$output" in
  *"from $work/"*) ;;
  *) echo "pack-smoke: the native library was not loaded from the app's own output" >&2; exit 1 ;;
esac
echo "pack-smoke: OK"
