// Why a connection never came up.
namespace NetZlink.Engine;

/// <summary>The final outcome of a connection whose attempts all failed.</summary>
/// <param name="TimedOut">True when the last attempt hit the connect timeout.</param>
/// <param name="Errno">The errno of the last attempt when known (e.g. ECONNREFUSED 111, ETIMEDOUT 110), else 0.</param>
/// <param name="Attempts">
/// Attempts made: 1 + <see cref="EngineOptions.ConnectRetries"/> for an error that can pass, 1 for a
/// <see cref="Permanent"/> one, which the engine never retries.
/// </param>
public readonly record struct ConnectFailure(bool TimedOut, int Errno, int Attempts)
{
    /// <summary>
    /// True when <see cref="Errno"/> cannot change on a retry (EINVAL, ENODEV, EPROTONOSUPPORT,
    /// ENOTSUP/EOPNOTSUPP, EAFNOSUPPORT: a bad endpoint, or a library or kernel that cannot make
    /// this connection), so the engine gave up after that one attempt. False for errors that can
    /// pass (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH, EADDRNOTAVAIL, EMFILE, …), which are retried.
    /// </summary>
    public bool Permanent => !TimedOut && ConnectErrnoPolicy.IsPermanent(Errno);
}
