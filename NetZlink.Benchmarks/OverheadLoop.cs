// "overhead" mode: the managed half of benchmarks/run.sh. For each size of the C loop
// (benchmarks/native/inproc_loop.c) it opens an inproc PAIR, warms up the same way the C program
// does (rounds of 10,000 steps until half a second has passed, which also lets tiered JIT
// finish), and times the same number of send-then-receive steps with a Stopwatch, through the
// public API and through raw P/Invoke, printing one line per size and path in the C program's
// format, after a "#" line naming the library loaded:
//   # libzlink 1.3.0 from /path/to/libzlink.so
//   managed size=64 iterations=1000000 ns_per_op=123.4
//   raw size=64 iterations=1000000 ns_per_op=101.2
using System.Diagnostics;
using System.Globalization;

namespace NetZlink.Benchmarks;

internal static class OverheadLoop
{
    internal const string Command = "overhead";

    internal const int DefaultIterations = 1_000_000;

    private const int WarmUpRound = 10_000;

    private static readonly TimeSpan WarmUpTime = TimeSpan.FromMilliseconds(500);

    /// <summary>The sizes of the C program, in its order.</summary>
    private static readonly int[] Sizes = [64, 1024, 8192];

    private delegate long Steps(SocketPair pair, byte[] payload, byte[] buffer, int iterations);

    /// <summary>Arguments: [iterations]. Returns the process exit code.</summary>
    internal static int Run(string[] args, TextWriter output)
    {
        int iterations = DefaultIterations;
        if (args.Length > 1
            || (args.Length == 1 && (!int.TryParse(args[0], CultureInfo.InvariantCulture, out iterations) || iterations <= 0)))
        {
            Console.Error.WriteLine($"usage: NetZlink.Benchmarks {Command} [iterations (default {DefaultIterations})]");
            return 2;
        }

        output.WriteLine($"# libzlink {ZlinkLibrary.Version} from {ZlinkLibrary.LoadedFrom}");
        using var context = new Context();
        foreach (int size in Sizes)
        {
            using var pair = SocketPair.Open(context, Transport.Inproc, $"overhead-{size}");
            byte[] payload = new byte[size];
            byte[] buffer = new byte[size];
            Random.Shared.NextBytes(payload);

            double managed = Time(PublicSteps, pair, payload, buffer, iterations);
            double raw = Time(RawSteps, pair, payload, buffer, iterations);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"managed size={size} iterations={iterations} ns_per_op={managed:F1}"));
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"raw size={size} iterations={iterations} ns_per_op={raw:F1}"));
        }

        return 0;
    }

    /// <summary>Nanoseconds per step over <paramref name="iterations"/> steps, after the warm-up.</summary>
    private static double Time(Steps steps, SocketPair pair, byte[] payload, byte[] buffer, int iterations)
    {
        long warmUpStart = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(warmUpStart) < WarmUpTime)
        {
            steps(pair, payload, buffer, WarmUpRound);
        }

        long expected = (long)payload.Length * iterations;
        long start = Stopwatch.GetTimestamp();
        long received = steps(pair, payload, buffer, iterations);
        TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
        if (received != expected)
        {
            throw new InvalidOperationException($"Received {received} bytes, expected {expected}.");
        }

        return elapsed.TotalNanoseconds / iterations;
    }

    private static long PublicSteps(SocketPair pair, byte[] payload, byte[] buffer, int iterations)
    {
        Socket sender = pair.Client;
        Socket receiver = pair.Server;
        long received = 0;
        for (int i = 0; i < iterations; i++)
        {
            received += InprocLoop.PublicOnce(sender, receiver, payload, buffer);
        }

        return received;
    }

    private static long RawSteps(SocketPair pair, byte[] payload, byte[] buffer, int iterations)
    {
        nint sender = pair.Client.NativeHandle;
        nint receiver = pair.Server.NativeHandle;
        long received = 0;
        for (int i = 0; i < iterations; i++)
        {
            received += InprocLoop.RawOnce(sender, receiver, payload, buffer);
        }

        return received;
    }
}
