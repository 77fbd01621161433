// A new console app imports System, System.IO, System.Threading, System.Threading.Tasks,
// System.Net.Http, System.Linq and System.Collections.Generic implicitly, and network code adds
// System.Net and System.Net.Sockets: a NetZlink type with the same simple name as a public type
// there is a CS0104 ambiguity in the first program that uses both.
using System.Reflection;

namespace NetZlink.Tests.PublicApi;

[TestFixture]
public sealed class NameClashTests
{
    private static readonly string[] CommonNamespaces =
    [
        "System", "System.IO", "System.Threading", "System.Threading.Tasks", "System.Net",
        "System.Net.Sockets", "System.Net.Http", "System.Collections.Generic", "System.Linq",
    ];

    [Test]
    public void NoPublicTypeSharesItsNameWithATypeOfTheCommonlyImportedNamespaces()
    {
        HashSet<string> common = Assemblies()
            .SelectMany(a => a.GetExportedTypes())
            .Where(t => t.Namespace is not null && CommonNamespaces.Contains(t.Namespace) && !t.IsNested)
            .Select(t => t.Name.Split('`')[0])
            .ToHashSet(StringComparer.Ordinal);
        Assert.That(common, Does.Contain("Socket").And.Contain("Monitor").And.Contain("Timer").And.Contain("File"), "the framework's types were found");

        List<string> clashes = typeof(ZlinkContext).Assembly.GetExportedTypes()
            .Where(t => !t.IsNested && common.Contains(t.Name.Split('`')[0]))
            .Select(t => t.FullName!)
            .ToList();
        Assert.That(clashes, Is.Empty, "NetZlink types that collide with a type of a commonly imported namespace");
    }

    private static IEnumerable<Assembly> Assemblies()
    {
        string[] names =
        [
            "System.Runtime", "System.Private.CoreLib", "System.Net.Sockets", "System.Net.Primitives", "System.Net.Http",
            "System.Threading", "System.Threading.Tasks", "System.Collections", "System.Linq", "System.IO.FileSystem",
            "System.Console", "System.Threading.Thread", "System.Net.NameResolution",
        ];
        foreach (string name in names)
        {
            Assembly? assembly = null;
            try
            {
                assembly = Assembly.Load(name);
            }
            catch (FileNotFoundException)
            {
            }

            if (assembly is not null)
            {
                yield return assembly;
            }
        }
    }
}
