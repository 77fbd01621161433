// Set-up for every test in the assembly: Debug.Assert failures become test failures, and the
// native library is loaded once up front so a missing library fails loudly, with the resolver's
// list of places tried, instead of as a TypeInitializationException deep in some test.
namespace NetZlink.Tests;

[SetUpFixture]
public sealed class AssemblySetUp
{
    private TraceListener[] _previous = [];

    [OneTimeSetUp]
    public void InstallListenerAndLoadLibrary()
    {
        _previous = [.. Trace.Listeners.Cast<TraceListener>()];
        Trace.Listeners.Clear();
        Trace.Listeners.Add(new ThrowingTraceListener());

        TestContext.Progress.WriteLine($"NetZlink tests: native library {ZlinkLibrary.LoadedFrom}, version {ZlinkLibrary.Version}");
    }

    [OneTimeTearDown]
    public void RestoreListeners()
    {
        Trace.Listeners.Clear();
        Trace.Listeners.AddRange(_previous);
    }
}
