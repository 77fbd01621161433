/* test_stream_hwm.c - SNDHWM on STREAM: when a connection's queue is full
 * the payload send fails with EAGAIN, nothing is queued and nothing stays
 * selected: the next frame is an id frame again, so another connection's
 * [id][payload] (or a close) goes where it is addressed and never into the
 * stalled connection's stream; the whole [id][payload] retried goes through
 * once the peer reads; SNDTIMEO bounds a blocking send; order is preserved
 * throughout. RAW framing. */
#include "testutil.h"

#include <errno.h>

#define CHUNK 65536

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    /* RAW: the checks below count wire bytes, which are the payload bytes
     * only without framing, and fill the kernel's buffers to the byte */
    int mode = ZLINK_STREAM_FRAMING_RAW;
    tu_set_framing(srv, mode);
    tu_set_framing(cli, mode);
    tu_set_int(srv, ZLINK_SNDHWM, 4);
    tu_set_int(srv, ZLINK_SNDBUF, 32768);
    tu_set_int(cli, ZLINK_RCVBUF, 32768);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
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
    /* nothing stays selected: a payload alone is now an id frame without
     * SNDMORE (EINVAL), and the stalled connection's stream is untouched */
    CHECK_ERR(zlink_send(srv, chunk, CHUNK, ZLINK_DONTWAIT), EINVAL);
    /* another connection's message goes to that connection, exactly */
    void *cli2 = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_framing(cli2, mode);
    CHECK(zlink_connect(cli2, ep) == 0);
    uint32_t cid2, sid2, id2;
    CHECK(tu_stream_event(cli2, &cid2) == 1);
    CHECK(tu_stream_event(srv, &sid2) == 1);
    CHECK(tu_stream_send(srv, sid2, "other", 5, ZLINK_DONTWAIT) == 5);
    {
        char ob[16];
        int on;
        long long until = tu_now_ms() + 5000;
        while ((on = tu_stream_recv(cli2, &id2, ob, sizeof ob, ZLINK_DONTWAIT)) < 0 &&
               tu_now_ms() < until) {
            zlink_pollitem_t it[2] = {{srv, 0, ZLINK_POLLIN, 0}, {cli2, 0, ZLINK_POLLIN, 0}};
            CHECK(zlink_poll(it, 2, 10) >= 0);
        }
        CHECK(on == 5 && id2 == cid2 && memcmp(ob, "other", 5) == 0);
    }
    /* the stalled connection refuses the same way again (a whole retry) ... */
    CHECK(zlink_send(srv, idb, 4, ZLINK_SNDMORE) == 4);
    CHECK_ERR(zlink_send(srv, chunk, CHUNK, ZLINK_DONTWAIT), EAGAIN);
    /* ... and a blocking send gives up after SNDTIMEO, deselecting too */
    tu_set_int(srv, ZLINK_SNDTIMEO, 100);
    long long t0 = tu_now_ms();
    CHECK(zlink_send(srv, idb, 4, ZLINK_SNDMORE) == 4);
    CHECK_ERR(zlink_send(srv, chunk, CHUNK, 0), EAGAIN);
    CHECK(tu_now_ms() - t0 >= 90);
    CHECK_ERR(zlink_send(srv, chunk, CHUNK, ZLINK_DONTWAIT), EINVAL);
    /* closing the other connection while the first is stalled works */
    {
        unsigned char idb2[4];
        tu_put_be32(idb2, sid2);
        CHECK(zlink_send(srv, idb2, 4, ZLINK_SNDMORE) == 4);
        CHECK(zlink_send(srv, NULL, 0, ZLINK_DONTWAIT) == 0);
        int ev = -1;
        long long until = tu_now_ms() + 5000;
        char ob[16];
        int on;
        while (tu_now_ms() < until) {
            on = tu_stream_recv(cli2, &id2, ob, sizeof ob, ZLINK_DONTWAIT);
            if (on == 0 && tu_last_event(cli2) == 0) {
                ev = 0;
                break;
            }
            CHECK(on < 0); /* nothing but the disconnect event arrives */
            zlink_pollitem_t it[2] = {{srv, 0, ZLINK_POLLIN, 0}, {cli2, 0, ZLINK_POLLIN, 0}};
            CHECK(zlink_poll(it, 2, 10) >= 0);
        }
        CHECK(ev == 0 && id2 == cid2);
        /* the server hears its own close as a 0x00 too */
        CHECK(tu_stream_event(srv, &id) == 0 && id == sid2);
    }
    tu_set_int(cli2, ZLINK_LINGER, 0);
    CHECK(zlink_close(cli2) == 0);

    /* the client reads; retrying the whole [id][payload] eventually
     * succeeds and the stream stays in order, with no stray byte */
    unsigned char *rb = malloc(CHUNK);
    uint64_t got = 0;
    int done = 0;
    uint64_t want_total = pos + CHUNK * 20;
    while (got < want_total) {
        if (!done || pos < want_total) {
            if (done) {
                for (int i = 0; i < CHUNK; i++)
                    chunk[i] = (unsigned char)((pos + (uint64_t)i) % 251);
            }
            CHECK(zlink_send(srv, idb, 4, ZLINK_SNDMORE) == 4);
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
