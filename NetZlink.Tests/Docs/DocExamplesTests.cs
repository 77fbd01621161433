// The docs' C# examples are programs that run: every ```csharp block of README.md and docs/ is
// built against this checkout's NetZlink project and run. A block that starts with a using
// directive is a program of its own; a block that does not continues the program before it in the same file
// (docs/binding.md's poller and monitor fragments use its sockets). The engine example talks to a
// local ServerEngine echo server: its endpoint in the text is replaced by the one bound here.
using System.Text.RegularExpressions;
using NetZlink.Engine;

namespace NetZlink.Tests.Docs;

[TestFixture]
[NonParallelizable]
public sealed partial class DocExamplesTests
{
    private static readonly TimeSpan RunLimit = TimeSpan.FromSeconds(180);

    public static IEnumerable<TestCaseData> Programs()
    {
        string root = RepositoryRoot.Path;
        var files = new List<string> { Path.Combine(root, "README.md") };
        files.AddRange(Directory.GetFiles(Path.Combine(root, "docs"), "*.md").Order(StringComparer.Ordinal));
        foreach (string file in files)
        {
            var programs = new List<string>();
            foreach (Match block in CSharpBlock().Matches(File.ReadAllText(file)))
            {
                string code = block.Groups[1].Value;
                if (UsingDirective().IsMatch(code.TrimStart()) || programs.Count == 0)
                {
                    programs.Add(code);
                }
                else
                {
                    programs[^1] += "\n" + code;
                }
            }

            for (int i = 0; i < programs.Count; i++)
            {
                yield return new TestCaseData(Path.GetRelativePath(root, file), i, programs[i]).SetName($"{Path.GetFileName(file)} program {i + 1}");
            }
        }
    }

    [Test]
    public void TheDocsHaveExamplesToRun() => Assert.That(Programs().Count(), Is.GreaterThanOrEqualTo(3));

    [TestCaseSource(nameof(Programs))]
    [CancelAfter(300_000)]
    public void ADocExampleBuildsRunsAndFinishes(string file, int index, string code)
    {
        if (code.Contains("ClientEngine", StringComparison.Ordinal))
        {
            NativeNeeds.RequireStreamClient();
        }

        // The default framer: the examples send whole [u32 BE length][body] packets, and it runs on any library.
        using var echo = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        echo.Start(_ => new Echo());
        code = TcpEndpoint().Replace(code, echo.BoundEndpoints[0]);

        string dir = Directory.CreateTempSubdirectory("netzlink-doc-example-").FullName;
        try
        {
            File.WriteAllText(Path.Combine(dir, "Program.cs"), code);
            File.WriteAllText(Path.Combine(dir, "Example.csproj"), $"""
                <Project Sdk="Microsoft.NET.Sdk">
                  <PropertyGroup>
                    <OutputType>Exe</OutputType>
                    <TargetFramework>net10.0</TargetFramework>
                    <ImplicitUsings>enable</ImplicitUsings>
                    <Nullable>enable</Nullable>
                    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
                  </PropertyGroup>
                  <ItemGroup>
                    <ProjectReference Include="{Path.Combine(RepositoryRoot.Path, "NetZlink", "NetZlink.csproj")}" />
                  </ItemGroup>
                </Project>
                """);
            // Debug: the example's build of NetZlink never touches the Release outputs the test run uses.
            (int exit, string output) = Run(dir, "run", "-c", "Debug", "--nologo", "-v", "quiet");
            TestContext.Out.WriteLine($"{file}, program {index + 1}: exit {exit}\n{output}");
            Assert.That(exit, Is.Zero, $"{file}, program {index + 1} failed:\n{code}\n--- output:\n{output}");
            if (file == "README.md" && code.Contains("Console.WriteLine", StringComparison.Ordinal))
            {
                Assert.That(output.Trim(), Is.Not.Empty, "the example prints what it got");
            }

            if (code.Contains("echo of", StringComparison.Ordinal))
            {
                Assert.That(output, Does.Contain("echo of 9 bytes"), "the engine example sent first and got its echo");
            }
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static (int Exit, string Output) Run(string directory, params string[] args)
    {
        using ChildProcess process = ChildProcess.Start("dotnet", args, workingDirectory: directory);
        process.CloseStdin();
        if (!process.WaitForExit(RunLimit))
        {
            return (-1, $"did not finish within {RunLimit}: {process.Stdout}{process.Stderr}");
        }

        return (process.ExitCode, process.Stdout + "\n" + process.Stderr);
    }

    [GeneratedRegex(@"```csharp\n(.*?)```", RegexOptions.Singleline)]
    private static partial Regex CSharpBlock();

    [GeneratedRegex(@"^using [\w.]+;")]
    private static partial Regex UsingDirective();

    [GeneratedRegex(@"tcp://127\.0\.0\.1:27110")]
    private static partial Regex TcpEndpoint();

    private sealed class Echo : IConnectionHandler
    {
        public void OnConnected(EngineShard shard, Connection connection)
        {
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet) => _ = shard.Send(connection, packet);

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
        }
    }
}
