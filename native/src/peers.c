/*
 * peers.c - peer introspection. Only a kind of socket with a peer table of
 * its own can answer (STREAM: its connection table, stream_conn.c). libzmq
 * 4.3 exposes no peer table for ROUTER (or any other type), so those report
 * ENOTSUP rather than made-up data.
 */
#include "zl_internal.h"

#include <errno.h>

/* The socket's peer calls, or NULL with the error set. */
static const zl_peer_ops_t *peer_ops(void *socket, zl_handle_t **h)
{
    *h = zl_sock_get(socket);
    if (!*h)
        return NULL;
    if (!(*h)->ops->peer) {
        zl_set_errno(ENOTSUP);
        return NULL;
    }
    return (*h)->ops->peer;
}

ZL_API int zlink_socket_peer_count(void *socket)
{
    zl_handle_t *h;
    const zl_peer_ops_t *p = peer_ops(socket, &h);
    return p ? p->count(h) : -1;
}

ZL_API int zlink_socket_peer_routing_id(void *socket, int index,
                                        zlink_routing_id_t *out)
{
    zl_handle_t *h;
    const zl_peer_ops_t *p = peer_ops(socket, &h);
    return p ? p->routing_id(h, index, out) : -1;
}

ZL_API int zlink_socket_peer_info(void *socket,
                                  const zlink_routing_id_t *routing_id,
                                  zlink_peer_info_t *info)
{
    zl_handle_t *h;
    const zl_peer_ops_t *p = peer_ops(socket, &h);
    return p ? p->info(h, routing_id, info) : -1;
}

/* peers == NULL: *count receives the number of peers. Otherwise up to
 * *count entries are filled and *count receives how many were. */
ZL_API int zlink_socket_peers(void *socket, zlink_peer_info_t *peers,
                              size_t *count)
{
    zl_handle_t *h;
    const zl_peer_ops_t *p = peer_ops(socket, &h);
    return p ? p->list(h, peers, count) : -1;
}
