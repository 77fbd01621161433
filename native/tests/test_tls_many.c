/* test_tls_many.c - exact byte streams over tls:// on many connections:
 * NCONN clients of one STREAM socket to a TLS server socket, each direction
 * of each connection a stream of random length sent in random-sized
 * payloads with DONTWAIT under a small SNDHWM (a refused payload is sent
 * again as a whole [id][payload]) and read with random-sized buffers, every
 * byte checked in order (RAW framing: a byte stream; events are empty
 * payloads told apart by ZLINK_STREAM_EVENT). Then every
 * connection is closed, half from each side, each giving exactly one 0x00
 * on both sides. Randomized: prints its seed; ZLINK_TEST_SEED=<seed>
 * replays it. */
#include "tls_testutil.h"

#include <errno.h>
#include <time.h>

#define NCONN 48
#define MAX_STREAM 300000

#define rnd tu_rnd

/* Byte k of the stream of connection i in direction dir. The first 4 bytes
 * of the client's stream carry i, so the server learns which it is. */
static unsigned char stream_byte(int dir, int i, size_t k)
{
    if (dir == 0 && k < 4)
        return (unsigned char)((uint32_t)i >> (8 * (3 - k)));
    return (unsigned char)((k * 131u + (size_t)i * 29u + (size_t)dir * 61u +
                            (k >> 9)) & 0xff);
}

typedef struct side {
    void *s;
    int dir; /* the direction this side sends */
    uint32_t id[NCONN];
    int known[NCONN];
    size_t sent[NCONN], got[NCONN], len_out[NCONN], len_in[NCONN];
    int zero[NCONN];
    uint32_t pending[NCONN]; /* server: ids whose index is not known yet */
    unsigned char head[NCONN][4];
    size_t head_n[NCONN];
    int npending;
    long long refused;
} side_t;

static size_t len_of[2][NCONN];

static int index_of(const side_t *d, uint32_t id)
{
    for (int i = 0; i < NCONN; i++)
        if (d->known[i] && d->id[i] == id)
            return i;
    return -1;
}

static int pending_of(side_t *d, uint32_t id)
{
    for (int k = 0; k < d->npending; k++)
        if (d->pending[k] == id)
            return k;
    return -1;
}

static void take_bytes(side_t *d, int i, const unsigned char *b, size_t n)
{
    int in = 1 - d->dir;
    for (size_t k = 0; k < n; k++) {
        if (b[k] != stream_byte(in, i, d->got[i] + k)) {
            fprintf(stderr, "conn %d dir %d byte %zu: got %u want %u\n", i, in,
                    d->got[i] + k, b[k], stream_byte(in, i, d->got[i] + k));
            exit(1);
        }
    }
    d->got[i] += n;
    CHECK(d->got[i] <= len_of[in][i]);
}

static int drain(side_t *d)
{
    static unsigned char buf[70000];
    int did = 0;
    for (;;) {
        uint32_t id;
        int n = tu_stream_recv(d->s, &id, buf, 1 + rnd() % (sizeof buf - 1),
                               ZLINK_DONTWAIT);
        if (n < 0) {
            CHECK(zlink_errno() == EAGAIN);
            return did;
        }
        did = 1;
        int i = index_of(d, id);
        int ev = tu_last_event(d->s);
        if (ev >= 0) {
            CHECK(n == 0);
            if (ev == 1) {
                CHECK(d->dir == 1 && i < 0 && d->npending < NCONN);
                d->pending[d->npending++] = id; /* the server learns i later */
            } else {
                CHECK(i >= 0 && !d->zero[i]);
                d->zero[i] = 1;
            }
            continue;
        }
        CHECK(n > 0);
        if (i < 0) { /* server: the first 4 bytes name the connection */
            int k = pending_of(d, id);
            CHECK(k >= 0);
            size_t off = 0;
            while (d->head_n[k] < 4 && off < (size_t)n)
                d->head[k][d->head_n[k]++] = buf[off++];
            if (d->head_n[k] < 4)
                continue;
            i = (int)tu_be32(d->head[k]);
            CHECK(i >= 0 && i < NCONN && !d->known[i]);
            d->known[i] = 1;
            d->id[i] = id;
            d->got[i] = 4;
            d->pending[k] = d->pending[--d->npending];
            d->head_n[k] = d->head_n[d->npending];
            memcpy(d->head[k], d->head[d->npending], 4);
            take_bytes(d, i, buf + off, (size_t)n - off);
            continue;
        }
        take_bytes(d, i, buf, (size_t)n);
    }
}

static int pump_sends(side_t *d)
{
    static unsigned char buf[40000];
    int did = 0;
    for (int j = 0; j < NCONN * 8; j++) {
        int i = j % NCONN; /* up to 8 payloads each: some meet SNDHWM */
        if (!d->known[i] || d->sent[i] >= len_of[d->dir][i])
            continue;
        size_t left = len_of[d->dir][i] - d->sent[i];
        /* one byte now and then: RAW carries it like any payload */
        size_t n = rnd() % 8 == 0 ? 1 : 1 + rnd() % sizeof buf;
        if (n > left)
            n = left;
        for (size_t k = 0; k < n; k++)
            buf[k] = stream_byte(d->dir, i, d->sent[i] + k);
        int r = tu_stream_send(d->s, d->id[i], buf, n, ZLINK_DONTWAIT);
        if (r < 0) {
            /* refused at SNDHWM: nothing stays selected, and the next
             * [id][payload] (this one again, later) starts afresh */
            CHECK(zlink_errno() == EAGAIN);
            d->refused++;
            continue;
        }
        CHECK((size_t)r == n);
        d->sent[i] += n;
        did = 1;
    }
    return did;
}

static int all_done(const side_t *c, const side_t *s)
{
    for (int i = 0; i < NCONN; i++)
        if (c->got[i] < len_of[1][i] || !s->known[i] || s->got[i] < len_of[0][i])
            return 0;
    return 1;
}

int main(void)
{
    tu_seed("test_tls_many");
    CHECK(zlink_has("tls") == 1);
    tu_tls_t T;
    tu_tls_make(&T);
    void *ctx = zlink_ctx_new();
    char ep[256];
    side_t srv = {0}, cli = {0};
    tu_tls_framing = ZLINK_STREAM_FRAMING_RAW;
    srv.s = tu_tls_server(ctx, T.srv_cert, T.srv_key, ep, sizeof ep);
    cli.s = tu_tls_client(ctx, T.ca, 100);
    srv.dir = 1;
    int hwm = 1 + (int)(rnd() % 4);
    tu_set_int(srv.s, ZLINK_SNDHWM, hwm);
    tu_set_int(cli.s, ZLINK_SNDHWM, hwm);
    for (int i = 0; i < NCONN; i++) {
        len_of[0][i] = 4 + 2 + rnd() % MAX_STREAM;
        len_of[1][i] = 2 + rnd() % MAX_STREAM;
        uint32_t id = 0x1000 + (uint32_t)i;
        unsigned char idb[4];
        tu_put_be32(idb, id);
        CHECK(zlink_setsockopt(cli.s, ZLINK_CONNECT_ROUTING_ID, idb, 4) == 0);
        CHECK(zlink_connect(cli.s, ep) == 0);
        cli.id[i] = id;
    }
    long long end = tu_now_ms() + 45000;
    int ups = 0;
    while (!all_done(&cli, &srv)) {
        if (tu_now_ms() >= end) {
            fprintf(stderr, "test_tls_many: not done after 45 s (SNDHWM %d, %d up):\n", hwm, ups);
            for (int i = 0; i < NCONN; i++)
                if (cli.got[i] < len_of[1][i] || !srv.known[i] || srv.got[i] < len_of[0][i])
                    fprintf(stderr, "  conn %d: client sent %zu/%zu, server got %zu%s; server sent %zu/%zu, client got %zu\n",
                            i, cli.sent[i], len_of[0][i], srv.got[i], srv.known[i] ? "" : " (unknown)",
                            srv.sent[i], len_of[1][i], cli.got[i]);
            CHECK(!"the streams did not finish");
        }
        /* the client learns its connections are up from 0x01 */
        static unsigned char b[70000];
        int did = 0;
        for (;;) {
            uint32_t id;
            int n = tu_stream_recv(cli.s, &id, b, 1 + rnd() % (sizeof b - 1),
                                   ZLINK_DONTWAIT);
            if (n < 0)
                break;
            did = 1;
            int i = (int)(id - 0x1000);
            CHECK(i >= 0 && i < NCONN);
            if (tu_last_event(cli.s) >= 0) {
                CHECK(n == 0 && tu_last_event(cli.s) == 1 && !cli.known[i]);
                cli.known[i] = 1;
                ups++;
            } else {
                CHECK(n > 0);
                CHECK(cli.known[i]);
                take_bytes(&cli, i, b, (size_t)n);
            }
        }
        did |= drain(&srv);
        did |= pump_sends(&cli);
        did |= pump_sends(&srv);
        if (!did) {
            zlink_pollitem_t it[2] = {{cli.s, 0, ZLINK_POLLIN, 0},
                                      {srv.s, 0, ZLINK_POLLIN, 0}};
            zlink_poll(it, 2, 2);
        }
    }
    CHECK(ups == NCONN);
    long long bytes = 0;
    for (int i = 0; i < NCONN; i++)
        bytes += (long long)(len_of[0][i] + len_of[1][i]);
    printf("test_tls_many: %d connections, %lld bytes, SNDHWM %d, %lld refused sends\n",
           NCONN, bytes, hwm, cli.refused + srv.refused);

    /* close: even connections from the client, odd from the server */
    for (int i = 0; i < NCONN; i++) {
        side_t *d = (i % 2) ? &srv : &cli;
        CHECK(tu_stream_send(d->s, d->id[i], "", 0, 0) == 0);
    }
    end = tu_now_ms() + 10000;
    for (;;) {
        int left = 0;
        for (int i = 0; i < NCONN; i++)
            left += !srv.zero[i] + !cli.zero[i];
        if (!left)
            break;
        CHECK(tu_now_ms() < end);
        static unsigned char b[64];
        uint32_t id;
        int n = tu_stream_recv(cli.s, &id, b, sizeof b, ZLINK_DONTWAIT);
        if (n >= 0) {
            int i = (int)(id - 0x1000);
            CHECK(n == 0 && tu_last_event(cli.s) == 0);
            CHECK(i >= 0 && i < NCONN && !cli.zero[i]);
            cli.zero[i] = 1;
        }
        if (!drain(&srv) && n < 0) {
            zlink_pollitem_t it[2] = {{cli.s, 0, ZLINK_POLLIN, 0},
                                      {srv.s, 0, ZLINK_POLLIN, 0}};
            zlink_poll(it, 2, 2);
        }
    }
    CHECK(zlink_socket_peer_count(cli.s) == 0 && zlink_socket_peer_count(srv.s) == 0);
    zlink_close(cli.s);
    zlink_close(srv.s);
    tu_tls_end(ctx, &T, "ok");
    return 0;
}
