/* test_stream_hwm.c - SNDHWM on STREAM: when a connection's queue is full
 * the payload send fails with EAGAIN, nothing is queued, the id stays
 * selected, and the retried payload goes through once the peer reads;
 * SNDTIMEO bounds a blocking send; order is preserved throughout. */
#include "testutil.h"

#include <errno.h>

#define CHUNK 65536

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_int(srv, ZLINK_SNDHWM, 4);
    tu_set_int(srv, ZLINK_SNDBUF, 32768);
    tu_set_int(cli, ZLINK_RCVBUF, 32768);
    CHECK(zlink_bind(srv, "tcp://127.0.0.1:*") == 0);
    char ep[256];
    tu_last_endpoint(srv, ep, sizeof ep);
    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t cid, sid, id;
    CHECK(tu_stream_event(cli, &cid) == 1);
    CHECK(tu_stream_event(srv, &sid) == 1);

    /* chunks carry a running byte pattern so order can be checked */
    unsigned char *chunk = malloc(CHUNK);
    uint64_t pos = 0; /* bytes accepted by send */
    unsigned char idb[4];
    tu_put_be32(idb, sid);
    int accepted = 0;
    for (;;) {
        for (int i = 0; i < CHUNK; i++)
            chunk[i] = (unsigned char)((pos + (uint64_t)i) % 251);
        CHECK(zlink_send(srv, idb, 4, ZLINK_SNDMORE) == 4);
        int n = zlink_send(srv, chunk, CHUNK, ZLINK_DONTWAIT);
        if (n < 0) {
            CHECK(zlink_errno() == EAGAIN);
            break;
        }
        pos += CHUNK;
        accepted++;
        CHECK(accepted < 200);
    }
    /* the kernel took some, the queue holds at most SNDHWM messages */
    CHECK(accepted >= 4 && accepted < 4 + 1 + 8 * 1024 * 1024 / CHUNK);
    /* the id is still selected: a payload retry fails the same way ... */
    CHECK_ERR(zlink_send(srv, chunk, CHUNK, ZLINK_DONTWAIT), EAGAIN);
    /* ... and a blocking send gives up after SNDTIMEO */
    tu_set_int(srv, ZLINK_SNDTIMEO, 100);
    long long t0 = tu_now_ms();
    CHECK_ERR(zlink_send(srv, chunk, CHUNK, 0), EAGAIN);
    CHECK(tu_now_ms() - t0 >= 90);

    /* the client reads; retrying the payload alone eventually succeeds and
     * the stream stays in order */
    unsigned char *rb = malloc(CHUNK);
    uint64_t got = 0;
    int done = 0;
    uint64_t want_total = pos + CHUNK * 20;
    while (got < want_total) {
        if (!done || pos < want_total) {
            if (done) {
                for (int i = 0; i < CHUNK; i++)
                    chunk[i] = (unsigned char)((pos + (uint64_t)i) % 251);
                CHECK(zlink_send(srv, idb, 4, ZLINK_SNDMORE) == 4);
            }
            int n = zlink_send(srv, chunk, CHUNK, ZLINK_DONTWAIT);
            if (n >= 0) {
                CHECK(n == CHUNK);
                pos += CHUNK;
                done = 1;
            } else {
                CHECK(zlink_errno() == EAGAIN);
                done = 0;
            }
        }
        int n;
        while ((n = tu_stream_recv(cli, &id, rb, CHUNK, ZLINK_DONTWAIT)) >= 0) {
            CHECK(id == cid);
            for (int i = 0; i < n; i++)
                CHECK(rb[i] == (unsigned char)((got + (uint64_t)i) % 251));
            got += (uint64_t)n;
        }
        CHECK(zlink_errno() == EAGAIN);
        /* queued data moves only inside calls on the sending socket */
        zlink_pollitem_t items[2] = {{srv, 0, ZLINK_POLLIN, 0}, {cli, 0, ZLINK_POLLIN, 0}};
        CHECK(zlink_poll(items, 2, 10) >= 0);
    }
    CHECK(got == pos);

    /* SNDHWM 0 = unlimited */
    tu_set_int(srv, ZLINK_SNDHWM, 0);
    for (int i = 0; i < 300; i++)
        CHECK(tu_stream_send(srv, sid, chunk, CHUNK, ZLINK_DONTWAIT) == CHUNK);

    tu_set_int(srv, ZLINK_LINGER, 0);
    CHECK(zlink_close(cli) == 0);
    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    free(chunk);
    free(rb);
    puts("ok");
    return 0;
}
