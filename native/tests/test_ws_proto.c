/* test_ws_proto.c - a ws:// server's frames against a raw client written
 * here: protocol errors after the handshake (an unmasked client frame, a
 * masked server frame, RSV bits,
 * an unknown opcode, an oversize or fragmented control frame, a
 * continuation without a start) each end the connection with a close frame
 * 1002 and DISCONNECTED(TRANSPORT_ERROR); a ping is answered by a pong with
 * its payload; a close frame is echoed and ends with REMOTE; a fragmented
 * message, a 64-bit length frame and frames split at every byte boundary
 * deliver exactly their payload bytes; the server's frames are single
 * unmasked binary frames and its local close sends close 1000. A ws client
 * against a raw server masks every frame with a fresh key. RAW framing:
 * the ws payload bytes are what the application gets. */
#include "ws_testutil.h"

static tu_tls_t T;

static tu_ws_conn_t C;

/* what the server received on C */
static struct {
    unsigned char got[200000];
    size_t ngot;
    size_t cut; /* the split being tested, for the report */
} R;

static void open_conn(void *ctx)
{
    char ep[256];
    tu_ws_conn_listen(&C, ctx, &T, ep, sizeof ep);
    tu_ws_conn_accept(&C, ep, 0);
    R.ngot = 0;
}

static void close_conn(void)
{
    tu_ws_conn_close(&C);
}

/* receives the server's data until it has n bytes (0: one try) */
static void expect_bytes(const void *want, size_t n)
{
    long long end = tu_now_ms() + 5000;
    int once = n == 0;
    while (R.ngot < n || once) {
        if (tu_now_ms() >= end)
            fprintf(stderr, "expect_bytes: %zu of %zu (cut %zu)\n", R.ngot, n, R.cut);
        CHECK(tu_now_ms() < end);
        uint32_t id;
        int r = tu_stream_recv(C.srv, &id, R.got + R.ngot, sizeof R.got - R.ngot,
                               ZLINK_DONTWAIT);
        if (r < 0) {
            CHECK(zlink_errno() == EAGAIN);
            zlink_pollitem_t it = {C.srv, 0, ZLINK_POLLIN, 0};
            zlink_poll(&it, 1, 5);
            if (once)
                return;
            continue;
        }
        CHECK(id == C.id && r > 0 && tu_last_event(C.srv) == -1);
        R.ngot += (size_t)r;
        if (once)
            return;
    }
    CHECK(R.ngot == n && memcmp(R.got, want, n) == 0);
    R.ngot = 0;
}

static void send_frame(int fin, int op, int mask, const void *p, uint64_t n)
{
    static unsigned char f[200100];
    size_t k = tu_ws_frame(f, fin, op, mask, p, n);
    tu_send_all(C.fd, f, k);
}

/* the connection ends with close 1002 to the raw peer and TRANSPORT_ERROR */
static void expect_proto_error(void)
{
    CHECK(tu_wait_event(&C.p, C.mon, ZLINK_EVENT_DISCONNECTED, 5000) ==
          ZLINK_DISCONNECT_TRANSPORT_ERROR);
    CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
    CHECK(tu_event_errno(C.srv) == EPROTO); /* the 0x00's cause */
    unsigned char b[200];
    size_t n;
    int masked;
    int h = tu_ws_read_frame(C.fd, b, sizeof b, &n, &masked);
    CHECK(h == 0x88 && n == 2 && b[0] == 0x03 && b[1] == 0xea && !masked);
    CHECK(tu_ws_read_frame(C.fd, b, sizeof b, &n, NULL) == -1);
}

static void test_errors(void *ctx)
{
    static const unsigned char big[126] = {0};
    struct { int fin, op, mask; size_t n; } bad[] = {
        {1, 0x2, 0, 3},          /* unmasked */
        {1, 0x42, 1, 3},         /* RSV1 */
        {1, 0x12, 1, 3},         /* RSV3 */
        {1, 0x3, 1, 3},          /* reserved opcode */
        {1, 0xb, 1, 3},          /* reserved control opcode */
        {1, 0x9, 1, 126},        /* ping > 125 */
        {0, 0x9, 1, 3},          /* fragmented ping */
        {1, 0x0, 1, 3},          /* continuation of nothing */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        open_conn(ctx);
        send_frame(1, 0x2, 1, "ok", 2); /* what came before still arrives */
        expect_bytes("ok", 2);
        send_frame(bad[i].fin, bad[i].op, bad[i].mask, big, bad[i].n);
        expect_proto_error();
        close_conn();
    }
    /* a new data message while one is fragmented */
    open_conn(ctx);
    send_frame(0, 0x2, 1, "ab", 2);
    send_frame(1, 0x2, 1, "cd", 2);
    expect_proto_error();
    close_conn();
}

static void test_ping_close(void *ctx)
{
    open_conn(ctx);
    unsigned char b[200];
    size_t n;
    int masked;
    send_frame(1, 0x9, 1, "are you there", 13);
    tu_wait_readable(C.fd, &C.p);
    CHECK(tu_ws_read_frame(C.fd, b, sizeof b, &n, &masked) == 0x8a);
    CHECK(n == 13 && memcmp(b, "are you there", 13) == 0 && !masked);
    send_frame(1, 0xa, 1, "unasked", 7); /* ignored */
    send_frame(1, 0x9, 1, "", 0);
    tu_wait_readable(C.fd, &C.p);
    CHECK(tu_ws_read_frame(C.fd, b, sizeof b, &n, NULL) == 0x8a && n == 0);
    /* the peer's close is answered with its status; 0x00, REMOTE */
    send_frame(1, 0x8, 1, "\x03\xe9" "bye", 5);
    CHECK(tu_wait_event(&C.p, C.mon, ZLINK_EVENT_DISCONNECTED, 5000) ==
          ZLINK_DISCONNECT_REMOTE);
    CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
    CHECK(tu_ws_read_frame(C.fd, b, sizeof b, &n, NULL) == 0x88);
    CHECK(n == 2 && b[0] == 0x03 && b[1] == 0xe9);
    CHECK(tu_ws_read_frame(C.fd, b, sizeof b, &n, NULL) == -1);
    close_conn();
}

static void test_data(void *ctx)
{
    open_conn(ctx);
    /* fragmented, with a ping between the fragments and a text start */
    send_frame(0, 0x1, 1, "abc", 3);
    send_frame(1, 0x9, 1, "p", 1);
    send_frame(0, 0x0, 1, "", 0);
    send_frame(1, 0x0, 1, "def", 3);
    expect_bytes("abcdef", 6);
    unsigned char b[200];
    size_t n;
    tu_wait_readable(C.fd, &C.p);
    CHECK(tu_ws_read_frame(C.fd, b, sizeof b, &n, NULL) == 0x8a && n == 1);
    /* 16-bit and 64-bit lengths */
    static unsigned char big[150000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)(i * 13 + 1);
    send_frame(1, 0x2, 1, big, 300);
    expect_bytes(big, 300);
    send_frame(1, 0x2, 1, big, sizeof big);
    expect_bytes(big, sizeof big);
    /* frames split at every byte boundary */
    unsigned char seq[400];
    size_t k = tu_ws_frame(seq, 1, 0x2, 1, big, 5);
    k += tu_ws_frame(seq + k, 1, 0x9, 1, "x", 1);
    k += tu_ws_frame(seq + k, 1, 0x2, 1, big + 5, 200);
    k += tu_ws_frame(seq + k, 1, 0x2, 1, big + 205, 2);
    /* sent with the second part: a byte that arrives alone is held back */
    size_t tail = tu_ws_frame(seq + k, 1, 0x2, 1, big + 207, 2);
    for (size_t cut = 1; cut < k; cut++) {
        R.cut = cut;
        tu_send_all(C.fd, seq, cut);
        for (int i = 0; i < 2; i++)
            expect_bytes(NULL, 0); /* what the first part holds */
        tu_send_all(C.fd, seq + cut, k - cut + tail);
        expect_bytes(big, 209);
        tu_wait_readable(C.fd, &C.p);
        CHECK(tu_ws_read_frame(C.fd, b, sizeof b, &n, NULL) == 0x8a && n == 1);
    }
    /* the server's frames: one binary frame per payload, unmasked */
    static unsigned char rb[150000];
    int masked;
    CHECK(tu_stream_send(C.srv, C.id, big, 70000, 0) == 70000);
    tu_wait_readable(C.fd, &C.p);
    CHECK(tu_ws_read_frame(C.fd, rb, sizeof rb, &n, &masked) == 0x82);
    CHECK(n == 70000 && !masked && memcmp(rb, big, n) == 0);
    CHECK(tu_stream_send(C.srv, C.id, "q", 1, 0) == 1);
    tu_wait_readable(C.fd, &C.p);
    CHECK(tu_ws_read_frame(C.fd, rb, sizeof rb, &n, NULL) == 0x82 && n == 1);
    /* a local close: close 1000, then the end */
    CHECK(tu_stream_send(C.srv, C.id, "", 0, 0) == 0);
    CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
    CHECK(tu_ws_read_frame(C.fd, rb, sizeof rb, &n, NULL) == 0x88);
    CHECK(n == 2 && rb[0] == 0x03 && rb[1] == 0xe8);
    CHECK(tu_ws_read_frame(C.fd, rb, sizeof rb, &n, NULL) == -1);
    close_conn();
}

/* A zlink client against a raw server: every frame is masked, with a key
 * that changes from frame to frame. */
static void test_client_masks(void *ctx)
{
    uint16_t port;
    int lfd = tu_raw_listen(&port);
    char ep[64], head[4096], acc[64], resp[256];
    snprintf(ep, sizeof ep, "ws://127.0.0.1:%u", port);
    /* LENGTH (the default): [len][body] inside the ws frames */
    void *cli = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t p = {cli, NULL, {0}, {0}};
    int fd = accept(lfd, NULL, NULL);
    CHECK(fd >= 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    tu_wait_readable(fd, &p);
    CHECK(tu_read_head(fd, head, sizeof head) > 0);
    CHECK(strncmp(head, "GET / HTTP/1.1\r\n", 16) == 0);
    char key[32];
    memcpy(key, strstr(head, "Sec-WebSocket-Key: ") + 19, 24);
    key[24] = '\0';
    tu_ws_accept(key, acc);
    /* the 101 and a first frame in one write */
    unsigned char fr[64];
    int hl = snprintf(resp, sizeof resp, "HTTP/1.1 101 Switching Protocols\r\n"
                      "upgrade: WEBSOCKET\r\nconnection: upgrade\r\n"
                      "sec-websocket-accept: %s\r\n\r\n", acc);
    size_t fl = tu_ws_frame(fr, 1, 0x2, 0, "\0\0\0\x08hi there", 12);
    memcpy(resp + hl, fr, fl);
    tu_send_all(fd, resp, (size_t)hl + fl);
    CHECK(TU_UNTIL(&p, p.sa.ups == 1 && p.sa.bytes == 8, 5000));
    uint32_t id = p.sa.last_id;
    unsigned char keys[8][4], b[64];
    for (int i = 0; i < 8; i++) {
        CHECK(tu_stream_send(cli, id, "data", 4, 0) == 4);
        unsigned char h[6];
        tu_wait_readable(fd, &p);
        CHECK(recv(fd, h, 6, MSG_WAITALL) == 6);
        CHECK(h[0] == 0x82 && h[1] == (0x80 | 8));
        memcpy(keys[i], h + 2, 4);
        CHECK(recv(fd, b, 8, MSG_WAITALL) == 8);
        for (int j = 0; j < 8; j++)
            b[j] ^= keys[i][j & 3];
        CHECK(memcmp(b, "\0\0\0\4data", 8) == 0);
    }
    int distinct = 0;
    for (int i = 1; i < 8; i++)
        distinct += memcmp(keys[i], keys[i - 1], 4) != 0;
    CHECK(distinct >= 6);
    /* a server must not mask: the client answers a masked frame with close
     * 1002 and drops the connection, delivering none of its payload */
    size_t ml = tu_ws_frame(fr, 1, 0x2, 1, "masked", 6);
    tu_send_all(fd, fr, ml);
    CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
    CHECK(p.sa.bytes == 8);
    size_t n;
    int masked;
    CHECK(tu_ws_read_frame(fd, b, sizeof b, &n, &masked) == 0x88);
    CHECK(masked && n == 2 && b[0] == 0x03 && b[1] == 0xea);
    close(fd);
    close(lfd);
    zlink_close(cli);
}

int main(void)
{
    tu_require("test_ws_proto", "ws", "ws");
    tu_tls_make(&T);
    tu_tls_framing = ZLINK_STREAM_FRAMING_RAW;
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    test_errors(ctx);
    test_ping_close(ctx);
    test_data(ctx);
    test_client_masks(ctx);
    tu_tls_end(ctx, &T, "ok");
    return 0;
}
