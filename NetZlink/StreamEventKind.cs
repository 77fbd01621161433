// What the payload a STREAM socket received last was (ZLINK_STREAM_EVENT).
namespace NetZlink;

/// <summary>What the payload a STREAM socket received last was (<see cref="ZlinkSocket.StreamEvent"/>).</summary>
public enum StreamEventKind
{
    /// <summary>Data.</summary>
    Data = -1,

    /// <summary>The connection is gone (<see cref="ZlinkSocket.StreamEventError"/> says why).</summary>
    Disconnected = 0,

    /// <summary>The connection is up.</summary>
    Connected = 1,
}
