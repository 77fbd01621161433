// Counts the outcomes of the bad-input calls (succeeded, or refused the documented way), so a
// test's output shows that both kinds happened.
namespace NetZlink.Tests;

internal sealed class Tally
{
    public int Succeeded { get; private set; }

    public int Refused { get; private set; }

    public void Count(bool succeeded)
    {
        if (succeeded)
        {
            Succeeded++;
        }
        else
        {
            Refused++;
        }
    }

    public override string ToString() => $"{Succeeded} calls succeeded, {Refused} refused with a ZlinkException";
}
