// How many times each errno ended a connection attempt or a connection, counted from any thread:
// the errors_by_errno of the dotnet client stacks (DotnetClient, DotnetStreamClient).
namespace NetZlink.Stress.DotnetStack;

internal sealed class ErrnoCounts
{
    private readonly Dictionary<int, long> _counts = [];

    public void Add(int errno)
    {
        lock (_counts)
        {
            _counts[errno] = _counts.GetValueOrDefault(errno) + 1;
        }
    }

    /// <summary>A copy of the counts so far.</summary>
    public IReadOnlyDictionary<int, long> Snapshot()
    {
        lock (_counts)
        {
            return new Dictionary<int, long>(_counts);
        }
    }
}
