namespace NetZlink.Services;

/// <summary>What a registered service is (zlink's <c>ZLINK_SERVICE_TYPE_*</c>): registries keep
/// the two apart, and a discovery sees only the type it was made for.</summary>
public enum ServiceType
{
    /// <summary>A gateway receiver (<c>ZLINK_SERVICE_TYPE_GATEWAY</c>, 1).</summary>
    Gateway = 1,

    /// <summary>A SPOT node (<c>ZLINK_SERVICE_TYPE_SPOT</c>, 2).</summary>
    Spot = 2,
}

/// <summary>How a gateway picks the receiver of a service for each message.</summary>
public enum LoadBalancing
{
    /// <summary>Each receiver in turn (zlink's <c>ZLINK_GATEWAY_LB_ROUND_ROBIN</c>, the default).</summary>
    RoundRobin = 0,

    /// <summary>Each receiver in proportion to its weight, in a fixed cycle of the total weight
    /// (zlink's <c>ZLINK_GATEWAY_LB_WEIGHTED</c>).</summary>
    Weighted = 1,
}

/// <summary>One receiver of a service as a registry announces it.</summary>
/// <param name="Service">The service name.</param>
/// <param name="Endpoint">The endpoint gateways connect to (the receiver's advertised endpoint; unique per service).</param>
/// <param name="RoutingId">The routing id of the receiver's ROUTER socket (gateways address it by this id).</param>
/// <param name="Weight">Its weight for <see cref="LoadBalancing.Weighted"/> (at least 1).</param>
public sealed record ReceiverInfo(string Service, string Endpoint, RoutingId RoutingId, uint Weight);

/// <summary>A change of one service's receivers as a <see cref="ZlinkDiscovery"/> saw it.</summary>
/// <param name="Service">The service name.</param>
/// <param name="Receivers">Every receiver the service has now (empty: the service is gone).</param>
public sealed record DiscoveryUpdate(string Service, IReadOnlyList<ReceiverInfo> Receivers);

/// <summary>A control message that does not follow zlink 1.3's service protocol. The service that
/// got it refused it (counted in its <c>RefusedMessages</c>, described in <c>LastRefusal</c>) and
/// went on.</summary>
public sealed class ServiceProtocolException : Exception
{
    /// <summary>Creates the exception.</summary>
    public ServiceProtocolException()
    {
    }

    /// <summary>Creates the exception with a message naming the message and frame refused.</summary>
    /// <param name="message">What was wrong.</param>
    public ServiceProtocolException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and its cause.</summary>
    /// <param name="message">What was wrong.</param>
    /// <param name="innerException">The cause.</param>
    public ServiceProtocolException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

/// <summary>A registry refused a receiver's REGISTER or UPDATE_WEIGHT (its REGISTER_ACK status was not 0).</summary>
public sealed class ServiceRegistrationException : Exception
{
    /// <summary>Creates the exception.</summary>
    public ServiceRegistrationException()
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What was refused and why.</param>
    public ServiceRegistrationException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and its cause.</summary>
    /// <param name="message">What was refused and why.</param>
    /// <param name="innerException">The cause.</param>
    public ServiceRegistrationException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Creates the exception from the registry's answer.</summary>
    /// <param name="status">REGISTER_ACK's status byte (1: not found, 2: invalid endpoint, 0xFF: invalid request).</param>
    /// <param name="registryError">REGISTER_ACK's error text.</param>
    /// <param name="message">What was refused.</param>
    public ServiceRegistrationException(int status, string registryError, string message)
        : base($"{message}: the registry answered status {status} ({(registryError.Length == 0 ? "no reason given" : registryError)})")
    {
        Status = status;
        RegistryError = registryError;
    }

    /// <summary>REGISTER_ACK's status byte.</summary>
    public int Status { get; }

    /// <summary>REGISTER_ACK's error text.</summary>
    public string RegistryError { get; } = "";
}

/// <summary>No receiver of the service can take the message now: discovery knows none, or none of
/// those it knows has completed its connection.</summary>
public sealed class ServiceUnavailableException : Exception
{
    /// <summary>Creates the exception.</summary>
    public ServiceUnavailableException()
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">Which service.</param>
    public ServiceUnavailableException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and its cause.</summary>
    /// <param name="message">Which service.</param>
    /// <param name="innerException">The cause.</param>
    public ServiceUnavailableException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
