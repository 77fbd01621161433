// How the parent starts its server child: this same program with --role server, the flags that
// matter to a server, and --exit-on-stdin-eof, so that the child stops when the parent closes its
// stdin or dies. Under `dotnet NetZlink.Stress.dll` (and in a test host) that means
// `dotnet <this dll>`; from the apphost, a single-file or a native AOT build, the executable itself;
// with NETZLINK_STRESS_BINARY set, that executable (how `compare` runs an AOT or ReadyToRun build).
using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using NetZlink.Stress.Faults;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Hosting;

/// <summary>Builds the server child's command line.</summary>
internal static class ServerLaunch
{
    /// <summary>
    /// A NetZlink.Stress executable (a native AOT or ReadyToRun build) to start instead of this
    /// program: the server children, the --processes client children, and `compare`'s .NET server and client processes.
    /// </summary>
    public const string BinaryVariable = "NETZLINK_STRESS_BINARY";

    private const string AssemblyFileName = "NetZlink.Stress.dll";

    /// <summary>The arguments after the program: --role server, --exit-on-stdin-eof and the server-relevant flags.</summary>
    public static IReadOnlyList<string> Arguments(ScenarioSettings settings, bool quiet)
    {
        var args = new List<string>
        {
            "--role", "server",
            "--exit-on-stdin-eof",
            "--transport", settings.Transport,
            "--bind-host", settings.BindHost,
            "--port", Invariant(settings.Port),
            "--backlog", Invariant(settings.Backlog),
            "--hwm", Invariant(settings.Hwm),
            "--sndbuf", Invariant(settings.SendBuffer),
            "--rcvbuf", Invariant(settings.ReceiveBuffer),
            "--io-threads", Invariant(settings.IoThreads),
            "--server-stack", settings.ServerStack,
            // The server times every n-th read of a connection (its SERVER_TIME line), as the client times echoes.
            "--latency-sample-rate", Invariant(settings.LatencySampleRate),
        };
        AddPath(args, "--tls-cert", settings.TlsCertificateFile);
        AddPath(args, "--tls-key", settings.TlsKeyFile);
        if (settings.Fault != FaultMode.None)
        {
            // The fault server cuts and rewrites whole packets, so it needs their size too.
            args.AddRange(["--fault", FaultModeNames.Name(settings.Fault), "--fault-every", Invariant(settings.FaultEvery),
                "--fault-after", settings.FaultAfterSeconds.ToString("R", CultureInfo.InvariantCulture), "--size", Invariant(settings.Size)]);
        }

        if (quiet)
        {
            args.Add("--quiet");
        }

        return args;
    }

    /// <summary>The program to run and the arguments that come before <see cref="Arguments"/>.</summary>
    public static (string FileName, IReadOnlyList<string> Prefix) Program() =>
        Program(Environment.GetEnvironmentVariable(BinaryVariable));

    /// <summary><see cref="Program()"/> with <see cref="BinaryVariable"/>'s value given (null: unset).</summary>
    /// <exception cref="StressHostException">The variable names no file.</exception>
    public static (string FileName, IReadOnlyList<string> Prefix) Program(string? binary)
    {
        if (!string.IsNullOrEmpty(binary))
        {
            return File.Exists(binary)
                ? (Path.GetFullPath(binary), [])
                : throw new StressHostException(
                    $"{BinaryVariable}={binary} names no file; publish one (docs/stress-tool.md, Native AOT and ReadyToRun builds) or unset {BinaryVariable}");
        }

        Assembly self = typeof(ServerLaunch).Assembly;
        string? processPath = Environment.ProcessPath;
        bool underDotnet = processPath is not null
            && string.Equals(Path.GetFileNameWithoutExtension(processPath), "dotnet", StringComparison.Ordinal);

        if (!underDotnet && processPath is not null && Assembly.GetEntryAssembly() == self)
        {
            return (processPath, []);
        }

        // Beside this program (or the test host that loaded it); Assembly.Location is empty in a
        // single-file or native AOT build, which takes the branch above anyway.
        string dll = Path.Combine(AppContext.BaseDirectory, AssemblyFileName);
        if (!File.Exists(dll))
        {
            throw new StressHostException("cannot tell where NetZlink.Stress.dll is, so the server process cannot be started; run the server with --role server and the client with --role client");
        }

        string dotnet = underDotnet ? processPath! : Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        return (dotnet, [dll]);
    }

    /// <summary>The complete start info: stdin, stdout and stderr are pipes to the parent.</summary>
    public static ProcessStartInfo StartInfo(ScenarioSettings settings, bool quiet) => ChildStartInfo(Arguments(settings, quiet), redirectStdin: true);

    /// <summary>
    /// This program as a child with <paramref name="arguments"/>: stdout and stderr (and with
    /// <paramref name="redirectStdin"/> stdin) pipes to the parent, and marked as a child, so that it
    /// ignores Ctrl+C and stops when its parent says (stdin closed, SIGTERM).
    /// </summary>
    public static ProcessStartInfo ChildStartInfo(IEnumerable<string> arguments, bool redirectStdin)
    {
        (string fileName, IReadOnlyList<string> prefix) = Program();
        var info = new ProcessStartInfo(fileName)
        {
            RedirectStandardInput = redirectStdin,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string arg in prefix.Concat(arguments))
        {
            info.ArgumentList.Add(arg);
        }

        info.Environment[ShutdownSignals.ChildVariable] = "1";
        return info;
    }

    /// <summary>The command line as text, for error messages.</summary>
    public static string Describe(ProcessStartInfo info) =>
        string.Join(' ', info.ArgumentList.Prepend(info.FileName));

    /// <summary>Adds <paramref name="flag"/> and <paramref name="path"/> when the path is set.</summary>
    internal static void AddPath(List<string> args, string flag, string? path)
    {
        if (path is not null)
        {
            args.AddRange([flag, path]);
        }
    }

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);
}
