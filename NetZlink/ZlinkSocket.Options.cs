// Socket options: typed get/set by SocketOption (int, long, bytes, string), plus properties
// for the options most code touches.
//
// The native call takes any bytes for any option and says only "EINVAL" when it does not like
// them, so the typed getters check what came back: an int getter that received 2 bytes, or a
// string getter that received binary data, reports that instead of returning a made-up value.
using System.Buffers;
using System.Text;
using System.Text.Unicode;
using NetZlink.Interop;

namespace NetZlink;

public sealed unsafe partial class ZlinkSocket
{
    // Large enough for every byte/string option zlink has but a long endpoint (routing ids are at
    // most 255 bytes, device names 16). The library fails with EINVAL, without saying the size it
    // needs, when a value does not fit, so the options whose values have no such bound are read
    // again into larger buffers, up to the last of these sizes.
    private const int OptionBufferSize = 1024;
    private static readonly int[] LargerOptionBuffers = [64 * 1024, 1024 * 1024, 16 * 1024 * 1024];

    /// <summary>Sets an <see cref="int"/> option.</summary>
    /// <param name="option">The option.</param>
    /// <param name="value">Its new value.</param>
    /// <exception cref="SocketOptionException">Unknown option, wrong value type, or a value out of range.</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public void SetOption(SocketOption option, int value) => SetOptionRaw(option, &value, sizeof(int));

    /// <summary>Sets a boolean option (as the int 1 or 0).</summary>
    /// <param name="option">The option.</param>
    /// <param name="value">Its new value.</param>
    /// <exception cref="SocketOptionException">Unknown option or wrong value type.</exception>
    public void SetOption(SocketOption option, bool value) => SetOption(option, value ? 1 : 0);

    /// <summary>Sets a 64-bit option (<see cref="SocketOption.MaxMessageSize"/>, <see cref="SocketOption.Affinity"/>).</summary>
    /// <param name="option">The option.</param>
    /// <param name="value">Its new value.</param>
    /// <exception cref="SocketOptionException">Unknown option or wrong value type.</exception>
    public void SetOption(SocketOption option, long value) => SetOptionRaw(option, &value, sizeof(long));

    /// <summary>Sets a binary option (routing ids, subscriptions).</summary>
    /// <param name="option">The option.</param>
    /// <param name="value">Its new value.</param>
    /// <exception cref="SocketOptionException">Unknown option or a value of the wrong length.</exception>
    public void SetOption(SocketOption option, ReadOnlySpan<byte> value)
    {
        fixed (byte* p = value)
        {
            SetOptionRaw(option, p, (nuint)value.Length);
        }
    }

    /// <summary>Sets a string option, sent as UTF-8 without a terminator.</summary>
    /// <param name="option">The option.</param>
    /// <param name="value">Its new value.</param>
    /// <exception cref="SocketOptionException">Unknown option or a bad value; EINVAL also when the value holds a NUL character (the library keeps string options as C text and would cut it there: pass binary values as bytes) or an unpaired surrogate (no UTF-8 form).</exception>
    public void SetOption(SocketOption option, string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        SetOption(option, (ReadOnlySpan<byte>)TextBytes(option, value, allowNul: false));
    }

    /// <summary>Reads an <see cref="int"/> option.</summary>
    /// <param name="option">The option.</param>
    /// <returns>Its value.</returns>
    /// <exception cref="SocketOptionException">Unknown option, write-only option, or not an int option.</exception>
    public int GetOptionInt32(SocketOption option)
    {
        int value = 0;
        nuint size = sizeof(int);
        GetOptionRaw(option, &value, &size);
        if (size != sizeof(int))
        {
            ThrowWrongSize(option, size, "an int option (read it with GetOptionBytes or GetOptionString)");
        }

        return value;
    }

    /// <summary>Reads a 64-bit option.</summary>
    /// <param name="option">The option.</param>
    /// <returns>Its value.</returns>
    /// <exception cref="SocketOptionException">Unknown option or not a 64-bit option.</exception>
    public long GetOptionInt64(SocketOption option)
    {
        long value = 0;
        nuint size = sizeof(long);
        GetOptionRaw(option, &value, &size);
        if (size != sizeof(long))
        {
            ThrowWrongSize(option, size, size == sizeof(int) ? "a 64-bit option (read it with GetOptionInt32)" : "a 64-bit option");
        }

        return value;
    }

    /// <summary>Reads a binary option into <paramref name="value"/>.</summary>
    /// <param name="option">The option.</param>
    /// <param name="value">Where the value goes.</param>
    /// <returns>The number of bytes written.</returns>
    /// <exception cref="SocketOptionException">Unknown option, or <paramref name="value"/> too small (EINVAL).</exception>
    public int GetOption(SocketOption option, Span<byte> value)
    {
        nuint size = (nuint)value.Length;
        fixed (byte* p = value)
        {
            GetOptionRaw(option, p, &size);
        }

        return (int)size;
    }

    /// <summary>Reads a binary option.</summary>
    /// <param name="option">The option.</param>
    /// <returns>A new array holding the value.</returns>
    /// <exception cref="SocketOptionException">Unknown option or not a binary option.</exception>
    public byte[] GetOptionBytes(SocketOption option)
    {
        Span<byte> buffer = stackalloc byte[OptionBufferSize];
        nuint size = (nuint)buffer.Length;
        int errno;
        fixed (byte* p = buffer)
        {
            errno = GetOptionErrno(option, p, &size);
        }

        if (errno == 0)
        {
            return buffer[..(int)size].ToArray();
        }

        if (errno == ZlinkConstants.EINVAL && HasUnboundedValue(option))
        {
            foreach (int capacity in LargerOptionBuffers)
            {
                byte[] larger = ArrayPool<byte>.Shared.Rent(capacity);
                try
                {
                    size = (nuint)capacity;
                    fixed (byte* p = larger)
                    {
                        errno = GetOptionErrno(option, p, &size);
                    }

                    if (errno == 0)
                    {
                        return larger.AsSpan(0, (int)size).ToArray();
                    }
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(larger);
                }

                if (errno != ZlinkConstants.EINVAL)
                {
                    break;
                }
            }
        }

        Ensure.ThrowOption(errno, "GetOption", OptionName(option));
        return [];
    }

    /// <summary>Reads a string option (the library returns it NUL-terminated; the terminator is dropped).</summary>
    /// <param name="option">The option.</param>
    /// <returns>The value.</returns>
    /// <exception cref="SocketOptionException">Unknown option, or a value that is not text (EINVAL: a NUL before its end, or not UTF-8; read such values with <see cref="GetOptionBytes"/>).</exception>
    public string GetOptionString(SocketOption option)
    {
        ReadOnlySpan<byte> value = GetOptionBytes(option);

        // Text comes with one terminating NUL; a byte option's value may come without one.
        if (!value.IsEmpty && value[^1] == 0)
        {
            value = value[..^1];
        }

        int nul = value.IndexOf((byte)0);
        if (nul >= 0)
        {
            Ensure.ThrowOption(ZlinkConstants.EINVAL, "GetOption", OptionName(option),
                $"the value is not text: it has a NUL at byte {nul} of {value.Length}; read it with GetOptionBytes");
        }

        if (!Utf8.IsValid(value))
        {
            Ensure.ThrowOption(ZlinkConstants.EINVAL, "GetOption", OptionName(option),
                $"the value is not text: its {value.Length} bytes are not UTF-8; read it with GetOptionBytes");
        }

        return Encoding.UTF8.GetString(value);
    }

    /// <summary>Milliseconds unsent messages are kept after close (-1 forever). The binding creates every socket with 0.</summary>
    public int Linger
    {
        get => GetOptionInt32(SocketOption.Linger);
        set => SetOption(SocketOption.Linger, value);
    }

    /// <summary>Send high-water mark in messages (0 = none); on STREAM, per connection.</summary>
    public int SendHighWaterMark
    {
        get => GetOptionInt32(SocketOption.SendHighWaterMark);
        set => SetOption(SocketOption.SendHighWaterMark, value);
    }

    /// <summary>Receive high-water mark in messages (0 = none).</summary>
    public int ReceiveHighWaterMark
    {
        get => GetOptionInt32(SocketOption.ReceiveHighWaterMark);
        set => SetOption(SocketOption.ReceiveHighWaterMark, value);
    }

    /// <summary>Milliseconds a blocking send waits before failing with EAGAIN (-1 = for ever).</summary>
    public int SendTimeout
    {
        get => GetOptionInt32(SocketOption.SendTimeout);
        set => SetOption(SocketOption.SendTimeout, value);
    }

    /// <summary>Milliseconds a blocking receive waits before failing with EAGAIN (-1 = for ever).</summary>
    public int ReceiveTimeout
    {
        get => GetOptionInt32(SocketOption.ReceiveTimeout);
        set => SetOption(SocketOption.ReceiveTimeout, value);
    }

    /// <summary>Kernel send buffer size in bytes (0 = OS default).</summary>
    public int SendBufferSize
    {
        get => GetOptionInt32(SocketOption.SendBuffer);
        set => SetOption(SocketOption.SendBuffer, value);
    }

    /// <summary>Kernel receive buffer size in bytes (0 = OS default).</summary>
    public int ReceiveBufferSize
    {
        get => GetOptionInt32(SocketOption.ReceiveBuffer);
        set => SetOption(SocketOption.ReceiveBuffer, value);
    }

    /// <summary>Listen backlog of TCP endpoints bound after it is set.</summary>
    public int Backlog
    {
        get => GetOptionInt32(SocketOption.Backlog);
        set => SetOption(SocketOption.Backlog, value);
    }

    /// <summary>Largest inbound message accepted in bytes (-1 = no limit; on STREAM sockets -1 and 0 mean 8 MiB, as in zlink 1.3).</summary>
    public long MaxMessageSize
    {
        get => GetOptionInt64(SocketOption.MaxMessageSize);
        set => SetOption(SocketOption.MaxMessageSize, value);
    }

    /// <summary>This socket's own routing id, as ROUTER peers see it.</summary>
    public RoutingId RoutingId
    {
        get => new(GetOptionBytes(SocketOption.RoutingId));
        set => SetOption(SocketOption.RoutingId, value.Span);
    }

    /// <summary>The last endpoint bound or connected, with the actual port of a wildcard (<c>tcp://127.0.0.1:*</c>) bind.</summary>
    public string LastEndpoint => GetOptionString(SocketOption.LastEndpoint);

    /// <summary>True when the last frame received has more frames of the same message after it.</summary>
    public bool ReceiveMore => GetOptionInt32(SocketOption.ReceiveMore) != 0;

    /// <summary>What the socket can do right now without blocking.</summary>
    public PollEvents Events => (PollEvents)GetOptionInt32(SocketOption.Events);

    /// <summary>A descriptor that becomes readable when the socket needs attention (then check <see cref="Events"/>).</summary>
    public int FileDescriptor => GetOptionInt32(SocketOption.Fd);

    /// <summary>SUB: subscribes to messages starting with <paramref name="prefix"/> (empty = everything). An XSUB refuses the option (EINVAL): it subscribes by sending a message of byte 1 then the prefix, and unsubscribes with byte 0.</summary>
    /// <param name="prefix">The prefix.</param>
    public void Subscribe(ReadOnlySpan<byte> prefix) => SetOption(SocketOption.Subscribe, prefix);

    /// <summary>SUB: subscribes to messages starting with the UTF-8 bytes of <paramref name="prefix"/>. An XSUB refuses the option (EINVAL): it subscribes by sending a message of byte 1 then the prefix, and unsubscribes with byte 0.</summary>
    /// <param name="prefix">The prefix; empty for everything.</param>
    /// <exception cref="SocketOptionException">EINVAL: the prefix holds an unpaired surrogate (no UTF-8 form). A NUL is kept: subscriptions are bytes.</exception>
    public void Subscribe(string prefix) => SetOption(SocketOption.Subscribe, TextBytes(SocketOption.Subscribe, prefix, allowNul: true));

    /// <summary>SUB: removes a subscription (an XSUB sends byte 0 then the prefix instead).</summary>
    /// <param name="prefix">The prefix given to <see cref="Subscribe(ReadOnlySpan{byte})"/>.</param>
    public void Unsubscribe(ReadOnlySpan<byte> prefix) => SetOption(SocketOption.Unsubscribe, prefix);

    /// <summary>SUB: removes a subscription (an XSUB sends byte 0 then the prefix instead).</summary>
    /// <param name="prefix">The prefix given to <see cref="Subscribe(string)"/>.</param>
    /// <exception cref="SocketOptionException">EINVAL: the prefix holds an unpaired surrogate (no UTF-8 form).</exception>
    public void Unsubscribe(string prefix) => SetOption(SocketOption.Unsubscribe, TextBytes(SocketOption.Unsubscribe, prefix, allowNul: true));

    private void SetOptionRaw(SocketOption option, void* value, nuint size)
    {
        using var socket = SocketLease.Acquire(_handle, "SetOption");
        if (Native.SetOption(socket.Value, (int)option, value, size) != 0)
        {
            int errno = Native.Errno();
            ThrowIfNoTls(option, "SetOption");
            Ensure.ThrowOption(errno, "SetOption", OptionName(option));
        }
    }

    private void GetOptionRaw(SocketOption option, void* value, nuint* size)
    {
        int errno = GetOptionErrno(option, value, size);
        if (errno != 0)
        {
            ThrowIfNoTls(option, "GetOption");
            Ensure.ThrowOption(errno, "GetOption", OptionName(option));
        }
    }

    /// <summary>
    /// A TLS option that failed on a native library without TLS (<c>zlink_has("tls")</c> 0) is
    /// reported as such rather than as the library's bare EINVAL.
    /// </summary>
    internal static void ThrowIfNoTls(SocketOption option, string operation)
    {
        if (option is >= SocketOption.TlsCert and <= SocketOption.TlsPassword && !ZlinkLibrary.Has("tls"))
        {
            const int ENOTSUP = 95;
            throw new ZlinkNotSupportedException(ENOTSUP, operation,
                $"{operation}({option}): this native library was built without TLS (zlink_has(\"tls\") is 0); TLS options and tls:// endpoints need a build with OpenSSL (NetZlink's libzlink.so built with libssl-dev).", null);
        }
    }

    /// <summary>0, or the errno of the failed zlink_getsockopt.</summary>
    private int GetOptionErrno(SocketOption option, void* value, nuint* size)
    {
        using var socket = SocketLease.Acquire(_handle, "GetOption");
        return Native.GetOption(socket.Value, (int)option, value, size) == 0 ? 0 : Native.Errno();
    }

    /// <summary>Options whose values have no small bound (an endpoint, a file name, metadata).</summary>
    private static bool HasUnboundedValue(SocketOption option) => option is SocketOption.LastEndpoint
        or SocketOption.TlsCert or SocketOption.TlsKey or SocketOption.TlsCa or SocketOption.TlsHostname
        or SocketOption.TlsPassword or SocketOption.ZmpMetadata or SocketOption.TlsLastError;

    /// <summary>The UTF-8 bytes of a string value, refused (EINVAL, with the reason) when the library would not see it as given.</summary>
    private static byte[] TextBytes(SocketOption option, string value, bool allowNul)
    {
        ArgumentNullException.ThrowIfNull(value);
        if (Utf8Z.Problem(value, allowNul) is string problem)
        {
            string advice = allowNul ? "" : "; pass binary values as bytes";
            Ensure.ThrowOption(ZlinkConstants.EINVAL, "SetOption", OptionName(option), $"the value has {problem}{advice}");
        }

        return Encoding.UTF8.GetBytes(value);
    }

    private static void ThrowWrongSize(SocketOption option, nuint size, string expected) =>
        Ensure.ThrowOption(ZlinkConstants.EINVAL, "GetOption", OptionName(option), $"the library returned {size} bytes: not {expected}");

    private static string OptionName(SocketOption option) =>
        Enum.IsDefined(option) ? option.ToString() : ((int)option).ToString(System.Globalization.CultureInfo.InvariantCulture);
}
