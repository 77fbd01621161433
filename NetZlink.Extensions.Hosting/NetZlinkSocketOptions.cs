// The settings of one hosted plain socket (AddNetZlinkSocket), as configuration holds them: its type,
// the endpoints it binds and connects, the socket options a service sets, TLS and the health
// check's grace period. "NetZlink:Sockets:Feed:Type", "NetZlink:Sockets:Feed:Connect:0",
// "NetZlink:Sockets:Feed:HeartbeatInterval". The check at start is at the end of this file.
using System.Globalization;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// What a hosted <see cref="ZlinkSocket"/> is built from. The socket options are the
/// <see cref="ZlinkSocket"/> properties of the same names (milliseconds where the property takes
/// them); a setting left unset keeps the binding's default.
/// </summary>
public sealed class NetZlinkSocketOptions
{
    /// <summary>The socket type: <c>Pair</c>, <c>Pub</c>, <c>Sub</c>, <c>Dealer</c>, <c>Router</c>, <c>XPub</c>, <c>XSub</c> or <c>Stream</c> (any case).</summary>
    public string? Type { get; set; }

    /// <summary>Endpoints bound when the host starts.</summary>
    public IList<string> Bind { get; } = [];

    /// <summary>Endpoints connected when the host starts.</summary>
    public IList<string> Connect { get; } = [];

    /// <summary><see cref="ZlinkSocket.Linger"/>: milliseconds unsent messages are kept after the socket closes at the host's stop (-1: until sent). Unset: 0.</summary>
    public int? Linger { get; set; }

    /// <summary><see cref="ZlinkSocket.SendHighWaterMark"/> (0: no limit).</summary>
    public int? SendHighWaterMark { get; set; }

    /// <summary><see cref="ZlinkSocket.ReceiveHighWaterMark"/> (0: no limit).</summary>
    public int? ReceiveHighWaterMark { get; set; }

    /// <summary><see cref="ZlinkSocket.RoutingId"/> (in configuration, base64).</summary>
    public byte[]? RoutingId { get; set; }

    /// <summary><see cref="ZlinkSocket.ReconnectInterval"/> in ms (-1: never retry).</summary>
    public int? ReconnectInterval { get; set; }

    /// <summary><see cref="ZlinkSocket.ReconnectIntervalMax"/> in ms (0: no back-off).</summary>
    public int? ReconnectIntervalMax { get; set; }

    /// <summary><see cref="ZlinkSocket.HeartbeatInterval"/> in ms (0: none; not on STREAM).</summary>
    public int? HeartbeatInterval { get; set; }

    /// <summary><see cref="ZlinkSocket.HeartbeatTtl"/> in ms (0, or 100 to 6,553,599; not on STREAM).</summary>
    public int? HeartbeatTtl { get; set; }

    /// <summary><see cref="ZlinkSocket.HeartbeatTimeout"/> in ms (0 or more; not on STREAM).</summary>
    public int? HeartbeatTimeout { get; set; }

    /// <summary>The prefixes a SUB or XSUB socket subscribes to before it connects (an empty string: everything).</summary>
    public IList<string> Subscribe { get; } = [];

    /// <summary>TLS for <c>tls://</c> and <c>wss://</c> endpoints: a certificate to bind them, a CA (or the system's) to verify the peers connected to.</summary>
    public EngineTlsOptions? Tls { get; set; }

    /// <summary>What the health check reports (see docs/hosting.md).</summary>
    public NetZlinkServiceHealthOptions Health { get; set; } = new();

    /// <summary>The socket type <see cref="Type"/> names, or null when it names none.</summary>
    internal ZlinkSocketType? SocketType =>
        Type is { } name && Enum.TryParse(name, ignoreCase: true, out ZlinkSocketType type) && Enum.IsDefined(type) && !int.TryParse(name, NumberStyles.Integer, CultureInfo.InvariantCulture, out _)
            ? type
            : null;
}

/// <summary>The check at start: one line per bad setting, named by its key.</summary>
internal static class NetZlinkSocketOptionsValidator
{
    private const string Types = "Pair, Pub, Sub, Dealer, Router, XPub, XSub or Stream";

    public static IEnumerable<(string Key, string? Problem)> Problems(NetZlinkSocketOptions o)
    {
        ZlinkSocketType? type = o.SocketType;
        yield return (nameof(o.Type), o.Type is null ? $"is not set: a socket type is {Types}" : type is null ? $"is '{o.Type}': a socket type is {Types}" : null);
        if (o.Bind.Count == 0 && o.Connect.Count == 0)
        {
            yield return (nameof(o.Connect), "and Bind are empty: name at least one endpoint to bind (Bind:0) or to connect to (Connect:0)");
        }

        bool stream = type == ZlinkSocketType.Stream;
        foreach ((string list, IList<string> endpoints) in new[] { (nameof(o.Bind), o.Bind), (nameof(o.Connect), o.Connect) })
        {
            for (int i = 0; i < endpoints.Count; i++)
            {
                string endpoint = endpoints[i] ?? string.Empty;
                bool local = endpoint.StartsWith("ipc://", StringComparison.Ordinal) || endpoint.StartsWith("inproc://", StringComparison.Ordinal);
                yield return ($"{list}:{i}", stream && local
                    ? $"is '{endpoint}': a STREAM socket's endpoint is tcp://host:port, tls://host:port, ws://host:port[/path] or wss://host:port[/path]"
                    : SettingChecks.EndpointProblem(endpoint, "a socket endpoint"));
            }
        }

        yield return (nameof(o.Linger), AtLeast(o.Linger, -1));
        yield return (nameof(o.SendHighWaterMark), AtLeast(o.SendHighWaterMark, 0));
        yield return (nameof(o.ReceiveHighWaterMark), AtLeast(o.ReceiveHighWaterMark, 0));
        yield return (nameof(o.ReconnectInterval), AtLeast(o.ReconnectInterval, -1));
        yield return (nameof(o.ReconnectIntervalMax), AtLeast(o.ReconnectIntervalMax, 0));
        foreach ((string key, int? value) in new[] { (nameof(o.HeartbeatInterval), o.HeartbeatInterval), (nameof(o.HeartbeatTimeout), o.HeartbeatTimeout), (nameof(o.HeartbeatTtl), o.HeartbeatTtl) })
        {
            yield return (key, value is not null && stream ? "is set on a STREAM socket: STREAM sockets have no heartbeats (TcpKeepalive is theirs)" : AtLeast(value, 0));
        }

        if (!stream && o.HeartbeatTtl is (> 0 and < 100) or > 6_553_599)
        {
            yield return (nameof(o.HeartbeatTtl), $"must be 0 or from 100 to 6553599 ms: the wire carries it in tenths of a second, 16 bits (is {o.HeartbeatTtl})");
        }

        if (o.RoutingId is { } rid)
        {
            yield return (nameof(o.RoutingId), rid.Length is >= 1 and <= SettingChecks.MaxTextBytes ? null : $"must have 1 to {SettingChecks.MaxTextBytes} bytes (has {rid.Length})");
        }

        if (o.Subscribe.Count > 0 && type is not null and not ZlinkSocketType.Sub and not ZlinkSocketType.XSub)
        {
            yield return (nameof(o.Subscribe), $"is set on a {type} socket: only SUB and XSUB sockets subscribe");
        }

        foreach ((string key, string? problem) in TlsProblems(o))
        {
            yield return (key, problem);
        }

        yield return ("Health:StartupGracePeriod", SettingChecks.NotNegative(o.Health?.StartupGracePeriod ?? TimeSpan.Zero));
    }

    private static IEnumerable<(string Key, string? Problem)> TlsProblems(NetZlinkSocketOptions o)
    {
        EngineTlsOptions? tls = o.Tls;
        foreach ((string key, string? file) in new[] { ("Tls:CertificateFile", tls?.CertificateFile), ("Tls:KeyFile", tls?.KeyFile), ("Tls:CaFile", tls?.CaFile) })
        {
            yield return (key, file is null ? null : SettingChecks.FileProblem(file));
        }

        if (tls is { Hostname: not null, CaFile: null, TrustSystem: false })
        {
            yield return ("Tls:Hostname", "is set without Tls:CaFile or Tls:TrustSystem to verify the peer's certificate against");
        }

        for (int i = 0; i < o.Bind.Count; i++)
        {
            bool secure = o.Bind[i] is { } e && (e.StartsWith("tls://", StringComparison.Ordinal) || e.StartsWith("wss://", StringComparison.Ordinal));
            yield return ($"Bind:{i}", secure && tls?.CertificateFile is null ? $"is '{o.Bind[i]}': binding a TLS endpoint needs Tls:CertificateFile (and Tls:KeyFile unless the key is in it)" : null);
        }
    }

    private static string? AtLeast(int? value, int least) =>
        value is not int v || v >= least ? null : $"must be at least {least.ToString(CultureInfo.InvariantCulture)} (is {v.ToString(CultureInfo.InvariantCulture)})";
}
