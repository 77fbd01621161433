// A zlink context: the owner of I/O threads and of every socket and monitor created from it.
//
// Lifetime: the context tracks the sockets and monitors it created that are still open.
// Dispose shuts the native context down (blocked calls on its sockets return ETERM and throw
// ContextTerminatedException), closes every tracked socket and monitor, then terminates the
// native context once the last of them is really closed (a call still running on another
// thread finishes first; see ContextHandle for the ordering). Every socket gets LINGER 0 at
// creation, so neither close nor term waits for unsent messages unless the user raises LINGER.
using NetZlink.Interop;
using System.Runtime.InteropServices;

namespace NetZlink;

/// <summary>
/// A zlink context. Create sockets with <see cref="CreateSocket"/>. Disposing the context closes
/// the sockets and monitors created from it that are still open, and releases any thread blocked
/// in one of them with <see cref="ContextTerminatedException"/>. Thread-safe.
/// </summary>
public sealed class ZlinkContext : IDisposable
{
    private readonly ContextHandle _handle;
    private readonly Lock _gate = new();
    private readonly HashSet<SafeHandle> _open = [];
    private bool _disposed;

    /// <summary>Creates a context with the library's defaults (2 I/O threads).</summary>
    /// <exception cref="ZlinkException">The native context could not be created.</exception>
    /// <exception cref="DllNotFoundException">The native library could not be loaded; the message lists where it was looked for.</exception>
    public ZlinkContext()
    {
        nint context = Native.ContextNew();
        if (context == 0)
        {
            Ensure.Throw(Native.Errno(), "Context()");
        }

        _handle = new ContextHandle(context);
    }

    /// <summary>Creates a context with <paramref name="ioThreads"/> I/O threads.</summary>
    /// <param name="ioThreads">Number of I/O threads (0 is allowed for inproc-only use).</param>
    public ZlinkContext(int ioThreads)
        : this()
    {
        try
        {
            IoThreads = ioThreads;
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    /// <summary>Number of I/O threads; takes effect only before the first socket is created.</summary>
    public int IoThreads
    {
        get => GetOption(ContextOption.IoThreads);
        set => SetOption(ContextOption.IoThreads, value);
    }

    /// <summary>Maximum number of sockets the context allows.</summary>
    public int MaxSockets
    {
        get => GetOption(ContextOption.MaxSockets);
        set => SetOption(ContextOption.MaxSockets, value);
    }

    /// <summary>True once <see cref="Dispose"/> has started.</summary>
    public bool IsDisposed
    {
        get
        {
            lock (_gate)
            {
                return _disposed;
            }
        }
    }

    internal ContextHandle Handle => _handle;

    /// <summary>
    /// Takes a reference on the native context for an owner that creates untracked objects on it
    /// (the engine, which opens and closes its own STREAM sockets and monitors). The context is
    /// terminated only after the owner gives the reference back (<c>DangerousRelease</c>), so a
    /// Dispose from another thread shuts the context down (the owner's calls fail with ETERM)
    /// but never waits on, nor frees memory under, objects the owner has yet to close.
    /// </summary>
    /// <param name="operation">Named in the exception when the context was already disposed.</param>
    /// <exception cref="ObjectDisposedException">The context was disposed.</exception>
    internal ContextHandle AddReference(string operation)
    {
        lock (_gate)
        {
            if (_disposed)
            {
                throw new ObjectDisposedException(nameof(ZlinkContext), $"{operation}: the ZlinkContext was disposed.");
            }

            bool added = false;
            _handle.DangerousAddRef(ref added);
            return _handle;
        }
    }

    /// <summary>Reads an integer context option.</summary>
    /// <param name="option">The option.</param>
    /// <returns>Its value.</returns>
    /// <exception cref="SocketOptionException">The option is unknown or write-only.</exception>
    /// <exception cref="ObjectDisposedException">The context was disposed.</exception>
    public int GetOption(ContextOption option)
    {
        using var context = HandleLease.Acquire(_handle, nameof(ZlinkContext));
        int value = Native.ContextGet(context.Value, (int)option);

        // -1 is both the error return and a legal value of the two scheduling options.
        if (value == -1 && option is not (ContextOption.ThreadPriority or ContextOption.ThreadSchedPolicy))
        {
            Ensure.ThrowOption(Native.Errno(), "GetOption", option.ToString());
        }

        return value;
    }

    /// <summary>Sets an integer context option.</summary>
    /// <param name="option">The option.</param>
    /// <param name="value">Its new value.</param>
    /// <exception cref="SocketOptionException">The option is unknown, read-only, or the value is out of range.</exception>
    /// <exception cref="ObjectDisposedException">The context was disposed.</exception>
    public void SetOption(ContextOption option, int value)
    {
        using var context = HandleLease.Acquire(_handle, nameof(ZlinkContext));
        if (Native.ContextSet(context.Value, (int)option, value) != 0)
        {
            Ensure.ThrowOption(Native.Errno(), "SetOption", option.ToString());
        }
    }

    /// <summary>Creates a socket of <paramref name="type"/>, with LINGER set to 0.</summary>
    /// <param name="type">The kind of socket.</param>
    /// <returns>The socket; dispose it when done (disposing the context also closes it).</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ZlinkException">The socket could not be created (e.g. EMFILE, or EINVAL for an unknown type).</exception>
    /// <exception cref="ObjectDisposedException">The context was disposed.</exception>
    public unsafe ZlinkSocket CreateSocket(ZlinkSocketType type)
    {
        lock (_gate)
        {
            ThrowIfDisposed();
            bool contextAdded = false;
            _handle.DangerousAddRef(ref contextAdded);
            try
            {
                nint socket = Native.Socket(_handle.DangerousGetHandle(), (int)type);
                if (socket == 0)
                {
                    int errno = Native.Errno();
                    // EMFILE here is usually the context's own socket limit, not the process's files.
                    string operation = errno == ZlinkConstants.EMFILE
                        ? $"CreateSocket({type}) with {_open.Count} sockets open in this context (its MaxSockets is {MaxSockets}: raise ZlinkContext.MaxSockets, or the process's open-file limit)"
                        : $"CreateSocket({type})";
                    Ensure.Throw(errno, operation);
                }

                var socketHandle = new SocketHandle(socket, _handle, type);
                contextAdded = false;

                int linger = 0;
                if (Native.SetOption(socket, ZlinkConstants.ZLINK_LINGER, &linger, sizeof(int)) != 0)
                {
                    int errno = Native.Errno();
                    socketHandle.Dispose();
                    Ensure.ThrowOption(errno, "SetOption", nameof(SocketOption.Linger));
                }

                _open.Add(socketHandle);
                return new ZlinkSocket(this, socketHandle, type);
            }
            finally
            {
                if (contextAdded)
                {
                    _handle.DangerousRelease();
                }
            }
        }
    }

    /// <summary>
    /// Shuts the context down without closing anything: every blocking call on its sockets returns
    /// with <see cref="ContextTerminatedException"/>, and so does every later call except close.
    /// The context must still be disposed.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The context was disposed.</exception>
    public void Shutdown()
    {
        using var context = HandleLease.Acquire(_handle, nameof(ZlinkContext));
        _ = Native.ContextShutdown(context.Value);
    }

    /// <summary>
    /// Shuts the context down, closes the sockets and monitors created from it that are still
    /// open, and terminates it. Idempotent and safe to call from several threads; never hangs on
    /// open sockets (they have LINGER 0 unless the user changed it).
    /// </summary>
    public void Dispose()
    {
        SafeHandle[] open;
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            open = [.. _open];
            _open.Clear();
        }

        // Shut down before closing: a thread blocked in a call on one of our sockets holds a
        // reference on its handle, so the close below is deferred until that call returns, and
        // the shutdown is what makes it return.
        _ = Native.ContextShutdown(_handle.DangerousGetHandle());
        foreach (SafeHandle handle in open)
        {
            handle.Dispose();
        }

        _handle.TerminateInlineOnRelease();
        _handle.Dispose();
    }

    /// <summary>Opens a monitor on <paramref name="socket"/> and tracks it like a socket.</summary>
    internal ZlinkMonitor OpenMonitor(SocketHandle socket, MonitorEvents events)
    {
        lock (_gate)
        {
            ThrowIfDisposed();
            using var target = SocketLease.Acquire(socket, "OpenMonitor");
            bool contextAdded = false;
            _handle.DangerousAddRef(ref contextAdded);
            try
            {
                nint monitor = Native.MonitorOpen(target.Value, (int)events);
                if (monitor == 0)
                {
                    Ensure.Throw(Native.Errno(), $"OpenMonitor({events})");
                }

                var monitorHandle = new MonitorHandle(monitor, _handle);
                contextAdded = false;
                _open.Add(monitorHandle);
                return new ZlinkMonitor(this, monitorHandle);
            }
            finally
            {
                if (contextAdded)
                {
                    _handle.DangerousRelease();
                }
            }
        }
    }

    /// <summary>Stops tracking a socket or monitor that its owner is closing.</summary>
    internal void Forget(SafeHandle handle)
    {
        lock (_gate)
        {
            _open.Remove(handle);
        }
    }

    private void ThrowIfDisposed()
    {
        if (_disposed)
        {
            HandleLease.ThrowDisposed(nameof(ZlinkContext));
        }
    }
}
