/*
 * zmp_peers.hpp - the engine's side of the peer table (zmp_peers.h) and the
 * routing id of its monitor events.
 *
 * Part of NetZlink, not of libzmq: scripts/libzmq.sh copies it into libzmq's
 * src/; native/libzmq/peers.patch builds zmp_peers.cpp and makes
 * socket_base_t's monitor publish the routing id (zmp_event_peer_t).
 */
#ifndef __NETZLINK_ZMP_PEERS_HPP_INCLUDED__
#define __NETZLINK_ZMP_PEERS_HPP_INCLUDED__

#include <stddef.h>
#include <stdint.h>
#include <string>

#include "zmp_peers.h"

namespace zmq
{
//  One connection in the table: made by zmp_peer_add, counted on by its
//  engine, freed by zmp_peer_remove.
struct zmp_peer_t
{
    const void *socket;
    netzlink_zmp_peer_t info; //  id, address and time; counters below
    uint64_t sent;            //  written and read with __atomic builtins
    uint64_t received;
};

//  Enters a peer of socket_ whose handshake is done (the id is cut to 255
//  bytes, the address to 255 characters).
zmp_peer_t *zmp_peer_add (const void *socket_,
                          const unsigned char *id_,
                          size_t id_size_,
                          const std::string &remote_);

//  Takes the peer out of the table and frees it; NULL does nothing.
void zmp_peer_remove (zmp_peer_t *peer_);

inline void zmp_peer_sent (zmp_peer_t *peer_)
{
    if (peer_)
        __atomic_fetch_add (&peer_->sent, 1, __ATOMIC_RELAXED);
}

inline void zmp_peer_received (zmp_peer_t *peer_)
{
    if (peer_)
        __atomic_fetch_add (&peer_->received, 1, __ATOMIC_RELAXED);
}

//  While one lives on a thread, the monitor event event_ that a socket
//  publishes from that thread carries id_ (socket_base_t::monitor_event asks
//  zmp_event_peer_t::find). The engine makes one around the call that
//  reports CONNECTION_READY or DISCONNECTED; id_ must outlive it.
class zmp_event_peer_t
{
  public:
    zmp_event_peer_t (uint64_t event_,
                      const unsigned char *id_,
                      size_t size_,
                      int reason_ = -1);
    ~zmp_event_peer_t ();

    //  The routing id that event_, published now on this thread, carries:
    //  true with id_ and size_ set, or false.
    static bool find (uint64_t event_, const unsigned char **id_, size_t *size_);

    //  The value the first frame of event_, published now on this thread,
    //  carries: the reason given to the zmp_event_peer_t of event_ when it
    //  has one (a ZLINK_DISCONNECT_* for DISCONNECTED, in place of libzmq's
    //  descriptor), else value_ (native/libzmq/reason.patch).
    static uint64_t value (uint64_t event_, uint64_t value_);

  private:
    uint64_t _event;
    const unsigned char *_id;
    size_t _size;
    int _reason;
    zmp_event_peer_t *_outer;

    zmp_event_peer_t (const zmp_event_peer_t &);
    const zmp_event_peer_t &operator= (const zmp_event_peer_t &);
};
}

#endif
