/* test_stream_peer_vanish.c - a peer that disappears while we are writing
 * a lot to it: no SIGPIPE (the default action would kill this test), the
 * connection is closed and its 0x00 is delivered exactly once. Covered in
 * both directions: STREAM client -> STREAM server that closes, and STREAM
 * server -> raw TCP client that resets. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK 65536

static unsigned char chunk[CHUNK];

/* Drives s until the 0x00 for id arrives; fails on a second one. */
static void expect_single_zero(void *s, uint32_t want, void *other)
{
    unsigned char buf[CHUNK];
    uint32_t id;
    int zeros = 0;
    long long deadline = tu_now_ms() + 10000;
    long long quiet_until = 0;
    while (tu_now_ms() < deadline) {
        int n = tu_stream_try_recv(s, &id, buf, sizeof buf);
        if (n < 0) {
            if (zeros && tu_now_ms() >= quiet_until)
                break;
            zlink_pollitem_t items[2] = {{s, 0, ZLINK_POLLIN, 0}, {other, 0, ZLINK_POLLIN, 0}};
            zlink_poll(items, other ? 2 : 1, 20);
            if (other) {
                while (tu_stream_recv(other, &id, buf, sizeof buf, ZLINK_DONTWAIT) >= 0)
                    ;
            }
            continue;
        }
        if (id != want)
            continue;
        if (n == 1 && buf[0] == 0) {
            zeros++;
            quiet_until = tu_now_ms() + 200;
        }
    }
    CHECK(zeros == 1);
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    memset(chunk, 'q', sizeof chunk);

    /* (a) client floods, server closes without reading */
    tu_set_int(cli, ZLINK_SNDHWM, 0);
    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t cid, sid, id;
    CHECK(tu_stream_event(cli, &cid) == 1);
    CHECK(tu_stream_event(srv, &sid) == 1);
    for (int i = 0; i < 512; i++) /* 32 MB, most of it queued */
        CHECK(tu_stream_send(cli, cid, chunk, CHUNK, ZLINK_DONTWAIT) == CHUNK);
    CHECK(tu_stream_send(srv, sid, "", 0, 0) == 0);
    CHECK(tu_stream_event(srv, &id) == 0 && id == sid);
    expect_single_zero(cli, cid, NULL);
    CHECK_ERR(tu_stream_send(cli, cid, chunk, 10, 0), EHOSTUNREACH);

    /* (b) server floods a raw TCP client that resets the connection */
    int raw = tu_raw_connect(tu_ep_port(ep));
    CHECK(tu_stream_event(srv, &sid) == 1);
    tu_set_int(srv, ZLINK_SNDHWM, 0);
    for (int i = 0; i < 512; i++)
        CHECK(tu_stream_send(srv, sid, chunk, CHUNK, ZLINK_DONTWAIT) == CHUNK);
    char rb[1000];
    CHECK(read(raw, rb, sizeof rb) > 0);
    struct linger lg = {1, 0};
    setsockopt(raw, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(raw);
    expect_single_zero(srv, sid, NULL);

    /* (c) the same with a graceful close of a peer that had read nothing:
     * writing into it fails with EPIPE/ECONNRESET after its FIN */
    raw = tu_raw_connect(tu_ep_port(ep));
    CHECK(tu_stream_event(srv, &sid) == 1);
    shutdown(raw, SHUT_RDWR);
    close(raw);
    for (int i = 0; i < 64; i++) {
        int n = tu_stream_send(srv, sid, chunk, CHUNK, ZLINK_DONTWAIT);
        if (n < 0) {
            CHECK(zlink_errno() == EHOSTUNREACH);
            break;
        }
        tu_sleep_ms(1);
    }
    expect_single_zero(srv, sid, NULL);

    tu_set_int(cli, ZLINK_LINGER, 0);
    tu_set_int(srv, ZLINK_LINGER, 0);
    CHECK(zlink_close(cli) == 0);
    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
