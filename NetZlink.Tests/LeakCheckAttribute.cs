// The leak check: fails any test after which more native handles (contexts, sockets, monitors,
// messages) are alive than before it. Handles released by a thread still finishing a call, or
// by a finalizer, get a short grace period first.
using NUnit.Framework.Interfaces;

[assembly: NetZlink.Tests.LeakCheck]

namespace NetZlink.Tests;

[AttributeUsage(AttributeTargets.Assembly)]
public sealed class LeakCheckAttribute : Attribute, ITestAction
{
    private static int s_before;

    public ActionTargets Targets => ActionTargets.Test;

    public void BeforeTest(ITest test) => s_before = HandleTracker.LiveCount;

    public void AfterTest(ITest test)
    {
        var deadline = DateTime.UtcNow.AddSeconds(2);
        while (HandleTracker.LiveCount > s_before && DateTime.UtcNow < deadline)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Thread.Sleep(10);
        }

        int leaked = HandleTracker.LiveCount - s_before;
        if (leaked > 0)
        {
            Assert.Fail($"{test.Name} left {leaked} native handle(s) open: {HandleTracker.Describe()}");
        }
    }
}
