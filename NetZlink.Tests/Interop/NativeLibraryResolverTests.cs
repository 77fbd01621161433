// The resolver's search order and its report when nothing loads.
using System.Runtime.InteropServices;
using NetZlink.Interop;

namespace NetZlink.Tests.Interop;

[TestFixture]
public sealed class NativeLibraryResolverTests
{
    [Test]
    public void WithoutTheVariable_TheLibraryComesFromRuntimesNextToTheAssembly()
    {
        if (Environment.GetEnvironmentVariable(NativeLibraryResolver.EnvironmentVariable) is { Length: > 0 } path)
        {
            Assert.That(ZlinkLibrary.LoadedFrom, Does.Contain(Path.GetFullPath(path)));
            return;
        }

        string expected = Path.Combine(AppContext.BaseDirectory, "runtimes", "linux-x64", "native", "libzlink.so");
        Assert.That(ZlinkLibrary.LoadedFrom, Is.EqualTo(expected), "NetZlink.csproj copies the native build there");
        Assert.That(ZlinkLibrary.Version, Is.Not.Null);
    }

    [Test]
    public void AVariableNamingAMissingFile_IsTheOnlyPlaceTried_AndTheReportSaysWhy()
    {
        var attempts = new List<string>();
        nint library = NativeLibraryResolver.Probe("/nonexistent/libzlink.so", AppContext.BaseDirectory, attempts, out string? from);

        Assert.That(library, Is.EqualTo(nint.Zero));
        Assert.That(from, Is.Null);
        Assert.That(attempts, Has.Count.EqualTo(1));
        Assert.That(attempts[0], Does.Contain("/nonexistent/libzlink.so").And.Contain(NativeLibraryResolver.EnvironmentVariable).And.Contain("not found"));
    }

    [Test]
    public void AVariableNamingANonLibrary_ReportsTheLoaderError()
    {
        string bogus = Path.Combine(Path.GetTempPath(), $"netzlink-not-a-library-{Guid.NewGuid():N}.so");
        File.WriteAllText(bogus, "not an ELF file");
        try
        {
            var attempts = new List<string>();
            Assert.That(NativeLibraryResolver.Probe(bogus, AppContext.BaseDirectory, attempts, out _), Is.EqualTo(nint.Zero));
            Assert.That(attempts.Single(), Does.StartWith(bogus));
            TestContext.Out.WriteLine(attempts.Single());
        }
        finally
        {
            File.Delete(bogus);
        }
    }

    [Test]
    public void ALibraryInANativeBuildFolderAboveTheApplication_IsNeverLoaded()
    {
        // What a checkout-walking resolver would have picked up: a stray native/build/libzlink.so
        // in a parent of the application's directory.
        string root = Directory.CreateTempSubdirectory("netzlink-stray-").FullName;
        try
        {
            Directory.CreateDirectory(Path.Combine(root, "native", "build"));
            string stray = Path.Combine(root, "native", "build", "libzlink.so");
            File.Copy(ZlinkLibrary.LoadedFrom!.Split(" (from ")[0], stray);
            string app = Directory.CreateDirectory(Path.Combine(root, "app", "bin")).FullName;

            var attempts = new List<string>();
            nint library = NativeLibraryResolver.Probe(null, app, attempts, out string? from);
            TestContext.Out.WriteLine(NativeLibraryResolver.Describe(attempts));
            Assert.That(from ?? string.Empty, Does.Not.Contain(stray));
            Assert.That(attempts, Has.None.Contain(stray));
            if (library != 0)
            {
                NativeLibrary.Free(library);
            }
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }

    [Test]
    public void WithNothingAnywhere_EveryPlaceIsListedInOrder()
    {
        // A directory with no runtimes/ and no library next to it.
        string empty = Directory.CreateTempSubdirectory("netzlink-resolver-").FullName;
        try
        {
            var attempts = new List<string>();
            nint library = NativeLibraryResolver.Probe(null, empty, attempts, out string? from);

            Assert.That(attempts[0], Does.StartWith($"{NativeLibraryResolver.EnvironmentVariable}: not set"));
            Assert.That(attempts[1], Does.StartWith(Path.Combine(empty, "runtimes")).And.Contain("native/libzlink.so"));
            Assert.That(attempts, Has.Some.StartWith(Path.Combine(empty, "libzlink.so")));
            Assert.That(attempts, Has.None.Contain("native/build"), "the resolver walks no directories");
            if (library != 0)
            {
                // The system path is the last place; it succeeds here when a libzlink.so is
                // installed, or already loaded by this process (dlopen matches the soname).
                Assert.That(from, Does.Contain("system library path"));
                NativeLibrary.Free(library);
            }
            else
            {
                Assert.That(attempts[^1], Does.Contain("system library path"));
            }

            string report = NativeLibraryResolver.Describe(attempts);
            TestContext.Out.WriteLine(report);
            Assert.That(report, Does.Contain("Places tried, in order"));
        }
        finally
        {
            Directory.Delete(empty, recursive: true);
        }
    }
}
