// Hand-built results with every field set to a value whose formatting shows (decimals, rounding).

namespace NetZlink.Stress.Tests.Support;

internal static class SampleResults
{
    /// <summary>A PASS s2 run with distinct, awkward numbers in every field.</summary>
    public static ScenarioResult Pass()
    {
        var result = new ScenarioResult
        {
            Settings = new ScenarioSettings { Scenario = "s2", Ccu = 200, Size = 1024, Inflight = 30 },
            ConnectSuccess = 200,
            ConnectFail = 0,
            ConnectTimeout = 0,
            Sent = 3_000_000,
            Recv = 2_999_997,
            Throughput = 299_999.7049,
            P50Us = 812.3456,
            P95Us = 1500.5,
            P99Us = 2001.1,
            P999Us = 3333.333,
            MaxUs = 12000.5,
            StdevUs = 99.994,
            DrainTimeout = 0,
            GatingViolation = 0,
            PassFail = "PASS",
            CpuSeconds = 3.456,
            PeakRssBytes = 150 * 1024 * 1024 + 300 * 1024,
            // 0.25 bytes per packet to 6 decimals over sent + recv = 5,999,997.
            AllocatedBytes = 1_500_000,
            ShardCount = 2,
            StartupToConnectedMs = 91.23456,
            StartupToFirstEchoMs = 104.5,
            FirstN = 100,
            FirstNP50Us = 2345.678,
            FirstNMaxUs = 9876.5,
            ServerTimeSamples = 187_500,
            ServerP50Us = 6.1251,
            ServerP99Us = 30.5,
            ServerMaxUs = 5230.59,
            // connect_rate 200 / 0.12345 = 1620.089…; 4.8828125 and 1.46484375 KiB per connection.
            ConnectSeconds = 0.12345,
            ClientRssGrowthBytes = 1_000_000,
            ServerRssGrowthBytes = 300_000,
        };
        result.ErrorsByErrno[110] = 2;
        result.ErrorsByErrno[104] = 3;
        return result;
    }

    /// <summary>A FAIL result whose reason needs quoting in every format.</summary>
    public static ScenarioResult Fail(string reason = "drain timed out, 3 \"packets\" left")
    {
        var result = new ScenarioResult
        {
            Settings = new ScenarioSettings { Scenario = "s1", Ccu = 5, ScenarioId = "my run" },
            ConnectFail = 5,
            PassFail = "FAIL",
            FailReason = FailReasons.ConnectFail,
            Reason = reason,
        };
        result.ErrorsByErrno[111] = 5;
        return result;
    }
}
