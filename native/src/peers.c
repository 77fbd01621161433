/*
 * peers.c - peer introspection. Only STREAM sockets can answer: their
 * connection table is ours. libzmq 4.3 exposes no peer table for ROUTER
 * (or any other type), so those report ENOTSUP rather than made-up data.
 */
#include "stream.h"

#include <errno.h>
#include <string.h>

static zl_stream_t *get_stream(void *socket)
{
    zl_handle_t *h = zl_handle_get(socket, 0);
    if (!h || (h->kind != ZL_KIND_ZSOCK && h->kind != ZL_KIND_STREAM)) {
        zl_set_errno(ENOTSOCK);
        return NULL;
    }
    if (h->kind != ZL_KIND_STREAM) {
        zl_set_errno(ENOTSUP);
        return NULL;
    }
    if (zl_ctx_is_shutdown(h->u.stream->ctx)) {
        zl_set_errno(ETERM);
        return NULL;
    }
    return h->u.stream;
}

static void fill_info(zl_stream_t *s, const zl_conn_t *c, zlink_peer_info_t *info)
{
    (void)s;
    memset(info, 0, sizeof *info);
    info->routing_id.size = 4;
    zl_put_be32(info->routing_id.data, c->id);
    zl_format_addr(&c->remote, info->remote_addr, sizeof info->remote_addr);
    info->connected_time_ms = c->connected_ms;
    info->msgs_sent = c->msgs_sent;
    info->msgs_received = c->msgs_received;
}

ZL_API int zlink_socket_peer_count(void *socket)
{
    zl_stream_t *s = get_stream(socket);
    if (!s)
        return -1;
    return (int)s->npeers;
}

ZL_API int zlink_socket_peer_routing_id(void *socket, int index,
                                        zlink_routing_id_t *out)
{
    zl_stream_t *s = get_stream(socket);
    if (!s)
        return -1;
    if (!out || index < 0 || (uint32_t)index >= s->npeers)
        return zl_fail(EINVAL);
    const zl_conn_t *c = s->conns[s->peers[index]];
    memset(out, 0, sizeof *out);
    out->size = 4;
    zl_put_be32(out->data, c->id);
    return 0;
}

ZL_API int zlink_socket_peer_info(void *socket,
                                  const zlink_routing_id_t *routing_id,
                                  zlink_peer_info_t *info)
{
    zl_stream_t *s = get_stream(socket);
    if (!s)
        return -1;
    if (!routing_id || !info || routing_id->size != 4)
        return zl_fail(EINVAL);
    const zl_conn_t *c = zl_conn_by_id(s, zl_get_be32(routing_id->data));
    if (!c || c->peer_pos < 0)
        return zl_fail(EINVAL);
    fill_info(s, c, info);
    return 0;
}

/* peers == NULL: *count receives the number of peers. Otherwise up to
 * *count entries are filled and *count receives how many were. */
ZL_API int zlink_socket_peers(void *socket, zlink_peer_info_t *peers,
                              size_t *count)
{
    zl_stream_t *s = get_stream(socket);
    if (!s)
        return -1;
    if (!count)
        return zl_fail(EINVAL);
    if (!peers) {
        *count = s->npeers;
        return 0;
    }
    size_t n = *count < s->npeers ? *count : s->npeers;
    for (size_t i = 0; i < n; i++)
        fill_info(s, s->conns[s->peers[i]], &peers[i]);
    *count = n;
    return 0;
}
