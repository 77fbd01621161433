// The raw baselines' sockets: a zlink context and PAIR sockets made through the program's own
// declarations (RawZlink), since the binding's socket pointers are not public. A RawPair is
// SocketPair made by hand, option for option: LINGER 0 (as the binding sets on every socket),
// SNDHWM = RCVHWM = 0 (see SocketPair for why), bound and connected over inproc, with one message
// each way delivered before anything is measured. benchmarks/native/inproc_loop.c opens its
// sockets the same way.
using System.Diagnostics;
using System.Text;
using NetZlink.Interop;

namespace NetZlink.Benchmarks;

/// <summary>A raw zlink context (zlink_ctx_new with the library's defaults, as <c>new ZlinkContext()</c>).</summary>
internal sealed class RawContext : IDisposable
{
    private nint _context;

    public RawContext()
    {
        _context = NativeMethods.zlink_ctx_new();
        if (_context == 0)
        {
            RawZlink.ThrowFailed("zlink_ctx_new", NativeMethods.zlink_errno());
        }
    }

    public nint Value => _context != 0 ? _context : throw new ObjectDisposedException(nameof(RawContext));

    /// <summary>Terminates the context; close its sockets first (zlink_ctx_term waits for them).</summary>
    public void Dispose()
    {
        if (_context != 0)
        {
            RawZlink.Check(NativeMethods.zlink_ctx_term(_context), "zlink_ctx_term");
            _context = 0;
        }
    }
}

/// <summary>Two raw PAIR sockets over inproc, bound and connected, one message each way already delivered.</summary>
internal sealed unsafe class RawPair : IDisposable
{
    private static readonly TimeSpan HandshakeTimeout = TimeSpan.FromSeconds(10);

    private RawPair(nint server, nint client)
    {
        Server = server;
        Client = client;
    }

    /// <summary>The bound side.</summary>
    public nint Server { get; private set; }

    /// <summary>The connecting side.</summary>
    public nint Client { get; private set; }

    /// <summary>Opens a pair in <paramref name="context"/> on <c>inproc://<paramref name="name"/></c>.</summary>
    public static RawPair Open(RawContext context, string name)
    {
        var pair = new RawPair(OpenSocket(context), OpenSocket(context));
        try
        {
            byte[] endpoint = Encoding.UTF8.GetBytes($"inproc://{name}\0");
            fixed (byte* e = endpoint)
            {
                RawZlink.Check(NativeMethods.zlink_bind(pair.Server, e), "zlink_bind");
                RawZlink.Check(NativeMethods.zlink_connect(pair.Client, e), "zlink_connect");
            }

            Span<byte> probe = stackalloc byte[1];
            Pass(pair.Client, pair.Server, probe);
            Pass(pair.Server, pair.Client, probe);
            return pair;
        }
        catch
        {
            pair.Dispose();
            throw;
        }
    }

    /// <summary>Sends <paramref name="data"/> on <paramref name="socket"/> (DONTWAIT, which with no HWM never refuses over inproc).</summary>
    public static void Send(nint socket, ReadOnlySpan<byte> data)
    {
        fixed (byte* p = data)
        {
            RawZlink.Check(NativeMethods.zlink_send(socket, p, (nuint)data.Length, ZlinkConstants.ZLINK_DONTWAIT), "zlink_send");
        }
    }

    public void Dispose()
    {
        Close(Client, "zlink_close (client)");
        Client = 0;
        Close(Server, "zlink_close (server)");
        Server = 0;
    }

    private static nint OpenSocket(RawContext context)
    {
        nint socket = NativeMethods.zlink_socket(context.Value, ZlinkConstants.ZLINK_PAIR);
        if (socket == 0)
        {
            RawZlink.ThrowFailed("zlink_socket", NativeMethods.zlink_errno());
        }

        SetInt(socket, ZlinkConstants.ZLINK_LINGER, 0, "LINGER");
        SetInt(socket, ZlinkConstants.ZLINK_SNDHWM, 0, "SNDHWM");
        SetInt(socket, ZlinkConstants.ZLINK_RCVHWM, 0, "RCVHWM");
        return socket;
    }

    private static void SetInt(nint socket, int option, int value, string name)
        => RawZlink.Check(NativeMethods.zlink_setsockopt(socket, option, &value, sizeof(int)), $"zlink_setsockopt({name})");

    private static void Close(nint socket, string operation)
    {
        if (socket != 0)
        {
            RawZlink.Check(NativeMethods.zlink_close(socket), operation);
        }
    }

    /// <summary>One frame from <paramref name="from"/> to <paramref name="to"/>, received within the handshake timeout.</summary>
    private static void Pass(nint from, nint to, Span<byte> probe)
    {
        Send(from, probe);
        long start = Stopwatch.GetTimestamp();
        fixed (byte* p = probe)
        {
            while (NativeMethods.zlink_recv(to, p, (nuint)probe.Length, ZlinkConstants.ZLINK_DONTWAIT) < 0)
            {
                int errno = NativeMethods.zlink_errno();
                if (errno is not (ZlinkConstants.EAGAIN or ZlinkConstants.EINTR))
                {
                    RawZlink.ThrowFailed("zlink_recv", errno);
                }

                if (Stopwatch.GetElapsedTime(start) > HandshakeTimeout)
                {
                    throw new TimeoutException("A raw PAIR socket received nothing from its peer within 10 s.");
                }

                Thread.Yield();
            }
        }
    }
}
