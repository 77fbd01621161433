// The reusable socket operation of one direction of one client connection: connect then zero-byte
// receives on the receive side, overflow sends on the send side. Completions arrive on the
// runtime's socket engine threads and go straight to the shard, with no delegate, task or
// execution-context capture per operation.
using System.Net.Sockets;

namespace NetZlink.Stress.DotnetStack;

/// <summary>A <see cref="SocketAsyncEventArgs"/> that knows its shard and slot.</summary>
internal sealed class ClientSocketEventArgs : SocketAsyncEventArgs
{
    public ClientSocketEventArgs(DotnetClientShard shard, int slot, bool sends)
        : base(unsafeSuppressExecutionContextFlow: true)
    {
        Shard = shard;
        Slot = slot;
        Sends = sends;
    }

    public DotnetClientShard Shard { get; }

    public int Slot { get; }

    /// <summary>True for the send side; false for connect and receive.</summary>
    public bool Sends { get; }

    protected override void OnCompleted(SocketAsyncEventArgs e)
    {
        if (Sends)
        {
            Shard.OnSendCompleted(this);
        }
        else if (LastOperation == SocketAsyncOperation.Connect)
        {
            Shard.OnConnectCompleted(this);
        }
        else
        {
            Shard.OnReceiveCompleted(this);
        }
    }
}
