// The base of fixtures whose every test works on sockets of one context: Context is created
// before each test and disposed after it (after the test's own sockets, which it disposes first).
// The assembly's leak check runs around both, so a socket the test leaves open still fails it.
namespace NetZlink.Tests;

[TestFixture]
public abstract class ContextTest
{
    private ZlinkContext? _context;

    /// <summary>This test's context.</summary>
    protected ZlinkContext Context => _context ?? throw new InvalidOperationException("the context exists only while a test runs");

    [SetUp]
    public void CreateContext() => _context = new ZlinkContext();

    [TearDown]
    public void DisposeContext()
    {
        _context?.Dispose();
        _context = null;
    }
}
