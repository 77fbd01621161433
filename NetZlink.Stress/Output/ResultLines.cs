// The RESULT and METRIC lines printed on stdout after every run.
using System.Text;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>Formats a result as the seeds' space-separated name=value lines.</summary>
internal static class ResultLines
{
    /// <summary>"RESULT scenario=… pass_fail=… p999_us=… interrupted=…[ reason="…"]".</summary>
    public static string Result(ScenarioResult result) => Format("RESULT", ResultFields.ResultLine, result);

    /// <summary>"METRIC scenario_id=… pass_fail=… drain_timeout=… interrupted=…[ reason="…"]".</summary>
    public static string Metric(ScenarioResult result) => Format("METRIC", ResultFields.MetricLine, result);

    private static string Format(string tag, IReadOnlyList<ResultColumn> columns, ScenarioResult result)
    {
        var line = new StringBuilder(tag, 512);
        foreach (ResultColumn column in columns)
        {
            FieldValue value = column.Read(result);
            string text = value.ToString();
            line.Append(' ').Append(column.Name).Append('=');
            if (value.IsText && NeedsQuotes(text))
            {
                AppendQuoted(line, text);
            }
            else
            {
                line.Append(text);
            }
        }

        // The seeds' lines have no reason field: it comes last, and only where there is one to give.
        if (result.Reason is not null && result.PassFail != "PASS")
        {
            line.Append(' ').Append(ResultFields.Reason.Name).Append('=');
            AppendQuoted(line, result.Reason);
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
