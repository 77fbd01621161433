// The states of one engine connection. Transitions (all on the owning shard's thread):
//   Idle -> Connecting            an attempt starts (zlink_connect with CONNECT_ROUTING_ID)
//   Connecting -> Connected       the socket delivers [id][0x01]
//   Connecting -> RetryWait       [id][0x00], a native connect error, or the attempt's deadline
//   RetryWait -> Connecting       the retry delay passed and an attempt slot is free
//   Connecting/RetryWait -> Failed  no retries left (final)
//   Connected -> Closed           [id][0x00] (peer), Close (local), protocol error, engine stop (final)
namespace NetZlink.Engine;

internal enum ConnectionState : byte
{
    Idle,
    Connecting,
    RetryWait,
    Connected,
    Failed,
    Closed,
}
