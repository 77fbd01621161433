// Peer introspection (zlink_socket_peer_*), on every socket type, and connecting with a chosen
// routing id. A native library without it for a socket type (one built on the system's libzmq,
// or older than 0.2.0 for the types other than STREAM) answers ENOTSUP, surfaced as
// ZlinkNotSupportedException with a hint.
using NetZlink.Interop;

namespace NetZlink;

public sealed unsafe partial class ZlinkSocket
{
    private const string PeersHint = "this native library has no peer introspection for the socket's type";

    /// <summary>Number of connected peers.</summary>
    /// <exception cref="ZlinkNotSupportedException">The native library lacks it for this socket type.</exception>
    public int PeerCount
    {
        get
        {
            using var socket = SocketLease.Acquire(_handle, "PeerCount");
            int count = Native.PeerCount(socket.Value);
            if (count < 0)
            {
                Ensure.Throw(Native.Errno(), "PeerCount", PeersHint);
            }

            return count;
        }
    }

    /// <summary>The routing id of the peer at <paramref name="index"/> (0 ≤ index &lt; <see cref="PeerCount"/>).</summary>
    /// <param name="index">The peer's position.</param>
    /// <returns>Its routing id.</returns>
    /// <exception cref="ZlinkNotSupportedException">The native library lacks it for this socket type.</exception>
    /// <exception cref="ZlinkException">No peer at that index.</exception>
    public RoutingId GetPeerRoutingId(int index)
    {
        using var socket = SocketLease.Acquire(_handle, "GetPeerRoutingId");
        ZlinkRoutingId id = default;
        if (Native.PeerRoutingId(socket.Value, index, &id) != 0)
        {
            Ensure.Throw(Native.Errno(), $"GetPeerRoutingId({index})", PeersHint);
        }

        return new RoutingId(id.AsSpan().ToArray());
    }

    /// <summary>What the socket knows about the peer with <paramref name="routingId"/>.</summary>
    /// <param name="routingId">The peer's routing id.</param>
    /// <returns>The peer's address and counters.</returns>
    /// <exception cref="ZlinkNotSupportedException">The native library lacks it for this socket type.</exception>
    /// <exception cref="ZlinkException">No such peer (EINVAL or EHOSTUNREACH, depending on the library).</exception>
    public PeerInfo GetPeerInfo(RoutingId routingId)
    {
        ReadOnlySpan<byte> bytes = routingId.Span;
        ZlinkRoutingId id = default;
        id.Size = (byte)bytes.Length;
        bytes.CopyTo(new Span<byte>(id.Data, 255));

        using var socket = SocketLease.Acquire(_handle, "GetPeerInfo");
        ZlinkPeerInfo info = default;
        if (Native.PeerInfo(socket.Value, &id, &info) != 0)
        {
            Ensure.Throw(Native.Errno(), $"GetPeerInfo({routingId})", PeersHint);
        }

        return new PeerInfo(&info);
    }

    /// <summary>Every connected peer.</summary>
    /// <returns>A snapshot, one entry per peer.</returns>
    /// <exception cref="ZlinkNotSupportedException">The native library lacks it for this socket type.</exception>
    public IReadOnlyList<PeerInfo> GetPeers()
    {
        // Peers may connect between the count and the listing: leave room, and take what fits.
        int capacity = PeerCount + 16;
        var infos = new ZlinkPeerInfo[capacity];
        nuint count = (nuint)capacity;
        using var socket = SocketLease.Acquire(_handle, "GetPeers");
        fixed (ZlinkPeerInfo* p = infos)
        {
            if (Native.Peers(socket.Value, p, &count) != 0)
            {
                Ensure.Throw(Native.Errno(), "GetPeers", PeersHint);
            }

            var peers = new PeerInfo[Math.Min((int)count, capacity)];
            for (int i = 0; i < peers.Length; i++)
            {
                peers[i] = new PeerInfo(p + i);
            }

            return peers;
        }
    }

    /// <summary>
    /// Connects to <paramref name="endpoint"/> and names the new connection <paramref name="routingId"/>
    /// (CONNECT_ROUTING_ID; a STREAM socket takes 4 bytes).
    /// </summary>
    /// <param name="endpoint">The endpoint.</param>
    /// <param name="routingId">The routing id the connection gets.</param>
    /// <exception cref="SocketOptionException">The routing id was refused.</exception>
    /// <exception cref="EndpointException">The endpoint is malformed or its transport unknown.</exception>
    public void Connect(string endpoint, ReadOnlySpan<byte> routingId)
    {
        SetOption(SocketOption.ConnectRoutingId, routingId);
        Connect(endpoint);
    }
}
