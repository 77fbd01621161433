namespace NetZlink.Services;

/// <summary>Where one registration of a <see cref="ZlinkReceiver"/> or <see cref="ZlinkSpotNode"/> stands.</summary>
public enum RegistrationState
{
    /// <summary>Not registered: never, withdrawn, or refused.</summary>
    NotRegistered = 0,

    /// <summary>Registering: waiting for the registry connection or for the first REGISTER_ACK.</summary>
    Registering,

    /// <summary>The registry acknowledged the registration and heartbeats renew it.</summary>
    Registered,

    /// <summary>The registry connection dropped: the registration is sent again when it is back.</summary>
    Reconnecting,
}

/// <summary>What happened to a registration (<see cref="RegistrationChange.Kind"/>).</summary>
public enum RegistrationChangeKind
{
    /// <summary>The registry acknowledged the first REGISTER.</summary>
    Registered,

    /// <summary>After a loss, a registry acknowledged the registration again: it is listed again.</summary>
    Reregistered,

    /// <summary>The registry connection dropped (or was replaced); the registry may have forgotten
    /// the registration. It is sent again when the connection is back.</summary>
    Lost,

    /// <summary>The registration ended: withdrawn by the application, or refused by a registry
    /// when it was sent again.</summary>
    Unregistered,
}

/// <summary>One change of a registration, with the reason.</summary>
/// <param name="Service">The service name.</param>
/// <param name="Endpoint">The advertised endpoint.</param>
/// <param name="Kind">What happened.</param>
/// <param name="Reason">Why, in words (for example <c>the registry connection dropped (Remote)</c>).</param>
/// <param name="Time">When the worker saw it (UTC).</param>
public sealed record RegistrationChange(string Service, string Endpoint, RegistrationChangeKind Kind, string Reason, DateTimeOffset Time);

/// <summary>One registry a <see cref="ZlinkDiscovery"/> subscribes to, and when it last heard from it.</summary>
/// <param name="Endpoint">The publish endpoint given to <see cref="ZlinkDiscovery.ConnectRegistryAsync"/>.</param>
/// <param name="LastHeard">When the last well-formed SERVICE_LIST came from it (UTC); null: never.</param>
/// <param name="RegistryId">The registry id of that list; null: never heard.</param>
/// <param name="ListSequence">The list sequence of that list; null: never heard.</param>
public sealed record RegistryContact(string Endpoint, DateTimeOffset? LastHeard, uint? RegistryId, ulong? ListSequence);
