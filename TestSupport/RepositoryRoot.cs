// The repository's root folder as the tests see it: the first folder above the test's output
// that holds NetZlink.sln. Compiled into every test project (linked from TestSupport/), so that
// tests reading docs, sources or native builds find them one way.
namespace NetZlink.Testing;

/// <summary>Paths in the repository the test runs from.</summary>
internal static class RepositoryRoot
{
    private static readonly Lazy<string> Root = new(Find);

    /// <summary>The folder that holds NetZlink.sln, above <see cref="AppContext.BaseDirectory"/>.</summary>
    /// <exception cref="DirectoryNotFoundException">No folder above the test's output holds NetZlink.sln.</exception>
    public static string Path => Root.Value;

    /// <summary>A path below the root: <c>Combine("docs", "scenarios.md")</c>.</summary>
    public static string Combine(params string[] parts) => System.IO.Path.Combine([Path, .. parts]);

    private static string Find()
    {
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(System.IO.Path.Combine(dir.FullName, "NetZlink.sln")))
            {
                return dir.FullName;
            }
        }

        throw new DirectoryNotFoundException("NetZlink.sln not found above " + AppContext.BaseDirectory);
    }
}
