// A packet EngineEvent is a struct over a pooled buffer, so copies are easy to make (a list, LINQ,
// a by-value argument). Disposing the event and a copy must give the buffer back once: a second
// return to ArrayPool would hand the same array to two later packets. Reading a disposed packet
// throws instead of showing whatever the array holds next.
using System.Buffers;

namespace NetZlink.Tests.Engine;

[RequiresStreamClient]
public sealed class EngineEventDisposalTests : EngineFixture
{
    private static readonly byte[] Hello = [0, 0, 0, 5, (byte)'h', (byte)'e', (byte)'l', (byte)'l', (byte)'o'];
    [Test, CancelAfter(60_000)]
    public async Task DisposingAPacketEventAndACopyGivesTheBufferBackOnce()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        await using var engine = new ClientEngine(1, new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]] });
        EngineChannel channel = engine.StartChannel();
        using var patience = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        EngineEvent? packet = null;
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync(patience.Token))
        {
            if (e.Kind == EngineEventKind.Connected)
            {
                Assert.That(channel.TrySend(e.Connection, Hello), Is.True);
            }
            else if (e.Kind == EngineEventKind.Packet)
            {
                packet = e;
                break;
            }
        }

        Assert.That(packet, Is.Not.Null, "the echo came back");
        EngineEvent original = packet!.Value;
        EngineEvent copy = original;
        Assert.That(copy.Packet.ToArray(), Is.EqualTo(Hello));

        original.Dispose();
        copy.Dispose(); // a second dispose, through a copy: nothing more may be returned
        original.Dispose();

        // Had the array gone back twice, these two rents on this thread would get the same one.
        byte[] first = ArrayPool<byte>.Shared.Rent(Hello.Length);
        byte[] second = ArrayPool<byte>.Shared.Rent(Hello.Length);
        try
        {
            Assert.Multiple(() =>
            {
                Assert.That(second, Is.Not.SameAs(first), "the packet's array was returned to the pool twice");
                Assert.Throws<ObjectDisposedException>(() => _ = copy.Packet.Length, "a disposed packet read through a copy");
                Assert.Throws<ObjectDisposedException>(() => _ = original.PacketMemory, "a disposed packet read as memory");
            });
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(first);
            ArrayPool<byte>.Shared.Return(second);
        }
    }
}
