// The kinds of native object whose live count HandleTracker keeps.
namespace NetZlink.Interop;

internal enum NativeHandleKind
{
    Context,
    Socket,
    Monitor,
    Message,
}
