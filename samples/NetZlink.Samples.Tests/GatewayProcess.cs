// The gateway sample as a child process: started from its built assembly (next to this test's,
// through the project reference), its log lines collected, signalled with kill(1). The process
// handling is the shared ChildProcess (TestSupport/).
namespace NetZlink.Samples.Tests;

internal sealed class GatewayProcess : ChildProcess
{
    private GatewayProcess(System.Diagnostics.ProcessStartInfo info)
        : base(info)
    {
    }

    /// <summary>Starts the gateway in this test's output folder (its content root) with <paramref name="settings"/> as command-line configuration.</summary>
    public static GatewayProcess Start(params string[] settings)
    {
        string directory = AppContext.BaseDirectory;
        System.Diagnostics.ProcessStartInfo info = Describe(
            DotnetHost,
            [Path.Combine(directory, "NetZlink.Samples.Gateway.dll"), .. settings],
            new Dictionary<string, string> { ["DOTNET_ENVIRONMENT"] = "Production" });
        info.WorkingDirectory = directory;
        return new GatewayProcess(info);
    }
}
