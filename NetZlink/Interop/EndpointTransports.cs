// The stream transports that need a capability of the native library: tls:// (zlink_has("tls")),
// ws:// (zlink_has("ws")) and wss:// (both). An endpoint over one the loaded library lacks is
// refused by the binding with a message that names the missing capability, instead of the
// library's bare EPROTONOSUPPORT.
namespace NetZlink.Interop;

internal static class EndpointTransports
{
    /// <summary>ENOTSUP, the errno of the refusal (a <see cref="ZlinkNotSupportedException"/>).</summary>
    private const int ENOTSUP = 95;

    /// <summary>The transport (scheme) of <paramref name="endpoint"/>, lower case, or null when it has no "scheme://".</summary>
    internal static string? Scheme(string endpoint)
    {
        int end = endpoint.IndexOf("://", StringComparison.Ordinal);
        return end <= 0 ? null : endpoint[..end].ToLowerInvariant();
    }

    /// <summary>
    /// Why the loaded library cannot use <paramref name="endpoint"/>'s transport (the capability it lacks), or null
    /// when it can or the transport needs no capability of its own.
    /// </summary>
    internal static string? Missing(string endpoint)
    {
        string? scheme = Scheme(endpoint);
        if (scheme is not ("tls" or "ws" or "wss"))
        {
            return null;
        }

        bool ws = scheme != "tls";
        bool tls = scheme != "ws";
        if (ws && !ZlinkLibrary.Has("ws"))
        {
            return $"this native library has no WebSocket transport (zlink_has(\"ws\") is 0); {scheme}:// endpoints need a libzlink.so built with ws support";
        }

        if (tls && !ZlinkLibrary.Has("tls"))
        {
            return $"this native library was built without TLS (zlink_has(\"tls\") is 0); {scheme}:// endpoints need a build with OpenSSL (NetZlink's libzlink.so built with libssl-dev)";
        }

        return null;
    }

    /// <summary>Refuses, before anything is opened, any of <paramref name="endpoints"/> whose transport the library lacks.</summary>
    /// <exception cref="ZlinkNotSupportedException">An endpoint's transport is missing; the message names the endpoint and the capability.</exception>
    internal static void EnsureSupported(IEnumerable<string> endpoints, string operation)
    {
        foreach (string endpoint in endpoints)
        {
            if (Missing(endpoint) is { } missing)
            {
                string what = $"{operation}(\"{Utf8Z.Printable(endpoint)}\")";
                throw new ZlinkNotSupportedException(ENOTSUP, what, $"{what}: {missing}.", null);
            }
        }
    }
}
