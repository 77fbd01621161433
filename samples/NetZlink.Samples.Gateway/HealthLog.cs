// The health checks' verdicts in the log: the hosting package's check of the gateway (is the
// registry heard, does the service have backends) runs every few seconds, and each change of
// status is logged in one line. A service with an HTTP endpoint would map them instead
// (MapHealthChecks); this worker has none.
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace NetZlink.Samples.Gateway;

/// <summary>Logs the overall health status when it changes.</summary>
internal sealed partial class HealthLog(ILogger<HealthLog> logger) : IHealthCheckPublisher
{
    private HealthStatus? _last;

    public Task PublishAsync(HealthReport report, CancellationToken cancellationToken)
    {
        if (report.Status == _last)
        {
            return Task.CompletedTask;
        }

        _last = report.Status;
        if (logger.IsEnabled(LogLevel.Information))
        {
            string description = string.Join("; ", report.Entries.Select(e => e.Value.Description));
            LogHealth(report.Status, description);
        }

        return Task.CompletedTask;
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "health: {Status} ({Description})")]
    private partial void LogHealth(HealthStatus status, string description);
}
