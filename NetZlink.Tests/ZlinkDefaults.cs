// Defaults of the zlink library family that tests compare against: those of zlink 1.3, which
// NetZlink's library follows.
namespace NetZlink.Tests;

internal static class ZlinkDefaults
{
    /// <summary>SNDHWM and RCVHWM of a new socket, of every type (libzmq's 1000 is not zlink's).</summary>
    public const int HighWaterMark = 300_000;
}
