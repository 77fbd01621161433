// How --ccu is split over several client processes (--processes, --shard-index/--shard-count, a
// Kubernetes Indexed Job's pods): each gets total / count connections and the first total % count
// one more, in index order, so the shares add up to --ccu and differ by one at most.
using System.Globalization;

namespace NetZlink.Stress.Cli;

/// <summary>Client shares of the connections, and the pod index from the environment.</summary>
internal static class ClientShares
{
    /// <summary>The environment variable a Kubernetes Indexed Job sets to the pod's index.</summary>
    public const string IndexVariable = "JOB_COMPLETION_INDEX";

    /// <summary>The connections of share <paramref name="index"/> and the index of its first connection among all shares'.</summary>
    public static (int Count, int Offset) Of(int total, int count, int index)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(index, count);
        int each = total / count;
        int extra = total % count;
        return (each + (index < extra ? 1 : 0), (index * each) + Math.Min(index, extra));
    }

    /// <summary>The largest share: what one process must hold.</summary>
    public static int Largest(int total, int count) => (total + count - 1) / count;

    /// <summary>
    /// --shard-index when not given: <see cref="IndexVariable"/> read as a whole number; null with an
    /// error when it is missing or not a number.
    /// </summary>
    public static int? IndexFromEnvironment(Func<string, string?> environment, out string? error)
    {
        string? text = environment(IndexVariable);
        error = null;
        if (text is null)
        {
            error = $"--shard-count needs --shard-index, or the environment variable {IndexVariable} (set in each pod of a Kubernetes Indexed Job)";
            return null;
        }

        if (!int.TryParse(text.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out int index))
        {
            error = $"the environment variable {IndexVariable} must be a whole number for the shard index (got '{text}')";
            return null;
        }

        return index;
    }
}
