/* test_ws_hostile.c - ws:// against hostile peers (issue 22), raw sockets
 * written here on the client side:
 * - a peer that floods pings and never reads: the server's memory stays
 *   bounded (at most one pong waits per connection; malloc's statistics of
 *   this process, which hosts the server, must not grow by more than
 *   GROWTH_MAX over 100,000 pings), and once the peer reads it gets pongs
 *   in the order of their pings, the last one for the latest ping, and the
 *   connection still carries data; on a STREAM socket and on a ZMP socket
 *   type (PAIR) over ws://;
 * - ZLINK_STREAM_DROP on a ws connection whose peer stopped reading with
 *   data queued: the peer, once it reads, sees whole data frames (a prefix
 *   of what was sent, cut at a frame boundary), then a close frame with
 *   1008 (or the code given) and the reason "slow consumer", then a FIN,
 *   not a reset, even though it sent bytes the server never read; the
 *   server sees DISCONNECTED(LOCAL) and a 0x00 whose cause is ENOBUFS;
 *   misuse (an unknown id, a bad code, a read) is refused;
 * - the ZMP ws path applies the STREAM path's frame rules (one decoder): an
 *   invalid close code and a close reason that is not UTF-8 are answered
 *   with 1002, text that is not UTF-8 with 1007, a valid close is echoed.
 * Randomized (pings per write, message sizes, the drop's code), with the
 * seed printed and ZLINK_TEST_SEED replaying it. */
#include "ws_testutil.h"

#include <fcntl.h>
#include <linux/sockios.h>
#include <malloc.h>
#include <sys/ioctl.h>

#define PINGS 100000
#define GROWTH_MAX (256 * 1024)

static tu_tls_t T;

/* bytes malloc holds for this process: every arena and mmap'd chunks */
static long long heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return (long long)m.uordblks + (long long)m.hblkhd;
}

/* A TCP connection to port whose buffers are fixed (no autotuning): a
 * receive buffer that holds far fewer than the flood's pongs (the peer that
 * stops reading must stop the server's writes), yet not so small that the
 * kernel drops segments for want of room (a 4 KiB one did, ACKs with them,
 * and TCP's retransmission back-off then stalled the flood for seconds on
 * a loaded machine); and a small send buffer, so the flood in flight stays
 * far below what the server's socket takes while its owner is busy. */
static int small_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    int rcv = 256 * 1024, snd = 16384, one = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* ---- a non-blocking frame reader that keeps the server going --------------- */

typedef struct rd {
    int fd;
    tu_pair_t *p; /* stepped while waiting (NULL: the server runs by itself) */
    unsigned char buf[1 << 17];
    size_t len;
    int eof, err; /* the peer closed: 0 bytes (eof) or an error (err) */
} rd_t;

/* The next frame: its first byte, payload into out (*n, at most cap);
 * -1 when the connection ended first (rd->eof / rd->err say how). */
static int rd_frame(rd_t *r, unsigned char *out, size_t cap, size_t *n)
{
    long long end = tu_now_ms() + 10000;
    for (;;) {
        if (r->len >= 2) {
            uint64_t l = r->buf[1] & 0x7f;
            size_t h = 2;
            if (l == 126 && r->len >= 4) {
                l = (uint64_t)r->buf[2] << 8 | r->buf[3];
                h = 4;
            } else if (l == 127 && r->len >= 10) {
                l = 0;
                for (int i = 0; i < 8; i++)
                    l = l << 8 | r->buf[2 + i];
                h = 10;
            } else if (l >= 126) {
                h = 0; /* the length is not all here */
            }
            CHECK(!(r->buf[1] & 0x80)); /* a server never masks */
            if (h && r->len >= h + l) {
                CHECK(l <= cap);
                int b0 = r->buf[0];
                memcpy(out, r->buf + h, (size_t)l);
                *n = (size_t)l;
                memmove(r->buf, r->buf + h + l, r->len - h - (size_t)l);
                r->len -= h + (size_t)l;
                return b0;
            }
        }
        if (r->eof || r->err)
            return -1;
        CHECK(tu_now_ms() < end);
        ssize_t k = recv(r->fd, r->buf + r->len, sizeof r->buf - r->len, MSG_DONTWAIT);
        if (k > 0) {
            r->len += (size_t)k;
        } else if (k == 0) {
            r->eof = 1;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
            r->err = errno;
        } else if (r->p) {
            tu_step(r->p);
        } else {
            struct pollfd pf = {r->fd, POLLIN, 0};
            poll(&pf, 1, 5);
        }
    }
}

/* Sends n bytes, stepping p whenever the socket is full. */
static void send_stepping(int fd, const unsigned char *b, size_t n, tu_pair_t *p)
{
    long long end = tu_now_ms() + 20000;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            b += k;
            n -= (size_t)k;
            continue;
        }
        CHECK(k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
        if (tu_now_ms() >= end)
            fprintf(stderr, "the server took no more for 20 s (%zu bytes left)\n", n);
        CHECK(tu_now_ms() < end);
        if (p)
            tu_step(p);
        else
            tu_sleep_ms(1);
    }
}

/* PINGS pings "ping%08u" in batches; returns the heap's growth meanwhile
 * (measured once they are all read by the server: the client's unsent
 * queue empty) */
static long long flood(int fd, tu_pair_t *p)
{
    long long before = heap_bytes();
    static unsigned char batch[1000 * 32];
    for (unsigned i = 0; i < PINGS;) {
        size_t k = 0;
        int many = 1 + (int)(tu_rnd() % 1000); /* pings per write: random */
        for (int j = 0; j < many && i < PINGS; j++, i++) {
            char pl[16];
            snprintf(pl, sizeof pl, "ping%08u", i);
            k += tu_ws_frame(batch + k, 1, 0x9, 1, pl, 12);
        }
        send_stepping(fd, batch, k, p);
    }
    long long end = tu_now_ms() + 10000;
    int unsent = 1;
    while (unsent > 0 && tu_now_ms() < end) {
        CHECK(ioctl(fd, SIOCOUTQ, &unsent) == 0);
        if (p)
            tu_step(p);
        else
            tu_sleep_ms(2);
    }
    if (unsent)
        fprintf(stderr, "the server did not take the pings within 10 s (%d bytes left)\n",
                unsent);
    CHECK(unsent == 0);
    for (int i = 0; i < 50; i++) /* what the server's socket still holds */
        if (p)
            tu_step(p);
        else
            tu_sleep_ms(2);
    return heap_bytes() - before;
}

/* Reads until the pong for the last ping: every pong's payload is a ping's,
 * in increasing order; data frames are handed to on_data. Returns the
 * pongs seen. */
static int read_pongs(rd_t *r, size_t *data_bytes)
{
    unsigned char b[300];
    size_t n;
    long last = -1;
    int pongs = 0;
    char want[16];
    snprintf(want, sizeof want, "ping%08u", PINGS - 1);
    for (;;) {
        int h = rd_frame(r, b, sizeof b, &n);
        CHECK(h >= 0);
        if (h == 0x82) {
            *data_bytes += n;
            continue;
        }
        CHECK(h == 0x8a && n == 12 && memcmp(b, "ping", 4) == 0);
        long v = strtol((char *)b + 4, NULL, 10);
        if (v <= last)
            fprintf(stderr, "pong %ld after %ld\n", v, last);
        CHECK(v > last);
        last = v;
        pongs++;
        if (memcmp(b, want, 12) == 0)
            return pongs;
    }
}

static void stream_ping_flood(void *ctx)
{
    char ep[256];
    tu_tls_framing = ZLINK_STREAM_FRAMING_RAW;
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(srv);
    tu_set_framing(srv, ZLINK_STREAM_FRAMING_RAW);
    tu_set_int(srv, ZLINK_SNDBUF, 4096);
    CHECK(zlink_bind(srv, "ws://127.0.0.1:*") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    tu_pair_t p = {srv, NULL, {0}, {0}};
    int fd = small_connect(tu_ep_port(ep));
    tu_ws_client_handshake(fd, "/", &p);
    CHECK(TU_UNTIL(&p, p.sa.ups == 1, 5000));
    uint32_t id = p.sa.last_id;
    long long grew = flood(fd, &p);
    printf("stream ws: %d pings unread, heap grew %lld bytes\n", PINGS, grew);
    CHECK(grew < GROWTH_MAX);
    /* the client reads now */
    static rd_t r;
    memset(&r, 0, sizeof r);
    r.fd = fd;
    r.p = &p;
    size_t data = 0;
    int pongs = read_pongs(&r, &data);
    CHECK(pongs >= 1 && data == 0);
    printf("stream ws: %d pongs for %d pings, the last one answered\n", pongs, PINGS);
    /* the connection still works, both ways */
    unsigned char f[64], b[64];
    size_t n = tu_ws_frame(f, 1, 0x2, 1, "hello", 5);
    tu_send_all(fd, f, n);
    CHECK(TU_UNTIL(&p, p.sa.bytes == 5, 5000));
    CHECK(tu_stream_send(srv, id, "world", 5, 0) == 5);
    CHECK(rd_frame(&r, b, sizeof b, &n) == 0x82 && n == 5 && memcmp(b, "world", 5) == 0);
    close(fd);
    zlink_close(srv);
}

/* the ZMP ws path: a PAIR bound to ws://, the raw client never speaks ZMP
 * (the handshake is left waiting; its timer off) */
static void *zmp_ws_server(void *ctx, uint16_t *port)
{
    char ep[256];
    void *s = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(s);
    tu_set_int(s, ZLINK_HANDSHAKE_IVL, 0);
    tu_set_int(s, ZLINK_SNDBUF, 4096);
    tu_set_int(s, ZLINK_LINGER, 0);
    CHECK(zlink_bind(s, "ws://127.0.0.1:*") == 0);
    tu_last_endpoint(s, ep, sizeof ep);
    *port = tu_ep_port(ep);
    return s;
}

static void zmp_ping_flood(void *ctx)
{
    uint16_t port;
    void *s = zmp_ws_server(ctx, &port);
    int fd = small_connect(port);
    tu_ws_client_handshake(fd, "/", NULL);
    long long grew = flood(fd, NULL);
    printf("zmp ws: %d pings unread, heap grew %lld bytes\n", PINGS, grew);
    CHECK(grew < GROWTH_MAX);
    static rd_t r;
    memset(&r, 0, sizeof r);
    r.fd = fd;
    size_t data = 0;
    int pongs = read_pongs(&r, &data);
    printf("zmp ws: %d pongs for %d pings, the last one answered; %zu greeting bytes\n",
           pongs, PINGS, data);
    CHECK(pongs >= 1 && data > 0); /* the ZMP greeting came too */
    /* still working: a close is echoed with its code */
    unsigned char f[64], b[200];
    size_t n = tu_ws_frame(f, 1, 0x8, 1, "\x03\xe8" "done", 6);
    tu_send_all(fd, f, n);
    int h;
    while ((h = rd_frame(&r, b, sizeof b, &n)) == 0x82 || h == 0x8a)
        ;
    CHECK(h == 0x88 && n == 2 && b[0] == 0x03 && b[1] == 0xe8);
    close(fd);
    zlink_close(s);
}

/* the ZMP ws path answers what a peer sends with the STREAM path's rules */
static void zmp_rules(void *ctx)
{
    struct {
        int op;
        const char *p;
        size_t n;
        unsigned want; /* the close code that comes back */
    } cases[] = {
        {0x8, "\x03\xed", 2, 1002},             /* 1005 is never sent */
        {0x8, "\x03\xf7", 2, 1002},             /* 1015 either */
        {0x8, "\x07\xd0", 2, 1002},             /* 2000: unassigned */
        {0x8, "\x13\x88", 2, 1002},             /* 5000: out of range */
        {0x8, "\x03\xe8\xff\xfe", 4, 1002},     /* a reason that is not UTF-8 */
        {0x8, "\x03", 1, 1002},                 /* a 1-byte close */
        {0x1, "ok\xc0\xaf", 4, 1007},           /* text that is not UTF-8 */
        {0x1, "\xed\xa0\x80", 3, 1007},         /* a surrogate */
        {0x8, "\x03\xe8" "fine", 6, 1000},      /* valid: echoed */
        {0x8, "\x0f\xa0", 2, 4000},             /* valid: echoed */
        {0x2, "x", 1, 0},                       /* a data frame, then ... */
    };
    uint16_t port;
    void *s = zmp_ws_server(ctx, &port);
    for (size_t i = 0; i + 1 < sizeof cases / sizeof cases[0]; i++) {
        int fd = small_connect(port);
        tu_ws_client_handshake(fd, "/", NULL);
        unsigned char f[64], b[300];
        size_t n = tu_ws_frame(f, 1, cases[i].op, 1, cases[i].p, cases[i].n);
        tu_send_all(fd, f, n);
        static rd_t r;
        memset(&r, 0, sizeof r);
        r.fd = fd;
        int h;
        while ((h = rd_frame(&r, b, sizeof b, &n)) == 0x82)
            ; /* the ZMP greeting */
        if (h != 0x88 || n < 2 || ((unsigned)b[0] << 8 | b[1]) != cases[i].want)
            fprintf(stderr, "zmp rules case %zu: frame 0x%x, %zu bytes, code %u, want %u\n",
                    i, h, n, n >= 2 ? ((unsigned)b[0] << 8 | b[1]) : 0, cases[i].want);
        CHECK(h == 0x88 && n == 2 && ((unsigned)b[0] << 8 | b[1]) == cases[i].want);
        CHECK(rd_frame(&r, b, sizeof b, &n) == -1 && r.eof); /* then TCP ends */
        close(fd);
    }
    zlink_close(s);
}

/* ---- ZLINK_STREAM_DROP ------------------------------------------------------- */

static void fill(unsigned char *b, size_t n, unsigned k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(k * 31 + i * 7);
}

static void drop_slow_consumer(void *ctx, int give_code)
{
    char ep[256];
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(srv);
    tu_set_framing(srv, ZLINK_STREAM_FRAMING_RAW);
    tu_set_int(srv, ZLINK_SNDBUF, 4096);
    tu_set_int(srv, ZLINK_SNDHWM, 0);
    tu_set_int(srv, ZLINK_LINGER, 0); /* as the .NET engine's sockets */
    CHECK(zlink_bind(srv, "ws://127.0.0.1:*") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    void *mon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    CHECK(mon);
    tu_pair_t p = {srv, NULL, {0}, {0}};
    int fd = small_connect(tu_ep_port(ep));
    tu_ws_client_handshake(fd, "/", &p);
    CHECK(TU_UNTIL(&p, p.sa.ups == 1, 5000));
    uint32_t id = p.sa.last_id;
    /* misuse first: nothing changes */
    unsigned char idb[6];
    tu_put_be32(idb, id ^ 0x5a5a5a5a);
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_DROP, idb, 4), EHOSTUNREACH);
    tu_put_be32(idb, id);
    idb[4] = 0x03, idb[5] = 0xed; /* 1005 may not be sent */
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_DROP, idb, 6), EINVAL);
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_DROP, idb, 5), EINVAL);
    size_t gl = sizeof idb;
    CHECK_ERR(zlink_getsockopt(srv, ZLINK_STREAM_DROP, idb, &gl), EINVAL);
    /* the client stops reading; the server queues messages of random sizes */
    static unsigned char msg[70000];
    size_t sizes[400];
    int sent = 0;
    for (; sent < 400; sent++) {
        sizes[sent] = 1 + tu_rnd() % (sent % 7 == 0 ? 65536 : 3000);
        fill(msg, sizes[sent], (unsigned)sent);
        CHECK(tu_stream_send(srv, id, msg, sizes[sent], 0) == (int)sizes[sent]);
    }
    for (int i = 0; i < 20; i++)
        tu_step(&p);
    unsigned code = give_code ? (tu_rnd() % 2 ? 1011 : 4000 + tu_rnd() % 1000) : 1008;
    idb[4] = (unsigned char)(code >> 8);
    idb[5] = (unsigned char)code;
    CHECK(zlink_setsockopt(srv, ZLINK_STREAM_DROP, idb, give_code ? 6 : 4) == 0);
    /* gone for the application at once: no more sends */
    CHECK_ERR(tu_stream_send(srv, id, "late", 4, ZLINK_DONTWAIT), EHOSTUNREACH);
    /* the client sends what the server will never read */
    static unsigned char junk[16384];
    size_t jn = tu_ws_frame(junk, 1, 0x2, 1, msg, 8000);
    tu_send_all(fd, junk, jn);
    /* ... then reads: whole frames, a prefix of what was sent, then the close */
    static rd_t r;
    memset(&r, 0, sizeof r);
    r.fd = fd;
    r.p = &p;
    int got = 0, h;
    size_t n;
    for (;;) {
        h = rd_frame(&r, msg, sizeof msg, &n);
        if (h != 0x82)
            break;
        CHECK(got < sent && n == sizes[got]);
        static unsigned char want[70000];
        fill(want, n, (unsigned)got);
        CHECK(memcmp(msg, want, n) == 0);
        got++;
    }
    printf("drop: %d of %d messages arrived whole, then frame 0x%x (eof %d, errno %d)\n", got,
           sent, h, r.eof, r.err);
    CHECK(got < sent); /* the queue was dropped */
    CHECK(h == 0x88 && n == 2 + 13 && ((unsigned)msg[0] << 8 | msg[1]) == code &&
          memcmp(msg + 2, "slow consumer", 13) == 0);
    h = rd_frame(&r, msg, sizeof msg, &n);
    if (r.err)
        fprintf(stderr, "drop: the connection ended with errno %d, not a FIN\n", r.err);
    CHECK(h == -1 && r.eof && !r.err);
    /* the server half-closed and reads on until the client's side ends: the
     * client answers the close and ends it */
    unsigned char f[32];
    size_t fl = tu_ws_frame(f, 1, 0x8, 1, msg, 2);
    tu_send_all(fd, f, fl);
    shutdown(fd, SHUT_WR);
    /* the server's side: DISCONNECTED(LOCAL), the 0x00 with ENOBUFS */
    CHECK(tu_wait_event(&p, mon, ZLINK_EVENT_DISCONNECTED, 5000) == ZLINK_DISCONNECT_LOCAL);
    CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
    CHECK(tu_event_errno(srv) == ENOBUFS);
    close(fd);
    zlink_close(mon);
    zlink_close(srv);
}

/* tcp://: the drop closes at once, the 0x00 says ENOBUFS */
static void drop_tcp(void *ctx)
{
    char ep[256];
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(srv);
    tu_set_framing(srv, ZLINK_STREAM_FRAMING_RAW);
    CHECK(zlink_bind(srv, "tcp://127.0.0.1:*") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    tu_pair_t p = {srv, NULL, {0}, {0}};
    int fd = small_connect(tu_ep_port(ep));
    CHECK(TU_UNTIL(&p, p.sa.ups == 1, 5000));
    unsigned char idb[4];
    tu_put_be32(idb, p.sa.last_id);
    CHECK(zlink_setsockopt(srv, ZLINK_STREAM_DROP, idb, 4) == 0);
    CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
    CHECK(tu_event_errno(srv) == ENOBUFS);
    char b[16];
    CHECK(recv(fd, b, sizeof b, 0) == 0);
    close(fd);
    zlink_close(srv);
}

int main(void)
{
    tu_require("test_ws_hostile", "ws", "ws");
    tu_seed("test_ws_hostile");
    tu_tls_make(&T);
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    zmp_rules(ctx);
    stream_ping_flood(ctx);
    zmp_ping_flood(ctx);
    drop_slow_consumer(ctx, 0);
    drop_slow_consumer(ctx, 1);
    drop_tcp(ctx);
    tu_tls_end(ctx, &T, "ok");
    return 0;
}
