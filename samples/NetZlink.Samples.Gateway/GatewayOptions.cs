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

    /// <summary>The largest request body accepted, in bytes.</summary>
    public int MaxRequestBytes { get; set; } = 64 * 1024;

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

        return MaxRequestBytes is < 1 or > 16 * 1024 * 1024 ? $"Gateway:MaxRequestBytes must be 1..16777216 (is {MaxRequestBytes})" : null;
    }
}

/// <summary>Refuses unusable settings at start (ValidateOnStart), naming the setting.</summary>
internal sealed class GatewayOptionsValidator : IValidateOptions<GatewayOptions>
{
    public ValidateOptionsResult Validate(string? name, GatewayOptions options) =>
        options.Validate() is { } problem ? ValidateOptionsResult.Fail(problem) : ValidateOptionsResult.Success;
}
