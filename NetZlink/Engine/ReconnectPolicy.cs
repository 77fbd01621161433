// When and how often a client engine reconnects a connection that was established and then lost.
// Each reconnect round is the engine's ordinary connect (ConnectTimeout, ConnectRetries,
// ConnectRetryDelay); the policy spaces the rounds out: an exponential backoff with a cap and a
// jitter, and a give-up after MaxAttempts rounds. No timer per connection: the shard keeps each
// round's start as the slot's deadline, like a connect retry.
namespace NetZlink.Engine;

/// <summary>
/// Reconnects a <see cref="ClientEngine"/> connection that was established and then ended with
/// <see cref="ConnectionEndReason.Remote"/> or <see cref="ConnectionEndReason.IdleTimeout"/>
/// (set it as <see cref="EngineOptions.Reconnect"/>; null, the default, never reconnects). Round
/// <c>n</c> (from 1) starts after <c>min(MaxDelay, 24 h, InitialDelay × Multiplier^(n-1))</c> (no overflow), less a
/// random share of up to <see cref="Jitter"/> of it; each round is the engine's ordinary connect
/// (<see cref="EngineOptions.ConnectTimeout"/>, <see cref="EngineOptions.ConnectRetries"/>). A round
/// that connects starts the count again. See docs/engine.md, "Reconnecting".
/// </summary>
public sealed class ReconnectPolicy
{
    /// <summary>The delay before the first round. Default 100 ms; at least 1 ms.</summary>
    public TimeSpan InitialDelay { get; set; } = TimeSpan.FromMilliseconds(100);

    /// <summary>The most any round waits (the cap of the backoff). Default 30 s; at least <see cref="InitialDelay"/>; a cap above 24 h is 24 h.</summary>
    public TimeSpan MaxDelay { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>How much longer each round waits than the one before (before the cap). Default 2; at least 1.</summary>
    public double Multiplier { get; set; } = 2;

    /// <summary>
    /// The share of each delay that is random, from 0 (none: every delay exact) to 1 (full jitter:
    /// anywhere from 0 to the delay). A delay <c>d</c> becomes a value in <c>[d × (1 - Jitter), d]</c>,
    /// so jitter never makes a round wait longer than the backoff and the cap say. Default 0.2.
    /// </summary>
    public double Jitter { get; set; } = 0.2;

    /// <summary>Rounds after which the engine gives up on the connection (it then hears ConnectFailed); 0, the default, never gives up.</summary>
    public int MaxAttempts { get; set; }

    /// <summary>
    /// Seeds the jitter (each shard draws from its own generator, seeded with this and the shard's
    /// index), so that a test sees the same delays every run; null, the default, seeds at random.
    /// </summary>
    public int? Seed { get; set; }

    /// <summary>A copy for an engine's snapshot of its options (every setting is a value).</summary>
    internal ReconnectPolicy Copy() => (ReconnectPolicy)MemberwiseClone();

    /// <summary>The longest delay a round ever waits, whatever MaxDelay says: 24 hours.</summary>
    internal static TimeSpan LongestDelay { get; } = TimeSpan.FromHours(24);

    /// <summary>The delay before round <paramref name="round"/> (from 1), with <paramref name="sample"/> (from 0 to 1) as the random draw.</summary>
    internal TimeSpan Delay(int round, double sample)
    {
        // In milliseconds as doubles: Pow may overflow to infinity (or be NaN), so the cap, itself
        // at most LongestDelay, is applied before anything becomes a TimeSpan.
        double cap = Math.Min(MaxDelay.TotalMilliseconds, LongestDelay.TotalMilliseconds);
        double ms = InitialDelay.TotalMilliseconds * Math.Pow(Multiplier, Math.Max(0, round - 1));
        if (!(ms <= cap))
        {
            ms = cap;
        }

        double share = double.IsNaN(sample) ? 0 : Math.Clamp(sample, 0, 1);
        ms *= 1 - (Math.Clamp(Jitter, 0, 1) * share);
        return TimeSpan.FromMilliseconds(Math.Clamp(ms, 0, cap));
    }

    /// <summary>What is wrong with these settings, as (setting, problem) pairs; none when they are usable.</summary>
    internal IEnumerable<(string Option, string Problem)> Problems(string prefix)
    {
        if (InitialDelay < TimeSpan.FromMilliseconds(1))
        {
            yield return (prefix + nameof(InitialDelay), $"must be at least 1 ms (is {InitialDelay:c})");
        }

        if (MaxDelay < InitialDelay)
        {
            yield return (prefix + nameof(MaxDelay), $"must be at least InitialDelay ({InitialDelay:c}) (is {MaxDelay:c})");
        }

        if (!(Multiplier >= 1) || double.IsInfinity(Multiplier))
        {
            yield return (prefix + nameof(Multiplier), $"must be at least 1 (is {Multiplier.ToString(System.Globalization.CultureInfo.InvariantCulture)})");
        }

        if (!(Jitter is >= 0 and <= 1))
        {
            yield return (prefix + nameof(Jitter), $"must be from 0 to 1 (is {Jitter.ToString(System.Globalization.CultureInfo.InvariantCulture)})");
        }

        if (MaxAttempts < 0)
        {
            yield return (prefix + nameof(MaxAttempts), $"must not be negative (0 never gives up) (is {MaxAttempts})");
        }
    }
}
