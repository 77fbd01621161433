// Owns the unmanaged 64-byte block of one zlink_msg_t. The block is always an initialised
// message while the handle is open (an empty one at worst), so release is always
// zlink_msg_close + free; a zero-copy message's free callback may run inside that close.
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed unsafe class MessageHandle : SafeHandle
{
    public MessageHandle()
        : base(0, ownsHandle: true)
    {
    }

    public override bool IsInvalid => handle == 0;

    internal ZlinkMsg* Message => (ZlinkMsg*)handle;

    /// <summary>Allocates the block and initialises it as an empty message.</summary>
    internal static MessageHandle Create()
    {
        var owner = new MessageHandle();
        var msg = (ZlinkMsg*)NativeMemory.AlignedAlloc(ZlinkConstants.MessageSize, (nuint)sizeof(nint));
        _ = NativeMethods.zlink_msg_init(msg);
        owner.SetHandle((nint)msg);
        HandleTracker.Opened(NativeHandleKind.Message);
        return owner;
    }

    protected override bool ReleaseHandle()
    {
        var msg = (ZlinkMsg*)handle;
        _ = NativeMethods.zlink_msg_close(msg);
        NativeMemory.AlignedFree(msg);
        HandleTracker.Closed(NativeHandleKind.Message);
        return true;
    }
}
