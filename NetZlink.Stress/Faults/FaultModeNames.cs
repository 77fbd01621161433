// The --fault spellings, kept apart from the enum so that the CLI words ("wrong-length") need not
// follow C# naming and the list in --help and in errors is written once.
namespace NetZlink.Stress.Faults;

/// <summary>Maps --fault words to <see cref="FaultMode"/> and back.</summary>
internal static class FaultModeNames
{
    private static readonly (string Name, FaultMode Mode)[] Table =
    [
        ("none", FaultMode.None),
        ("silent", FaultMode.Silent),
        ("garbage", FaultMode.Garbage),
        ("wrong-length", FaultMode.WrongLength),
        ("close-mid-packet", FaultMode.CloseMidPacket),
        ("slow", FaultMode.Slow),
        ("crash", FaultMode.Crash),
        ("stall", FaultMode.Stall),
    ];

    /// <summary>Every --fault word, in the order --help lists them.</summary>
    public static IReadOnlyList<string> All { get; } = Table.Select(e => e.Name).ToArray();

    /// <summary>The mode for <paramref name="name"/> (case-insensitive).</summary>
    /// <exception cref="ArgumentException">Not one of <see cref="All"/>.</exception>
    public static FaultMode Parse(string name)
    {
        foreach ((string n, FaultMode mode) in Table)
        {
            if (string.Equals(n, name, StringComparison.OrdinalIgnoreCase))
            {
                return mode;
            }
        }

        throw new ArgumentException($"--fault must be one of {string.Join(", ", All)} (got '{name}')");
    }

    /// <summary>The --fault word for <paramref name="mode"/>.</summary>
    public static string Name(FaultMode mode) => Table.First(e => e.Mode == mode).Name;
}
