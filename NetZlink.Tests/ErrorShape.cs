// What every failure of a bad-input test must look like: a ZlinkException (or a subtype) whose
// message names the operation with its option or endpoint and the errno with its name, e.g.
// "SetOption(Linger) failed: EINVAL (22): Invalid argument". Anything else (another exception
// type, a message that does not say what failed) fails the test with the input that caused it.
namespace NetZlink.Tests;

internal static class ErrorShape
{
    /// <summary>Runs <paramref name="call"/>; true when it succeeded, false when it failed the documented way.</summary>
    /// <param name="call">The call with bad input.</param>
    /// <param name="operation">How the message must name the call, e.g. <c>SetOption(Linger)</c> or <c>Bind("…")</c>.</param>
    /// <param name="input">Describes the input, for the failure message (with the seed).</param>
    public static bool Check(Action call, string operation, string input)
    {
        try
        {
            call();
            return true;
        }
        catch (ZlinkException e)
        {
            string expected = $"{operation} failed: {e.ErrorName} ({e.Errno}): ";
            if (!e.Message.StartsWith(expected, StringComparison.Ordinal) || e.Operation != operation)
            {
                Assert.Fail($"{input}: the {e.GetType().Name} should start with \"{expected}\" and name {operation}, but says: {e.Message}");
            }

            if (e.Errno <= 0)
            {
                Assert.Fail($"{input}: {e.GetType().Name} without an errno: {e.Message}");
            }

            return false;
        }
#pragma warning disable CA1031 // any other exception is the finding: report it with the input
        catch (Exception e)
#pragma warning restore CA1031
        {
            Assert.Fail($"{input}: {operation} threw {e.GetType().Name} instead of a ZlinkException: {e}");
            return false;
        }
    }
}
