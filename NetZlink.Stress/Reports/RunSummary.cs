// One run's summary.json as the report reads it: every field as text (the file's own spelling,
// so the report shows exactly what the run wrote), numbers parsed on demand.
using System.Globalization;
using System.Text.Json;
using NetZlink.Stress.Output;

namespace NetZlink.Stress.Reports;

/// <summary>The fields of one summary.json object.</summary>
internal sealed class RunSummary
{
    private readonly Dictionary<string, string?> _fields;

    public RunSummary(IReadOnlyDictionary<string, string?> fields) =>
        _fields = new Dictionary<string, string?>(fields, StringComparer.Ordinal);

    /// <summary>Reads <paramref name="path"/>, a single-run --summary-json file.</summary>
    /// <exception cref="InvalidDataException">The file is not one JSON object.</exception>
    public static RunSummary Read(string path)
    {
        using JsonDocument document = JsonDocument.Parse(File.ReadAllBytes(path));
        if (document.RootElement.ValueKind != JsonValueKind.Object)
        {
            throw new InvalidDataException($"{path} holds a JSON {document.RootElement.ValueKind}, not the object of one run");
        }

        var fields = new Dictionary<string, string?>(StringComparer.Ordinal);
        foreach (JsonProperty p in document.RootElement.EnumerateObject())
        {
            fields[p.Name] = p.Value.ValueKind switch
            {
                JsonValueKind.Null => null,
                JsonValueKind.String => p.Value.GetString(),
                _ => p.Value.GetRawText(),
            };
        }

        return new RunSummary(fields);
    }

    /// <summary>A field's text; empty when absent or null.</summary>
    public string Text(string name) => _fields.GetValueOrDefault(name) ?? string.Empty;

    /// <summary>A numeric field; 0 when absent or not a number.</summary>
    public double Number(string name) =>
        double.TryParse(Text(name), NumberStyles.Float, CultureInfo.InvariantCulture, out double value) ? value : 0;

    public double Throughput => Number(ResultSchema.Throughput.Name);

    public double P50 => Number(ResultSchema.P50Us.Name);

    public double P95 => Number(ResultSchema.P95Us.Name);

    public double P99 => Number(ResultSchema.P99Us.Name);

    public double P999 => Number(ResultSchema.P999Us.Name);

    public string PassFail => Text(ResultSchema.PassFail.Name);
}
