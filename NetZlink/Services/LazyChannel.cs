using System.Threading.Channels;

namespace NetZlink.Services;

/// <summary>A change stream made on its first read (nothing is kept for an application that never
/// reads it), written by one worker thread.</summary>
internal static class LazyChannel
{
    /// <summary>The reader of <paramref name="channel"/>, made now if it is not there yet; one made
    /// while the worker is stopping is completed at once.</summary>
    public static ChannelReader<T> Reader<T>(ref Channel<T>? channel, bool stopping)
    {
        if (Volatile.Read(ref channel) is null)
        {
            var created = Channel.CreateUnbounded<T>(new UnboundedChannelOptions { SingleWriter = true });
            if (Interlocked.CompareExchange(ref channel, created, null) is null && stopping)
            {
                created.Writer.TryComplete();
            }
        }

        return channel!.Reader;
    }
}
