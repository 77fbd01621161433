// The gateway's settings (section "Gateway") and their check at start.
using Microsoft.Extensions.Options;

namespace NetZlink.Samples.Gateway;

/// <summary>Where the gateway listens, the service it forwards to and its timeouts (the registry it
/// finds the backends through is the hosting package's section, NetZlink:Gateway).</summary>
public sealed class GatewayOptions
{
    /// <summary>The configuration section these settings are read from.</summary>
    public const string Section = "Gateway";

    /// <summary>The ROUTER endpoint clients send requests to (<c>tcp://127.0.0.1:*</c> picks a free port).</summary>
    public string FrontendEndpoint { get; set; } = "tcp://127.0.0.1:5570";

    /// <summary>The service name the backends register under.</summary>
    public string Service { get; set; } = "echo";

    /// <summary>How long one request may wait for the backends (all its tries) before the client gets an error reply.</summary>
    public TimeSpan BackendTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long one try waits for its answer before the request is sent again (to the next
    /// backend: a backend that died with the request is not asked again once discovery drops it).</summary>
    public TimeSpan AttemptTimeout { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The largest request body accepted, in bytes (the ROUTER drops a client that sends a larger message).</summary>
    public int MaxRequestBytes { get; set; } = 64 * 1024;

    /// <summary>The largest MaxRequestBytes (16 MiB): a request is held whole until it is answered.</summary>
    public static int RequestLimit => 16 * 1024 * 1024;

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
        if (string.IsNullOrWhiteSpace(FrontendEndpoint) || string.IsNullOrWhiteSpace(Service))
        {
            return "Gateway:FrontendEndpoint and Gateway:Service must be set";
        }

        if (BackendTimeout <= TimeSpan.Zero)
        {
            return $"Gateway:BackendTimeout must be positive (is {BackendTimeout})";
        }

        if (AttemptTimeout <= TimeSpan.Zero || AttemptTimeout > BackendTimeout)
        {
            return $"Gateway:AttemptTimeout must be positive and at most Gateway:BackendTimeout (is {AttemptTimeout})";
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
