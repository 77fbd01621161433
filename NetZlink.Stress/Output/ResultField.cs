// One row of ResultSchema: a field's name, type, unit, decimals, merge rule and formats, with how
// to read it from a result and (for a field summary files store) how to set it from a value read back.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>What kind of value a field holds.</summary>
internal enum FieldType
{
    /// <summary>A whole number.</summary>
    Integer,

    /// <summary>A number with a fixed number of decimals.</summary>
    Decimal,

    /// <summary>0/1 in text, false/true in JSON.</summary>
    Flag,

    /// <summary>A word or text, quoted in a line when it has spaces.</summary>
    Text,

    /// <summary>A text written last in the lines, always in quotes, and only when there is one.</summary>
    Note,

    /// <summary>A wall-clock time in Unix seconds, or null.</summary>
    Time,

    /// <summary>errno → count, written "errno:count;…".</summary>
    ErrnoCounts,
}

/// <summary>How `merge` gets a field's value for several hosts together.</summary>
internal enum MergeRule
{
    /// <summary>Every host must have the same value, or the merge is refused.</summary>
    Same,

    /// <summary>The hosts' value if they all have the same, else none (null, or the default).</summary>
    Common,

    /// <summary>The hosts' values added up (errno counts: errno by errno).</summary>
    Sum,

    /// <summary>The largest (a flag: set if any host's is).</summary>
    Max,

    /// <summary>The smallest.</summary>
    Min,

    /// <summary>Computed again from the hosts' latency histograms added together.</summary>
    Histogram,

    /// <summary>Computed again from the merged fields (incomplete_ratio from sent and recv, …).</summary>
    Derived,

    /// <summary>Set again by the pass rules (ScenarioRunner.Judge) on the merged fields.</summary>
    Judged,
}

/// <summary>The outputs a field appears in.</summary>
[Flags]
internal enum FieldFormats
{
    None = 0,

    /// <summary>The RESULT line.</summary>
    Result = 1,

    /// <summary>The METRIC line.</summary>
    Metric = 2,

    /// <summary>--metrics-csv's columns.</summary>
    Csv = 4,

    /// <summary>--summary-json's properties.</summary>
    Json = 8,

    /// <summary>A column of the compare report's run table.</summary>
    Report = 16,

    /// <summary>The merge_input object --json-histogram adds to the JSON (numbers with every decimal).</summary>
    MergeInput = 32,
}

/// <summary>A field of the result schema.</summary>
/// <param name="Name">Its name in every format (name=value, CSV header, JSON property, report column).</param>
/// <param name="Type">Its kind of value.</param>
/// <param name="Unit">What it counts or measures in ("" for texts, words and flags).</param>
/// <param name="Decimals">Decimals of a <see cref="FieldType.Decimal"/> (negative: every decimal); 0 otherwise.</param>
/// <param name="Merge">How `merge` combines hosts' values.</param>
/// <param name="Formats">Where it appears.</param>
/// <param name="Read">Its value for a result.</param>
/// <param name="Write">Sets it on a result from a value read back from a summary file; null for a field computed again after a merge.</param>
internal sealed record ResultField(
    string Name,
    FieldType Type,
    string Unit,
    int Decimals,
    MergeRule Merge,
    FieldFormats Formats,
    Func<ScenarioResult, FieldValue> Read,
    Action<ScenarioResult, FieldValue>? Write)
{
    /// <summary>Whether it appears in any of <paramref name="formats"/>.</summary>
    public bool In(FieldFormats formats) => (Formats & formats) != 0;

    /// <summary>Whether summary files store it for `merge` to read back.</summary>
    public bool IsStored => Write is not null;
}
