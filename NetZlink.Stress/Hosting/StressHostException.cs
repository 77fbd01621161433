// An operational failure that ends the process with exit code 2 and a one-line message:
// the server port is in use, the server child died, an output file cannot be written.
namespace NetZlink.Stress.Hosting;

/// <summary>The environment, not the command line, stopped the run.</summary>
internal sealed class StressHostException : Exception
{
    public StressHostException()
    {
    }

    public StressHostException(string message)
        : base(message)
    {
    }

    public StressHostException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
