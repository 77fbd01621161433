// The server child's lifeline (--exit-on-stdin-eof): its stdin is a pipe from the parent, which
// reaches end-of-file when the parent closes it to stop the server or when the parent dies,
// however it dies. Only read when that flag asks for it: any end of file then stops the server,
// /dev/null at once and a terminal at Ctrl+D included.
namespace NetZlink.Stress.Hosting;

/// <summary>Watches stdin for end-of-file.</summary>
internal static class StdinEnd
{
    /// <summary>A token cancelled when stdin reaches end-of-file (or cannot be read).</summary>
    public static CancellationToken Watch()
    {
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
}
