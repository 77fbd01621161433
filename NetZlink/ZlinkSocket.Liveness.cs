// Reconnect and heartbeat options as properties (the SocketOption numbers are zlink's).
namespace NetZlink;

public sealed partial class ZlinkSocket
{
    /// <summary>
    /// Milliseconds before a failed or lost connect is tried again (RECONNECT_IVL; default 100; -1 = never
    /// retry). On the ZMP socket types a retry waits the current interval plus a random part below this
    /// value; the current interval starts at this value and, when <see cref="ReconnectIntervalMax"/> is
    /// larger, doubles after each retry up to it. A lost connection starts again from this value.
    /// STREAM sockets retry after this value each time.
    /// </summary>
    public int ReconnectInterval
    {
        get => GetOptionInt32(SocketOption.ReconnectInterval);
        set => SetOption(SocketOption.ReconnectInterval, value);
    }

    /// <summary>Upper bound in ms of the reconnect back-off (RECONNECT_IVL_MAX; 0, the default, = no back-off: every retry waits <see cref="ReconnectInterval"/>).</summary>
    public int ReconnectIntervalMax
    {
        get => GetOptionInt32(SocketOption.ReconnectIntervalMax);
        set => SetOption(SocketOption.ReconnectIntervalMax, value);
    }

    /// <summary>
    /// ZMP socket types: milliseconds between the HEARTBEAT frames this socket sends on each connection
    /// (HEARTBEAT_IVL; 0, the default, = none). Set it before Bind or Connect.
    /// </summary>
    public int HeartbeatInterval
    {
        get => GetOptionInt32(SocketOption.HeartbeatInterval);
        set => SetOption(SocketOption.HeartbeatInterval, value);
    }

    /// <summary>
    /// ZMP socket types: how long (ms, sent in tenths of a second) the peer should wait for anything from
    /// this socket after a HEARTBEAT before dropping the connection (HEARTBEAT_TTL; 0 = no limit).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative, or from 1 to 99 ms (it would be sent as 0,
    /// no limit), or above 6,553,599 ms (the wire carries tenths of a second in 16 bits).</exception>
    public int HeartbeatTtl
    {
        get => GetOptionInt32(SocketOption.HeartbeatTtl);
        set
        {
            if (value is < 0 or (> 0 and < 100) or > 6_553_599)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "HeartbeatTtl is 0 (no limit) or 100 to 6,553,599 ms: the wire carries it in tenths of a second, 16 bits");
            }

            SetOption(SocketOption.HeartbeatTtl, value);
        }
    }

    /// <summary>
    /// ZMP socket types: milliseconds this socket waits for anything from the peer after sending a
    /// HEARTBEAT before it declares the peer dead and drops the connection (HEARTBEAT_TIMEOUT). It reads -1
    /// until it is set, which means <see cref="HeartbeatInterval"/>; a value set must be 0 or more (the native
    /// option has no way back to -1: set the interval's value to get the same effect).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public int HeartbeatTimeout
    {
        get => GetOptionInt32(SocketOption.HeartbeatTimeout);
        set
        {
            if (value < 0)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "HeartbeatTimeout must be 0 or more (it reads -1 only until set, meaning HeartbeatInterval)");
            }

            SetOption(SocketOption.HeartbeatTimeout, value);
        }
    }
}
