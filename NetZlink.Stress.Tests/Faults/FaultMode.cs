// The misbehaviours the fault server can show to the stress client.
namespace NetZlink.Stress.Tests.Faults;

internal enum FaultMode
{
    /// <summary>Accepts, reads and discards; never answers.</summary>
    Silent,

    /// <summary>The first connection gets a garbage length header; the others are echoed.</summary>
    Garbage,

    /// <summary>The first connection's echoes carry a length header one larger than the packet; the others are echoed.</summary>
    WrongLength,

    /// <summary>The first connection gets half of its first echoed packet, then is closed; the others are echoed.</summary>
    CloseMidPacket,

    /// <summary>Every connection is echoed correctly but slowly: small buffers, small reads, pauses.</summary>
    Slow,
}
