// A STREAM message is exactly [4-byte routing id][payload]. Sends that break that shape fail
// before anything goes out, with a message that says what is wrong and what to send instead.
namespace NetZlink.Tests;

[RequiresStreamClient]
public sealed class StreamSendShapeTests : ContextTest
{
    // SendMultipart used to send the id and the payload, then throw a bare EINVAL for the third
    // frame: the peer got part of what the caller thought had failed.
    [Test, CancelAfter(30_000)]
    public async Task SendMultipart_OnStream_WithThreeFrames_SendsNothingAndSaysWhy()
    {
        var (server, client) = Sockets(ZlinkSocketType.Stream, ZlinkSocketType.Stream);
        (RoutingId clientSide, RoutingId serverSide) = StreamSockets.Connect(server, client);

        var refused = Assert.Throws<ArgumentException>(() => client.SendMultipart(clientSide.ToArray(), Wait.Bytes("part"), Wait.Bytes("more")))!;
        Assert.That(refused.Message, Does.Contain("exactly two frames").And.Contain("this one has 3 frames").And.Contain("Nothing was sent"));
        var refusedAsync = Assert.ThrowsAsync<ArgumentException>(async () => await client.SendMultipartAsync(new ReadOnlyMemory<byte>[] { clientSide.ToArray(), Wait.Bytes("a"), Wait.Bytes("b") }))!;
        Assert.That(refusedAsync.Message, Does.Contain("SendMultipartAsync on a STREAM socket"));
        var one = Assert.Throws<ArgumentException>(() => client.SendMultipart(clientSide.ToArray()))!;
        Assert.That(one.Message, Does.Contain("this one has 1 frame.").And.Not.Contain("1 frames"));

        // Nothing of the refused messages arrived; a well-formed one does, first.
        client.SendMultipart(clientSide.ToArray(), Wait.Bytes("whole"));
        await client.SendMultipartAsync(new ReadOnlyMemory<byte>[] { clientSide.ToArray(), Wait.Bytes("async") });
        (RoutingId from, byte[] payload) = StreamSockets.Receive(server);
        Assert.That(from, Is.EqualTo(serverSide));
        Assert.That(payload, Is.EqualTo(Wait.Bytes("whole")), "the first payload the server sees is the first well-formed message");
        Assert.That(StreamSockets.Receive(server).Payload, Is.EqualTo(Wait.Bytes("async")));
    }

    // A payload without its id frame used to fail with a bare "Invalid argument" (EINVAL).
    [Test, CancelAfter(30_000)]
    public async Task APayloadWithoutItsRoutingIdFrame_SaysWhatIsMissing_OnEverySend()
    {
        using var server = Context.CreateSocket(ZlinkSocketType.Stream);
        StreamSockets.Bind(server);

        var calls = new (string Name, Func<Task> Call)[]
        {
            ("Send", () => { server.Send(Wait.Bytes("payload")); return Task.CompletedTask; }),
            ("Send (DontWait)", () => { server.Send(Wait.Bytes("payload"), SendFlags.DontWait); return Task.CompletedTask; }),
            ("TrySend", () => { _ = server.TrySend(Wait.Bytes("payload")); return Task.CompletedTask; }),
            ("TrySend(ZlinkMessage)", () => { using var m = new ZlinkMessage(Wait.Bytes("payload")); _ = server.TrySend(m); return Task.CompletedTask; }),
            ("Send(ZlinkMessage)", () => { using var m = new ZlinkMessage(Wait.Bytes("payload")); server.Send(m); return Task.CompletedTask; }),
            ("SendAsync", async () => await server.SendAsync(Wait.Bytes("payload"))),
        };
        foreach ((string name, Func<Task> call) in calls)
        {
            ZlinkException? error = null;
            try
            {
                await call();
            }
            catch (ZlinkException e)
            {
                error = e;
            }

            Assert.That(error, Is.Not.Null, $"{name}: a payload without its routing id frame is refused");
            Assert.That(error!.Error, Is.EqualTo(ZlinkError.EINVAL), name);
            Assert.That(error.Message, Does.Contain("no routing id frame before it").And.Contain("TrySendTo(routingId, payload)"), name);
        }
    }
}
