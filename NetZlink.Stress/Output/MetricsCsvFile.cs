// --metrics-csv: one row per run (ResultSchema's CSV fields) appended under the header, which is
// written when the file is new or empty.
using System.Text;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>The CSV header, rows and the append to the file.</summary>
internal static class MetricsCsvFile
{
    private static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false);

    private static readonly IReadOnlyList<ResultField> Columns = ResultSchema.In(FieldFormats.Csv);

    /// <summary>The column names.</summary>
    public static string Header { get; } = string.Join(',', Columns.Select(c => c.Name));

    /// <summary>One row, in <see cref="Header"/> order, quoted where RFC 4180 needs it.</summary>
    public static string Row(ScenarioResult result) =>
        string.Join(',', Columns.Select(c => Escape(c.Read(result).ToString())));

    /// <summary>Appends a row to <paramref name="path"/>, with the header first if the file is new or empty.</summary>
    public static void Append(string path, ScenarioResult result)
    {
        OutputFiles.CreateParentDirectory(path);
        using var stream = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.Read);
        using var writer = new StreamWriter(stream, Utf8);
        if (stream.Length == 0)
        {
            writer.Write(Header);
            writer.Write('\n');
        }

        writer.Write(Row(result));
        writer.Write('\n');
    }

    private static string Escape(string field) =>
        field.AsSpan().IndexOfAny(",\"\r\n") < 0 ? field : "\"" + field.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"";
}
