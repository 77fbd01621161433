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

    /// <summary>
    /// A <c>tls://</c> or <c>wss://</c> connection whose TLS handshake failed (EACCES: a certificate
    /// refused; EPROTO: a TLS protocol failure): why, in OpenSSL's words (<c>certificate has
    /// expired</c>, <c>hostname mismatch</c>, <c>unable to get local issuer certificate</c>, ...), as
    /// the shard's socket reported it (<see cref="ZlinkSocket.TlsLastError"/>) when the engine heard of
    /// the failure. Null otherwise.
    /// </summary>
    public string? TlsError { get; init; }

    /// <summary>With <see cref="TlsError"/>: the X509 verification result (<c>X509_V_ERR_*</c>: 10 expired, 62 hostname mismatch, 20 unknown issuer), 0 when verification was not what failed.</summary>
    public int TlsVerifyResult { get; init; }

    /// <summary>
    /// Reconnect rounds made before the engine gave up (<see cref="EngineOptions.Reconnect"/>):
    /// 0 for a connection that never came up; above 0 for one that was established, lost and
    /// could not be connected again within <see cref="ReconnectPolicy.MaxAttempts"/> rounds.
    /// </summary>
    public int Reconnects { get; init; }

    /// <summary>The failure in words, e.g. <c>connect failed: EACCES (13) after 4 attempts; TLS: certificate has expired (X509 verify result 10)</c>.</summary>
    public override string ToString()
    {
        string what = TimedOut ? $"connect timed out after {Plural.Of(Attempts, "attempt")}"
            : $"connect failed: {EngineErrors.Name(Errno)} after {Plural.Of(Attempts, "attempt")}{(Permanent ? " (permanent)" : "")}";
        if (Reconnects > 0)
        {
            what = $"reconnect gave up after {Plural.Of(Reconnects, "round")}, the last: {what}";
        }

        return ZlinkSocket.DescribeTlsFailure(TlsError, TlsVerifyResult) is string tls ? $"{what}; {tls}" : what;
    }
}
