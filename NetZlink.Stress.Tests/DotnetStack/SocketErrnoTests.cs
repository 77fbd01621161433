// The dotnet stack reports errors_by_errno in Linux errno numbers, like the netzlink stack.
namespace NetZlink.Stress.Tests.DotnetStack;

[TestFixture]
public sealed class SocketErrnoTests
{
    [TestCase(SocketError.ConnectionRefused, 111)]
    [TestCase(SocketError.TimedOut, 110)]
    [TestCase(SocketError.ConnectionReset, 104)]
    [TestCase(SocketError.HostUnreachable, 113)]
    [TestCase(SocketError.NetworkUnreachable, 101)]
    [TestCase(SocketError.AddressNotAvailable, 99)]
    [TestCase(SocketError.TooManyOpenSockets, 24)]
    [TestCase(SocketError.Shutdown, 32)]
    [TestCase(SocketError.OperationAborted, 125)]
    [CancelAfter(10_000)]
    public void MapsToTheLinuxErrno(SocketError error, int errno) => Assert.That(SocketErrno.Of(error), Is.EqualTo(errno));

    [Test]
    [CancelAfter(10_000)]
    public void AResolverErrorKeepsItsOwnNumber() => Assert.That(SocketErrno.Of(SocketError.HostNotFound), Is.EqualTo(11001));
}
