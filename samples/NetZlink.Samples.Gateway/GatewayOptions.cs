// The gateway's settings (section "Gateway") and their check at start.
using Microsoft.Extensions.Options;

namespace NetZlink.Samples.Gateway;

/// <summary>Where the gateway listens and where it forwards.</summary>
public sealed class GatewayOptions
{
    /// <summary>The configuration section these settings are read from.</summary>
    public const string Section = "Gateway";

    /// <summary>The ROUTER endpoint clients send requests to (<c>tcp://127.0.0.1:*</c> picks a free port).</summary>
    public string FrontendEndpoint { get; set; } = "tcp://127.0.0.1:5570";

    /// <summary>The STREAM backend each request is forwarded to, length-prefixed (an echo server, for example).</summary>
    public string BackendEndpoint { get; set; } = "tcp://127.0.0.1:27110";

    /// <summary>How long one request may wait for the backend before the client gets an error reply.</summary>
    public TimeSpan BackendTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>The largest request body accepted, in bytes (the ROUTER drops a client that sends a larger message).</summary>
    public int MaxRequestBytes { get; set; } = 64 * 1024;

    /// <summary>
    /// The largest MaxRequestBytes: a request goes to the backend as one length-prefixed packet, and
    /// the engine sends and receives packets up to EngineOptions.MaxPacketSize, header included
    /// (docs/engine.md, "Frame sizes": the posting capacity bounds what is held, not one packet).
    /// </summary>
    public static int RequestLimit => new NetZlink.Engine.EngineOptions().MaxPacketSize - 4;

    /// <summary>Null when the "Gateway" section of <paramref name="configuration"/> reads and checks; else what is wrong.</summary>
    public static string? ReadProblem(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        try
        {
            return (configuration.GetSection(Section).Get<GatewayOptions>() ?? new GatewayOptions()).Validate();
        }
        catch (InvalidOperationException e)
        {
            // A value of the wrong type ("BackendTimeout": "banana"): the binder names the setting.
            return e.InnerException is { } inner ? $"{e.Message} {inner.Message}" : e.Message;
        }
    }

    /// <summary>Null when the settings are usable, else what is wrong.</summary>
    public string? Validate()
    {
        if (string.IsNullOrWhiteSpace(FrontendEndpoint) || string.IsNullOrWhiteSpace(BackendEndpoint))
        {
            return "Gateway:FrontendEndpoint and Gateway:BackendEndpoint must be set";
        }

        if (BackendTimeout <= TimeSpan.Zero)
        {
            return $"Gateway:BackendTimeout must be positive (is {BackendTimeout})";
        }

        return MaxRequestBytes < 1 || MaxRequestBytes > RequestLimit ? $"Gateway:MaxRequestBytes must be 1..{RequestLimit} (is {MaxRequestBytes})" : null;
    }
}

/// <summary>Refuses unusable settings at start (ValidateOnStart), naming the setting.</summary>
internal sealed class GatewayOptionsValidator : IValidateOptions<GatewayOptions>
{
    public ValidateOptionsResult Validate(string? name, GatewayOptions options) =>
        options.Validate() is { } problem ? ValidateOptionsResult.Fail(problem) : ValidateOptionsResult.Success;
}
