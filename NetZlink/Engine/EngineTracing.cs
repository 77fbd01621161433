// The engine's spans (ActivitySource "NetZlink", the Meter's name), following the OpenTelemetry
// messaging conventions where they fit: messaging.system "zlink", network.peer.*, server.*,
// error.type. Connection lifecycle spans (connect attempts, accepts, disconnects) are made
// whenever someone listens to the source; message spans only when
// EngineOptions.MessageTraceSampleRatio is above 0 (default 0: no span per message), for that
// share of messages. With nobody listening each call costs one check.
//
// Spans that live across shard passes (a connect attempt) are started without becoming the
// shard thread's Activity.Current, so one attempt's span never becomes another's parent.
using System.Diagnostics;
using System.Globalization;

namespace NetZlink.Engine;

internal static class EngineTracing
{
    internal const string SourceName = EngineMetrics.MeterName;

    internal static readonly ActivitySource Source = new(SourceName, "0.2.0");

    /// <summary>Whether a message is to get a span: someone listens and it falls in the sampled share.</summary>
    internal static bool SampleMessage(double ratio)
        => ratio > 0 && Source.HasListeners() && (ratio >= 1 || Random.Shared.NextDouble() < ratio);

    /// <summary>A connect attempt's span (kind Client), left open until it resolves; null when nobody listens.</summary>
    internal static Activity? StartConnect(string engine, string endpoint, int connection, int attempt)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        Activity? previous = Activity.Current;
        Activity.Current = null; // a default parent context means "the current one"
        Activity? span = Source.StartActivity("connect " + endpoint, ActivityKind.Client, parentContext: default);
        Activity.Current = previous;
        if (span is { IsAllDataRequested: true })
        {
            Describe(span, engine, endpoint, connection, peer: true);
            span.SetTag("netzlink.connect.attempt", attempt);
        }

        return span;
    }

    /// <summary>Ends a connect attempt's span: established, or failed with its reason.</summary>
    internal static void EndConnect(Activity? span, string? failure, string? errorType)
    {
        if (span is null)
        {
            return;
        }

        if (failure is not null)
        {
            span.SetTag("error.type", errorType);
            span.SetStatus(ActivityStatusCode.Error, failure);
        }

        Stop(span);
    }

    /// <summary>A connection event without duration: "accept" (kind Server) or "disconnect" with its reason.</summary>
    internal static void Instant(string operation, ActivityKind kind, string engine, string endpoint, int connection, bool peer, string? reason, bool error)
    {
        if (!Source.HasListeners())
        {
            return;
        }

        Activity? previous = Activity.Current;
        Activity.Current = null;
        Activity? span = Source.StartActivity(operation + " " + endpoint, kind, parentContext: default);
        if (span is not null)
        {
            if (span.IsAllDataRequested)
            {
                Describe(span, engine, endpoint, connection, peer);
                if (reason is not null)
                {
                    span.SetTag("netzlink.disconnect.reason", reason);
                }

                if (error)
                {
                    span.SetTag("error.type", reason);
                    span.SetStatus(ActivityStatusCode.Error, reason);
                }
            }

            span.Stop();
        }

        Activity.Current = previous;
    }

    /// <summary>
    /// A reconnect span (kind Internal, no duration): a round scheduled (<paramref name="failure"/>
    /// null), or the give-up, with status Error and the last round's reason.
    /// </summary>
    internal static void Reconnect(string engine, string endpoint, int connection, int round, double delayMs, string? failure)
    {
        if (!Source.HasListeners())
        {
            return;
        }

        Activity? previous = Activity.Current;
        Activity.Current = null;
        Activity? span = Source.StartActivity((failure is null ? "reconnect " : "reconnect_gave_up ") + endpoint, ActivityKind.Internal, parentContext: default);
        if (span is not null)
        {
            if (span.IsAllDataRequested)
            {
                Describe(span, engine, endpoint, connection, peer: true);
                span.SetTag("netzlink.reconnect.attempt", round);
                if (failure is null)
                {
                    span.SetTag("netzlink.reconnect.delay_ms", delayMs);
                }
                else
                {
                    span.SetTag("error.type", "reconnect_gave_up");
                    span.SetStatus(ActivityStatusCode.Error, failure);
                }
            }

            span.Stop();
        }

        Activity.Current = previous;
    }

    /// <summary>
    /// A message span (kind Producer for "send", Consumer for "receive"). A send is a child of
    /// the poster's current activity; a receive, on a shard thread, has no parent.
    /// </summary>
    internal static void Message(string operation, ActivityKind kind, string engine, string endpoint, int connection, bool peer, int bytes)
    {
        Activity? previous = Activity.Current;
        Activity? span = Source.StartActivity(operation + " " + endpoint, kind);
        if (span is not null)
        {
            if (span.IsAllDataRequested)
            {
                Describe(span, engine, endpoint, connection, peer);
                span.SetTag("messaging.operation.type", operation);
                span.SetTag("messaging.message.body.size", bytes);
            }

            span.Stop();
        }

        Activity.Current = previous;
    }

    private static void Stop(Activity span)
    {
        Activity? previous = Activity.Current;
        span.Stop();
        Activity.Current = previous;
    }

    /// <summary>The attributes every engine span carries.</summary>
    private static void Describe(Activity span, string engine, string endpoint, int connection, bool peer)
    {
        span.SetTag("messaging.system", "zlink");
        span.SetTag("messaging.destination.name", endpoint);
        span.SetTag("netzlink.engine.name", engine);
        span.SetTag("netzlink.connection.index", connection);
        (string? transport, string? host, int port) = Parse(endpoint);
        span.SetTag("network.transport", "tcp");
        if (transport is not null and not "tcp")
        {
            span.SetTag("network.protocol.name", transport);
        }

        if (host is null)
        {
            return;
        }

        // A client knows its peer (the endpoint it connects to); a server knows its own address.
        span.SetTag(peer ? "network.peer.address" : "server.address", host);
        span.SetTag(peer ? "network.peer.port" : "server.port", port);
    }

    /// <summary>Scheme, host and port of <c>scheme://host:port[/path]</c>; nulls when it does not read so.</summary>
    internal static (string? Transport, string? Host, int Port) Parse(string endpoint)
    {
        int scheme = endpoint.IndexOf("://", StringComparison.Ordinal);
        if (scheme <= 0)
        {
            return (null, null, 0);
        }

        string address = endpoint[(scheme + 3)..];
        int slash = address.IndexOf('/');
        if (slash >= 0)
        {
            address = address[..slash];
        }

        int colon = address.LastIndexOf(':');
        if (colon <= 0 || !int.TryParse(address.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int port))
        {
            return (endpoint[..scheme], null, 0);
        }

        return (endpoint[..scheme], address[..colon].Trim('[', ']'), port);
    }
}
