// Why a connection never came up.
namespace NetZlink.Engine;

/// <summary>The final outcome of a connection whose attempts all failed.</summary>
/// <param name="TimedOut">True when the last attempt hit the connect timeout.</param>
/// <param name="Errno">The errno of the last attempt when known (e.g. ECONNREFUSED 111, ETIMEDOUT 110), else 0.</param>
/// <param name="Attempts">Attempts made.</param>
public readonly record struct ConnectFailure(bool TimedOut, int Errno, int Attempts);
