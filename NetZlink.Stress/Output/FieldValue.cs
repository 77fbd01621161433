// One output value with its type, so that text (RESULT/METRIC/CSV) and JSON render it alike.
using System.Globalization;
using System.Text.Json;

namespace NetZlink.Stress.Output;

/// <summary>An integer, a fixed-point number, a flag or a text, formatted with the invariant culture.</summary>
internal readonly struct FieldValue
{
    private readonly FieldKind kind;
    private readonly long integer;
    private readonly double number;
    private readonly int decimals;
    private readonly string? text;

    private FieldValue(FieldKind kind, long integer = 0, double number = 0, int decimals = 0, string? text = null)
    {
        this.kind = kind;
        this.integer = integer;
        this.number = number;
        this.decimals = decimals;
        this.text = text;
    }

    private enum FieldKind
    {
        Integer,
        Number,
        Flag,
        Text,
    }

    /// <summary>Whether this is a text that may need quoting in a line.</summary>
    public bool IsText => kind == FieldKind.Text;

    public static FieldValue Of(long value) => new(FieldKind.Integer, integer: value);

    /// <summary>A number printed with exactly <paramref name="decimals"/> decimals (printf's %.Nf).</summary>
    public static FieldValue Of(double value, int decimals) => new(FieldKind.Number, number: value, decimals: decimals);

    /// <summary>A flag: 1/0 in text, true/false in JSON.</summary>
    public static FieldValue Of(bool value) => new(FieldKind.Flag, integer: value ? 1 : 0);

    /// <summary>A text; null prints as nothing in text and as null in JSON.</summary>
    public static FieldValue Of(string? value) => new(FieldKind.Text, text: value);

    /// <summary>The invariant text form.</summary>
    public override string ToString() => kind switch
    {
        FieldKind.Integer or FieldKind.Flag => integer.ToString(CultureInfo.InvariantCulture),
        FieldKind.Number => number.ToString("F" + decimals.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture),
        _ => text ?? string.Empty,
    };

    /// <summary>Writes the value as a JSON property; numbers keep the text form's decimals.</summary>
    public void WriteJson(Utf8JsonWriter writer, string name)
    {
        switch (kind)
        {
            case FieldKind.Integer:
                writer.WriteNumber(name, integer);
                break;
            case FieldKind.Number when double.IsFinite(number):
                writer.WritePropertyName(name);
                writer.WriteRawValue(ToString());
                break;
            case FieldKind.Number:
                writer.WriteNull(name);
                break;
            case FieldKind.Flag:
                writer.WriteBoolean(name, integer != 0);
                break;
            default:
                if (text is null)
                {
                    writer.WriteNull(name);
                }
                else
                {
                    writer.WriteString(name, text);
                }

                break;
        }
    }
}
