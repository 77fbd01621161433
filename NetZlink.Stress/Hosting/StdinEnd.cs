// The server child's lifeline: its stdin is a pipe from the parent, which reaches end-of-file when
// the parent closes it to stop the server or when the parent dies, however it dies.
namespace NetZlink.Stress.Hosting;

/// <summary>Watches stdin for end-of-file.</summary>
internal static class StdinEnd
{
    /// <summary>
    /// A token cancelled when stdin reaches end-of-file; <see cref="CancellationToken.None"/> when stdin
    /// is a terminal or a file (/dev/null, a file: those end at once and mean nothing).
    /// </summary>
    public static CancellationToken Watch()
    {
        if (!IsPipeOrSocket())
        {
            return CancellationToken.None;
        }

        // Never disposed: the thread may still cancel it after the server stopped.
        var ended = new CancellationTokenSource();
        var reader = new Thread(() => ReadToEnd(ended)) { IsBackground = true, Name = "stdin-end watch" };
        reader.Start();
        return ended.Token;
    }

    private static void ReadToEnd(CancellationTokenSource ended)
    {
        try
        {
            using Stream stdin = Console.OpenStandardInput();
            var buffer = new byte[256];
            while (stdin.Read(buffer) > 0)
            {
            }
        }
        catch (IOException)
        {
        }

        ended.Cancel();
    }

    private static bool IsPipeOrSocket()
    {
        if (!Console.IsInputRedirected)
        {
            return false;
        }

        try
        {
            // Linux names what fd 0 is: "pipe:[123]", "socket:[456]", "/dev/null", a file path.
            string? target = File.ResolveLinkTarget("/proc/self/fd/0", returnFinalTarget: false)?.LinkTarget;
            return target is null
                || target.StartsWith("pipe:", StringComparison.Ordinal)
                || target.StartsWith("socket:", StringComparison.Ordinal);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return true;
        }
    }
}
