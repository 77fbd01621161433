// Random bytes to every socket option: each option the enum names and some numbers it does not,
// set with random values of every size (0 to 4096 bytes, so most are the wrong size or type)
// and through every typed setter, and read back through every getter into buffers of random
// sizes. Each call must succeed or throw a ZlinkException naming the option and the errno, and
// afterwards the sockets must still carry data both ways. Seeded (the seed is printed;
// NETZLINK_FUZZ_SEED replays it, NETZLINK_FUZZ_ITERATIONS sets the rounds).
//
// The high-water marks are stormed before the sockets connect, every other option after: libzmq
// applies a new HWM to live pipes, and one lowered on a connected socket whose EVENTS is then read
// stalls that pipe for good, whatever HWM is set afterwards (docs/native-bugs.md, entry 3). A stalled
// pipe is a false TrySend, which the binding reports as it should, but no socket would then
// "still carry data", which is what these tests check.
namespace NetZlink.Tests;

public sealed class OptionStormTests : ContextTest
{
    private const int DefaultRounds = 2;

    private static readonly int[] ValueSizes = [0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 255, 256, 257, 1024, 4096];
    private static readonly int[] UnknownOptions = [int.MinValue, -1, 0, 1, 2, 3, 10, 20, 26, 118, 999, int.MaxValue];

    private static readonly SocketOption[] HighWaterMarks = [SocketOption.SendHighWaterMark, SocketOption.ReceiveHighWaterMark];

    private static readonly SocketOption[] AllButHighWaterMarks =
        [.. Enum.GetValues<SocketOption>().Except(HighWaterMarks), .. UnknownOptions.Select(number => (SocketOption)number)];

    private static readonly SocketOption[] All = [.. AllButHighWaterMarks, .. HighWaterMarks];

    [TestCase(ZlinkSocketType.Pair, "tcp")]
    [TestCase(ZlinkSocketType.Pair, "inproc")]
    [TestCase(ZlinkSocketType.Stream, "tcp")]
    [TestCase(ZlinkSocketType.Dealer, "tcp")]
    [CancelAfter(120_000)]
    public void RandomValuesToEveryOption_FailCleanly_AndTheSocketsStillCarryData(ZlinkSocketType type, string transport)
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(DefaultRounds);
        var tally = new Tally();
        using var pair = ConnectedPair.Open(Context, type, transport, beforeConnecting: (socket, role) =>
        {
            for (int round = 0; round < rounds; round++)
            {
                Storm(socket, random, $"seed {seed}, round {round}, {socket.Type} ({role}, not yet connected)", tally, HighWaterMarks);
            }
        });
        pair.Exchange(Fuzz.Bytes(random, 100), $"seed {seed}: before the storm");

        for (int round = 0; round < rounds; round++)
        {
            Storm(pair.First, random, $"seed {seed}, round {round}, {type} (first)", tally, AllButHighWaterMarks);
            Storm(pair.Second, random, $"seed {seed}, round {round}, {pair.Second.Type} (second)", tally, AllButHighWaterMarks);
        }

        // The storm may have left values that change delivery or closing: the binding's linger of
        // 0 (else closing waits), no size limit, and a ROUTER that says EAGAIN (a false TrySend,
        // retried) where it would otherwise drop silently, as a ROUTER does at a random and
        // perhaps tiny send HWM. Everything else stays as random as it was set.
        foreach (ZlinkSocket socket in new[] { pair.First, pair.Second })
        {
            socket.Linger = 0;
            socket.MaxMessageSize = -1;
            if (socket.Type == ZlinkSocketType.Router)
            {
                socket.SetOption(SocketOption.RouterMandatory, true);
            }
        }

        TestContext.Out.WriteLine($"{rounds} round(s): {tally}");
        Assert.That(pair.First.GetOptionInt32(SocketOption.Type), Is.EqualTo((int)type), "TYPE survives the storm");
        for (int i = 0; i < 3; i++)
        {
            pair.Exchange(Fuzz.Bytes(random, random.Next(1, 5000)), $"seed {seed}: after the storm, exchange {i}");
        }
    }

    [TestCase(ZlinkSocketType.Pub)]
    [TestCase(ZlinkSocketType.Sub)]
    [TestCase(ZlinkSocketType.XPub)]
    [TestCase(ZlinkSocketType.XSub)]
    [TestCase(ZlinkSocketType.Router)]
    [CancelAfter(120_000)]
    public void RandomValuesToEveryOption_OnTheOtherTypes_FailCleanly(ZlinkSocketType type)
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(DefaultRounds);
        using var socket = Context.CreateSocket(type);
        var tally = new Tally();
        for (int round = 0; round < rounds; round++)
        {
            Storm(socket, random, $"seed {seed}, round {round}, {type}", tally, All);
        }

        socket.Linger = 0;
        TestContext.Out.WriteLine($"{rounds} round(s): {tally}");
        Assert.That(socket.GetOptionInt32(SocketOption.Type), Is.EqualTo((int)type));

        // Still usable: inproc ignores the transport options the storm set (device, descriptor, ...).
        string endpoint = Endpoints.Inproc();
        socket.Bind(endpoint);
        Assert.That(socket.LastEndpoint, Is.EqualTo(endpoint));
        socket.Unbind(endpoint);
    }

    /// <summary>Each of <paramref name="options"/> (in a random order) with every value size, every setter and every getter.</summary>
    private static void Storm(ZlinkSocket socket, Random random, string where, Tally tally, SocketOption[] options)
    {
        options = [.. options];
        random.Shuffle(options);
        foreach (SocketOption option in options)
        {
            string name = Enum.IsDefined(option) ? option.ToString() : ((int)option).ToString(System.Globalization.CultureInfo.InvariantCulture);
            string set = $"SetOption({name})";
            string get = $"GetOption({name})";
            foreach (int size in ValueSizes)
            {
                byte[] value = Fuzz.Bytes(random, size);
                tally.Count(ErrorShape.Check(() => socket.SetOption(option, value), set, $"{where}: {set} with {size} random bytes"));
            }

            int number = random.Next(3) switch
            {
                0 => random.Next(int.MinValue, int.MaxValue),
                1 => random.Next(-2, 3),
                _ => random.Next(0, 100_000),
            };
            long wide = random.Next(2) == 0 ? random.NextInt64(long.MinValue, long.MaxValue) : random.NextInt64(-2, 1L << 40);
            string text = RandomText.Any(random, random.Next(0, 40));
            tally.Count(ErrorShape.Check(() => socket.SetOption(option, number), set, $"{where}: {set} with int {number}"));
            tally.Count(ErrorShape.Check(() => socket.SetOption(option, wide), set, $"{where}: {set} with long {wide}"));
            tally.Count(ErrorShape.Check(() => socket.SetOption(option, random.Next(2) == 0), set, $"{where}: {set} with a bool"));
            tally.Count(ErrorShape.Check(() => socket.SetOption(option, text), set, $"{where}: {set} with the string {RandomText.Describe(text)}"));

            tally.Count(ErrorShape.Check(() => socket.GetOptionInt32(option), get, $"{where}: GetOptionInt32({name})"));
            tally.Count(ErrorShape.Check(() => socket.GetOptionInt64(option), get, $"{where}: GetOptionInt64({name})"));
            tally.Count(ErrorShape.Check(() => socket.GetOptionBytes(option), get, $"{where}: GetOptionBytes({name})"));
            tally.Count(ErrorShape.Check(() => socket.GetOptionString(option), get, $"{where}: GetOptionString({name})"));
            foreach (int size in new[] { 0, random.Next(1, 9), random.Next(9, 300) })
            {
                byte[] buffer = new byte[size];
                tally.Count(ErrorShape.Check(
                    () => Assert.That(socket.GetOption(option, buffer), Is.InRange(0, size), $"{where}: {get} reported more bytes than the buffer holds"),
                    get,
                    $"{where}: {get} into {size} bytes"));
            }
        }
    }
}
