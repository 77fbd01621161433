// The accepting side of a server engine's shard: a [id][0x01] from an id the shard does not know
// is a new connection, given a free slot (or closed at once when every slot is taken). A slot is
// free again once its connection has ended and the handler has heard so.
namespace NetZlink.Engine;

public sealed partial class EngineShard
{
    private readonly Dictionary<uint, int>? _slotById;
    private readonly Stack<int>? _freeSlots;

    private void Accept(uint routingId)
    {
        if (Draining)
        {
            // A draining server takes no new connections (its endpoint is unbound already).
            StreamFrames.RequestClose(_socket, routingId, _framing);
            return;
        }

        if (_freeSlots!.Count == 0)
        {
            // Every slot is taken (EngineOptions.MaxConnections): refuse, counted.
            Counters.ConnectFailed++;
            ObserveAcceptRefused();
            StreamFrames.RequestClose(_socket, routingId, _framing);
            return;
        }

        int slot = _freeSlots.Pop();
        ref ConnectionSlot s = ref _slots[slot];
        s.RoutingId = routingId;
        s.Serial = ((ServerEngine)_engine).NextConnectionIndex();
        s.Transition(ConnectionState.Connected);
        s.LastReceiveTicks = _passTicks;
        Volatile.Write(ref s.Life, s.Life + 1);
        s.PostsSentLive = 0;
        s.DrainClosing = s.DrainFlushed = false;
        _slotById![routingId] = slot;
        Counters.Connected++;
        ObserveConnected(slot);
        _handler.OnConnected(this, ConnectionAt(slot));
    }
}
