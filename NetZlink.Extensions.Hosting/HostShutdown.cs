// What is left of the host's shutdown timeout (HostOptions.ShutdownTimeout, counted from the moment
// the host began to stop), for the hosted kinds that bound their stop by it: a hosted socket closes
// with a linger no longer than that, a hosted gateway's drain waits no longer than that. It is also
// the hosted service AddNetZlinkContext registers: registered before every hosted gateway, receiver
// and socket, it is disposed after them and before the shared ZlinkContext it resolved, and disposes
// that context on a thread of its own, waiting at most the time left: a socket the application
// made with Linger -1 and a message for an absent peer no longer holds the host's disposal for ever.
using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace NetZlink.Extensions.Hosting;

internal sealed class HostShutdown : IHostedService, IDisposable
{
    private readonly TimeSpan _timeout;
    private CancellationTokenRegistration _stopping;
    private ZlinkContext? _context;
    private long _stoppingAt; // Stopwatch timestamp; 0 until the host began to stop

    /// <param name="services">The container.</param>
    /// <param name="disposesContext">Whether the shared context is the one AddNetZlinkContext made (the
    /// container's to dispose), which this disposes first, bounded.</param>
    public HostShutdown(IServiceProvider services, bool disposesContext)
    {
        // Resolved first, so that the container made the context before this and disposes it after.
        _context = disposesContext ? services.GetRequiredService<ZlinkContext>() : null;
        _timeout = ShutdownTimeout(services);
        if (services.GetService<IHostApplicationLifetime>() is { } lifetime)
        {
            _stopping = lifetime.ApplicationStopping.Register(MarkStopping);
        }
    }

    /// <summary>
    /// What is left of the host's shutdown timeout (never negative; <see cref="Timeout.InfiniteTimeSpan"/>
    /// when the timeout is infinite). Counts from the host's stop, or from the first call when the
    /// host was not seen stopping (disposed without a stop).
    /// </summary>
    public TimeSpan TimeLeft
    {
        get
        {
            MarkStopping();
            if (_timeout == Timeout.InfiniteTimeSpan)
            {
                return Timeout.InfiniteTimeSpan;
            }

            TimeSpan left = _timeout - Stopwatch.GetElapsedTime(Volatile.Read(ref _stoppingAt));
            return left > TimeSpan.Zero ? left : TimeSpan.Zero;
        }
    }

    /// <summary>A socket's linger at the stop: its own (-1: infinite), cut to <see cref="TimeLeft"/>, in ms.</summary>
    public int BoundLinger(int configured)
    {
        TimeSpan left = TimeLeft;
        if (left == Timeout.InfiniteTimeSpan)
        {
            return configured;
        }

        int leftMs = (int)Math.Min(int.MaxValue, Math.Floor(left.TotalMilliseconds));
        return configured < 0 ? leftMs : Math.Min(configured, leftMs);
    }

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken)
    {
        MarkStopping();
        return Task.CompletedTask;
    }

    /// <summary>Disposes the shared context, waiting at most <see cref="TimeLeft"/> for its lingering messages.</summary>
    public void Dispose()
    {
        _stopping.Dispose();
        ZlinkContext? context = Interlocked.Exchange(ref _context, null);
        if (context is null)
        {
            return;
        }

        TimeSpan left = TimeLeft;
        var thread = new Thread(context.Dispose) { IsBackground = true, Name = "NetZlink context disposal" };
        thread.Start();
        if (left == Timeout.InfiniteTimeSpan)
        {
            thread.Join();
        }
        else
        {
            // Past the time left the disposal goes on in the background (a background thread: it does
            // not keep the process alive); the container's own Dispose of the context returns at once.
            thread.Join(left);
        }
    }

    /// <summary>
    /// The host's <c>HostOptions.ShutdownTimeout</c>. HostOptions lives in Microsoft.Extensions.Hosting,
    /// which this package does not reference (it needs only the abstractions): read through its type's
    /// name from the container when the application runs on the generic host; else the host's default, 30 s.
    /// </summary>
    private static TimeSpan ShutdownTimeout(IServiceProvider services)
    {
        Type? hostOptions = Type.GetType("Microsoft.Extensions.Hosting.HostOptions, Microsoft.Extensions.Hosting", throwOnError: false);
        object? options = hostOptions is null ? null : services.GetService(typeof(IOptions<>).MakeGenericType(hostOptions));
        object? value = options?.GetType().GetProperty(nameof(IOptions<object>.Value))?.GetValue(options);
        return value?.GetType().GetProperty("ShutdownTimeout")?.GetValue(value) is TimeSpan timeout ? timeout : TimeSpan.FromSeconds(30);
    }

    private void MarkStopping() => Interlocked.CompareExchange(ref _stoppingAt, Stopwatch.GetTimestamp(), 0);
}
