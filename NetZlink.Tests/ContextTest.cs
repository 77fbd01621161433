// The base of fixtures whose every test works on sockets of one context: Context is created
// before each test and disposed after it, after the sockets Sockets made for the test (and after
// the test's own sockets, which it disposes itself).
// The assembly's leak check runs around both, so a socket the test leaves open still fails it.
namespace NetZlink.Tests;

[TestFixture]
public abstract class ContextTest
{
    private readonly List<ZlinkSocket> _sockets = [];
    private ZlinkContext? _context;

    /// <summary>This test's context.</summary>
    protected ZlinkContext Context => _context ?? throw new InvalidOperationException("the context exists only while a test runs");

    [SetUp]
    public void CreateContext() => _context = new ZlinkContext();

    /// <summary>Two sockets of this test's context, closed at tear-down (the last made first), before the context.</summary>
    protected (ZlinkSocket First, ZlinkSocket Second) Sockets(ZlinkSocketType first, ZlinkSocketType second)
    {
        _sockets.Add(Context.CreateSocket(first));
        _sockets.Add(Context.CreateSocket(second));
        return (_sockets[^2], _sockets[^1]);
    }

    /// <summary>
    /// Two PAIR sockets of this test's context, the first bound to a fresh endpoint of
    /// <paramref name="transport"/> (<see cref="Endpoints.BindFresh"/>), the second connected to it;
    /// closed at tear-down.
    /// </summary>
    protected (ZlinkSocket Bound, ZlinkSocket Connected) ConnectedPairs(string transport)
    {
        var (bound, connected) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        connected.Connect(Endpoints.BindFresh(bound, transport));
        return (bound, connected);
    }

    [TearDown]
    public void DisposeContext()
    {
        for (int i = _sockets.Count - 1; i >= 0; i--)
        {
            _sockets[i].Dispose();
        }

        _sockets.Clear();
        _context?.Dispose();
        _context = null;
    }
}
