// The library's public surface is declared at build time: NetZlink/PublicAPI.Shipped.txt (as
// released) and PublicAPI.Unshipped.txt (added since), checked by
// Microsoft.CodeAnalysis.PublicApiAnalyzers, whose RS0016/RS0017 fail the build (warnings are
// errors) on a public symbol that is not declared or a declared one that is gone. These tests
// guard the guard: the analyzer is wired into the project, the files name exactly the assembly's
// public types, and the engine's internal helpers stay out of the surface.
using System.Reflection;
using System.Xml.Linq;

namespace NetZlink.Tests.PublicApi;

[TestFixture]
public sealed class PublicApiTests
{
    private static readonly string[] Files = ["PublicAPI.Shipped.txt", "PublicAPI.Unshipped.txt"];

    [Test]
    public void TheProject_ChecksItsPublicApiAtBuildTime()
    {
        XDocument project = XDocument.Load(Path.Combine(RepositoryRoot.Path, "NetZlink", "NetZlink.csproj"));
        Assert.That(
            project.Descendants("PackageReference").Select(e => (string?)e.Attribute("Include")),
            Has.Member("Microsoft.CodeAnalysis.PublicApiAnalyzers"),
            "NetZlink.csproj must reference the public API analyzer");
        Assert.That(
            project.Descendants("AdditionalFiles").Select(e => (string?)e.Attribute("Include")),
            Is.SupersetOf(Files),
            "both declaration files must be given to the analyzer");
    }

    [Test]
    public void TheDeclaredTypes_AreExactlyThePublicTypes()
    {
        const string Removed = "*REMOVED*";
        var declared = new SortedSet<string>(StringComparer.Ordinal);
        var removed = new SortedSet<string>(StringComparer.Ordinal);
        foreach (string file in Files)
        {
            foreach (string line in File.ReadAllLines(Path.Combine(RepositoryRoot.Path, "NetZlink", file)))
            {
                // A type's own line is its bare name: members carry "->" (their type) or a modifier.
                // "*REMOVED*" marks a shipped symbol taken out since (the analyzer's convention).
                string name = line.StartsWith(Removed, StringComparison.Ordinal) ? line[Removed.Length..] : line;
                if (name.Length > 0 && !name.StartsWith('#') && !name.Contains("->", StringComparison.Ordinal) && !name.Contains(' '))
                {
                    (ReferenceEquals(name, line) ? declared : removed).Add(name);
                }
            }
        }

        declared.ExceptWith(removed);

        var exported = new SortedSet<string>(
            typeof(ZlinkContext).Assembly.GetExportedTypes().Select(t => t.FullName!.Replace('+', '.')),
            StringComparer.Ordinal);
        Assert.That(
            exported.Except(declared).Concat(declared.Except(exported).Select(t => "(declared, not public) " + t)),
            Is.Empty,
            "NetZlink/PublicAPI.*.txt and the assembly's public types differ");
    }

    [TestCase("NetZlink.Engine.PacketReassembler")]
    [TestCase("NetZlink.Engine.PartialPacket")]
    [TestCase("NetZlink.Engine.ReassemblyResult")]
    [TestCase("NetZlink.Engine.IPacketSink")]
    [TestCase("NetZlink.Interop.NativeMethods")]
    public void AnInternalHelper_IsNotPublic(string name)
    {
        Type? type = typeof(ZlinkContext).Assembly.GetType(name);
        Assert.That(type, Is.Not.Null, $"{name} exists");
        Assert.That(type!.IsVisible, Is.False, $"{name} is not public API");
    }
}
