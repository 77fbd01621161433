// What the CSV and JSON outputs share: their folder, and a check before a long run that they can be written.
using NetZlink.Stress.Hosting;

namespace NetZlink.Stress.Output;

/// <summary>File-system helpers for --metrics-csv and --summary-json.</summary>
internal static class OutputFiles
{
    /// <summary>Creates the folder <paramref name="path"/> goes into, if it has one.</summary>
    public static void CreateParentDirectory(string path)
    {
        string? directory = Path.GetDirectoryName(Path.GetFullPath(path));
        if (!string.IsNullOrEmpty(directory))
        {
            Directory.CreateDirectory(directory);
        }
    }

    /// <summary>
    /// Opens <paramref name="path"/> for appending, changing nothing in it (and removing it again
    /// if it was not there), so that an unwritable path fails before the run rather than after it.
    /// </summary>
    public static void EnsureWritable(string path, string flag)
    {
        try
        {
            CreateParentDirectory(path);
            bool existed = File.Exists(path);
            using (new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite))
            {
            }

            if (!existed)
            {
                File.Delete(path);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException or ArgumentException)
        {
            throw new StressHostException($"{flag} {path} cannot be written: {e.Message}", e);
        }
    }
}
