// The RESULT and METRIC lines printed on stdout after every run: the fields ResultSchema marks for
// each line, in the table's order, as name=value pairs.
using System.Text;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>Formats a result as space-separated name=value lines.</summary>
internal static class ResultLines
{
    private static readonly IReadOnlyList<ResultField> ResultFields = ResultSchema.In(FieldFormats.Result);
    private static readonly IReadOnlyList<ResultField> MetricFields = ResultSchema.In(FieldFormats.Metric);

    /// <summary>"RESULT scenario=… pass_fail=… p999_us=… interrupted=…[ reason="…"]".</summary>
    public static string Result(ScenarioResult result) => Format("RESULT", ResultFields, result);

    /// <summary>"METRIC scenario_id=… pass_fail=… drain_timeout=… interrupted=…[ reason="…"]".</summary>
    public static string Metric(ScenarioResult result) => Format("METRIC", MetricFields, result);

    private static string Format(string tag, IReadOnlyList<ResultField> fields, ScenarioResult result)
    {
        var line = new StringBuilder(tag, 512);
        foreach (ResultField field in fields)
        {
            FieldValue value = field.Read(result);
            if (field.Type == FieldType.Note)
            {
                // A note (the reason) comes last, quoted, and only where there is one to give.
                if (value.Text is { } note)
                {
                    line.Append(' ').Append(field.Name).Append('=');
                    AppendQuoted(line, note);
                }

                continue;
            }

            string text = value.ToString();
            line.Append(' ').Append(field.Name).Append('=');
            if (value.IsText && NeedsQuotes(text))
            {
                AppendQuoted(line, text);
            }
            else
            {
                line.Append(text);
            }
        }

        return line.ToString();
    }

    private static bool NeedsQuotes(string text) =>
        text.Any(c => char.IsWhiteSpace(c) || c == '"' || char.IsControl(c));

    private static void AppendQuoted(StringBuilder line, string text)
    {
        line.Append('"');
        foreach (char c in text)
        {
            if (c is '"' or '\\')
            {
                line.Append('\\').Append(c);
            }
            else
            {
                // A line stays one line whatever a reason carries.
                line.Append(char.IsControl(c) ? ' ' : c);
            }
        }

        line.Append('"');
    }
}
