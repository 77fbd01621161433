/* test_stream_basic.c - STREAM bind + connect: 0x01 on both sides, echo of
 * small and large payloads, the msg API on STREAM, timeouts, EAGAIN,
 * closing with an empty payload (0x00 on both sides); run in the LENGTH
 * framing (bodies whole, truncated to the buffer) and in RAW (bytes, what
 * does not fit stays for the next message, events are empty payloads). */
#include "testutil.h"

#include <errno.h>

static void *srv, *cli;

/* Non-blocking step of an echo server: returns 1 if it did something. */
static int server_step(uint32_t *last_event_id, int *last_event)
{
    static unsigned char buf[70000];
    uint32_t id;
    int n = tu_stream_try_recv(srv, &id, buf, sizeof buf);
    if (n < 0)
        return 0;
    if (tu_last_event(srv) >= 0) {
        *last_event_id = id;
        *last_event = tu_last_event(srv);
        return 1;
    }
    CHECK(n > 0);
    if (n > 0)
        CHECK(tu_stream_send(srv, id, buf, (size_t)n, 0) == n);
    return 1;
}

static void run(int mode)
{
    void *ctx = zlink_ctx_new();
    srv = zlink_socket(ctx, ZLINK_STREAM);
    cli = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(srv && cli);
    CHECK(tu_get_int(srv, ZLINK_STREAM_FRAMING) == ZLINK_STREAM_FRAMING_LENGTH);
    tu_set_framing(srv, mode);
    tu_set_framing(cli, mode);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);

    unsigned char buf[256];
    uint32_t sid, cid, id;
    CHECK_ERR(zlink_recv(srv, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    int t = 80;
    CHECK(zlink_setsockopt(srv, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    long long t0 = tu_now_ms();
    CHECK_ERR(zlink_recv(srv, buf, sizeof buf, 0), EAGAIN);
    CHECK(tu_now_ms() - t0 >= 70);
    t = -1;
    CHECK(zlink_setsockopt(srv, ZLINK_RCVTIMEO, &t, sizeof t) == 0);

    CHECK(zlink_connect(cli, ep) == 0);
    tu_last_endpoint(cli, (char *)buf, sizeof buf);
    CHECK(strcmp((char *)buf, ep) == 0);
    CHECK(tu_stream_event(cli, &cid) == 1);
    CHECK(tu_stream_event(srv, &sid) == 1);
    int more = 1;
    size_t len = sizeof more;
    CHECK(zlink_getsockopt(srv, ZLINK_RCVMORE, &more, &len) == 0 && more == 0);

    /* small echo */
    CHECK(tu_stream_send(cli, cid, "hello", 5, 0) == 5);
    CHECK(tu_stream_recv(srv, &id, buf, sizeof buf, 0) == 5 && id == sid);
    CHECK(memcmp(buf, "hello", 5) == 0);
    CHECK(tu_stream_send(srv, sid, buf, 5, 0) == 5);
    CHECK(tu_stream_recv(cli, &id, buf, sizeof buf, 0) == 5 && id == cid);
    CHECK(memcmp(buf, "hello", 5) == 0);

    if (mode == ZLINK_STREAM_FRAMING_RAW) {
        /* a payload bigger than the caller's buffer is not truncated: the
         * rest comes with the next message */
        CHECK(tu_stream_send(cli, cid, "0123456789", 10, 0) == 10);
        int got = 0;
        char acc[16];
        while (got < 10) {
            int n = tu_stream_recv(srv, &id, buf, 4, 0);
            CHECK(n >= 1 && n <= 4 && id == sid && tu_last_event(srv) == -1);
            memcpy(acc + got, buf, (size_t)n);
            got += n;
        }
        CHECK(memcmp(acc, "0123456789", 10) == 0);
    } else {
        /* a body bigger than the caller's buffer is cut to it, its full
         * size returned, and it is gone; one byte is a body too */
        CHECK(tu_stream_send(cli, cid, "0123456789", 10, 0) == 10);
        CHECK(tu_stream_send(cli, cid, "\x01", 1, 0) == 1);
        memset(buf, 0, 8);
        CHECK(tu_stream_recv(srv, &id, buf, 4, 0) == 10 && id == sid);
        CHECK(memcmp(buf, "0123", 4) == 0 && buf[4] == 0);
        CHECK(tu_stream_recv(srv, &id, buf, sizeof buf, 0) == 1 && id == sid);
        CHECK(buf[0] == 1 && tu_last_event(srv) == -1);
    }

    /* large echo, both sides driven non-blockingly from this thread */
    size_t total = 4 << 20;
    unsigned char *big = malloc(total), *back = malloc(total);
    for (size_t i = 0; i < total; i++)
        big[i] = (unsigned char)(i * 7 + (i >> 11));
    size_t sent = 0, rcvd = 0;
    uint32_t evid;
    int ev;
    while (rcvd < total) {
        if (sent < total) {
            size_t chunk = total - sent < 65536 ? total - sent : 65536;
            unsigned char idb[4];
            tu_put_be32(idb, cid);
            CHECK(zlink_send(cli, idb, 4, ZLINK_SNDMORE) == 4);
            /* at SNDHWM the payload fails with EAGAIN and nothing stays
             * selected: the whole [id][payload] is retried */
            int n = zlink_send(cli, big + sent, chunk, ZLINK_DONTWAIT);
            if (n >= 0) {
                CHECK((size_t)n == chunk);
                sent += chunk;
            } else {
                CHECK(zlink_errno() == EAGAIN);
            }
        }
        server_step(&evid, &ev);
        int n;
        while ((n = tu_stream_recv(cli, &id, back + rcvd, total - rcvd,
                                   ZLINK_DONTWAIT)) >= 0) {
            CHECK(id == cid);
            rcvd += (size_t)n;
        }
        CHECK(zlink_errno() == EAGAIN);
    }
    CHECK(memcmp(big, back, total) == 0);
    free(big);
    free(back);

    /* msg API on STREAM */
    zlink_msg_t m;
    zlink_msg_init_size(&m, 4);
    tu_put_be32(zlink_msg_data(&m), cid);
    CHECK(zlink_msg_send(&m, cli, ZLINK_SNDMORE) == 4);
    zlink_msg_init_size(&m, 3);
    memcpy(zlink_msg_data(&m), "abc", 3);
    CHECK(zlink_msg_send(&m, cli, 0) == 3);
    CHECK(zlink_msg_size(&m) == 0);
    zlink_msg_init(&m);
    CHECK(zlink_msg_recv(&m, srv, 0) == 4);
    CHECK(zlink_msg_more(&m) == 1);
    CHECK(tu_be32(zlink_msg_data(&m)) == sid);
    CHECK(zlink_msg_recv(&m, srv, 0) == 3);
    CHECK(zlink_msg_more(&m) == 0);
    CHECK(memcmp(zlink_msg_data(&m), "abc", 3) == 0);
    zlink_msg_close(&m);

    /* EVENTS */
    int events = 0;
    len = sizeof events;
    CHECK(zlink_getsockopt(srv, ZLINK_EVENTS, &events, &len) == 0);
    CHECK(events == ZLINK_POLLOUT);

    /* the client closes its connection with an empty payload: both sides
     * get 0x00 for it, and the id is gone */
    CHECK(tu_stream_send(cli, cid, "", 0, 0) == 0);
    CHECK(tu_stream_event(cli, &id) == 0 && id == cid);
    CHECK(tu_stream_event(srv, &id) == 0 && id == sid);
    CHECK_ERR(tu_stream_send(cli, cid, "x", 1, 0), EHOSTUNREACH);
    CHECK_ERR(tu_stream_send(srv, sid, "x", 1, 0), EHOSTUNREACH);
    CHECK_ERR(zlink_recv(srv, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    CHECK_ERR(zlink_recv(cli, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);

    /* the server closes one: same thing from the other side */
    CHECK(zlink_connect(cli, ep) == 0);
    CHECK(tu_stream_event(cli, &cid) == 1);
    CHECK(tu_stream_event(srv, &sid) == 1);
    CHECK(tu_stream_send(srv, sid, "bye", 3, 0) == 3);
    CHECK(tu_stream_send(srv, sid, "", 0, 0) == 0);
    CHECK(tu_stream_event(srv, &id) == 0 && id == sid);
    CHECK(tu_stream_recv(cli, &id, buf, sizeof buf, 0) == 3 && id == cid);
    CHECK(tu_stream_event(cli, &id) == 0 && id == cid);

    CHECK(zlink_close(cli) == 0);
    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
}

int main(void)
{
    run(ZLINK_STREAM_FRAMING_LENGTH);
    run(ZLINK_STREAM_FRAMING_RAW);
    puts("ok");
    return 0;
}
