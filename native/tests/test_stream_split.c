/* test_stream_split.c - RAW framing never holds a byte back: a payload
 * read in pieces with a buffer smaller than it (N + 1 bytes sent, an N-byte
 * buffer) delivers every byte at once, with nothing more sent, one-byte
 * pieces included (data, told apart from the events by ZLINK_STREAM_EVENT).
 * For tcp://, tls://, ws:// and wss://, on each I/O backend: fixed cases (a
 * 1-byte buffer, a TLS payload one byte over the 16 KiB record size, ws
 * buffers of a frame's size but one), then a randomized run of sizes around
 * the buffer's (seed printed, ZLINK_TEST_SEED replays it). */
#include "ws_testutil.h"

#include <errno.h>

static unsigned char pattern(size_t k)
{
    return (unsigned char)(k * 7 + 3 + (k >> 8));
}

/* Sends len bytes as one payload from cli to the connection cid, then reads
 * them at srv with a cap-byte buffer: every byte in order, no payload of one
 * byte, all within 5 s. */
static void one_round(void *cli, uint32_t cid, void *srv, size_t len, size_t cap,
                      size_t *offset)
{
    static unsigned char out[70000], in[70100];
    CHECK(len <= sizeof out && cap <= sizeof in);
    for (size_t k = 0; k < len; k++)
        out[k] = pattern(*offset + k);
    CHECK(tu_stream_send(cli, cid, out, len, 0) == (int)len);
    size_t got = 0;
    long long end = tu_now_ms() + 5000;
    while (got < len) {
        if (tu_now_ms() >= end) {
            fprintf(stderr, "test_stream_split: %zu of %zu bytes after 5 s with a %zu-byte buffer\n",
                    got, len, cap);
            CHECK(!"a byte was left behind");
        }
        uint32_t id;
        int n = tu_stream_recv(srv, &id, in, cap, ZLINK_DONTWAIT);
        if (n < 0) {
            CHECK(zlink_errno() == EAGAIN);
            /* the client's socket sends what it queued only when called */
            zlink_pollitem_t it[2] = {{srv, 0, ZLINK_POLLIN, 0}, {cli, 0, ZLINK_POLLIN, 0}};
            zlink_poll(it, 2, 10);
            continue;
        }
        CHECK(n > 0 && tu_last_event(srv) == -1);
        CHECK(got + (size_t)n <= len);
        for (int k = 0; k < n; k++)
            CHECK(in[k] == pattern(*offset + got + (size_t)k));
        got += (size_t)n;
    }
    *offset += len;
}

enum { TCP, TLS, WS, WSS };
static const char *const names[] = {"tcp", "tls", "ws", "wss"};

/* the size of a masked client frame's header for a payload of len */
static size_t ws_header(size_t len)
{
    return (len < 126 ? 2 : len < 65536 ? 4 : 10) + 4;
}

static void run(void *ctx, const tu_tls_t *t, int mode)
{
    char ep[256];
    void *srv, *cli;
    int tls = mode == TLS, ws = mode == WS || mode == WSS;
    if (ws) {
        srv = tu_ws_server(ctx, t, mode == WSS, "", ep, sizeof ep);
        cli = mode == WSS ? tu_tls_client(ctx, t->ca, 100) : zlink_socket(ctx, ZLINK_STREAM);
    } else if (tls) {
        srv = tu_tls_server(ctx, t->srv_cert, t->srv_key, ep, sizeof ep);
        cli = tu_tls_client(ctx, t->ca, 100);
    } else {
        srv = zlink_socket(ctx, ZLINK_STREAM);
        tu_set_framing(srv, ZLINK_STREAM_FRAMING_RAW);
        tu_bind_tcp(srv, ep, sizeof ep);
        cli = zlink_socket(ctx, ZLINK_STREAM);
    }
    if (mode == WS || mode == TCP) /* the tu_tls_client made the others */
        tu_set_framing(cli, ZLINK_STREAM_FRAMING_RAW);
    CHECK(zlink_connect(cli, ep) == 0);
    /* each socket moves only inside calls made on it: step both */
    tu_pair_t p = {cli, srv, {0}, {0}};
    CHECK(TU_UNTIL(&p, p.sa.ups == 1 && p.sb.ups == 1, 5000));
    uint32_t cid = p.sa.last_id;
    size_t offset = 0;
    if (ws) {
        /* the reader's buffer: the frame's header and its payload but one */
        size_t lens[] = {4, 100, 125, 126, 1000, 65535, 65536};
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
            one_round(cli, cid, srv, lens[k], ws_header(lens[k]) + lens[k] - 1, &offset);
        one_round(cli, cid, srv, 3, 8, &offset);
        one_round(cli, cid, srv, 3, 2, &offset);
        one_round(cli, cid, srv, 2, 1, &offset);
        for (int r = 0; r < 200; r++) {
            size_t len = 4 + tu_rnd() % 4000;
            one_round(cli, cid, srv, len, ws_header(len) + len - 1 - tu_rnd() % 2, &offset);
        }
    } else {
        one_round(cli, cid, srv, 1001, 1000, &offset);
        one_round(cli, cid, srv, 4, 3, &offset);
        one_round(cli, cid, srv, 3, 2, &offset);
        one_round(cli, cid, srv, 2, 1, &offset);
        one_round(cli, cid, srv, 1, 1, &offset);
        if (tls)
            one_round(cli, cid, srv, 16385, 65536, &offset);
        for (int r = 0; r < 200; r++) {
            size_t cap = 1 + tu_rnd() % 4000;
            size_t len = cap + 1 - tu_rnd() % 3; /* cap - 1, cap or cap + 1 */
            if (len < 1)
                len = 1;
            one_round(cli, cid, srv, len, cap, &offset);
        }
    }
    printf("test_stream_split: %s, %zu bytes\n", names[mode], offset);
    zlink_close(cli);
    zlink_close(srv);
}

int main(void)
{
    tu_seed("test_stream_split");
    tu_tls_t T;
    tu_tls_make(&T);
    tu_tls_framing = ZLINK_STREAM_FRAMING_RAW;
    void *ctx = zlink_ctx_new();
    run(ctx, &T, TCP);
    if (zlink_has("tls"))
        run(ctx, &T, TLS);
    if (zlink_has("ws")) {
        run(ctx, &T, WS);
        run(ctx, &T, WSS);
    }
    tu_tls_end(ctx, &T, "ok");
    return 0;
}
