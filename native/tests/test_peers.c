/* test_peers.c - peer introspection on STREAM sockets (count, by index, by
 * routing id, bulk with the size query); the libzmq socket types' tables are
 * test_zmp_peers.c's. */
#include "testutil.h"

#include <errno.h>

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    CHECK(zlink_socket_peer_count(srv) == 0);
    size_t count = 99;
    CHECK(zlink_socket_peers(srv, NULL, &count) == 0 && count == 0);

    uint32_t cids[3], sids[3], id;
    for (int i = 0; i < 3; i++) {
        CHECK(zlink_connect(cli, ep) == 0);
        CHECK(tu_stream_event(cli, &cids[i]) == 1);
        CHECK(tu_stream_event(srv, &sids[i]) == 1);
    }
    CHECK(zlink_socket_peer_count(srv) == 3);
    CHECK(zlink_socket_peer_count(cli) == 3);

    /* traffic on the first connection */
    unsigned char buf[64];
    CHECK(tu_stream_send(cli, cids[0], "abc", 3, 0) == 3);
    CHECK(tu_stream_send(cli, cids[0], "defg", 4, 0) == 4);
    int got = 0;
    while (got < 7) {
        int n = tu_stream_recv(srv, &id, buf, sizeof buf, 0);
        CHECK(n > 0 && id == sids[0]);
        got += n;
    }
    CHECK(tu_stream_send(srv, sids[0], "xy", 2, 0) == 2);

    int seen = 0;
    for (int i = 0; i < 3; i++) {
        zlink_routing_id_t rid;
        CHECK(zlink_socket_peer_routing_id(srv, i, &rid) == 0 && rid.size == 4);
        for (int k = 0; k < 3; k++)
            if (tu_be32(rid.data) == sids[k])
                seen |= 1 << k;
    }
    CHECK(seen == 7);
    zlink_routing_id_t rid;
    CHECK_ERR(zlink_socket_peer_routing_id(srv, 3, &rid), EINVAL);
    CHECK_ERR(zlink_socket_peer_routing_id(srv, -1, &rid), EINVAL);

    zlink_peer_info_t info;
    rid.size = 4;
    tu_put_be32(rid.data, sids[0]);
    CHECK(zlink_socket_peer_info(srv, &rid, &info) == 0);
    CHECK(info.routing_id.size == 4 && tu_be32(info.routing_id.data) == sids[0]);
    CHECK(strncmp(info.remote_addr, "tcp://127.0.0.1:", 16) == 0);
    CHECK(info.connected_time_ms > 1600000000000ull); /* wall clock, ms */
    CHECK(info.msgs_received >= 1 && info.msgs_received <= 2);
    CHECK(info.msgs_sent == 1);
    tu_put_be32(rid.data, cids[0]);
    CHECK(zlink_socket_peer_info(cli, &rid, &info) == 0);
    CHECK(strcmp(info.remote_addr, ep) == 0);
    CHECK(info.msgs_sent == 2);
    tu_put_be32(rid.data, 12345);
    CHECK_ERR(zlink_socket_peer_info(srv, &rid, &info), EINVAL);
    rid.size = 3;
    CHECK_ERR(zlink_socket_peer_info(srv, &rid, &info), EINVAL);

    zlink_peer_info_t arr[8];
    count = 0;
    CHECK(zlink_socket_peers(srv, NULL, &count) == 0 && count == 3);
    count = 2;
    CHECK(zlink_socket_peers(srv, arr, &count) == 0 && count == 2);
    count = 8;
    CHECK(zlink_socket_peers(srv, arr, &count) == 0 && count == 3);
    CHECK_ERR(zlink_socket_peers(srv, arr, NULL), EINVAL);

    /* a closed connection leaves the table */
    CHECK(tu_stream_send(cli, cids[1], "", 0, 0) == 0);
    CHECK(zlink_socket_peer_count(cli) == 2);
    while (tu_stream_event(srv, &id) != 0)
        ;
    CHECK(id == sids[1]);
    CHECK(zlink_socket_peer_count(srv) == 2);

    /* a ROUTER without connections has an empty table; non-sockets fail */
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    CHECK(zlink_socket_peer_count(router) == 0);
    CHECK_ERR(zlink_socket_peer_routing_id(router, 0, &rid), EINVAL);
    CHECK_ERR(zlink_socket_peer_info(router, &rid, &info), ENOENT);
    count = 8;
    CHECK(zlink_socket_peers(router, arr, &count) == 0 && count == 0);
    CHECK_ERR(zlink_socket_peer_count(ctx), ENOTSOCK);
    CHECK(zlink_close(router) == 0);

    tu_set_int(srv, ZLINK_LINGER, 0);
    CHECK(zlink_close(cli) == 0 && zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
