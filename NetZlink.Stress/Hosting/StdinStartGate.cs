// The child side of --processes' start handshake (--start-on-stdin): a child that is connected
// prints CONNECTED on stdout and reads one line from stdin, the start time its parent chose once
// every child was connected, so that a child whose connect phase ran long (its siblings' load
// slowing it down) cannot miss a start time fixed in advance.
using System.Globalization;

namespace NetZlink.Stress.Hosting;

/// <summary>Says "connected" and waits to be told the start time.</summary>
internal static class StdinStartGate
{
    /// <summary>The line a child prints once its connections are resolved.</summary>
    public const string ConnectedLine = "CONNECTED";

    /// <summary>Prints <see cref="ConnectedLine"/>, then returns the Unix time read from stdin.</summary>
    /// <exception cref="OperationCanceledException">Stdin ended first (the parent is gone), or the run was stopped.</exception>
    /// <exception cref="InvalidDataException">The line is not a time.</exception>
    public static async Task<double> WaitAsync(CancellationToken cancellationToken)
    {
        Console.Out.WriteLine(ConnectedLine);
        Console.Out.Flush();
        string? line = await StdinEnd.ReadLineAsync(cancellationToken).ConfigureAwait(false);
        if (line is null)
        {
            throw new OperationCanceledException("stdin ended before the start time came: the parent is gone");
        }

        return double.TryParse(line, NumberStyles.Float, CultureInfo.InvariantCulture, out double startAt) && double.IsFinite(startAt)
            ? startAt
            : throw new InvalidDataException($"--start-on-stdin: expected a Unix time on stdin, got '{line}'");
    }
}
