// Finding limit_echo: an override path, the walk up to native/build/bench, and an error that
// says where it looked and how to build it.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class LimitEchoBinaryTests
{
    [Test]
    [CancelAfter(10_000)]
    public void FoundByWalkingUpToNativeBuildBench()
    {
        using var temp = new TempDirectory();
        string bench = Directory.CreateDirectory(Path.Combine(temp.Path, "native", "build", "bench")).FullName;
        string binary = Path.Combine(bench, "limit_echo");
        File.WriteAllText(binary, string.Empty);
        string deep = Directory.CreateDirectory(Path.Combine(temp.Path, "a", "b", "c")).FullName;

        Assert.That(LimitEchoBinary.Locate(null, [deep]), Is.EqualTo(binary));
    }

    [Test]
    [CancelAfter(10_000)]
    public void MissingNamesThePathsLookedAtAndHowToBuild()
    {
        using var temp = new TempDirectory();
        string deep = Directory.CreateDirectory(Path.Combine(temp.Path, "x")).FullName;

        var e = Assert.Throws<StressHostException>(() => LimitEchoBinary.Locate(null, [deep]))!;

        Assert.That(e.Message, Does.Contain(Path.Combine(deep, "native", "build", "bench", "limit_echo")));
        Assert.That(e.Message, Does.Contain(Path.Combine(temp.Path, "native", "build", "bench", "limit_echo")));
        Assert.That(e.Message, Does.Contain("cmake --build native/build --target limit_echo"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AnOverrideThatIsNotThereIsAnErrorNotASilentSearch()
    {
        var e = Assert.Throws<StressHostException>(() => LimitEchoBinary.Locate("/no/such/limit_echo", [Path.GetTempPath()]))!;
        Assert.That(e.Message, Does.Contain("/no/such/limit_echo").And.Contain(LimitEchoBinary.Variable));
    }
}
