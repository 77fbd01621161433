// The HTTP/1.1 upgrade of a ws:// or wss:// connection, done by hand on the connection's stream
// (plain, or an SslStream for wss) so the dotnet stack keeps its own sockets, deadlines and error
// counts; System.Net.WebSockets then runs the framing (WebSocket.CreateFromStream). Same contract as
// the netzlink side: GET <path> with Upgrade: websocket, Connection: Upgrade, a 16-byte
// Sec-WebSocket-Key and version 13, no subprotocol, no extension; 101 with Sec-WebSocket-Accept;
// a wrong path is answered 404, anything malformed 400, and the connection then closed.
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;

namespace NetZlink.Stress.WebSockets;

/// <summary>Client and server sides of the WebSocket opening handshake.</summary>
internal static class WebSocketHandshake
{
    /// <summary>The path every ws endpoint of the tool uses (the contract's default).</summary>
    public const string DefaultPath = "/";

    /// <summary>The longest request or response head either side reads before giving up.</summary>
    public const int MaxHeadBytes = 8 * 1024;

    /// <summary>Seconds between the keep-alive frames System.Net.WebSockets sends on an idle connection.</summary>
    public static readonly TimeSpan KeepAlive = TimeSpan.FromSeconds(30);

    private const string AcceptGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    /// <summary>The Sec-WebSocket-Accept value for <paramref name="key"/>.</summary>
#pragma warning disable CA5350 // SHA-1 is what RFC 6455 fixes for the accept value; it proves an upgrade was understood, it protects nothing
    public static string AcceptFor(string key) => Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + AcceptGuid)));
#pragma warning restore CA5350

    /// <summary>
    /// Sends the upgrade request for <paramref name="path"/> on <paramref name="stream"/>, checks the 101 answer
    /// and its accept value, and returns the client WebSocket over the stream (which it then owns).
    /// </summary>
    /// <exception cref="WebSocketException">The server did not accept the upgrade; the message says what it answered.</exception>
    /// <exception cref="IOException">The connection ended or failed during the handshake.</exception>
    public static async Task<WebSocket> ConnectAsync(Stream stream, string hostHeader, string path, CancellationToken cancellationToken)
    {
        string key = Convert.ToBase64String(RandomNumberGenerator.GetBytes(16));
        string request = $"GET {path} HTTP/1.1\r\nHost: {hostHeader}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + $"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n";
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request), cancellationToken).ConfigureAwait(false);
        (string? head, ReadOnlyMemory<byte> rest) = await ReadHeadAsync(stream, cancellationToken).ConfigureAwait(false);
        if (head is null)
        {
            throw new WebSocketException(WebSocketError.HeaderError, $"the server's answer to the upgrade has no end of head within {MaxHeadBytes} bytes");
        }

        string[] lines = head.Split("\r\n");
        string[] status = lines[0].Split(' ', 3);
        if (status.Length < 2 || !status[0].StartsWith("HTTP/1.", StringComparison.Ordinal) || status[1] != "101")
        {
            throw new WebSocketException(WebSocketError.NotAWebSocket, $"the server answered the upgrade with '{lines[0]}', not 101");
        }

        string? accept = Header(lines, "Sec-WebSocket-Accept");
        if (accept != AcceptFor(key))
        {
            throw new WebSocketException(WebSocketError.HeaderError, $"the server's Sec-WebSocket-Accept '{accept}' does not match the key sent");
        }

        return Create(rest.IsEmpty ? stream : new PrefixedStream(rest, stream), isServer: false);
    }

    /// <summary>
    /// Reads an upgrade request from <paramref name="stream"/>; answers 101 and returns the server WebSocket over the
    /// stream, or answers 404 (another path than <paramref name="path"/>) or 400 (malformed) and returns null.
    /// </summary>
    /// <exception cref="IOException">The connection ended or failed during the handshake.</exception>
    public static async Task<WebSocket?> AcceptAsync(Stream stream, string path, CancellationToken cancellationToken)
    {
        (string? head, ReadOnlyMemory<byte> rest) = await ReadHeadAsync(stream, cancellationToken).ConfigureAwait(false);
        (int code, string? accept) = head is null ? (400, null) : Check(head, path);
        if (accept is null)
        {
            string reason = code == 404 ? "Not Found" : "Bad Request";
            await stream.WriteAsync(Encoding.ASCII.GetBytes($"HTTP/1.1 {code} {reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"), cancellationToken).ConfigureAwait(false);
            await stream.FlushAsync(cancellationToken).ConfigureAwait(false);
            return null;
        }

        string answer = $"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n";
        await stream.WriteAsync(Encoding.ASCII.GetBytes(answer), cancellationToken).ConfigureAwait(false);
        return Create(rest.IsEmpty ? stream : new PrefixedStream(rest, stream), isServer: true);
    }

    /// <summary>The status a request head earns (101, 400, 404) and, for 101, the accept value to send.</summary>
    internal static (int Code, string? Accept) Check(string head, string path)
    {
        string[] lines = head.Split("\r\n");
        string[] request = lines[0].Split(' ');
        if (request.Length != 3 || request[0] != "GET" || !request[2].StartsWith("HTTP/1.", StringComparison.Ordinal) || request[2] == "HTTP/1.0")
        {
            return (400, null);
        }

        string? key = Header(lines, "Sec-WebSocket-Key");
        bool upgrade = HasToken(Header(lines, "Upgrade"), "websocket") && HasToken(Header(lines, "Connection"), "upgrade");
        if (!upgrade || Header(lines, "Sec-WebSocket-Version") != "13" || Header(lines, "Host") is null || !IsKey(key))
        {
            return (400, null);
        }

        string target = request[1];
        int query = target.IndexOf('?', StringComparison.Ordinal);
        if ((query < 0 ? target : target[..query]) != path)
        {
            return (404, null);
        }

        return (101, AcceptFor(key!));
    }

    private static WebSocket Create(Stream stream, bool isServer) =>
        WebSocket.CreateFromStream(stream, new WebSocketCreationOptions { IsServer = isServer, KeepAliveInterval = KeepAlive });

    private static bool IsKey(string? key)
    {
        Span<byte> decoded = stackalloc byte[24];
        return key is { Length: 24 } && Convert.TryFromBase64String(key, decoded, out int length) && length == 16;
    }

    private static bool HasToken(string? value, string token) =>
        value is not null && value.Split(',').Any(t => string.Equals(t.Trim(), token, StringComparison.OrdinalIgnoreCase));

    /// <summary>The value of header <paramref name="name"/> (the first, trimmed), or null.</summary>
    private static string? Header(string[] lines, string name)
    {
        for (int i = 1; i < lines.Length; i++)
        {
            int colon = lines[i].IndexOf(':', StringComparison.Ordinal);
            if (colon > 0 && string.Equals(lines[i][..colon].Trim(), name, StringComparison.OrdinalIgnoreCase))
            {
                return lines[i][(colon + 1)..].Trim();
            }
        }

        return null;
    }

    /// <summary>
    /// Reads up to the blank line that ends an HTTP head; the head (without that blank line) and any bytes read past it,
    /// or a null head when none ended within <see cref="MaxHeadBytes"/>.
    /// </summary>
    /// <exception cref="IOException">The stream ended before the head did.</exception>
    private static async Task<(string? Head, ReadOnlyMemory<byte> Surplus)> ReadHeadAsync(Stream stream, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[MaxHeadBytes];
        int filled = 0;
        while (filled < buffer.Length)
        {
            int read = await stream.ReadAsync(buffer.AsMemory(filled), cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                throw new IOException($"the connection ended during the WebSocket handshake ({filled} bytes of the head read)");
            }

            int searchFrom = Math.Max(0, filled - 3);
            filled += read;
            int end = buffer.AsSpan(searchFrom, filled - searchFrom).IndexOf("\r\n\r\n"u8);
            if (end >= 0)
            {
                end += searchFrom;
                return (Encoding.ASCII.GetString(buffer, 0, end), buffer.AsMemory(end + 4, filled - end - 4));
            }
        }

        return (null, ReadOnlyMemory<byte>.Empty);
    }
}
