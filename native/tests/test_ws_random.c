/* test_ws_random.c - randomized: many ws connections (200 by default) to
 * one server in RAW framing, each client sending a byte stream of its own
 * in payloads of random sizes, one byte included (received into buffers of
 * random sizes, one byte and more: RAW keeps what does not fit);
 * the server echoes every payload under SNDHWM pressure (SNDHWM 2,
 * DONTWAIT: a refused payload is sent again later, nothing of it queued);
 * each client checks its stream comes back exact. Prints its
 * seed; ZLINK_TEST_SEED=<seed> replays it. */
#include "ws_testutil.h"

#define NCONN 200
#define BYTES 6000
#define STALL_MS 15000  /* no stream moved for this long: stuck */
#define LIMIT_MS 240000 /* the whole run, however slow the machine */
#define RCVBUF_MIN 1

typedef struct cstate {
    uint32_t id;
    size_t sent, back;
} cstate_t;

static unsigned char pattern(size_t conn, size_t i)
{
    return (unsigned char)(conn * 31 + i * 7 + (i >> 8));
}

int main(void)
{
    tu_require("test_ws_random", "ws", "ws");
    tu_seed("test_ws_random");
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_framing(srv, ZLINK_STREAM_FRAMING_RAW);
    tu_set_int(srv, ZLINK_SNDHWM, 2);
    CHECK(zlink_bind(srv, "ws://127.0.0.1:*/r") == 0);
    char ep[256];
    tu_last_endpoint(srv, ep, sizeof ep);
    void *cli = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_framing(cli, ZLINK_STREAM_FRAMING_RAW);
    static cstate_t cs[NCONN];
    for (uint32_t i = 0; i < NCONN; i++) {
        unsigned char rid[4];
        tu_put_be32(rid, 1000 + i);
        CHECK(zlink_setsockopt(cli, ZLINK_CONNECT_ROUTING_ID, rid, 4) == 0);
        CHECK(zlink_connect(cli, ep) == 0);
        cs[i].id = 1000 + i;
    }
    /* the server's pending echo per connection: a FIFO of bytes */
    typedef struct { uint32_t id; unsigned char *buf; size_t len, cap; } echo_t;
    static echo_t ec[NCONN * 2];
    size_t nec = 0;
    int ups = 0;
    static unsigned char buf[70000];
    /* A stall (no connection's stream moving for STALL_MS) fails with the
     * state of every unfinished connection; a slow machine (ASan, load) only
     * makes the whole run longer, up to the hard limit. */
    long long start = tu_now_ms(), moved = start;
    size_t done = 0, last_back = 0;
    while (done < NCONN) {
        long long now = tu_now_ms();
        size_t total_back = (size_t)ups;
        for (uint32_t i = 0; i < NCONN; i++)
            total_back += cs[i].back;
        if (total_back != last_back) {
            last_back = total_back;
            moved = now;
        }
        if (now - moved > STALL_MS || now - start > LIMIT_MS) {
            fprintf(stderr, "test_ws_random: %s after %lld ms: %zu of %d done, %d up\n",
                    now - moved > STALL_MS ? "stalled" : "too slow", now - start, done, NCONN, ups);
            for (uint32_t i = 0; i < NCONN; i++)
                if (cs[i].back < BYTES)
                    fprintf(stderr, "  conn %u: sent %zu, back %zu\n", cs[i].id, cs[i].sent, cs[i].back);
            for (size_t k = 0; k < nec; k++)
                if (ec[k].len)
                    fprintf(stderr, "  server echo pending for %u: %zu bytes\n", ec[k].id, ec[k].len);
            CHECK(!"the streams did not finish");
        }
        int progress = 0;
        /* server: receive, queue for echo */
        uint32_t id;
        int n = tu_stream_recv(srv, &id, buf, RCVBUF_MIN + tu_rnd() % (sizeof buf - 1), ZLINK_DONTWAIT);
        if (n >= 0) {
            progress = 1;
            if (tu_last_event(srv) < 0) {
                CHECK(n > 0);
                echo_t *e = NULL;
                for (size_t k = 0; k < nec; k++)
                    if (ec[k].id == id)
                        e = &ec[k];
                if (!e) {
                    CHECK(nec < sizeof ec / sizeof ec[0]);
                    e = &ec[nec++];
                    e->id = id;
                }
                if (e->len + (size_t)n > e->cap) {
                    e->cap = (e->len + (size_t)n) * 2;
                    e->buf = realloc(e->buf, e->cap);
                    CHECK(e->buf);
                }
                memcpy(e->buf + e->len, buf, (size_t)n);
                e->len += (size_t)n;
            }
        } else {
            CHECK(zlink_errno() == EAGAIN);
        }
        /* server: echo in random pieces; SNDHWM refusals are retried */
        for (size_t k = 0; k < nec; k++) {
            echo_t *e = &ec[k];
            if (!e->len)
                continue;
            size_t m = 1 + tu_rnd() % 3000;
            if (m > e->len)
                m = e->len;
            int r = tu_stream_send(srv, e->id, e->buf, m, ZLINK_DONTWAIT);
            if (r < 0) {
                CHECK(zlink_errno() == EAGAIN);
                continue;
            }
            CHECK(r == (int)m);
            memmove(e->buf, e->buf + m, e->len - m);
            e->len -= m;
            progress = 1;
        }
        /* clients: send the next random piece, check what comes back */
        n = tu_stream_recv(cli, &id, buf, RCVBUF_MIN + tu_rnd() % (sizeof buf - 1), ZLINK_DONTWAIT);
        if (n >= 0) {
            progress = 1;
            CHECK(id >= 1000 && id < 1000 + NCONN);
            cstate_t *c = &cs[id - 1000];
            if (tu_last_event(cli) >= 0) {
                CHECK(n == 0 && tu_last_event(cli) == 1);
                ups++;
            } else {
                CHECK(n > 0);
                for (int j = 0; j < n; j++)
                    CHECK(buf[j] == pattern(id - 1000, c->back + (size_t)j));
                c->back += (size_t)n;
                if (c->back == BYTES)
                    done++;
                CHECK(c->back <= BYTES);
            }
        }
        if (ups == NCONN) {
            uint32_t i = tu_rnd() % NCONN;
            cstate_t *c = &cs[i];
            if (c->sent < BYTES) {
                size_t m = 1 + tu_rnd() % 2000;
                if (m > BYTES - c->sent)
                    m = BYTES - c->sent;
                unsigned char out[2100];
                for (size_t j = 0; j < m; j++)
                    out[j] = pattern(i, c->sent + j);
                CHECK(tu_stream_send(cli, c->id, out, m, 0) == (int)m);
                c->sent += m;
                progress = 1;
            }
        }
        if (!progress) {
            zlink_pollitem_t it[2] = {{srv, 0, ZLINK_POLLIN, 0}, {cli, 0, ZLINK_POLLIN, 0}};
            zlink_poll(it, 2, 2);
        }
    }
    for (size_t k = 0; k < nec; k++)
        free(ec[k].buf);
    zlink_close(cli);
    zlink_close(srv);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
