// zlink_pollitem_t on Linux: { void *socket; int fd; short events; short revents; } (16 bytes).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

[StructLayout(LayoutKind.Sequential)]
internal struct ZlinkPollItem
{
    /// <summary>The zlink socket, or 0 to poll <see cref="Fd"/> instead.</summary>
    public nint Socket;
    public int Fd;
    public short Events;
    public short Revents;
}
