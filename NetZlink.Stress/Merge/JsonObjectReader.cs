// Typed reads of one JSON object's properties for `merge`, each failure an InvalidDataException
// that names the file and the property, so a bad input is reported as exactly what is wrong where.
using System.Globalization;
using System.Text.Json;

namespace NetZlink.Stress.Merge;

/// <summary>Reads properties of <paramref name="element"/>, which came from <paramref name="path"/>.</summary>
internal readonly struct JsonObjectReader(string path, JsonElement element)
{
    /// <summary>The file the object came from, for messages.</summary>
    public string Path => path;

    /// <summary>Whether the property is there (null counts as there).</summary>
    public bool Has(string name) => element.TryGetProperty(name, out _);

    /// <summary>The property, which must be there.</summary>
    public JsonElement Property(string name) =>
        element.TryGetProperty(name, out JsonElement value) ? value : throw Problem($"'{name}' is missing");

    public long Integer(string name)
    {
        JsonElement value = Property(name);
        return value.ValueKind == JsonValueKind.Number && value.TryGetInt64(out long result)
            ? result
            : throw Problem($"'{name}' must be a whole number (got {value.GetRawText()})");
    }

    /// <summary>A whole number that fits an int (ccu, size, shards, …).</summary>
    public int Int32(string name)
    {
        long value = Integer(name);
        return value is >= int.MinValue and <= int.MaxValue
            ? (int)value
            : throw Problem(string.Create(CultureInfo.InvariantCulture, $"'{name}' is out of range (got {value})"));
    }

    public double Number(string name) =>
        OptionalNumber(name) ?? throw Problem($"'{name}' must be a number (got null)");

    /// <summary>A number, or null when the property is JSON null.</summary>
    public double? OptionalNumber(string name)
    {
        JsonElement value = Property(name);
        if (value.ValueKind == JsonValueKind.Null)
        {
            return null;
        }

        return value.ValueKind == JsonValueKind.Number && value.TryGetDouble(out double result) && double.IsFinite(result)
            ? result
            : throw Problem($"'{name}' must be a number (got {value.GetRawText()})");
    }

    public bool Flag(string name)
    {
        JsonElement value = Property(name);
        return value.ValueKind switch
        {
            JsonValueKind.True => true,
            JsonValueKind.False => false,
            _ => throw Problem($"'{name}' must be true or false (got {value.GetRawText()})"),
        };
    }

    /// <summary>A string, or null when the property is JSON null.</summary>
    public string? Text(string name)
    {
        JsonElement value = Property(name);
        return value.ValueKind switch
        {
            JsonValueKind.String => value.GetString(),
            JsonValueKind.Null => null,
            _ => throw Problem($"'{name}' must be a string (got {value.GetRawText()})"),
        };
    }

    /// <summary>A string that must be there and not null.</summary>
    public string RequiredText(string name) => Text(name) ?? throw Problem($"'{name}' must be a string (got null)");

    /// <summary>An error about this file.</summary>
    public InvalidDataException Problem(string problem) => new($"{path}: {problem}");
}
