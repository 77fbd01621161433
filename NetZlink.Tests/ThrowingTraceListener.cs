// Turns Debug.Assert / Trace.Fail failures into exceptions, so a broken invariant in the binding
// fails the test that hit it instead of printing a line nobody reads (as NetMQ's tests do).
namespace NetZlink.Tests;

internal sealed class ThrowingTraceListener : TraceListener
{
    public override void Fail(string? message, string? detailMessage) =>
        throw new AssertionFailedException(string.IsNullOrEmpty(detailMessage) ? message : $"{message}: {detailMessage}");

    public override void Write(string? message)
    {
    }

    public override void WriteLine(string? message)
    {
    }
}
