// Finds native/build/bench/limit_echo, the program of the c-epoll and c-uring stacks: the
// environment variable NETZLINK_LIMIT_ECHO first, then native/build/bench/ in this folder or any
// above it, starting from the program's own folder and then from the current folder (the same walk
// up the native library's resolver does). And asks it whether io_uring runs here (c-uring).
using System.Diagnostics;

namespace NetZlink.Stress.Compare;

/// <summary>Locates the limit_echo binary or explains how to build it.</summary>
internal static class LimitEchoBinary
{
    /// <summary>Overrides the search with a path to limit_echo.</summary>
    public const string Variable = "NETZLINK_LIMIT_ECHO";

    private static readonly string RelativePath = Path.Combine("native", "build", "bench", "limit_echo");

    /// <summary>
    /// Null when `limit_echo probe --io uring` says io_uring runs here; otherwise why c-uring cannot run
    /// (its answer, or what went wrong asking).
    /// </summary>
    public static async Task<string?> UringRefusedAsync(string limitEcho, CancellationToken cancellationToken)
    {
        var info = new ProcessStartInfo(limitEcho)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string arg in new[] { "probe", "--io", "uring" })
        {
            info.ArgumentList.Add(arg);
        }

        ClientChildProcess.Outcome outcome = await ClientChildProcess
            .RunAsync(info, "  [probe]", TextWriter.Null, TimeSpan.FromSeconds(10), stop: cancellationToken).ConfigureAwait(false);
        string answer = string.Join(' ', outcome.Stdout.Concat(outcome.StderrTail)).Trim();
        return outcome.ExitCode == 0 && answer == "io=uring ok" ? null
            : answer.Length > 0 ? answer : $"limit_echo probe --io uring exited with code {outcome.ExitCode}";
    }

    /// <summary>The binary's path.</summary>
    /// <exception cref="Hosting.StressHostException">It is not in any place searched; the message lists them.</exception>
    public static string Locate() =>
        Locate(Environment.GetEnvironmentVariable(Variable), [AppContext.BaseDirectory, Directory.GetCurrentDirectory()]);

    /// <summary>The search itself, with its inputs given (for tests).</summary>
    public static string Locate(string? overridePath, IReadOnlyList<string> startFolders)
    {
        var looked = new List<string>();
        if (!string.IsNullOrEmpty(overridePath))
        {
            if (File.Exists(overridePath))
            {
                return Path.GetFullPath(overridePath);
            }

            throw new Hosting.StressHostException(
                $"the c-epoll and c-uring stacks' program is not at {overridePath} (from ${Variable}); build it with `cmake -S native -B native/build && cmake --build native/build --target limit_echo` or unset {Variable}");
        }

        foreach (string start in startFolders)
        {
            for (DirectoryInfo? dir = new(Path.GetFullPath(start)); dir is not null; dir = dir.Parent)
            {
                string candidate = Path.Combine(dir.FullName, RelativePath);
                if (File.Exists(candidate))
                {
                    return candidate;
                }

                if (!looked.Contains(candidate))
                {
                    looked.Add(candidate);
                }
            }
        }

        throw new Hosting.StressHostException(
            $"the c-epoll and c-uring stacks' program limit_echo was not found; looked for {string.Join(", ", looked)}. "
            + $"Build it from the repository root with `cmake -S native -B native/build -DCMAKE_BUILD_TYPE=Release && cmake --build native/build --target limit_echo` "
            + $"(or `bash scripts/setup.sh`), set {Variable} to its path, or leave c-epoll and c-uring out of --stacks");
    }
}
