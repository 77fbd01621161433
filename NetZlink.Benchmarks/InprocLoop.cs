// One inproc PAIR send-then-receive, through the public API (a SocketPair) or through raw
// P/Invoke (a RawPair, with the program's own declarations in RawZlink): the step both
// InteropOverheadBenchmarks and the overhead mode time, and the one the C program
// benchmarks/native/inproc_loop.c times against libzlink directly: both calls with DONTWAIT,
// each retried while it would block (with unlimited high-water marks a retry does not happen in
// practice; the C program counts them to show it).
using System.Runtime.CompilerServices;
using NetZlink.Interop;

namespace NetZlink.Benchmarks;

internal static unsafe class InprocLoop
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int PublicOnce(ZlinkSocket sender, ZlinkSocket receiver, byte[] payload, byte[] buffer)
    {
        while (!sender.TrySend(payload))
        {
        }

        int size;
        while (!receiver.TryReceive(buffer, out size))
        {
        }

        return size;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int RawOnce(nint sender, nint receiver, byte[] payload, byte[] buffer)
    {
        int size;
        fixed (byte* p = payload)
        fixed (byte* b = buffer)
        {
            while (NativeMethods.zlink_send(sender, p, (nuint)payload.Length, ZlinkConstants.ZLINK_DONTWAIT) < 0)
            {
                CheckWouldBlock("zlink_send");
            }

            while ((size = NativeMethods.zlink_recv(receiver, b, (nuint)buffer.Length, ZlinkConstants.ZLINK_DONTWAIT)) < 0)
            {
                CheckWouldBlock("zlink_recv");
            }
        }

        return size;
    }

    private static void CheckWouldBlock(string operation)
    {
        int errno = NativeMethods.zlink_errno();
        if (errno is not (ZlinkConstants.EAGAIN or ZlinkConstants.EINTR))
        {
            ThrowFailed(operation, errno);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowFailed(string operation, int errno)
        => throw new InvalidOperationException($"{operation} on an inproc PAIR failed with errno {errno}.");
}
