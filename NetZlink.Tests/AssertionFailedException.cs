// What ThrowingTraceListener throws for a failed Debug.Assert.
namespace NetZlink.Tests;

internal sealed class AssertionFailedException : Exception
{
    public AssertionFailedException(string? message)
        : base($"Debug.Assert failed: {message}")
    {
    }
}
