// The numbers of the zlink C ABI, under their C names, for code that calls NativeMethods
// directly (the checked layer and the engine). Public enums carry the same values.
namespace NetZlink.Interop;

internal static class ZlinkConstants
{
    // Send/receive flags.
    internal const int ZLINK_DONTWAIT = 1;
    internal const int ZLINK_SNDMORE = 2;

    // zlink_poll events.
    internal const short POLLIN = 1;
    internal const short POLLOUT = 2;
    internal const short POLLERR = 4;
    internal const short POLLPRI = 8;

    // Errors: Linux errno values, and zlink's own above the base.
    internal const int ZLINK_HAUSNUMERO = 156384712;
    internal const int ENOENT = 2;
    internal const int EINTR = 4;
    internal const int EAGAIN = 11;
    internal const int ENOMEM = 12;
    internal const int EFAULT = 14;
    internal const int ENODEV = 19;
    internal const int EINVAL = 22;
    internal const int EMFILE = 24;
    internal const int ENOTSOCK = 88;
    internal const int EPROTO = 71;
    internal const int EACCES = 13;
    internal const int ENOBUFS = 105;
    internal const int EMSGSIZE = 90;
    internal const int EPROTONOSUPPORT = 93;
    internal const int ENOTSUP = 95;
    internal const int EOPNOTSUPP = 95;
    internal const int EAFNOSUPPORT = 97;
    internal const int EADDRINUSE = 98;
    internal const int EADDRNOTAVAIL = 99;
    internal const int ECONNRESET = 104;
    internal const int ETIMEDOUT = 110;
    internal const int ECONNREFUSED = 111;
    internal const int EHOSTUNREACH = 113;
    internal const int EFSM = ZLINK_HAUSNUMERO + 51;
    internal const int ENOCOMPATPROTO = ZLINK_HAUSNUMERO + 52;
    internal const int ETERM = ZLINK_HAUSNUMERO + 53;
    internal const int EMTHREAD = ZLINK_HAUSNUMERO + 54;

    // Socket types.
    internal const int ZLINK_PAIR = 0;
    internal const int ZLINK_PUB = 1;
    internal const int ZLINK_SUB = 2;
    internal const int ZLINK_DEALER = 5;
    internal const int ZLINK_ROUTER = 6;
    internal const int ZLINK_XPUB = 9;
    internal const int ZLINK_XSUB = 10;
    internal const int ZLINK_STREAM = 11;

    // ZlinkContext options.
    internal const int ZLINK_IO_THREADS = 1;
    internal const int ZLINK_MAX_SOCKETS = 2;
    internal const int ZLINK_SOCKET_LIMIT = 3;
    internal const int ZLINK_MSG_T_SIZE = 6;

    // Socket options used by the binding and the engine (the full list is SocketOption).
    internal const int ZLINK_ROUTING_ID = 5;
    internal const int ZLINK_SUBSCRIBE = 6;
    internal const int ZLINK_UNSUBSCRIBE = 7;
    internal const int ZLINK_SNDBUF = 11;
    internal const int ZLINK_RCVBUF = 12;
    internal const int ZLINK_RCVMORE = 13;
    internal const int ZLINK_FD = 14;
    internal const int ZLINK_EVENTS = 15;
    internal const int ZLINK_TYPE = 16;
    internal const int ZLINK_LINGER = 17;
    internal const int ZLINK_RECONNECT_IVL = 18;
    internal const int ZLINK_BACKLOG = 19;
    internal const int ZLINK_MAXMSGSIZE = 22;
    internal const int ZLINK_SNDHWM = 23;
    internal const int ZLINK_RCVHWM = 24;
    internal const int ZLINK_RCVTIMEO = 27;
    internal const int ZLINK_SNDTIMEO = 28;
    internal const int ZLINK_LAST_ENDPOINT = 32;
    internal const int ZLINK_ROUTER_MANDATORY = 33;
    internal const int ZLINK_IMMEDIATE = 39;
    internal const int ZLINK_CONNECT_ROUTING_ID = 61;
    internal const int ZLINK_CONNECT_TIMEOUT = 79;

    // STREAM framing (NetZlink's library; a real zlink 1.3 refuses all three with EINVAL and
    // always frames as LENGTH). FRAMING is settable only before the socket's first bind/connect.
    internal const int ZLINK_STREAM_FRAMING = 1001;
    internal const int ZLINK_STREAM_EVENT = 1002;
    internal const int ZLINK_STREAM_EVENT_ERRNO = 1003;
    internal const int ZLINK_TLS_LAST_ERROR = 1004;
    internal const int ZLINK_TLS_LAST_VERIFY_RESULT = 1005;
    internal const int ZLINK_STREAM_RCVBUDGET = 1006;

    // Drops a STREAM connection that cannot take more output (write-only: its 4-byte routing id,
    // optionally a big-endian WebSocket close code; ws/wss send that close, 1008 by default).
    internal const int ZLINK_STREAM_DROP = 1007;

    // ZLINK_STREAM_FRAMING values: LENGTH (the default, zlink 1.3's wire [u32 BE length][body],
    // one whole body per payload), RAW (bytes as they arrive; events are zero-length payloads),
    // BATCH (LENGTH's wire; each payload one or more whole packets, headers included).
    internal const int ZLINK_STREAM_FRAMING_LENGTH = 0;
    internal const int ZLINK_STREAM_FRAMING_RAW = 1;
    internal const int ZLINK_STREAM_FRAMING_BATCH = 2;

    // ZLINK_STREAM_EVENT values: what the payload most recently received was.
    internal const int ZLINK_STREAM_EVENT_DATA = -1;
    internal const int ZLINK_STREAM_EVENT_DISCONNECT = 0;
    internal const int ZLINK_STREAM_EVENT_CONNECT = 1;

    // ZlinkMessage properties.
    internal const int ZLINK_MORE = 1;
    internal const int ZLINK_SHARED = 3;

    // Monitor events.
    internal const int ZLINK_EVENT_ALL = 0xFFFF;

    /// <summary>Size of zlink_msg_t, checked against ZLINK_MSG_T_SIZE by the tests.</summary>
    internal const int MessageSize = 64;
}
