// Where the repository's benchmarks/ folder is, found from the running assembly, so results
// land in the same place whether the program is started by dotnet run, by run.sh or by hand.
namespace NetZlink.Benchmarks;

internal static class RepositoryPaths
{
    private const string SolutionFile = "NetZlink.sln";

    /// <summary>benchmarks/ of the checkout; benchmarks/ under the current directory outside one.</summary>
    internal static string BenchmarksDirectory => Path.Combine(FindRoot() ?? Environment.CurrentDirectory, "benchmarks");

    private static string? FindRoot()
    {
        foreach (string start in new[] { AppContext.BaseDirectory, Environment.CurrentDirectory })
        {
            for (var directory = new DirectoryInfo(start); directory is not null; directory = directory.Parent)
            {
                if (File.Exists(Path.Combine(directory.FullName, SolutionFile)))
                {
                    return directory.FullName;
                }
            }
        }

        return null;
    }
}
