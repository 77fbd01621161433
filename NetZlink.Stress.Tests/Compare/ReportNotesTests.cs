// What the compare report's notes claim: s0's first_n_p50_us and p50_us are timed separately (not
// one number), and the server's time is not always inside the client's round trip.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class ReportNotesTests
{
    [Test]
    [CancelAfter(10_000)]
    public void TheNotesDoNotClaimWhatTheMeasurementsDoNotGive()
    {
        Assert.Multiple(() =>
        {
            Assert.That(ReportTables.ColdStartNote, Does.Not.Contain("the same as").And.Contain("timed separately"));
            Assert.That(ReportTables.ServerTimeNote, Does.Not.Contain("the rest of the round trip").And.Contain("can exceed the client's round trip"));
        });
    }
}
