// A zlink message (zlink_msg_t) in unmanaged memory: filled by a receive, or built for a send,
// possibly zero-copy over memory the caller owns. Sending hands the data to the socket and
// leaves the message empty; Dispose releases whatever it still holds.
using NetZlink.Interop;
using System.Runtime.InteropServices;
using System.Text;

namespace NetZlink;

/// <summary>
/// A zlink message frame. Zero-copy messages (<see cref="FromNative"/>, <see cref="FromArray(byte[], int, int, Action{byte[]})"/>)
/// call their release callback exactly once, when zlink is done with the data — possibly on
/// another thread, and possibly after the message object itself was disposed or collected.
/// Use a message from one thread at a time; <see cref="Dispose"/> may be called from any thread.
/// </summary>
public sealed unsafe class ZlinkMessage : IDisposable
{
    private readonly MessageHandle _handle;

    /// <summary>Creates an empty message (to receive into).</summary>
    public ZlinkMessage() => _handle = MessageHandle.Create();

    /// <summary>Creates a message of <paramref name="size"/> bytes in zlink's memory, to fill through <see cref="Data"/>.</summary>
    /// <param name="size">The size in bytes.</param>
    /// <exception cref="ZlinkException">Out of memory.</exception>
    public ZlinkMessage(int size)
        : this()
    {
        ArgumentOutOfRangeException.ThrowIfNegative(size);
        Reinitialize(Native.MsgInitSize(Msg, (nuint)size), "Message(size)", hint: 0);
    }

    /// <summary>Creates a message holding a copy of <paramref name="data"/>.</summary>
    /// <param name="data">The bytes.</param>
    public ZlinkMessage(ReadOnlySpan<byte> data)
        : this(data.Length) => data.CopyTo(Data);

    /// <summary>The size of the frame in bytes.</summary>
    public int Size
    {
        get
        {
            using var msg = Lease();
            return checked((int)Native.MsgSize((ZlinkMsg*)msg.Value));
        }
    }

    /// <summary>
    /// The frame's bytes, in place. Valid until the message is sent, received into, moved, copied
    /// over or disposed.
    /// </summary>
    public Span<byte> Data
    {
        get
        {
            using var msg = Lease();
            var p = (ZlinkMsg*)msg.Value;
            return new Span<byte>(Native.MsgData(p), checked((int)Native.MsgSize(p)));
        }
    }

    /// <summary>True when more frames of the same message follow this received one.</summary>
    public bool More
    {
        get
        {
            using var msg = Lease();
            return Native.MsgMore((ZlinkMsg*)msg.Value) != 0;
        }
    }

    /// <summary>True when the data is shared with other messages (after <see cref="CopyTo"/>, or zero-copy).</summary>
    public bool IsShared
    {
        get
        {
            using var msg = Lease();
            return Native.MsgGet((ZlinkMsg*)msg.Value, ZlinkConstants.ZLINK_SHARED) == 1;
        }
    }

    /// <summary>True once disposed.</summary>
    public bool IsDisposed => _handle.IsClosed;

    /// <summary>
    /// A zero-copy message over native memory: zlink sends <paramref name="length"/> bytes at
    /// <paramref name="data"/> without copying, then calls <paramref name="free"/> exactly once.
    /// The memory must stay valid and unchanged until then.
    /// </summary>
    /// <param name="data">The memory.</param>
    /// <param name="length">Its length in bytes.</param>
    /// <param name="free">Called once zlink no longer needs the memory.</param>
    /// <param name="state">Passed to <paramref name="free"/>.</param>
    /// <returns>The message.</returns>
    /// <exception cref="ZlinkException">Out of memory; <paramref name="free"/> is then not called and the memory stays the caller's.</exception>
    public static ZlinkMessage FromNative(nint data, int length, MessageFreeCallback free, object? state = null)
    {
        ArgumentNullException.ThrowIfNull(free);
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        if (data == 0 && length != 0)
        {
            throw new ArgumentException("A null pointer can only carry an empty frame.", nameof(data));
        }

        return ZeroCopy((void*)data, length, ZeroCopyRelease.ForNative(free, state));
    }

    /// <summary>
    /// A zero-copy message over part of a managed array: the array is pinned, sent without
    /// copying, unpinned when zlink is done with it, and then handed to <paramref name="released"/>
    /// (exactly once), e.g. to return it to a pool. Do not change the array until then.
    /// </summary>
    /// <param name="array">The array.</param>
    /// <param name="offset">Start of the frame in the array.</param>
    /// <param name="count">Length of the frame.</param>
    /// <param name="released">Called once zlink no longer needs the array; may be null.</param>
    /// <returns>The message.</returns>
    public static ZlinkMessage FromArray(byte[] array, int offset, int count, Action<byte[]>? released = null)
    {
        ArgumentNullException.ThrowIfNull(array);
        ArgumentOutOfRangeException.ThrowIfNegative(offset);
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(offset, array.Length - count);

        var release = ZeroCopyRelease.ForArray(array, released, out byte* pinned);
        return ZeroCopy(pinned + offset, count, release);
    }

    /// <summary>A zero-copy message over a whole managed array; see <see cref="FromArray(byte[], int, int, Action{byte[]})"/>.</summary>
    /// <param name="array">The array.</param>
    /// <param name="released">Called once zlink no longer needs the array; may be null.</param>
    /// <returns>The message.</returns>
    public static ZlinkMessage FromArray(byte[] array, Action<byte[]>? released = null)
    {
        ArgumentNullException.ThrowIfNull(array);
        return FromArray(array, 0, array.Length, released);
    }

    /// <summary>A metadata property of a received message, e.g. <c>Socket-Type</c> or <c>Peer-Address</c>.</summary>
    /// <param name="property">The property name.</param>
    /// <returns>Its value, or null when the message does not carry it.</returns>
    /// <exception cref="ArgumentException">The name holds a NUL character or an unpaired surrogate.</exception>
    public string? GetMetadata(string property)
    {
        ArgumentNullException.ThrowIfNull(property);
        if (Utf8Z.Problem(property) is string problem)
        {
            throw new ArgumentException($"GetMetadata(\"{Utf8Z.Printable(property)}\"): the property name has {problem}.", nameof(property));
        }

        Span<byte> name = Utf8Z.Encode(property, stackalloc byte[Utf8Z.StackLimit]);
        using var msg = Lease();
        fixed (byte* p = name)
        {
            byte* value = Native.MsgGets((ZlinkMsg*)msg.Value, p);
            return value is null ? null : Encoding.UTF8.GetString(MemoryMarshal.CreateReadOnlySpanFromNullTerminated(value));
        }
    }

    /// <summary>
    /// Makes <paramref name="destination"/> share this message's data (no byte copy); its old content is released.
    /// Copying a message onto itself does nothing: it keeps its content.
    /// </summary>
    /// <param name="destination">The message to overwrite; may be this message.</param>
    /// <exception cref="ObjectDisposedException">Either message was disposed.</exception>
    public void CopyTo(ZlinkMessage destination) => Transfer(destination, copy: true);

    /// <summary>
    /// Moves this message's content to <paramref name="destination"/> (its old content is released) and leaves this one empty.
    /// Moving a message onto itself does nothing: it keeps its content.
    /// </summary>
    /// <param name="destination">The message to overwrite; may be this message.</param>
    /// <exception cref="ObjectDisposedException">Either message was disposed.</exception>
    public void MoveTo(ZlinkMessage destination) => Transfer(destination, copy: false);

    /// <summary>A copy of the frame's bytes.</summary>
    /// <returns>A new array.</returns>
    public byte[] ToArray() => Data.ToArray();

    /// <summary>Releases the message's data (a zero-copy release callback runs now if zlink no longer holds the data). Idempotent.</summary>
    public void Dispose() => _handle.Dispose();

    internal HandleLease Lease() => HandleLease.Acquire(_handle, nameof(ZlinkMessage));

    // Only during construction: the handle is not shared yet.
    private ZlinkMsg* Msg => _handle.Message;

    private static ZlinkMessage ZeroCopy(void* data, int length, ZeroCopyRelease release)
    {
        var message = new ZlinkMessage();
        nint hint = release.ToHint();
        int rc = Native.MsgInitData(message.Msg, data, (nuint)length, ZeroCopyRelease.FreeFunction, (void*)hint);
        message.Reinitialize(rc, "Message.FromNative", hint);
        return message;
    }

    /// <summary>After an init call on the (empty) message: on failure, restores a valid empty message and throws.</summary>
    private void Reinitialize(int rc, string operation, nint hint)
    {
        if (rc == 0)
        {
            return;
        }

        int errno = Native.Errno();
        if (hint != 0)
        {
            ZeroCopyRelease.Abandon(hint);
        }

        _ = Native.MsgInit(Msg);
        Dispose();
        Ensure.Throw(errno, operation);
    }

    private void Transfer(ZlinkMessage destination, bool copy)
    {
        ArgumentNullException.ThrowIfNull(destination);
        using var source = Lease();
        if (ReferenceEquals(destination, this))
        {
            // zlink_msg_copy and zlink_msg_move close the destination before they read the
            // source: onto itself, a copy aborts the process (libzmq's msg check) or releases
            // zero-copy data still in use, and a move empties the message.
            return;
        }

        using var target = destination.Lease();
        int rc = copy
            ? Native.MsgCopy((ZlinkMsg*)target.Value, (ZlinkMsg*)source.Value)
            : Native.MsgMove((ZlinkMsg*)target.Value, (ZlinkMsg*)source.Value);
        if (rc != 0)
        {
            Ensure.Throw(Native.Errno(), copy ? "Message.CopyTo" : "Message.MoveTo");
        }
    }
}
