/*
 * zmp_peers.h - the peer table of NetZlink's ZMP socket types (PAIR, PUB,
 * SUB, XPUB, XSUB, DEALER, ROUTER): what libzlink's C code (src/zsock_peers.c)
 * reads for zlink_socket_peer_*. C and C++ alike.
 *
 * A peer is a connection whose ZMP handshake is done: zmp_engine_t enters it
 * when READY arrives and takes it out when the connection ends, both in the
 * connection's I/O thread; the application thread reads the table under one
 * lock. Each entry is keyed by the libzmq socket (the socket_base_t the
 * engine's session belongs to, the pointer zmq_socket returned). Part of
 * NetZlink, not of libzmq: scripts/libzmq.sh copies it into libzmq's src/.
 */
#ifndef NETZLINK_ZMP_PEERS_H_INCLUDED
#define NETZLINK_ZMP_PEERS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NETZLINK_PEERS_API __attribute__ ((visibility ("default")))

/* one peer, as the table holds it when it is read */
typedef struct netzlink_zmp_peer
{
    uint8_t id_size;
    uint8_t id[255];   /* the id the socket knows the peer by */
    char remote[256];  /* the peer's address, e.g. tcp://127.0.0.1:40312 */
    uint64_t connected_ms; /* wall clock (Unix ms) when the handshake ended */
    uint64_t sent;     /* whole messages taken for sending on the connection */
    uint64_t received; /* whole messages received on the connection */
} netzlink_zmp_peer_t;

/* the number of peers of socket */
NETZLINK_PEERS_API int netzlink_zmp_peer_count (const void *socket);

/* the peer at index (in the order they arrived): 0, or -1 when there is none */
NETZLINK_PEERS_API int
netzlink_zmp_peer_at (const void *socket, int index, netzlink_zmp_peer_t *out);

/* the peer with this id: 0, or -1 when there is none */
NETZLINK_PEERS_API int netzlink_zmp_peer_find (const void *socket,
                                               const uint8_t *id,
                                               size_t size,
                                               netzlink_zmp_peer_t *out);

/* Copies up to max peers (out may be NULL when max is 0) and returns how
 * many the socket has, in one look at the table. */
NETZLINK_PEERS_API size_t netzlink_zmp_peers (const void *socket,
                                              netzlink_zmp_peer_t *out,
                                              size_t max);

#ifdef __cplusplus
}
#endif

#endif
