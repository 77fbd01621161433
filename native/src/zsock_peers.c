/*
 * zsock_peers.c - zlink_socket_peer_* on PAIR, PUB, SUB, XPUB, XSUB, DEALER
 * and ROUTER. libzmq keeps no table of connections a caller could read, so
 * NetZlink's ZMP engine keeps one (native/libzmq/zmp_peers.*): a connection
 * enters it when its ZMP handshake is done and leaves when it ends, both in
 * libzmq's I/O threads, under the table's lock. These calls read it from the
 * application's thread. Only the bundled libzmq has that engine; with the
 * system's libzmq the libzmq socket types have no peer calls (ENOTSUP).
 */
#include "zl_internal.h"

#ifdef ZLINK_BUNDLED_LIBZMQ

#include "../libzmq/zmp_peers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Lets the socket take the commands its I/O threads have sent (a ROUTER
 * learns the ids of its new peers from them), as zlink's peer calls do:
 * an id read from the table is then one the socket routes by. */
static void settle(zl_handle_t *h)
{
    int events;
    size_t len = sizeof events;
    zmq_getsockopt(h->u.zsock, ZMQ_EVENTS, &events, &len);
}

static void copy_id(zlink_routing_id_t *out, const netzlink_zmp_peer_t *p)
{
    memset(out, 0, sizeof *out);
    out->size = p->id_size;
    memcpy(out->data, p->id, p->id_size);
}

static void fill_info(zlink_peer_info_t *info, const netzlink_zmp_peer_t *p)
{
    memset(info, 0, sizeof *info);
    copy_id(&info->routing_id, p);
    memcpy(info->remote_addr, p->remote, sizeof info->remote_addr);
    info->remote_addr[sizeof info->remote_addr - 1] = '\0';
    info->connected_time_ms = p->connected_ms;
    info->msgs_sent = p->sent;
    info->msgs_received = p->received;
}

static int zpeer_count(zl_handle_t *h)
{
    settle(h);
    return netzlink_zmp_peer_count(h->u.zsock);
}

static int zpeer_routing_id(zl_handle_t *h, int index, zlink_routing_id_t *out)
{
    if (!out || index < 0)
        return zl_fail(EINVAL);
    settle(h);
    netzlink_zmp_peer_t p;
    if (netzlink_zmp_peer_at(h->u.zsock, index, &p) != 0)
        return zl_fail(EINVAL); /* zlink's answer for an index out of range */
    copy_id(out, &p);
    return 0;
}

static int zpeer_info(zl_handle_t *h, const zlink_routing_id_t *rid,
                      zlink_peer_info_t *info)
{
    if (!rid || !info)
        return zl_fail(EINVAL);
    settle(h);
    netzlink_zmp_peer_t p;
    if (netzlink_zmp_peer_find(h->u.zsock, rid->data, rid->size, &p) != 0)
        return zl_fail(ENOENT); /* as zlink: no peer with that id */
    fill_info(info, &p);
    return 0;
}

static int zpeer_list(zl_handle_t *h, zlink_peer_info_t *peers, size_t *count)
{
    if (!count)
        return zl_fail(EINVAL);
    settle(h);
    if (!peers) {
        *count = netzlink_zmp_peers(h->u.zsock, NULL, 0);
        return 0;
    }
    size_t want = *count;
    if (want == 0)
        return 0;
    /* one look at the table; a few hundred bytes a peer */
    netzlink_zmp_peer_t *tmp = malloc(want * sizeof *tmp);
    if (!tmp)
        return zl_fail(ENOMEM);
    size_t have = netzlink_zmp_peers(h->u.zsock, tmp, want);
    size_t n = have < want ? have : want;
    for (size_t i = 0; i < n; i++)
        fill_info(&peers[i], &tmp[i]);
    free(tmp);
    *count = n;
    return 0;
}

const zl_peer_ops_t zl_zsock_peer_ops = {
    .count = zpeer_count,
    .routing_id = zpeer_routing_id,
    .info = zpeer_info,
    .list = zpeer_list,
};

#endif
