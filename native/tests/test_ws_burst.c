/* test_ws_burst.c - randomized: input a ws:// server holds where epoll
 * cannot see it must still be delivered. Many raw clients (written here
 * from the RFC) each send their upgrade request and a first burst of frames
 * in ONE write, so the server's handshake read takes frames with the head,
 * more than the caller's small receive buffer holds; nothing more arrives
 * until every server stream has its first burst (a stall fails the test).
 * Then each client sends a second, bigger burst in random pieces while the
 * server (RAW framing) receives with buffers of random sizes (2 bytes to
 * 70 KB). Frames
 * have random sizes (all three length forms, empty ones), data messages are
 * fragmented at random and pings/pongs come in between. Every stream must
 * come out exact. Prints its seed; ZLINK_TEST_SEED=<seed> replays it. */
#include "ws_testutil.h"

#include <fcntl.h>

#define NCONN 48
#define B1_MIN 1000
#define B1_MAX 7000 /* request + first burst fit the server's 8 KB head read */
#define B2_MIN 10000
#define B2_MAX 150000
#define STALL_MS 10000

typedef struct client {
    int fd;
    uint32_t id; /* the server's routing id, learnt from the stream */
    int in_msg;  /* a fragmented message is open */
    unsigned char *want; /* the whole stream: first and second burst */
    size_t b1, total;
    unsigned char *out; /* encoded frames not sent yet */
    size_t out_len, out_off;
    size_t ngot; /* bytes the server received */
} client_t;

static client_t C[NCONN];

static unsigned char pattern(size_t conn, size_t i)
{
    return (unsigned char)(conn * 131 + i * 7 + (i >> 9));
}

/* Appends the frames carrying want[from, to) to c->out (masked, as a
 * client must), with control frames between them; big: allow the 64-bit
 * length form. */
static void encode(client_t *c, size_t from, size_t to, int big)
{
    size_t cap = c->out_len + (to - from) * 2 + 200000;
    c->out = realloc(c->out, cap);
    CHECK(c->out);
    size_t at = from;
    while (at < to) {
        unsigned r = tu_rnd() % 100;
        if (r < 8) {
            unsigned char p[125];
            size_t n = tu_rnd() % 126;
            for (size_t i = 0; i < n; i++)
                p[i] = (unsigned char)tu_rnd();
            c->out_len += tu_ws_frame(c->out + c->out_len, 1,
                                      r < 4 ? 0x9 : 0xa, 1, p, n);
            continue;
        }
        size_t n = r < 15   ? 0
                   : r < 60 ? tu_rnd() % 126
                   : r < 95 ? 126 + tu_rnd() % 3000
                   : big    ? 65536 + tu_rnd() % 10000
                            : 126 + tu_rnd() % 3000;
        if (n > to - at)
            n = to - at;
        int fin = at + n == to || tu_rnd() % 3 != 0;
        int op = c->in_msg ? 0x0 : 0x2;
        c->in_msg = !fin;
        CHECK(c->out_len + n + 14 <= cap);
        c->out_len += tu_ws_frame(c->out + c->out_len, fin, op, 1, c->want + at, n);
        at += n;
    }
}

static client_t *by_id(uint32_t id)
{
    for (int i = 0; i < NCONN; i++)
        if (C[i].id == id)
            return &C[i];
    return NULL;
}

/* One server receive with a buffer of random size; returns 1 if it got
 * something. */
static int server_recv(void *srv)
{
    static unsigned char buf[70000];
    static const size_t caps[] = {2, 3, 17, 100, 600, 4096, 70000};
    size_t cap = caps[tu_rnd() % (sizeof caps / sizeof caps[0])];
    uint32_t id;
    int n = tu_stream_recv(srv, &id, buf, cap, ZLINK_DONTWAIT);
    if (n < 0) {
        CHECK(zlink_errno() == EAGAIN);
        return 0;
    }
    if (tu_last_event(srv) >= 0) {
        /* a connection; none ends before the end */
        CHECK(n == 0 && tu_last_event(srv) == 1);
        return 1;
    }
    CHECK(n > 0);
    client_t *c = by_id(id);
    if (!c) {
        /* a stream's first payload names its client: the first burst came
         * with the upgrade, so it holds at least a 2-byte buffer's worth */
        size_t k = buf[0] | (size_t)buf[1] << 8;
        CHECK(k < NCONN && C[k].id == 0 && C[k].ngot == 0);
        c = &C[k];
        c->id = id;
    }
    CHECK(c->ngot + (size_t)n <= c->total);
    if (memcmp(c->want + c->ngot, buf, (size_t)n) != 0) {
        fprintf(stderr, "test_ws_burst: client %d: bytes %zu..%zu differ\n",
                (int)(c - C), c->ngot, c->ngot + (size_t)n);
        CHECK(!"a stream came out wrong");
    }
    c->ngot += (size_t)n;
    return 1;
}

/* Receives until every stream has its first burst (second: all of it)
 * but at most one byte (a lone last byte is held back by the one-byte carry until more
 * comes); a stall fails. Sends what the clients still have meanwhile. */
static void pump_until(void *srv, int second)
{
    long long moved = tu_now_ms();
    for (;;) {
        int done = 1;
        for (int i = 0; i < NCONN; i++) {
            size_t upto = second ? C[i].total : C[i].b1;
            if (C[i].ngot + 1 < upto)
                done = 0;
        }
        if (done)
            return;
        int progress = 0;
        for (int i = 0; second && i < NCONN; i++) {
            client_t *c = &C[i];
            if (c->out_off == c->out_len)
                continue;
            size_t m = 1 + tu_rnd() % 20000;
            if (m > c->out_len - c->out_off)
                m = c->out_len - c->out_off;
            ssize_t k = send(c->fd, c->out + c->out_off, m, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) {
                c->out_off += (size_t)k;
                progress = 1;
            } else {
                CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
            }
        }
        for (int j = 0; j < 64; j++)
            progress |= server_recv(srv);
        long long now = tu_now_ms();
        if (progress) {
            moved = now;
        } else if (now - moved > STALL_MS) {
            for (int i = 0; i < NCONN; i++)
                fprintf(stderr, "  client %d: got %zu of %zu (first burst %zu), sent %zu of %zu\n",
                        i, C[i].ngot, C[i].total, C[i].b1, C[i].out_off, C[i].out_len);
            CHECK(!"the streams stalled: input the server holds was not delivered");
        } else {
            usleep(500);
        }
    }
}

int main(void)
{
    tu_require("test_ws_burst", "ws", "ws");
    tu_seed("test_ws_burst");
    void *ctx = zlink_ctx_new();
    char ep[256];
    tu_tls_framing = ZLINK_STREAM_FRAMING_RAW;
    void *srv = tu_ws_server(ctx, NULL, 0, "/b", ep, sizeof ep);
    uint16_t port = tu_ep_port(ep);
    const char *key = "dGhlIHNhbXBsZSBub25jZQ==";
    char req[512];
    snprintf(req, sizeof req,
             "GET /b HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
             "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
             "Sec-WebSocket-Version: 13\r\n\r\n",
             key);
    size_t rl = strlen(req);
    for (int i = 0; i < NCONN; i++) {
        client_t *c = &C[i];
        c->b1 = B1_MIN + tu_rnd() % (B1_MAX - B1_MIN);
        c->total = c->b1 + B2_MIN + tu_rnd() % (B2_MAX - B2_MIN);
        c->want = malloc(c->total);
        CHECK(c->want);
        for (size_t k = 0; k < c->total; k++)
            c->want[k] = pattern((size_t)i, k);
        c->want[0] = (unsigned char)i; /* the stream names its client */
        c->want[1] = (unsigned char)(i >> 8);
        c->out = malloc(rl);
        CHECK(c->out);
        memcpy(c->out, req, rl);
        c->out_len = rl;
        encode(c, 0, c->b1, 0);
        CHECK(c->out_len <= 8192); /* all of it taken by the head's read */
        c->fd = tu_raw_connect(port);
        tu_send_all(c->fd, c->out, c->out_len); /* one write */
        c->out_len = c->out_off = 0;
    }
    pump_until(srv, 0);
    for (int i = 0; i < NCONN; i++) {
        client_t *c = &C[i];
        char head[4096];
        CHECK(tu_read_head(c->fd, head, sizeof head) > 0);
        CHECK(strncmp(head, "HTTP/1.1 101 ", 13) == 0);
        CHECK(fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) == 0);
        encode(c, c->b1, c->total, 1);
    }
    pump_until(srv, 1);
    size_t bytes = 0;
    for (int i = 0; i < NCONN; i++) {
        bytes += C[i].ngot;
        close(C[i].fd);
        free(C[i].want);
        free(C[i].out);
    }
    zlink_close(srv);
    zlink_ctx_term(ctx);
    printf("test_ws_burst: %d streams, %zu bytes exact\n", NCONN, bytes);
    return 0;
}
