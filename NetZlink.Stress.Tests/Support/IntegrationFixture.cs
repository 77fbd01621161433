// What every integration fixture is: it runs the real stress CLI (child processes, real sockets),
// so it carries the "Integration" category (a filter can leave these slow tests out) and never
// runs beside another test (they compete for ports, descriptors and CPU).
namespace NetZlink.Stress.Tests.Support;

[TestFixture]
[Category("Integration")]
[NonParallelizable]
public abstract class IntegrationFixture
{
}
