// A table of text cells, as ReportTables builds it and both reports render it.
namespace NetZlink.Stress.Reports;

/// <summary>A table: a header row and body rows of equal length.</summary>
internal sealed record ReportTable(IReadOnlyList<string> Header, IReadOnlyList<IReadOnlyList<string>> Rows);
