// One run of the compare verb in this process (CompareCommand.RunAsync) into a scratch folder:
// its exit code, its output folder and what it wrote to standard output and error. The folder
// goes with Dispose.
namespace NetZlink.Stress.Tests.Support;

internal sealed class InProcessCompare : IDisposable
{
    private readonly TempDirectory _temp = new();

    private InProcessCompare()
    {
    }

    /// <summary>The --out folder of the run.</summary>
    public string OutDir => _temp.File("out");

    public int ExitCode { get; private set; }

    public string Stdout { get; private set; } = "";

    public string Stderr { get; private set; } = "";

    /// <summary>Runs compare with --out set to a fresh folder and then <paramref name="args"/>.</summary>
    public static async Task<InProcessCompare> RunAsync(string[] args, CancellationToken cancellationToken)
    {
        var run = new InProcessCompare();
        try
        {
            using var stdout = new StringWriter();
            using var stderr = new StringWriter();
            run.ExitCode = await CompareCommand.RunAsync(["--out", run.OutDir, .. args], stdout, stderr, cancellationToken);
            run.Stdout = stdout.ToString();
            run.Stderr = stderr.ToString();
            return run;
        }
        catch
        {
            run.Dispose();
            throw;
        }
    }

    public void Dispose() => _temp.Dispose();
}
