// Issue 23: one route to native. Every file of NetZlink outside Interop/ reaches the native
// library through Interop.Native; the raw declarations (NativeMethods, LibcMethods) are named only
// inside Interop/. The async runtime lives in NetZlink/Async.
using System.Text.RegularExpressions;

namespace NetZlink.Tests.Interop;

[TestFixture]
public sealed partial class NativeRouteTests
{
    private static string Library => Path.Combine(RepositoryRoot.Path, "NetZlink");

    [Test]
    public void NoFileOutsideInterop_NamesNativeMethodsOrLibcMethods()
    {
        string interop = Path.Combine(Library, "Interop") + Path.DirectorySeparatorChar;
        var offenders = new List<string>();
        int scanned = 0;
        foreach (string file in Directory.EnumerateFiles(Library, "*.cs", SearchOption.AllDirectories))
        {
            string relative = Path.GetRelativePath(Library, file);
            if (file.StartsWith(interop, StringComparison.Ordinal) || relative.StartsWith("bin", StringComparison.Ordinal) || relative.StartsWith("obj", StringComparison.Ordinal))
            {
                continue;
            }

            scanned++;
            string[] lines = File.ReadAllLines(file);
            for (int i = 0; i < lines.Length; i++)
            {
                if (NamesRawDeclarations(lines[i]))
                {
                    offenders.Add($"NetZlink/{relative.Replace('\\', '/')}:{i + 1}: {lines[i].Trim()}");
                }
            }
        }

        Assert.That(scanned, Is.GreaterThan(50), "the scan found NetZlink's sources");
        Assert.That(offenders, Is.Empty, "outside NetZlink/Interop, call Interop.Native (add a wrapper there), never NativeMethods or LibcMethods");
    }

    [Test]
    public void TheScan_CatchesACallAndIgnoresOtherNames()
    {
        Assert.Multiple(() =>
        {
            Assert.That(NamesRawDeclarations("int rc = NativeMethods.zlink_send(s, p, n, 0);"), Is.True);
            Assert.That(NamesRawDeclarations("_ = LibcMethods.close(fd);"), Is.True);
            Assert.That(NamesRawDeclarations("using static NetZlink.Interop.NativeMethods;"), Is.True);
            Assert.That(NamesRawDeclarations("int rc = Native.Send(s, p, n, 0);"), Is.False);
            Assert.That(NamesRawDeclarations("var x = MyNativeMethodsHelper.Run();"), Is.False);
        });
    }

    [Test]
    public void TheAsyncRuntime_LivesInItsOwnFolder()
    {
        string[] runtime = ["SocketReactor.cs", "AsyncSocketState.cs", "AsyncOperation.cs"];
        Assert.Multiple(() =>
        {
            foreach (string file in runtime)
            {
                Assert.That(File.Exists(Path.Combine(Library, "Async", file)), Is.True, $"NetZlink/Async/{file}");
                Assert.That(File.Exists(Path.Combine(Library, "Interop", file)), Is.False, $"NetZlink/Interop/{file} moved to Async/");
            }
        });
    }

    private static bool NamesRawDeclarations(string line) => RawDeclarations().IsMatch(line);

    [GeneratedRegex(@"\b(NativeMethods|LibcMethods)\b")]
    private static partial Regex RawDeclarations();
}
