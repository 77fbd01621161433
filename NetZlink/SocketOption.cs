// Socket options (zlink_setsockopt / zlink_getsockopt) with the ABI's numbers. Each summary
// names the value type and so the Socket.SetOption / GetOption overload that fits.
namespace NetZlink;

/// <summary>A socket option. Unless stated otherwise the value is an <see cref="int"/>.</summary>
public enum SocketOption
{
    /// <summary>I/O thread affinity bitmask (64-bit: use the <see cref="long"/> overloads).</summary>
    Affinity = 4,
    /// <summary>This socket's routing id, as seen by ROUTER peers (bytes, 1–255).</summary>
    RoutingId = 5,
    /// <summary>Adds a subscription prefix on SUB / XSUB (bytes; write-only).</summary>
    Subscribe = 6,
    /// <summary>Removes a subscription prefix on SUB / XSUB (bytes; write-only).</summary>
    Unsubscribe = 7,
    /// <summary>Multicast data rate in kbit/s.</summary>
    Rate = 8,
    /// <summary>Multicast recovery interval in ms.</summary>
    RecoveryInterval = 9,
    /// <summary>Kernel send buffer size (SO_SNDBUF) in bytes; 0 keeps the OS default.</summary>
    SendBuffer = 11,
    /// <summary>Kernel receive buffer size (SO_RCVBUF) in bytes; 0 keeps the OS default.</summary>
    ReceiveBuffer = 12,
    /// <summary>1 when the last frame received has more frames after it (read-only).</summary>
    ReceiveMore = 13,
    /// <summary>A file descriptor that becomes readable when the socket needs attention (read-only).</summary>
    Fd = 14,
    /// <summary>What the socket can do now: <see cref="PollEvents"/> bits (read-only).</summary>
    Events = 15,
    /// <summary>The socket's <see cref="NetZlink.ZlinkSocketType"/> (read-only).</summary>
    Type = 16,
    /// <summary>How long unsent messages are kept after close, in ms (-1 forever). The binding sets 0 on every socket it creates.</summary>
    Linger = 17,
    /// <summary>Initial reconnect interval in ms.</summary>
    ReconnectInterval = 18,
    /// <summary>Listen backlog of bound TCP endpoints.</summary>
    Backlog = 19,
    /// <summary>Upper bound of the exponential reconnect back-off in ms (0 = no back-off).</summary>
    ReconnectIntervalMax = 21,
    /// <summary>Largest inbound message accepted, in bytes (64-bit: use the <see cref="long"/> overloads; -1 = no limit, except on STREAM sockets, where -1 and 0 mean 8 MiB as in zlink 1.3).</summary>
    MaxMessageSize = 22,
    /// <summary>Send high-water mark in messages (0 = none).</summary>
    SendHighWaterMark = 23,
    /// <summary>Receive high-water mark in messages (0 = none).</summary>
    ReceiveHighWaterMark = 24,
    /// <summary>Multicast hop limit.</summary>
    MulticastHops = 25,
    /// <summary>Receive timeout in ms for blocking receives (-1 = forever).</summary>
    ReceiveTimeout = 27,
    /// <summary>Send timeout in ms for blocking sends (-1 = forever).</summary>
    SendTimeout = 28,
    /// <summary>The last endpoint bound or connected, with the port chosen for a wildcard (string, read-only).</summary>
    LastEndpoint = 32,
    /// <summary>ROUTER: fail with EHOSTUNREACH instead of dropping messages to unknown peers (1 = on).</summary>
    RouterMandatory = 33,
    /// <summary>SO_KEEPALIVE (-1 = OS default).</summary>
    TcpKeepalive = 34,
    /// <summary>TCP_KEEPCNT (-1 = OS default).</summary>
    TcpKeepaliveCount = 35,
    /// <summary>TCP_KEEPIDLE (-1 = OS default).</summary>
    TcpKeepaliveIdle = 36,
    /// <summary>TCP_KEEPINTVL (-1 = OS default).</summary>
    TcpKeepaliveInterval = 37,
    /// <summary>Queue messages only to completed connections (1 = on).</summary>
    Immediate = 39,
    /// <summary>XPUB: pass every subscription message up, not only new ones.</summary>
    XPubVerbose = 40,
    /// <summary>Use IPv6 as well as IPv4 (1 = on).</summary>
    IPv6 = 42,
    /// <summary>Send an empty message to a ROUTER peer on connect.</summary>
    ProbeRouter = 51,
    /// <summary>Keep only the last message in the queues.</summary>
    Conflate = 54,
    /// <summary>ROUTER: a new peer with a known routing id takes the connection over.</summary>
    RouterHandover = 56,
    /// <summary>IP type-of-service byte.</summary>
    TypeOfService = 57,
    /// <summary>Routing id to give the next connection made by Connect (bytes; STREAM uses 4 bytes).</summary>
    ConnectRoutingId = 61,
    /// <summary>Handshake timeout in ms.</summary>
    HandshakeInterval = 66,
    /// <summary>XPUB: block (or fail with EAGAIN) instead of dropping at the high-water mark.</summary>
    XPubNoDrop = 69,
    /// <summary>Legacy blocking behaviour of the context.</summary>
    Blocky = 70,
    /// <summary>XPUB: subscriptions are managed by the application.</summary>
    XPubManual = 71,
    /// <summary>XPUB: welcome message sent to each new subscriber (bytes).</summary>
    XPubWelcomeMessage = 72,
    /// <summary>PUB/SUB: deliver what does not match instead.</summary>
    InvertMatching = 74,
    /// <summary>Heartbeat interval in ms (0 = off).</summary>
    HeartbeatInterval = 75,
    /// <summary>Heartbeat time-to-live in ms.</summary>
    HeartbeatTtl = 76,
    /// <summary>Heartbeat timeout in ms.</summary>
    HeartbeatTimeout = 77,
    /// <summary>XPUB: pass every subscribe and unsubscribe message up.</summary>
    XPubVerboser = 78,
    /// <summary>Connect timeout in ms (0 = OS default).</summary>
    ConnectTimeout = 79,
    /// <summary>TCP_USER_TIMEOUT in ms.</summary>
    TcpMaxRetransmitTimeout = 80,
    /// <summary>Bind to an already open descriptor.</summary>
    UseFd = 89,
    /// <summary>SO_BINDTODEVICE interface name (string).</summary>
    BindToDevice = 92,
    /// <summary>TLS certificate file (string; real zlink with TLS only).</summary>
    TlsCert = 95,
    /// <summary>TLS private key file (string; real zlink with TLS only).</summary>
    TlsKey = 96,
    /// <summary>TLS CA file (string; real zlink with TLS only).</summary>
    TlsCa = 97,
    /// <summary>Verify the TLS peer (real zlink with TLS only).</summary>
    TlsVerify = 98,
    /// <summary>Require a client certificate (real zlink with TLS only).</summary>
    TlsRequireClientCert = 99,
    /// <summary>Expected TLS host name (string; real zlink with TLS only).</summary>
    TlsHostname = 100,
    /// <summary>Trust the system CA store (real zlink with TLS only).</summary>
    TlsTrustSystem = 101,
    /// <summary>Password of the TLS key (string; real zlink with TLS only).</summary>
    TlsPassword = 102,
    /// <summary>XPUB/XSUB: process only the first subscribe of a multipart message.</summary>
    OnlyFirstSubscribe = 108,
    /// <summary>Number of subscribed topics (read-only).</summary>
    TopicsCount = 116,
    /// <summary>Handshake metadata (bytes; real zlink only).</summary>
    ZmpMetadata = 117,
    /// <summary>
    /// STREAM: how payloads map to the bytes on the wire, a <see cref="NetZlink.StreamFraming"/> value
    /// (NetZlink's library; settable only before the socket's first bind or connect; a real zlink 1.3
    /// refuses it and always frames as <see cref="NetZlink.StreamFraming.Length"/>).
    /// </summary>
    StreamFraming = 1001,
    /// <summary>STREAM: what the payload most recently received was, a <see cref="StreamEventKind"/> value (read-only; NetZlink's library).</summary>
    StreamEvent = 1002,
    /// <summary>STREAM: after a disconnect event, its cause as an errno (0 orderly or local; read-only; NetZlink's library).</summary>
    StreamEventErrno = 1003,
    /// <summary>
    /// STREAM with TLS: why the socket's last failed TLS handshake failed, in OpenSSL's words
    /// (string, read-only; NetZlink's library). See <see cref="ZlinkSocket.TlsLastError"/>.
    /// </summary>
    TlsLastError = 1004,
    /// <summary>
    /// STREAM with TLS: that handshake's X509 verification result, an <c>X509_V_ERR_*</c> code, 0 when
    /// verification was not what failed (int, read-only; NetZlink's library). See <see cref="ZlinkSocket.TlsLastVerifyResult"/>.
    /// </summary>
    TlsLastVerifyResult = 1005,
}
