// The socket types zlink has (REQ, REP, PUSH, PULL and the draft types do not exist in zlink).
namespace NetZlink;

/// <summary>The kind of a zlink socket, with the ABI's numbers.</summary>
public enum ZlinkSocketType
{
    /// <summary>Exclusive pair: one peer, both directions.</summary>
    Pair = 0,
    /// <summary>Publisher: sends to every matching subscriber.</summary>
    Pub = 1,
    /// <summary>Subscriber: receives what it subscribed to.</summary>
    Sub = 2,
    /// <summary>Dealer: load-balances outgoing messages, fair-queues incoming ones.</summary>
    Dealer = 5,
    /// <summary>Router: addresses peers by routing id (first frame of every message).</summary>
    Router = 6,
    /// <summary>Publisher that also receives subscription messages.</summary>
    XPub = 9,
    /// <summary>Subscriber that sends subscriptions as messages.</summary>
    XSub = 10,
    /// <summary>
    /// Raw TCP: every message is [routing id][payload]; a one-byte payload 0x01 / 0x00 announces a
    /// connection or disconnection; sending [id] + an empty payload closes that connection.
    /// </summary>
    Stream = 11,
}
