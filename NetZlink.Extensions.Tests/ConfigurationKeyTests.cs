// Strict binding of a hosted engine's section: an engine setting given both flat and under Engine:
// is refused naming both keys, and unknown keys below the Engine subsection (Engine:Tls:...) or
// below a single-valued setting are refused naming the key, one line each, when the options are
// made (the host's start).
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink.Extensions.Hosting;
using NetZlink.Tests;

namespace NetZlink.Extensions.Tests;

[TestFixture]
public sealed class ConfigurationKeyTests
{
    private const string Section = "NetZlink:Backend";

    [Test]
    public void ASettingGivenFlatAndUnderEngine_IsRefusedNamingBoth()
    {
        IReadOnlyList<string> failures = Failures(new()
        {
            ["Endpoints:0"] = "tcp://127.0.0.1:5555",
            ["ConnectRetries"] = "2",
            ["Engine:connectretries"] = "7",
            ["Engine:Endpoints:0"] = "tcp://127.0.0.1:6666",
            ["Tls:CaFile"] = "ca.pem",
            ["Engine:Tls:Verify"] = "false",
        });
        Assert.That(failures, Is.EquivalentTo(new[]
        {
            Both("ConnectRetries", "connectretries"),
            Both("Endpoints", "Endpoints"),
            Both("Tls", "Tls"),
        }), string.Join("\n", failures));
    }

    [Test]
    public void UnknownKeysBelowTheEngineSubsection_OrBelowASingleValue_AreRefusedOneLineEach()
    {
        IReadOnlyList<string> failures = Failures(new()
        {
            ["Engine:Endpoints:0"] = "tcp://127.0.0.1:5555",
            ["Engine:Tls:CertFile"] = "cert.pem",
            ["Engine:Tls:CaFile"] = "ca.pem",
            ["Engine:ConnectTimeout:Seconds"] = "5",
            ["ShardCount:Max"] = "2",
        });
        Assert.That(failures, Is.EquivalentTo(new[]
        {
            $"{Section}:Engine:Tls:CertFile is not a setting of a NetZlink client engine (misspelt? docs/hosting.md lists them)",
            $"{Section}:Engine:ConnectTimeout:Seconds is not a setting of a NetZlink client engine (Engine:ConnectTimeout takes a single value)",
            $"{Section}:ShardCount:Max is not a setting of a NetZlink client engine (ShardCount takes a single value)",
        }), string.Join("\n", failures));
    }

    [Test]
    public void APlainValueWhereASectionListOrMapIsWanted_IsRefusedOneLineEach()
    {
        // The binder skips each of these without a word: "Reconnect": "true" left reconnects off.
        IReadOnlyList<string> failures = Failures(new()
        {
            ["Endpoints"] = "tcp://127.0.0.1:5555",
            ["Reconnect"] = "true",
            ["Tls"] = "on",
            ["Health"] = "00:00:05",
            ["Channel"] = "4096",
            ["Engine:Reconnect"] = "yes",
            ["Framer"] = "length",
            ["Endpoints:x"] = "tcp://127.0.0.1:5556",
        });
        Assert.That(failures, Is.EquivalentTo(new[]
        {
            $"{Section}:Endpoints is 'tcp://127.0.0.1:5555': Endpoints is a list (Endpoints:0, Endpoints:1 ...), not a single value",
            $"{Section}:Endpoints:x is not a setting of a NetZlink client engine (Endpoints is a list: Endpoints:0, Endpoints:1 ...)",
            $"{Section}:Reconnect is 'true': Reconnect is a section (Reconnect:InitialDelay, Reconnect:MaxDelay, Reconnect:Multiplier ...), not a single value",
            $"{Section}:Tls is 'on': Tls is a section (Tls:CertificateFile, Tls:KeyFile, Tls:KeyPassword ...), not a single value",
            $"{Section}:Health is '00:00:05': Health is a section (Health:StartupGracePeriod, Health:MinimumConnections ...), not a single value",
            $"{Section}:Channel is '4096': Channel is a section (Channel:ReceiveCapacityPerShard, Channel:ReceiveBytesPerShard, Channel:ConnectionPipes ...), not a single value",
            $"{Section}:Engine:Reconnect is 'yes': Engine:Reconnect is a section (Engine:Reconnect:InitialDelay, Engine:Reconnect:MaxDelay, Engine:Reconnect:Multiplier ...), not a single value",
            $"{Section}:Framer cannot be set from configuration: the Framer of a NetZlink client engine is set in code",
            Both("Reconnect", "Reconnect"),
        }), string.Join("\n", failures));
    }

    [Test]
    public void EitherLayoutAloneBinds()
    {
        NetZlinkClientEngineOptions flat = Bound(new() { ["Endpoints:0"] = "tcp://127.0.0.1:5555", ["ConnectRetries"] = "4", ["Tls:CaFile"] = "ca.pem" });
        NetZlinkClientEngineOptions nested = Bound(new() { ["Engine:Endpoints:0"] = "tcp://127.0.0.1:5555", ["Engine:ConnectRetries"] = "4", ["Engine:Tls:CaFile"] = "ca.pem" });
        foreach (NetZlinkClientEngineOptions o in new[] { flat, nested })
        {
            Assert.That(o.Engine.Endpoints, Is.EqualTo(new[] { "tcp://127.0.0.1:5555" }));
            Assert.That(o.Engine.ConnectRetries, Is.EqualTo(4));
            Assert.That(o.Engine.Tls?.CaFile, Is.EqualTo("ca.pem"));
        }
    }

    [Test]
    public void RandomLayouts_FailExactlyForTheKeysGivenTwice_AndBindTheRest()
    {
        Random random = Fuzz.Random(out _);
        string[] keys = ["ConnectRetries", "ShardCount", "HighWaterMark", "ConnectConcurrency", "SendBufferSize", "ReceiveChunkSize"];
        for (int round = 0; round < Fuzz.Iterations(50); round++)
        {
            var settings = new Dictionary<string, string?> { [random.Next(2) == 0 ? "Endpoints:0" : "Engine:Endpoints:0"] = "tcp://127.0.0.1:5555" };
            var expected = new List<string>();
            var values = new Dictionary<string, int>();
            foreach (string key in keys)
            {
                int value = 1024 + random.Next(1000);
                switch (random.Next(4))
                {
                    case 0:
                        break;
                    case 1:
                        settings[key] = value.ToString(System.Globalization.CultureInfo.InvariantCulture);
                        values[key] = value;
                        break;
                    case 2:
                        settings["Engine:" + key] = value.ToString(System.Globalization.CultureInfo.InvariantCulture);
                        values[key] = value;
                        break;
                    default:
                        settings[key] = "1024";
                        settings["Engine:" + key] = "1025";
                        expected.Add(Both(key, key));
                        break;
                }
            }

            string layout = string.Join(", ", settings.Select(s => $"{s.Key}={s.Value}"));
            if (expected.Count > 0)
            {
                Assert.That(Failures(settings), Is.EquivalentTo(expected), layout);
                continue;
            }

            NetZlinkClientEngineOptions o = Bound(settings);
            foreach ((string key, int value) in values)
            {
                Assert.That(Convert.ToInt32(typeof(NetZlink.Engine.EngineOptions).GetProperty(key)!.GetValue(o.Engine), System.Globalization.CultureInfo.InvariantCulture), Is.EqualTo(value), $"{key} in {layout}");
            }
        }
    }

    private static string Both(string flat, string nested) =>
        $"{Section}:{flat} and {Section}:Engine:{nested} are both set: an engine setting goes either in the section or in its Engine subsection, not both (one would override the other)";

    private static IOptionsMonitor<NetZlinkClientEngineOptions> Options(Dictionary<string, string?> settings, out IHost host)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(settings.ToDictionary(s => $"{Section}:{s.Key}", s => s.Value));
        builder.Services.AddNetZlinkClientEngine(builder.Configuration.GetSection(Section));
        host = builder.Build();
        return host.Services.GetRequiredService<IOptionsMonitor<NetZlinkClientEngineOptions>>();
    }

    private static IReadOnlyList<string> Failures(Dictionary<string, string?> settings)
    {
        IOptionsMonitor<NetZlinkClientEngineOptions> options = Options(settings, out IHost host);
        using (host)
        {
            var refused = Assert.Throws<OptionsValidationException>(() => options.Get(Microsoft.Extensions.Options.Options.DefaultName))!;
            return [.. refused.Failures];
        }
    }

    private static NetZlinkClientEngineOptions Bound(Dictionary<string, string?> settings)
    {
        IOptionsMonitor<NetZlinkClientEngineOptions> options = Options(settings, out IHost host);
        using (host)
        {
            return options.Get(Microsoft.Extensions.Options.Options.DefaultName);
        }
    }
}
