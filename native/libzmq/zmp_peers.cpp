/*
 * zmp_peers.cpp - the peer table of the ZMP socket types (zmp_peers.h) and
 * the routing id of their monitor events (zmp_peers.hpp).
 *
 * One table for the process, under one mutex: the I/O threads take it once
 * per connection (a peer in, a peer out) and the application thread when it
 * asks; the message counters are atomics the engine bumps without it. For
 * each socket its peers are kept in the order they arrived, which is what an
 * index means (indices shift as peers leave).
 */
#include "precompiled.hpp"
#include "zmp_peers.hpp"

#include <map>
#include <pthread.h>
#include <string.h>
#include <sys/time.h>
#include <vector>

#include "err.hpp"
#include "random.hpp"
#include "wire.hpp"
#include "zmp_engine.hpp"

namespace
{
typedef std::vector<zmq::zmp_peer_t *> peers_t;
typedef std::map<const void *, peers_t> table_t;

pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
//  never destroyed: an I/O thread may still remove a peer while the process
//  exits
table_t *table;

struct lock_t
{
    lock_t () { pthread_mutex_lock (&table_lock); }
    ~lock_t () { pthread_mutex_unlock (&table_lock); }
};

uint64_t wall_ms ()
{
    struct timeval tv;
    gettimeofday (&tv, NULL);
    return static_cast<uint64_t> (tv.tv_sec) * 1000
           + static_cast<uint64_t> (tv.tv_usec) / 1000;
}

//  the peers of socket_, or NULL; caller holds the lock
const peers_t *peers_of (const void *socket_)
{
    if (!table)
        return NULL;
    const table_t::const_iterator it = table->find (socket_);
    return it == table->end () ? NULL : &it->second;
}

void copy_out (const zmq::zmp_peer_t *peer_, netzlink_zmp_peer_t *out_)
{
    *out_ = peer_->info;
    out_->sent = __atomic_load_n (&peer_->sent, __ATOMIC_RELAXED);
    out_->received = __atomic_load_n (&peer_->received, __ATOMIC_RELAXED);
}

//  the event being reported on this thread with a peer's routing id
__thread zmq::zmp_event_peer_t *current_event;
}

zmq::zmp_peer_t *zmq::zmp_peer_add (const void *socket_,
                                    const unsigned char *id_,
                                    size_t id_size_,
                                    const std::string &remote_)
{
    zmp_peer_t *peer = new (std::nothrow) zmp_peer_t ();
    alloc_assert (peer);
    peer->socket = socket_;
    const size_t n = id_size_ < sizeof peer->info.id ? id_size_
                                                     : sizeof peer->info.id;
    peer->info.id_size = static_cast<uint8_t> (n);
    if (n)
        memcpy (peer->info.id, id_, n);
    const size_t r = remote_.size () < sizeof peer->info.remote - 1
                       ? remote_.size ()
                       : sizeof peer->info.remote - 1;
    memcpy (peer->info.remote, remote_.data (), r);
    peer->info.remote[r] = '\0';
    peer->info.connected_ms = wall_ms ();

    lock_t lock;
    if (!table) {
        table = new (std::nothrow) table_t ();
        alloc_assert (table);
    }
    (*table)[socket_].push_back (peer);
    return peer;
}

void zmq::zmp_peer_remove (zmp_peer_t *peer_)
{
    if (!peer_)
        return;
    {
        lock_t lock;
        const table_t::iterator it = table->find (peer_->socket);
        zmq_assert (it != table->end ());
        peers_t &peers = it->second;
        for (peers_t::iterator p = peers.begin (); p != peers.end (); ++p)
            if (*p == peer_) {
                peers.erase (p);
                break;
            }
        if (peers.empty ())
            table->erase (it);
    }
    delete peer_;
}

int netzlink_zmp_peer_count (const void *socket_)
{
    lock_t lock;
    const peers_t *peers = peers_of (socket_);
    return peers ? static_cast<int> (peers->size ()) : 0;
}

int netzlink_zmp_peer_at (const void *socket_,
                          int index_,
                          netzlink_zmp_peer_t *out_)
{
    lock_t lock;
    const peers_t *peers = peers_of (socket_);
    if (!peers || index_ < 0 || static_cast<size_t> (index_) >= peers->size ())
        return -1;
    copy_out ((*peers)[static_cast<size_t> (index_)], out_);
    return 0;
}

int netzlink_zmp_peer_find (const void *socket_,
                            const uint8_t *id_,
                            size_t size_,
                            netzlink_zmp_peer_t *out_)
{
    lock_t lock;
    const peers_t *peers = peers_of (socket_);
    if (!peers)
        return -1;
    for (size_t i = 0; i < peers->size (); i++) {
        const zmq::zmp_peer_t *p = (*peers)[i];
        if (p->info.id_size == size_
            && (size_ == 0 || memcmp (p->info.id, id_, size_) == 0)) {
            copy_out (p, out_);
            return 0;
        }
    }
    return -1;
}

size_t netzlink_zmp_peers (const void *socket_,
                           netzlink_zmp_peer_t *out_,
                           size_t max_)
{
    lock_t lock;
    const peers_t *peers = peers_of (socket_);
    if (!peers)
        return 0;
    for (size_t i = 0; i < max_ && i < peers->size (); i++)
        copy_out ((*peers)[i], &out_[i]);
    return peers->size ();
}

//  zmp_engine_t's part (declared in zmp_engine.hpp, kept here with the table)

void zmq::zmp_engine_t::peer_up (const unsigned char *id_, size_t size_)
{
    zmq_assert (!_peer);
    //  A ROUTER that connected with CONNECT_ROUTING_ID routes to the peer by
    //  that alias (router_t::identify_peer), not by the id in its HELLO.
    const std::string &alias = _options.zmp_connect_alias;
    if (_options.recv_routing_id && !alias.empty ()
        && _endpoint_uri_pair.local_type == endpoint_type_connect) {
        id_ = reinterpret_cast<const unsigned char *> (alias.data ());
        size_ = alias.size ();
    }
    _peer = zmp_peer_add (socket (), id_, size_, _endpoint_uri_pair.remote);
}

void zmq::zmp_engine_t::peer_down ()
{
    zmp_peer_remove (_peer);
    _peer = NULL;
}

int zmq::zmp_engine_t::pull_and_count (msg_t *msg_)
{
    const int rc = pull_msg_from_session (msg_);
    if (rc == 0
        && !(msg_->flags () & (msg_t::more | msg_t::command | msg_t::routing_id)))
        zmp_peer_sent (_peer);
    return rc;
}

//  libzmq's ROUTER gives a peer without an id the id 0 and a 32-bit number
//  (router_t::identify_peer); made here, the peer table has it too. The
//  numbers start at random, as libzmq's do, and are shared by the process.
size_t zmq::zmp_engine_t::make_routing_id (unsigned char *id_)
{
    static uint32_t next;
    static pthread_once_t seeded = PTHREAD_ONCE_INIT;
    struct seed
    {
        static void run () { next = generate_random (); }
    };
    pthread_once (&seeded, seed::run);
    id_[0] = 0;
    put_uint32 (id_ + 1, __atomic_fetch_add (&next, 1, __ATOMIC_RELAXED));
    return 5;
}

zmq::zmp_event_peer_t::zmp_event_peer_t (uint64_t event_,
                                         const unsigned char *id_,
                                         size_t size_,
                                         int reason_) :
    _event (event_),
    _id (id_),
    _size (size_),
    _reason (reason_),
    _outer (current_event)
{
    current_event = this;
}

zmq::zmp_event_peer_t::~zmp_event_peer_t ()
{
    current_event = _outer;
}

bool zmq::zmp_event_peer_t::find (uint64_t event_,
                                  const unsigned char **id_,
                                  size_t *size_)
{
    for (const zmp_event_peer_t *e = current_event; e; e = e->_outer)
        if (e->_event == event_) {
            *id_ = e->_id;
            *size_ = e->_size;
            return true;
        }
    return false;
}

uint64_t zmq::zmp_event_peer_t::value (uint64_t event_, uint64_t value_)
{
    for (const zmp_event_peer_t *e = current_event; e; e = e->_outer)
        if (e->_event == event_)
            return e->_reason >= 0 ? static_cast<uint64_t> (e->_reason)
                                   : value_;
    return value_;
}
