// One output value with its kind, so that every format renders it alike (text in RESULT/METRIC/CSV,
// typed in JSON), a summary file's value reads back as the same kind, and `merge` can add, compare
// or pick the larger of several hosts' values.
using System.Globalization;
using System.Text.Json;

namespace NetZlink.Stress.Output;

/// <summary>An integer, a fixed-point number, a flag, a text, a time or errno counts, formatted with the invariant culture.</summary>
internal readonly struct FieldValue
{
    private static readonly IReadOnlyDictionary<int, long> NoCounts = new SortedDictionary<int, long>();

    private readonly FieldKind _kind;
    private readonly long _integer;
    private readonly double _number;
    private readonly int _decimals;
    private readonly string? _text;
    private readonly IReadOnlyDictionary<int, long>? _counts;

    private FieldValue(FieldKind kind, long integer = 0, double number = 0, int decimals = 0, string? text = null, IReadOnlyDictionary<int, long>? counts = null)
    {
        _kind = kind;
        _integer = integer;
        _number = number;
        _decimals = decimals;
        _text = text;
        _counts = counts;
    }

    private enum FieldKind
    {
        Integer,
        Number,
        Flag,
        Text,
        NoNumber,
        Counts,
    }

    /// <summary>Whether this is a text that may need quoting in a line.</summary>
    public bool IsText => _kind == FieldKind.Text;

    /// <summary>Whether this is a missing text or number (JSON null).</summary>
    public bool IsNull => (_kind == FieldKind.Text && _text is null) || _kind == FieldKind.NoNumber;

    public long Integer => _kind is FieldKind.Integer or FieldKind.Flag ? _integer : throw Wrong("an integer");

    public double Number => _kind == FieldKind.Number ? _number : throw Wrong("a number");

    /// <summary>A number that may be missing (null).</summary>
    public double? OptionalNumber => _kind switch
    {
        FieldKind.Number => _number,
        FieldKind.NoNumber => null,
        _ => throw Wrong("a number"),
    };

    public bool Flag => _kind == FieldKind.Flag ? _integer != 0 : throw Wrong("a flag");

    public string? Text => _kind == FieldKind.Text ? _text : throw Wrong("a text");

    /// <summary>errno → count.</summary>
    public IReadOnlyDictionary<int, long> Counts => _kind == FieldKind.Counts ? _counts ?? NoCounts : throw Wrong("errno counts");

    public static FieldValue Of(long value) => new(FieldKind.Integer, integer: value);

    /// <summary>A number printed with exactly <paramref name="decimals"/> decimals (printf's %.Nf), or as its shortest exact text when <paramref name="decimals"/> is negative.</summary>
    public static FieldValue Of(double value, int decimals) => new(FieldKind.Number, number: value, decimals: decimals);

    /// <summary>A number, or nothing (null) when <paramref name="value"/> is null.</summary>
    public static FieldValue Of(double? value, int decimals) =>
        value is { } v ? Of(v, decimals) : new(FieldKind.NoNumber, decimals: decimals);

    /// <summary>A flag: 1/0 in text, true/false in JSON.</summary>
    public static FieldValue Of(bool value) => new(FieldKind.Flag, integer: value ? 1 : 0);

    /// <summary>A text; null prints as nothing in text and as null in JSON.</summary>
    public static FieldValue Of(string? value) => new(FieldKind.Text, text: value);

    /// <summary>errno → count, printed "errno:count;…" lowest errno first (empty when none).</summary>
    public static FieldValue Of(IReadOnlyDictionary<int, long> value) => new(FieldKind.Counts, counts: new SortedDictionary<int, long>(value.ToDictionary()));

    /// <summary>The sum of two values of one kind (counts: errno by errno).</summary>
    public static FieldValue Sum(FieldValue a, FieldValue b) => Same(a, b)._kind switch
    {
        FieldKind.Integer => Of(checked(a._integer + b._integer)),
        FieldKind.Number => Of(a._number + b._number, a._decimals),
        FieldKind.Counts => Of(a.Counts.Concat(b.Counts).GroupBy(p => p.Key).ToDictionary(g => g.Key, g => g.Sum(p => p.Value))),
        _ => throw a.Wrong("a value that adds up"),
    };

    /// <summary>The larger of two values of one kind (flags: either set; a missing number loses).</summary>
    public static FieldValue Max(FieldValue a, FieldValue b) => Pick(a, b, larger: true);

    /// <summary>The smaller of two values of one kind (a missing number loses).</summary>
    public static FieldValue Min(FieldValue a, FieldValue b) => Pick(a, b, larger: false);

    /// <summary>Reads a value of the kind <paramref name="type"/> from a summary file's property.</summary>
    /// <exception cref="InvalidDataException">The property is missing or of another kind.</exception>
    public static FieldValue Read(Merge.JsonObjectReader json, string name, FieldType type, int decimals) => type switch
    {
        FieldType.Integer => Of(json.Integer(name)),
        FieldType.Decimal => Of(json.Number(name), decimals),
        FieldType.Time => Of(json.OptionalNumber(name), decimals),
        FieldType.Flag => Of(json.Flag(name)),
        FieldType.ErrnoCounts => Of(ParseCounts(json.Text(name) ?? string.Empty) ?? throw json.Problem($"'{name}' must be errno:count pairs joined by ';' (got \"{json.Text(name)}\")")),
        _ => Of(json.Text(name)),
    };

    /// <summary>"errno:count;errno:count" as a map (a repeated errno adds up), or null when the text is not that.</summary>
    public static IReadOnlyDictionary<int, long>? ParseCounts(string text)
    {
        var counts = new SortedDictionary<int, long>();
        foreach (string pair in text.Split(';', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] parts = pair.Split(':');
            if (parts.Length != 2
                || !int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out int errno)
                || !long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out long count))
            {
                return null;
            }

            counts[errno] = counts.GetValueOrDefault(errno) + count;
        }

        return counts;
    }

    /// <summary>The invariant text form.</summary>
    public override string ToString() => _kind switch
    {
        FieldKind.Integer or FieldKind.Flag => _integer.ToString(CultureInfo.InvariantCulture),
        FieldKind.Number => _decimals < 0
            ? _number.ToString("R", CultureInfo.InvariantCulture)
            : _number.ToString("F" + _decimals.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture),
        FieldKind.Counts => string.Join(';', Counts.Select(e => string.Create(CultureInfo.InvariantCulture, $"{e.Key}:{e.Value}"))),
        FieldKind.NoNumber => string.Empty,
        _ => _text ?? string.Empty,
    };

    /// <summary>
    /// Writes the value as a JSON property; numbers keep the text form's decimals, or all of them
    /// when <paramref name="exact"/> (merge_input: a sum of hosts then rounds only once).
    /// </summary>
    public void WriteJson(Utf8JsonWriter writer, string name, bool exact = false)
    {
        switch (_kind)
        {
            case FieldKind.Integer:
                writer.WriteNumber(name, _integer);
                break;
            case FieldKind.Number when double.IsFinite(_number) && exact:
                writer.WriteNumber(name, _number);
                break;
            case FieldKind.Number when double.IsFinite(_number):
                writer.WritePropertyName(name);
                writer.WriteRawValue(ToString());
                break;
            case FieldKind.Flag:
                writer.WriteBoolean(name, _integer != 0);
                break;
            case FieldKind.Counts:
                writer.WriteString(name, ToString());
                break;
            default:
                if (IsNull || _kind == FieldKind.Number)
                {
                    writer.WriteNull(name);
                }
                else
                {
                    writer.WriteString(name, _text);
                }

                break;
        }
    }

    private static FieldValue Pick(FieldValue a, FieldValue b, bool larger)
    {
        if (a._kind == FieldKind.NoNumber || b._kind == FieldKind.NoNumber)
        {
            return a._kind == FieldKind.NoNumber ? b : a;
        }

        return Same(a, b)._kind switch
        {
            FieldKind.Integer => Of(larger ? Math.Max(a._integer, b._integer) : Math.Min(a._integer, b._integer)),
            FieldKind.Flag => Of(larger ? (a._integer | b._integer) != 0 : (a._integer & b._integer) != 0),
            FieldKind.Number => Of(larger ? Math.Max(a._number, b._number) : Math.Min(a._number, b._number), a._decimals),
            _ => throw a.Wrong("a value that compares"),
        };
    }

    private static FieldValue Same(FieldValue a, FieldValue b) =>
        a._kind == b._kind ? a : throw new InvalidOperationException($"cannot combine a {a._kind} with a {b._kind}");

    private InvalidOperationException Wrong(string wanted) => new($"the value is a {_kind}, not {wanted}");
}
