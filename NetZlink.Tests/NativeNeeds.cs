// What a test needs of the loaded native library beyond the binding itself, in one place for every
// test project (this file is compiled into NetZlink.Tests, NetZlink.Stress.Tests and
// NetZlink.Samples.Tests, so it uses only the public API):
//   - a STREAM client: STREAM sockets that connect. A zlink 1.3 library's STREAM sockets are
//     server-only (zlink_connect fails with EOPNOTSUPP), so a STREAM client, the client engine
//     and the stress tool's netzlink client need NetZlink's library;
//   - the STREAM framing option (ZLINK_STREAM_FRAMING with RAW and BATCH, ZLINK_STREAM_EVENT),
//     which only NetZlink's library has (a zlink 1.3 one frames every message as LENGTH).
// A test that needs one reports itself Ignored, with the reason, on a library without it:
// [RequiresStreamClient] / [RequiresStreamFraming] on the test or fixture, or the Require* calls
// where only some cases need it. Each probe runs once per process. (Linked into the other test
// projects too, so it names its own namespaces.)
using System.Net;
using System.Net.Sockets;
using NUnit.Framework.Interfaces;

namespace NetZlink.Testing;

internal static class NativeNeeds
{
    private static readonly Lazy<string?> StreamClient = new(ProbeStreamClient);
    private static readonly Lazy<string?> Framing = new(ProbeStreamFraming);

    /// <summary>Null when the library's STREAM sockets can connect; else why a STREAM client cannot run.</summary>
    public static string? StreamClientMissing => StreamClient.Value;

    /// <summary>Null when the library has the STREAM framing option; else why not.</summary>
    public static string? StreamFramingMissing => Framing.Value;

    /// <summary>Ignores the running test when the library's STREAM sockets cannot connect.</summary>
    public static void RequireStreamClient()
    {
        if (StreamClientMissing is string why)
        {
            Assert.Ignore(why);
        }
    }

    /// <summary>Ignores the running test when the library has no STREAM framing option (RAW, BATCH).</summary>
    public static void RequireStreamFraming()
    {
        if (StreamFramingMissing is string why)
        {
            Assert.Ignore(why);
        }
    }

    /// <summary>Connects a STREAM socket to a loopback port held bound but not listening (the kernel refuses; no other process is reached).</summary>
    private static string? ProbeStreamClient()
    {
        using var holder = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)holder.LocalEndPoint!).Port;
        using var context = new ZlinkContext();
        using ZlinkSocket socket = context.CreateSocket(ZlinkSocketType.Stream);
        try
        {
            socket.Connect($"tcp://127.0.0.1:{port}");
            return null;
        }
        catch (ZlinkNotSupportedException e)
        {
            return $"needs a STREAM client, and the native library {ZlinkLibrary.LoadedFrom} cannot connect STREAM sockets "
                + $"(a zlink 1.3 STREAM socket is server-only; NetZlink's own libzlink.so connects): {e.Message}";
        }
    }

    private static string? ProbeStreamFraming()
    {
        using var context = new ZlinkContext();
        using ZlinkSocket socket = context.CreateSocket(ZlinkSocketType.Stream);
        try
        {
            socket.StreamFraming = StreamFraming.Raw;
            return null;
        }
        catch (ZlinkNotSupportedException e)
        {
            return $"needs NetZlink's STREAM framing (RAW, BATCH, ZLINK_STREAM_EVENT), which the native library {ZlinkLibrary.LoadedFrom} "
                + $"does not have (a zlink 1.3 build frames every STREAM message as Length): {e.Message}";
        }
    }
}

/// <summary>The test (or every test of the fixture) needs a STREAM client: Ignored on a library whose STREAM sockets cannot connect.</summary>
[AttributeUsage(AttributeTargets.Method | AttributeTargets.Class, AllowMultiple = false)]
internal sealed class RequiresStreamClientAttribute : NUnitAttribute, ITestAction
{
    public ActionTargets Targets => ActionTargets.Test;

    public void BeforeTest(ITest test) => NativeNeeds.RequireStreamClient();

    public void AfterTest(ITest test)
    {
    }
}

/// <summary>The test (or every test of the fixture) needs the STREAM framing option: Ignored on a library without it.</summary>
[AttributeUsage(AttributeTargets.Method | AttributeTargets.Class, AllowMultiple = false)]
internal sealed class RequiresStreamFramingAttribute : NUnitAttribute, ITestAction
{
    public ActionTargets Targets => ActionTargets.Test;

    public void BeforeTest(ITest test) => NativeNeeds.RequireStreamFraming();

    public void AfterTest(ITest test)
    {
    }
}
