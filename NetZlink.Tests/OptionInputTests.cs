// Option values the native call accepts but that would come back wrong, or reach the library as
// something else than given: typed getters check the size the library returned (an int getter on
// a 2-byte value, a 64-bit getter on an int), the string getter refuses binary values, string
// setters refuse a NUL (C text would end there) and unpaired surrogates (no UTF-8 form), and the
// other string-taking calls (capability and metadata names) do the same. Each error names the
// call, the option and the errno, and says why.
namespace NetZlink.Tests;

public sealed class OptionInputTests : ContextTest
{
    [Test, CancelAfter(10_000)]
    public void GetOptionInt32_OfAValueThatIsNotFourBytes_ThrowsInsteadOfGuessing()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Dealer);
        socket.SetOption(SocketOption.RoutingId, new byte[] { 0x12, 0x34 });

        var error = Assert.Throws<SocketOptionException>(() => socket.GetOptionInt32(SocketOption.RoutingId))!;
        Assert.That(error.Error, Is.EqualTo(ZlinkError.EINVAL));
        Assert.That(error.Message, Is.EqualTo(
            "GetOption(RoutingId) failed: EINVAL (22): Invalid argument (the library returned 2 bytes: not an int option (read it with GetOptionBytes or GetOptionString))"));

        // An unbound socket's LAST_ENDPOINT is one NUL byte: not an int either.
        Assert.Throws<SocketOptionException>(() => socket.GetOptionInt32(SocketOption.LastEndpoint));
    }

    [TestCase(ZlinkSocketType.Stream)]
    [TestCase(ZlinkSocketType.Pair)]
    [CancelAfter(10_000)]
    public void GetOptionInt64_OfAnIntOption_ThrowsInsteadOfLosingTheSign(ZlinkSocketType type)
    {
        using var socket = Context.CreateSocket(type);
        socket.Linger = -1;

        // A STREAM engine that wrote 4 bytes into an 8-byte buffer returned -1 as 4294967295: the
        // binding refuses a 4-byte answer to a 64-bit read ("the library returned 4 bytes: not a
        // 64-bit option"). NetZlink's library now refuses the 8-byte read itself, as libzmq and a
        // real zlink do (EINVAL, no reason of their own); either way it is EINVAL, never a value.
        var error = Assert.Throws<SocketOptionException>(() => socket.GetOptionInt64(SocketOption.Linger))!;
        Assert.That(error.Message, Does.StartWith("GetOption(Linger) failed: EINVAL (22): "));

        Assert.That(socket.GetOptionInt32(SocketOption.Linger), Is.EqualTo(-1));
        socket.Linger = 0;
    }

    [Test, CancelAfter(10_000)]
    public void GetOptionString_OfBinaryValues_Throws_AndOfTextReturnsIt()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Dealer);

        socket.SetOption(SocketOption.RoutingId, new byte[] { (byte)'a', (byte)'b', 0, (byte)'c' });
        var nul = Assert.Throws<SocketOptionException>(() => socket.GetOptionString(SocketOption.RoutingId))!;
        Assert.That(nul.Message, Does.EndWith("(the value is not text: it has a NUL at byte 2 of 4; read it with GetOptionBytes)"), "used to come back as \"ab\"");

        socket.SetOption(SocketOption.RoutingId, new byte[] { 0xFF, 0xFE, 0x41 });
        var binary = Assert.Throws<SocketOptionException>(() => socket.GetOptionString(SocketOption.RoutingId))!;
        Assert.That(binary.Message, Does.EndWith("(the value is not text: its 3 bytes are not UTF-8; read it with GetOptionBytes)"));

        socket.SetOption(SocketOption.RoutingId, "ünï");
        Assert.That(socket.GetOptionString(SocketOption.RoutingId), Is.EqualTo("ünï"), "a value without a terminator is text too");

        Assert.Throws<SocketOptionException>(() => socket.GetOptionString(SocketOption.Linger), "an int of 0 is four NULs, not an empty string");
        socket.Bind(Endpoints.Inproc());
        Assert.That(socket.GetOptionString(SocketOption.LastEndpoint), Does.StartWith("inproc://"));
    }

    [Test, CancelAfter(10_000)]
    public void SetOptionString_WithANulOrAnUnpairedSurrogate_IsRefused()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);

        var nul = Assert.Throws<SocketOptionException>(() => socket.SetOption(SocketOption.BindToDevice, "lo\0eth0"))!;
        Assert.That(nul.Error, Is.EqualTo(ZlinkError.EINVAL));
        Assert.That(nul.Option, Is.EqualTo(nameof(SocketOption.BindToDevice)));
        Assert.That(nul.Message, Is.EqualTo(
            "SetOption(BindToDevice) failed: EINVAL (22): Invalid argument (the value has a NUL character at index 2, " +
            "where the native library would end the text; pass binary values as bytes)"));
        Assert.That(socket.GetOptionString(SocketOption.BindToDevice), Is.Empty, "nothing was set, not even \"lo\"");

        var surrogate = Assert.Throws<SocketOptionException>(() => socket.SetOption(SocketOption.BindToDevice, "lo\uDC00"))!;
        Assert.That(surrogate.Message, Does.Contain("an unpaired surrogate U+DC00 at index 2, which has no UTF-8 form"));
    }

    [Test, CancelAfter(10_000)]
    public void Subscribe_KeepsANul_ButRefusesAnUnpairedSurrogate()
    {
        var (publisher, subscriber) = Sockets(ZlinkSocketType.Pub, ZlinkSocketType.Sub);
        string endpoint = Endpoints.BindFresh(publisher, "inproc");
        subscriber.Connect(endpoint);

        // Subscriptions are bytes: a NUL is part of the prefix, not the end of it.
        subscriber.Subscribe("a\0b");
        var error = Assert.Throws<SocketOptionException>(() => subscriber.Subscribe("a\uD800"))!;
        Assert.That(error.Message, Does.StartWith("SetOption(Subscribe) failed: EINVAL (22): "));

        byte[] match = [(byte)'a', 0, (byte)'b', (byte)'!'];
        byte[] cutShort = [(byte)'a', (byte)'!'];
        Wait.Until(() =>
        {
            publisher.TrySend(cutShort);
            publisher.TrySend(match);
            return subscriber.TryReceive(new byte[16], TimeSpan.FromMilliseconds(20), out int size) && size == match.Length;
        }, "the subscribed message");
        Wait.Nothing(subscriber, TimeSpan.FromMilliseconds(50));
    }

    [Test, CancelAfter(10_000)]
    public void CapabilityAndMetadataNames_WithANul_AreRefused()
    {
        var has = Assert.Throws<ArgumentException>(() => ZlinkLibrary.Has("tcp\0x"))!;
        Assert.That(has.Message, Does.StartWith("Has(\"tcp\\u0000x\"): the capability name has a NUL character at index 3"));
        Assert.That(ZlinkLibrary.Has("tcp"), Is.True);

        using var message = new ZlinkMessage();
        var metadata = Assert.Throws<ArgumentException>(() => message.GetMetadata("Socket-Type\0x"))!;
        Assert.That(metadata.ParamName, Is.EqualTo("property"));
        Assert.That(metadata.Message, Does.Contain("a NUL character at index 11"));
    }
}
