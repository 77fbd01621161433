// The other two parts of the demo, in the same executable:
//   registry <pub endpoint> <router endpoint>   a ZlinkRegistry (discovery follows pub, backends register at router)
//   backend <registry router endpoint> [service] an echo backend: a ZlinkReceiver registered under the service
//                                                ("echo"), answering [request id][body] with the same two parts
// Each runs until Ctrl+C or SIGTERM.
using NetZlink.Services;

namespace NetZlink.Samples.Gateway;

internal static class Backends
{
    public static async Task<int> RunAsync(string role, string[] args)
    {
        using var stop = new CancellationTokenSource();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            stop.Cancel();
        };
        using var sigterm = System.Runtime.InteropServices.PosixSignalRegistration.Create(System.Runtime.InteropServices.PosixSignal.SIGTERM, c =>
        {
            c.Cancel = true;
            stop.Cancel();
        });
        using var context = new ZlinkContext();
        if (role == "registry" && args.Length == 2)
        {
            await using var registry = new ZlinkRegistry(context, new RegistryOptions { PubEndpoint = args[0], RouterEndpoint = args[1] });
            Console.WriteLine($"registry: discovery at {registry.PubEndpoint}, backends register at {registry.RouterEndpoint}");
            await Wait(stop.Token);
            return 0;
        }

        if (role == "backend" && args.Length is 1 or 2)
        {
            string service = args.Length == 2 ? args[1] : "echo";
            await using var receiver = new ZlinkReceiver(context);
            receiver.Bind("tcp://127.0.0.1:*");
            await receiver.ConnectRegistryAsync(args[0]);
            await receiver.RegisterAsync(service, cancellationToken: stop.Token);
            Console.WriteLine($"backend: {service} at {receiver.BoundEndpoint}");
            long answered = 0;
            try
            {
                await foreach (ServiceMessage request in receiver.Requests.ReadAllAsync(stop.Token))
                {
                    using (request)
                    {
                        if (request.PartCount == 2 && receiver.Send(request.Peer, [request.GetPartMemory(0), request.GetPartMemory(1)]))
                        {
                            answered++;
                        }
                    }
                }
            }
            catch (OperationCanceledException)
            {
            }

            // An orderly leave: the gateway stops sending here at once (a crash is noticed when the heartbeats stop).
            await receiver.UnregisterAsync(service);
            Console.WriteLine($"backend: {answered} requests answered");
            return 0;
        }

        await Console.Error.WriteLineAsync("usage: registry <pub> <router> | backend <registry router> [service]");
        return 2;
    }

    private static async Task Wait(CancellationToken stop)
    {
        try
        {
            await Task.Delay(Timeout.Infinite, stop);
        }
        catch (OperationCanceledException)
        {
        }
    }
}
