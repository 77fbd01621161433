// The base of the engine fixtures: each test drives real engines (their shard threads, native
// sockets and loopback ports), so engine fixtures never run beside another test.
namespace NetZlink.Tests.Engine;

[TestFixture]
[NonParallelizable]
public abstract class EngineFixture
{
}
