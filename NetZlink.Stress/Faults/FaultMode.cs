// The misbehaviours the built-in fault server (--fault) can show to a client, one per failure
// the client must survive and report: see README "Faults" for the command reproducing each.
namespace NetZlink.Stress.Faults;

/// <summary>What a faulty connection of <see cref="FaultServer"/> does; the others are echoed.</summary>
internal enum FaultMode
{
    /// <summary>No fault: the normal echo server of --server-stack runs.</summary>
    None,

    /// <summary>Accepts, reads and discards; never answers (the client's drain times out).</summary>
    Silent,

    /// <summary>After the client's first bytes, sends a packet's worth of garbage under a length header no packet can have (0xFFFFFFFF), then only reads.</summary>
    Garbage,

    /// <summary>Echoes whole packets whose length header is one larger than the packet.</summary>
    WrongLength,

    /// <summary>Echoes half of the first packet, then closes the connection.</summary>
    CloseMidPacket,

    /// <summary>Echoes correctly but slowly: small reads with a pause after each.</summary>
    Slow,

    /// <summary>Echoes correctly, then the whole server process kills itself with SIGKILL after --fault-after seconds.</summary>
    Crash,

    /// <summary>Holds the connection's first bytes for --fault-after seconds, reading nothing meanwhile, then echoes normally: one stall.</summary>
    Stall,
}
