// The documented range of one numeric flag: what the validator accepts, what --help and the
// README say, and what every error message about the flag quotes.
using System.Globalization;

namespace NetZlink.Stress.Cli;

/// <summary>An inclusive range <see cref="Min"/>..<see cref="Max"/> for <see cref="Flag"/>.</summary>
/// <param name="Flag">The flag with its dashes, e.g. "--size".</param>
/// <param name="Min">The smallest value accepted.</param>
/// <param name="Max">The largest value accepted.</param>
/// <param name="Unit">What the value counts ("seconds"), or empty.</param>
/// <param name="Why">Why the range is what it is, in parentheses after it, or empty.</param>
internal sealed record FlagRange(string Flag, double Min, double Max, string Unit = "", string Why = "")
{
    /// <summary>When set, 0 is accepted too, meaning this (e.g. "closed loop"), though it is below <see cref="Min"/>.</summary>
    public string? ZeroMeans { get; init; }

    /// <summary>"9..16777212", "0..3600 seconds", "0 (closed loop) or 0.001..1000000000 packets per second".</summary>
    public string Text
    {
        get
        {
            string range = $"{Format(Min)}..{Format(Max)}{(Unit.Length > 0 ? " " + Unit : string.Empty)}";
            return ZeroMeans is null ? range : $"0 ({ZeroMeans}) or {range}";
        }
    }

    /// <summary>Whether <paramref name="value"/> is accepted; never NaN or an infinity.</summary>
    public bool Contains(double value) => (value >= Min && value <= Max) || (ZeroMeans is not null && value == 0);

    /// <summary>"--size must be 9..16777212 (…) (got 2147483647)".</summary>
    public string Error(double got) =>
        $"{Flag} must be {Text}{(Why.Length > 0 ? $" ({Why})" : string.Empty)} (got {Format(got)})";

    /// <summary>A value as the user would write it: "1000000000", "0.001", "NaN".</summary>
    public static string Format(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}
