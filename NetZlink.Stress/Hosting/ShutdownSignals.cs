// Ctrl+C (SIGINT) and SIGTERM become a cancellation the run can finish from: the runner returns
// its partial result, the server child is stopped, the process exits 2. A second signal takes
// the default action and ends the process at once.
using System.Runtime.InteropServices;

namespace NetZlink.Stress.Hosting;

/// <summary>Owns the process's SIGINT/SIGTERM handlers for as long as it lives.</summary>
internal sealed class ShutdownSignals : IDisposable
{
    /// <summary>
    /// Set on the server child by <see cref="ServerChildProcess"/>. Ctrl+C reaches every process of the
    /// terminal's foreground group, but the child must keep echoing while the parent drains its
    /// interrupted run: it ignores SIGINT and stops when the parent closes its stdin (or on SIGTERM).
    /// </summary>
    public const string ChildVariable = "NETZLINK_STRESS_SERVER_CHILD";

    private readonly CancellationTokenSource _requested = new();
    private readonly PosixSignalRegistration[] _registrations;
    private readonly TextWriter? _notices;
    private readonly bool _ignoreInterrupt;
    private int _signalled;

    /// <summary>Registers the handlers; <paramref name="notices"/> gets a line when a stop is requested.</summary>
    public ShutdownSignals(TextWriter? notices)
    {
        _notices = notices;
        _ignoreInterrupt = Environment.GetEnvironmentVariable(ChildVariable) == "1";
        _registrations =
        [
            PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal),
            PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal),
        ];
    }

    /// <summary>Cancelled by the first SIGINT or SIGTERM.</summary>
    public CancellationToken Token => _requested.Token;

    /// <inheritdoc />
    public void Dispose()
    {
        foreach (PosixSignalRegistration registration in _registrations)
        {
            registration.Dispose();
        }

        _requested.Dispose();
    }

    private void OnSignal(PosixSignalContext context)
    {
        if (_ignoreInterrupt && context.Signal == PosixSignal.SIGINT)
        {
            context.Cancel = true;
            return;
        }

        if (Interlocked.Exchange(ref _signalled, 1) != 0)
        {
            return;
        }

        context.Cancel = true;
        _notices?.WriteLine($"{context.Signal}: stopping; signal again to quit at once");
        _requested.Cancel();
    }
}
