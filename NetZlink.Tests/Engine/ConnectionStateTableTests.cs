// Issue 23: a connection slot's state changes only through ConnectionSlot.Transition, which
// asserts ConnectionStates.IsAllowed. These tests pin the table itself (exactly the transitions
// the shard makes, nothing else) and walk it at random.
using SlotState = NetZlink.Engine.ConnectionState;

namespace NetZlink.Tests.Engine;

public sealed class ConnectionStateTableTests : EngineFixture
{
    private static readonly (SlotState From, SlotState To)[] Allowed =
    [
        (SlotState.Idle, SlotState.Connecting),
        (SlotState.Idle, SlotState.Connected),
        (SlotState.Connecting, SlotState.Connected),
        (SlotState.Connecting, SlotState.RetryWait),
        (SlotState.Connecting, SlotState.Failed),
        (SlotState.RetryWait, SlotState.Connecting),
        (SlotState.RetryWait, SlotState.Failed),
        (SlotState.Connected, SlotState.Closed),
        (SlotState.Closed, SlotState.RetryWait),
        (SlotState.Closed, SlotState.Connected),
    ];

    [Test]
    public void TheTable_AllowsExactlyTheShardsTransitions()
    {
        SlotState[] states = Enum.GetValues<SlotState>();
        Assert.Multiple(() =>
        {
            foreach (SlotState from in states)
            {
                foreach (SlotState to in states)
                {
                    Assert.That(ConnectionStates.IsAllowed(from, to), Is.EqualTo(Allowed.Contains((from, to))), $"{from} -> {to}");
                }
            }
        });
    }

    [TestCase((byte)SlotState.Failed, (byte)SlotState.Connecting)]
    [TestCase((byte)SlotState.Closed, (byte)SlotState.Idle)]
    [TestCase((byte)SlotState.Connected, (byte)SlotState.Connected)]
    [TestCase((byte)SlotState.Idle, (byte)SlotState.Closed)]
    [TestCase((byte)SlotState.RetryWait, (byte)SlotState.Connected)]
    public void AForbiddenTransition_IsCaughtByTheTable(byte from, byte to)
        => Assert.That(ConnectionStates.IsAllowed((SlotState)from, (SlotState)to), Is.False, $"{(SlotState)from} -> {(SlotState)to}");

    [Test]
    public void ARandomWalk_ThroughTransition_FollowsTheTable_AndFailedIsFinal()
    {
        Random random = Fuzz.Random(out _);
        int walks = Fuzz.Iterations(200);
        for (int w = 0; w < walks; w++)
        {
            var slot = default(ConnectionSlot);
            Assert.That(slot.State, Is.EqualTo(SlotState.Idle), "a new slot is Idle");
            for (int step = 0; step < 50; step++)
            {
                (SlotState From, SlotState To)[] next = Allowed.Where(t => t.From == slot.State).ToArray();
                if (next.Length == 0)
                {
                    Assert.That(slot.State, Is.EqualTo(SlotState.Failed), "only Failed has no way out");
                    break;
                }

                SlotState to = next[random.Next(next.Length)].To;
                slot.Transition(to);
                Assert.That(slot.State, Is.EqualTo(to), $"walk {w} step {step}");
            }
        }
    }
}
