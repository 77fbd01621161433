// The transports a PAIR benchmark runs over.
namespace NetZlink.Benchmarks;

/// <summary>How the two sockets of a pair reach each other.</summary>
public enum Transport
{
    /// <summary>inproc://: in-process pipes, no I/O thread on the path.</summary>
    Inproc,

    /// <summary>tcp:// over the loopback interface, through zlink's I/O thread.</summary>
    Tcp,
}
