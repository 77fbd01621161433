// "overhead" mode: the managed half of benchmarks/run.sh. For each size of the C loop
// (benchmarks/native/inproc_loop.c) it opens an inproc PAIR, warms up the same way the C program
// does (rounds of 10,000 steps until half a second has passed, which also lets tiered JIT
// finish), and times the same number of send-then-receive steps with a Stopwatch in 20 blocks,
// through the public API and through raw P/Invoke in turn, printing one line per size and path
// in the C program's format (ns_per_op: the fastest block; median_ns: the median block), after
// "#" lines naming the library loaded by the binding and the one the raw calls go to (the same
// file: the raw calls are the binding's own declarations, see RawZlink):
//   # libzlink 1.3.0 from /path/to/libzlink.so
//   # raw P/Invoke: /path/to/libzlink.so
//   managed size=64 iterations=1000000 ns_per_op=123.4 median_ns=130.1
//   raw size=64 iterations=1000000 ns_per_op=101.2 median_ns=104.9
// The public API runs on a SocketPair of a ZlinkContext, raw P/Invoke on a RawPair of a RawContext
// (the binding's socket pointers are not public); both pairs are made alike (see RawPair).
using System.Diagnostics;
using System.Globalization;

namespace NetZlink.Benchmarks;

internal static class OverheadLoop
{
    internal const string Command = "overhead";

    internal const int DefaultIterations = 1_000_000;

    private const int WarmUpRound = 10_000;

    /// <summary>Blocks the iterations are timed in, as in the C program.</summary>
    private const int Blocks = 20;

    private static readonly TimeSpan WarmUpTime = TimeSpan.FromMilliseconds(500);

    /// <summary>The sizes of the C program, in its order.</summary>
    private static readonly int[] Sizes = [64, 1024, 8192];

    private delegate long Steps(byte[] payload, byte[] buffer, int iterations);

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
        output.WriteLine($"# raw P/Invoke: {RawZlink.LoadedFrom}");
        using var context = new ZlinkContext();
        using var rawContext = new RawContext();
        foreach (int size in Sizes)
        {
            using var pair = SocketPair.Open(context, Transport.Inproc, $"overhead-{size}");
            using var rawPair = RawPair.Open(rawContext, $"overhead-{size}");
            byte[] payload = new byte[size];
            byte[] buffer = new byte[size];
            Random.Shared.NextBytes(payload);
            Steps publicSteps = (p, b, n) => PublicSteps(pair.Client, pair.Server, p, b, n);
            Steps rawSteps = (p, b, n) => RawSteps(rawPair.Client, rawPair.Server, p, b, n);

            WarmUp(publicSteps, payload, buffer);
            WarmUp(rawSteps, payload, buffer);

            // The two paths take turns block by block, so a noisy moment of the machine lands on
            // both; each reports its fastest block (noise only adds time) and its median block.
            int perBlock = Math.Max(1, iterations / Blocks);
            double[] managed = new double[Blocks];
            double[] raw = new double[Blocks];
            for (int b = 0; b < Blocks; b++)
            {
                managed[b] = TimeBlock(publicSteps, payload, buffer, perBlock);
                raw[b] = TimeBlock(rawSteps, payload, buffer, perBlock);
            }

            Array.Sort(managed);
            Array.Sort(raw);
            int total = perBlock * Blocks;
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"managed size={size} iterations={total} ns_per_op={managed[0]:F1} median_ns={managed[Blocks / 2]:F1}"));
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"raw size={size} iterations={total} ns_per_op={raw[0]:F1} median_ns={raw[Blocks / 2]:F1}"));
        }

        return 0;
    }

    private static void WarmUp(Steps steps, byte[] payload, byte[] buffer)
    {
        long warmUpStart = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(warmUpStart) < WarmUpTime)
        {
            steps(payload, buffer, WarmUpRound);
        }
    }

    /// <summary>Nanoseconds per step over one block of <paramref name="iterations"/> steps.</summary>
    private static double TimeBlock(Steps steps, byte[] payload, byte[] buffer, int iterations)
    {
        long expected = (long)payload.Length * iterations;
        long start = Stopwatch.GetTimestamp();
        long received = steps(payload, buffer, iterations);
        TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
        if (received != expected)
        {
            throw new InvalidOperationException($"Received {received} bytes, expected {expected}.");
        }

        return elapsed.TotalNanoseconds / iterations;
    }

    private static long PublicSteps(ZlinkSocket sender, ZlinkSocket receiver, byte[] payload, byte[] buffer, int iterations)
    {
        long received = 0;
        for (int i = 0; i < iterations; i++)
        {
            received += InprocLoop.PublicOnce(sender, receiver, payload, buffer);
        }

        return received;
    }

    private static long RawSteps(nint sender, nint receiver, byte[] payload, byte[] buffer, int iterations)
    {
        long received = 0;
        for (int i = 0; i < iterations; i++)
        {
            received += InprocLoop.RawOnce(sender, receiver, payload, buffer);
        }

        return received;
    }
}
