// A child's lifeline: its stdin is a pipe from the parent, which reaches end-of-file when the parent
// closes it or when the parent dies, however it dies. The server child (--exit-on-stdin-eof) stops
// there; a --processes client child (--exit-on-stdin-eof, --start-on-stdin) treats it as SIGTERM, and
// reads its start line from the same pipe. One thread reads stdin for both, and only once a flag asks
// for it: any end of file then counts, /dev/null at once and a terminal at Ctrl+D included.
using System.Threading.Channels;

namespace NetZlink.Stress.Hosting;

/// <summary>Reads stdin line by line on one thread and watches it for end-of-file.</summary>
internal static class StdinEnd
{
    private static readonly Lock Gate = new();
    private static readonly Channel<string> Lines = Channel.CreateUnbounded<string>(new UnboundedChannelOptions { SingleReader = false, SingleWriter = true });

    // Never disposed: the thread may still cancel it after the run stopped.
    private static readonly CancellationTokenSource Ended = new();
    private static bool s_reading;

    /// <summary>A token cancelled when stdin reaches end-of-file (or cannot be read).</summary>
    public static CancellationToken Watch()
    {
        lock (Gate)
        {
            if (!s_reading)
            {
                s_reading = true;
                new Thread(ReadToEnd) { IsBackground = true, Name = "stdin-end watch" }.Start();
            }
        }

        return Ended.Token;
    }

    /// <summary>The next line of stdin; null once it has ended.</summary>
    public static async Task<string?> ReadLineAsync(CancellationToken cancellationToken)
    {
        _ = Watch();
        try
        {
            return await Lines.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            return null;
        }
    }

    private static void ReadToEnd()
    {
        try
        {
            using var stdin = new StreamReader(Console.OpenStandardInput());
            while (stdin.ReadLine() is { } line)
            {
                Lines.Writer.TryWrite(line);
            }
        }
        catch (IOException)
        {
        }

        Lines.Writer.TryComplete();
        Ended.Cancel();
    }
}
