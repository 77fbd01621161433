// How every benchmark of the suite is reported: the GitHub-flavoured Markdown summary (it opens
// with the machine description BenchmarkDotNet prints) written to benchmarks/results/ of the
// repository, next to overhead.md, so a run leaves files that can be committed as they are.
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Exporters;

namespace NetZlink.Benchmarks;

internal static class SuiteConfig
{
    internal static IConfig Create()
    {
        // BenchmarkDotNet writes its exports to <ArtifactsPath>/results and its log to
        // <ArtifactsPath>/<title>.log, so the artifacts path is benchmarks/ itself.
        ManualConfig config = ManualConfig.CreateEmpty()
            .AddColumnProvider(DefaultConfig.Instance.GetColumnProviders().ToArray())
            .AddLogger(DefaultConfig.Instance.GetLoggers().ToArray())
            .AddAnalyser(DefaultConfig.Instance.GetAnalysers().ToArray())
            .AddValidator(DefaultConfig.Instance.GetValidators().ToArray())
            .AddExporter(MarkdownExporter.GitHub)
            .WithArtifactsPath(RepositoryPaths.BenchmarksDirectory);
        return config;
    }
}
