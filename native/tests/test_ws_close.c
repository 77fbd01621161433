/* test_ws_close.c - a ws:// server's closing handshake and control frames
 * against a raw client written here (issue 22):
 * - the peer's close while megabytes are queued: every byte send accepted
 *   goes out first, then the close reply with the peer's status, then the
 *   TCP close; the 0x00 comes after that, cause 0, DISCONNECTED(REMOTE);
 * - the same with LINGER 0 and an echo server (the peer sends megabytes
 *   without reading, then its close): LINGER 0 bounds zlink_close, not
 *   this flush, so nothing is lost; zlink_close at LINGER 0 still ends it
 *   at once;
 * - the same peer gone (it resets) or not reading (LINGER 300): the 0x00
 *   carries ECONNRESET or ETIMEDOUT and CLOSE_FAILED reports the loss; a
 *   peer that ends TCP without a close frame while bytes are queued: the
 *   same with ECONNRESET;
 * - close codes: valid ones echoed, invalid ones (reserved, unassigned,
 *   out of range, a 1-byte payload, a reason that is not UTF-8) answered
 *   with 1002;
 * - pongs to several pings read at once go out in the pings' order, and a
 *   pong never lands inside a frame whose start went out;
 * - a LENGTH or BATCH length over MAXMSGSIZE is answered with 1009;
 * - a text message that is not UTF-8 is answered with 1007.
 * RAW framing except where LENGTH is named. */
#include "ws_testutil.h"

#include <pthread.h>

static tu_tls_t T;

static tu_ws_conn_t C;

/* nonzero: the server's SO_SNDBUF and the raw client's SO_RCVBUF are this
 * small (set before the connection exists), so what the server sends
 * queues in the library rather than in the kernel */
static int small_bufs;

static void open_conn(void *ctx, int framing, int linger)
{
    char ep[256];
    tu_tls_framing = framing;
    tu_ws_conn_listen(&C, ctx, &T, ep, sizeof ep);
    tu_set_int(C.srv, ZLINK_LINGER, linger);
    if (small_bufs)
        tu_set_int(C.srv, ZLINK_SNDBUF, small_bufs);
    tu_ws_conn_accept(&C, ep, small_bufs);
}

static void close_conn(void)
{
    tu_ws_conn_close(&C);
}

static void send_frame(int fin, int op, const void *p, uint64_t n)
{
    static unsigned char f[70000];
    size_t k = tu_ws_frame(f, fin, op, 1, p, n);
    tu_send_all(C.fd, f, k);
}

/* the next frame from the server, stepping it meanwhile; its first byte,
 * or -1 at the end */
static int read_frame(unsigned char *b, size_t cap, size_t *n)
{
    tu_wait_readable(C.fd, &C.p);
    return tu_ws_read_frame(C.fd, b, cap, n, NULL);
}

/* ---- a raw reader in its own thread (the server is stepped meanwhile) -- */

typedef struct reader {
    int fd;
    size_t sleep_after; /* stop reading for a while after this many bytes */
    unsigned char *data; /* the binary payloads, in order */
    size_t ndata, cap;
    int close_seen;
    unsigned char close_payload[125];
    size_t close_len;
    int eof; /* the connection ended after the close */
    int pongs;
    int stop_at_full; /* return once data is full and a pong came */
    int done;
} reader_t;

static void *reader_main(void *arg)
{
    reader_t *r = arg;
    size_t bcap = 8 << 20;
    unsigned char *b = malloc(bcap);
    CHECK(b);
    for (;;) {
        size_t n;
        int h = tu_ws_read_frame(r->fd, b, bcap, &n, NULL);
        if (h < 0) {
            r->eof = r->close_seen;
            break;
        }
        if (h == 0x82) {
            CHECK(r->ndata + n <= r->cap);
            memcpy(r->data + r->ndata, b, n);
            r->ndata += n;
        } else if (h == 0x8a) {
            r->pongs++;
        } else if (h == 0x88) {
            r->close_seen = 1;
            r->close_len = n;
            memcpy(r->close_payload, b, n);
        } else {
            CHECK(!"unexpected frame");
        }
        if (r->stop_at_full && r->ndata == r->cap && r->pongs)
            break;
    }
    free(b);
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131 + seed) ^ (i >> 9));
}

/* total bytes of the pattern for seed, sent to the raw peer in one payload
 * (queued: nobody reads yet); the caller frees them */
static unsigned char *queue_pattern(size_t total, unsigned seed)
{
    unsigned char *out = malloc(total);
    CHECK(out);
    fill_pattern(out, total, seed);
    CHECK(tu_stream_send(C.srv, C.id, out, total, 0) == (int)total);
    return out;
}

/* reads everything the server sends until the end (r's reader thread),
 * stepping the server meanwhile, within ms */
static void read_to_the_end(reader_t *r, long long ms)
{
    pthread_t th;
    CHECK(pthread_create(&th, NULL, reader_main, r) == 0);
    long long end = tu_now_ms() + ms;
    while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        CHECK(tu_now_ms() < end);
        tu_step(&C.p);
    }
    pthread_join(th, NULL);
}

/* what r read: exactly the total bytes of want, then the close reply with
 * the peer's status (code), then the end; and on the server the 0x00 of an
 * orderly end (cause 0), DISCONNECTED(REMOTE), no CLOSE_FAILED */
static void expect_all_then_close(const reader_t *r, const unsigned char *want,
                                  size_t total, unsigned code)
{
    CHECK(r->ndata == total && memcmp(r->data, want, total) == 0);
    CHECK(r->close_seen && r->close_len == 2 &&
          r->close_payload[0] == (unsigned char)(code >> 8) &&
          r->close_payload[1] == (unsigned char)code);
    CHECK(r->eof);
    CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
    CHECK(tu_event_errno(C.srv) == 0);
    CHECK(tu_wait_event(&C.p, C.mon, ZLINK_EVENT_DISCONNECTED, 5000) ==
          ZLINK_DISCONNECT_REMOTE);
    zlink_monitor_event_t ev;
    while (zlink_monitor_recv(C.mon, &ev, ZLINK_DONTWAIT) == 0)
        CHECK(ev.event != ZLINK_EVENT_CLOSE_FAILED);
}

/* The server sends `total` bytes in payloads of `chunk` (most of them
 * queued: nobody reads yet), then the raw peer sends close 4000 "bye"
 * and reads everything: all the bytes, then close 4000, then the end. */
static void test_flush_before_reply(void *ctx, size_t total, size_t chunk)
{
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
    unsigned char *out = malloc(total);
    CHECK(out);
    fill_pattern(out, total, (unsigned)total);
    for (size_t off = 0; off < total; off += chunk) {
        size_t k = total - off < chunk ? total - off : chunk;
        CHECK(tu_stream_send(C.srv, C.id, out + off, k, 0) == (int)k);
    }
    send_frame(1, 0x8, "\x0f\xa0" "bye", 5);
    reader_t r = {C.fd, 0, malloc(total), 0, total, 0, {0}, 0, 0, 0, 0, 0};
    CHECK(r.data);
    read_to_the_end(&r, 20000);
    if (r.ndata != total)
        fprintf(stderr, "flush: %zu of %zu bytes before the close\n", r.ndata,
                total);
    /* the 0x00 after it all: an orderly end, DISCONNECTED(REMOTE), no
     * CLOSE_FAILED */
    expect_all_then_close(&r, out, total, 4000);
    free(r.data);
    free(out);
    close_conn();
}

/* ---- an echo server at LINGER 0 and a peer that does not read ---------- */

typedef struct writer {
    int fd;
    const unsigned char *data;
    size_t total, chunk;
    int done;
} writer_t;

static void *writer_main(void *arg)
{
    writer_t *w = arg;
    static unsigned char f[70000];
    for (size_t off = 0; off < w->total; off += w->chunk) {
        size_t k = w->total - off < w->chunk ? w->total - off : w->chunk;
        tu_send_all(w->fd, f, tu_ws_frame(f, 1, 0x2, 1, w->data + off, k));
    }
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The hostile tester's case (ws_closequeued.py): the raw peer sends
 * `total` bytes in binary frames without reading, the server echoes every
 * payload it receives (most of it queues: the peer's receive buffer is
 * small), then the peer sends close 1000 and reads. With LINGER 0 on the
 * server every echoed byte send accepted still goes out, then the close
 * reply, then the end; the 0x00 is an orderly one (0), no CLOSE_FAILED. */
static void test_echo_then_close(void *ctx, int linger, size_t total)
{
    small_bufs = 8192;
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, linger);
    small_bufs = 0;
    unsigned char *in = malloc(total), *echoed = malloc(total);
    CHECK(in && echoed);
    fill_pattern(in, total, 23);
    writer_t w = {C.fd, in, total, 65000, 0};
    pthread_t wt;
    CHECK(pthread_create(&wt, NULL, writer_main, &w) == 0);
    /* echo until all of it came back through the server */
    static unsigned char buf[65536];
    size_t got = 0;
    long long end = tu_now_ms() + 20000;
    while (got < total) {
        CHECK(tu_now_ms() < end);
        uint32_t id;
        int n = tu_stream_recv(C.srv, &id, buf, sizeof buf, ZLINK_DONTWAIT);
        if (n < 0) {
            CHECK(zlink_errno() == EAGAIN);
            zlink_pollitem_t it = {C.srv, 0, ZLINK_POLLIN, 0};
            zlink_poll(&it, 1, 5);
            continue;
        }
        CHECK(id == C.id && tu_last_event(C.srv) == -1);
        CHECK(got + (size_t)n <= total);
        memcpy(echoed + got, buf, (size_t)n);
        got += (size_t)n;
        /* every echo is accepted (the queue is far below SNDHWM) */
        CHECK(tu_stream_send(C.srv, C.id, buf, (size_t)n, 0) == n);
    }
    CHECK(memcmp(echoed, in, total) == 0);
    pthread_join(wt, NULL);
    CHECK(w.done);
    /* the peer's close, then it reads */
    send_frame(1, 0x8, "\x03\xe8", 2);
    reader_t r = {C.fd, 0, malloc(total), 0, total, 0, {0}, 0, 0, 0, 0, 0};
    CHECK(r.data);
    read_to_the_end(&r, 30000);
    if (r.ndata != total || !r.close_seen)
        fprintf(stderr, "echo, LINGER %d: %zu of %zu bytes, close %d\n",
                linger, r.ndata, total, r.close_seen);
    expect_all_then_close(&r, in, total, 1000);
    free(r.data);
    free(echoed);
    free(in);
    close_conn();
}

/* LINGER 0, the peer's close read while output is queued, and then the
 * socket is closed: zlink_close does not wait (LINGER 0 keeps its meaning
 * there); the connection ends at once with CLOSE_FAILED for the loss. */
static void test_close_during_peer_close(void *ctx)
{
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, 0);
    unsigned char *out = queue_pattern(32 << 20, 29);
    send_frame(1, 0x8, "\x03\xe8", 2);
    /* the server read the close: the connection is closing, bytes queued */
    CHECK(TU_UNTIL(&C.p, zlink_socket_peer_count(C.srv) == 0, 5000));
    CHECK(C.p.sa.downs == 0);
    zlink_close(C.srv); /* returns: nobody reads, LINGER 0 drops the rest */
    C.srv = NULL;
    long long v = -1;
    zlink_monitor_event_t ev;
    int stopped = 0;
    long long end = tu_now_ms() + 5000;
    while (!stopped && tu_now_ms() < end) {
        if (zlink_monitor_recv(C.mon, &ev, ZLINK_DONTWAIT) != 0) {
            usleep(1000);
            continue;
        }
        if (ev.event == ZLINK_EVENT_CLOSE_FAILED)
            v = (long long)ev.value;
        stopped = ev.event == ZLINK_EVENT_MONITOR_STOPPED;
    }
    CHECK(stopped);
    CHECK(v == ETIMEDOUT);
    free(out);
    close(C.fd);
    zlink_close(C.mon);
}

/* The peer sends its close and then resets (or, with lost_by_linger, just
 * does not read, LINGER 300): the queued bytes are counted lost, never
 * silently: CLOSE_FAILED with the errno, and the 0x00's cause. */
static void test_lost(void *ctx, int lost_by_linger)
{
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, lost_by_linger ? 300 : -1);
    unsigned char *out = queue_pattern(32 << 20, 7);
    send_frame(1, 0x8, "\x03\xe8", 2);
    long long t0 = tu_now_ms();
    if (!lost_by_linger) {
        /* wait until the server read the close, then reset */
        CHECK(TU_UNTIL(&C.p, zlink_socket_peer_count(C.srv) == 0, 5000));
        struct linger lg = {1, 0};
        setsockopt(C.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        close(C.fd);
        C.fd = -1;
    }
    CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
    int e = tu_event_errno(C.srv);
    CHECK(e == (lost_by_linger ? ETIMEDOUT : ECONNRESET));
    if (lost_by_linger)
        CHECK(tu_now_ms() - t0 >= 250);
    long long v = tu_wait_event(&C.p, C.mon, ZLINK_EVENT_CLOSE_FAILED, 5000);
    CHECK(lost_by_linger ? v == ETIMEDOUT : (v == EPIPE || v == ECONNRESET));
    free(out);
    close_conn();
}

/* The peer ends TCP (FIN, no close frame) while megabytes are queued:
 * CLOSE_FAILED(ECONNRESET) and the 0x00 says ECONNRESET, not 0. */
static void test_gone_without_close(void *ctx)
{
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
    unsigned char *out = queue_pattern(32 << 20, 5);
    shutdown(C.fd, SHUT_WR);
    CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
    CHECK(tu_event_errno(C.srv) == ECONNRESET);
    CHECK(tu_wait_event(&C.p, C.mon, ZLINK_EVENT_CLOSE_FAILED, 5000) == ECONNRESET);
    free(out);
    close_conn();
}

/* close codes: valid ones echoed, the rest answered with 1002 */
static void test_close_codes(void *ctx)
{
    static const unsigned valid[] = {1000, 1001, 1002, 1003, 1007, 1008, 1009,
                                     1010, 1011, 1012, 1013, 1014, 3000, 3999,
                                     4000, 4999};
    static const unsigned invalid[] = {0,    999,  1004, 1005, 1006, 1015,
                                       1016, 1100, 2000, 2999, 5000, 65535};
    unsigned char b[200], pl[64];
    size_t n;
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
        pl[0] = (unsigned char)(valid[i] >> 8);
        pl[1] = (unsigned char)valid[i];
        memcpy(pl + 2, "r\xc3\xa9sum\xc3\xa9", 9); /* UTF-8 reason */
        send_frame(1, 0x8, pl, 11);
        CHECK(read_frame(b, sizeof b, &n) == 0x88);
        CHECK(n == 2 && b[0] == pl[0] && b[1] == pl[1]);
        CHECK(read_frame(b, sizeof b, &n) == -1);
        CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
        CHECK(tu_event_errno(C.srv) == 0);
        close_conn();
    }
    struct { const char *p; size_t n; } bad[32];
    size_t nb = 0;
    static unsigned char codes[16][2];
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        codes[i][0] = (unsigned char)(invalid[i] >> 8);
        codes[i][1] = (unsigned char)invalid[i];
        bad[nb].p = (const char *)codes[i];
        bad[nb++].n = 2;
    }
    bad[nb].p = "\x03";                 /* one byte */
    bad[nb++].n = 1;
    bad[nb].p = "\x03\xe8\xff\xfe";     /* not UTF-8 */
    bad[nb++].n = 4;
    bad[nb].p = "\x03\xe8" "ab\xc3";    /* a character cut short */
    bad[nb++].n = 5;
    bad[nb].p = "\x03\xe8\xed\xa0\x80"; /* a surrogate */
    bad[nb++].n = 5;
    bad[nb].p = "\x03\xe8\xc0\xaf";     /* overlong */
    bad[nb++].n = 4;
    for (size_t i = 0; i < nb; i++) {
        open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
        send_frame(1, 0x8, bad[i].p, bad[i].n);
        int h = read_frame(b, sizeof b, &n);
        if (h != 0x88 || n != 2 || b[0] != 0x03 || b[1] != 0xea)
            fprintf(stderr, "close payload %zu: got %#x n=%zu %02x%02x\n", i, h,
                    n, b[0], b[1]);
        CHECK(h == 0x88 && n == 2 && b[0] == 0x03 && b[1] == 0xea);
        CHECK(read_frame(b, sizeof b, &n) == -1);
        CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
        CHECK(tu_event_errno(C.srv) == EPROTO);
        close_conn();
    }
}

/* A ping while a 4 MiB frame is half out (sent at once in part, the rest
 * queued): its pong goes after that frame, never inside it. */
static void test_pong_behind_partial(void *ctx)
{
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
    size_t total = 4 << 20;
    unsigned char *out = malloc(total);
    CHECK(out);
    fill_pattern(out, total, 11);
    CHECK(tu_stream_send(C.srv, C.id, out, total, 0) == (int)total);
    send_frame(1, 0x9, "p1", 2);
    for (int i = 0; i < 10; i++)
        tu_step(&C.p); /* the ping is read while the frame is half out */
    reader_t r = {C.fd, 0, malloc(total), 0, total, 0, {0}, 0, 0, 0, 1, 0};
    CHECK(r.data);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, reader_main, &r) == 0);
    long long end = tu_now_ms() + 20000;
    while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE)) {
        CHECK(tu_now_ms() < end);
        tu_step(&C.p);
    }
    pthread_join(th, NULL);
    CHECK(r.ndata == total && memcmp(r.data, out, total) == 0 && r.pongs == 1);
    free(r.data);
    free(out);
    close_conn();
}

/* three pings in one write: the pongs that go out are in the order of
 * their pings, and the last one ("three") is answered; pings read together
 * get one pong, for the latest (at most one pong waits in the queue) */
static void test_pong_order(void *ctx)
{
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
    unsigned char seq[64];
    size_t k = 0;
    k += tu_ws_frame(seq + k, 1, 0x9, 1, "one", 3);
    k += tu_ws_frame(seq + k, 1, 0x9, 1, "two", 3);
    k += tu_ws_frame(seq + k, 1, 0x9, 1, "three", 5);
    tu_send_all(C.fd, seq, k);
    unsigned char b[200];
    size_t n;
    const char *want[] = {"one", "two", "three"};
    int next = 0;
    for (;;) {
        CHECK(read_frame(b, sizeof b, &n) == 0x8a);
        while (next < 3 && (n != strlen(want[next]) || memcmp(b, want[next], n) != 0))
            next++;
        if (next == 3)
            fprintf(stderr, "pong out of order: %.*s\n", (int)n, b);
        CHECK(next < 3);
        if (++next == 3)
            break;
    }
    close_conn();
}

/* LENGTH and BATCH, MAXMSGSIZE 100: a length of 101 is answered with
 * 1009 */
static void test_too_big(void *ctx, int framing)
{
    open_conn(ctx, framing, -1);
    /* MAXMSGSIZE applies to connections read after it is set */
    int64_t mx = 100;
    CHECK(zlink_setsockopt(C.srv, ZLINK_MAXMSGSIZE, &mx, sizeof mx) == 0);
    send_frame(1, 0x2, "\0\0\0\x65xyz", 7);
    unsigned char b[200];
    size_t n;
    int h = read_frame(b, sizeof b, &n);
    if (h != 0x88 || n != 2 || b[0] != 0x03 || b[1] != 0xf1)
        fprintf(stderr, "too big: got %#x n=%zu %02x%02x\n", h, n, b[0], b[1]);
    CHECK(h == 0x88 && n == 2 && b[0] == 0x03 && b[1] == 0xf1);
    CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
    CHECK(tu_event_errno(C.srv) == EMSGSIZE);
    close_conn();
}

/* text messages must be UTF-8: 1007 otherwise (fragmented too) */
static void test_text_utf8(void *ctx)
{
    unsigned char b[200];
    size_t n;
    /* valid text split inside a character across fragments is fine */
    open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
    send_frame(0, 0x1, "a\xe2\x82", 3);
    send_frame(1, 0x0, "\xac!", 2); /* U+20AC */
    CHECK(TU_UNTIL(&C.p, C.p.sa.bytes == 5, 5000));
    send_frame(1, 0x8, "", 0);
    CHECK(read_frame(b, sizeof b, &n) == 0x88 && n == 0);
    close_conn();
    const struct { const char *a, *b; } bad[] = {
        {"ok\xff", NULL},          /* never UTF-8 */
        {"ok\xe2\x82", ""},        /* ends inside a character */
        {"\xf4\x90\x80\x80", NULL} /* above U+10FFFF */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        open_conn(ctx, ZLINK_STREAM_FRAMING_RAW, -1);
        send_frame(bad[i].b == NULL, 0x1, bad[i].a, strlen(bad[i].a));
        if (bad[i].b)
            send_frame(1, 0x0, bad[i].b, strlen(bad[i].b));
        CHECK(read_frame(b, sizeof b, &n) == 0x88);
        CHECK(n == 2 && b[0] == 0x03 && b[1] == 0xef);
        CHECK(TU_UNTIL(&C.p, C.p.sa.downs == 1, 5000));
        CHECK(tu_event_errno(C.srv) == EPROTO);
        close_conn();
    }
}

/* argv[1], when given, runs that one part: flush, linger0, lost, codes, pongs,
 * toobig, utf8 */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
#define PART(name) (!only || strcmp(only, name) == 0)
    tu_require("test_ws_close", "ws", "ws");
    tu_tls_make(&T);
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    if (PART("flush")) {
        test_flush_before_reply(ctx, 4 << 20, 4 << 20);
        test_flush_before_reply(ctx, 1 << 20, 1000);
    }
    if (PART("linger0")) {
        /* the hostile tester's numbers: 2,000,000 bytes echoed */
        test_echo_then_close(ctx, 0, 2000000);
        test_echo_then_close(ctx, 300000, 2000000);
        test_close_during_peer_close(ctx);
    }
    if (PART("lost")) {
        test_lost(ctx, 0);
        test_lost(ctx, 1);
        test_gone_without_close(ctx);
    }
    if (PART("codes"))
        test_close_codes(ctx);
    if (PART("pongs")) {
        test_pong_order(ctx);
        test_pong_behind_partial(ctx);
    }
    if (PART("toobig")) {
        test_too_big(ctx, ZLINK_STREAM_FRAMING_LENGTH);
        test_too_big(ctx, ZLINK_STREAM_FRAMING_BATCH);
    }
    if (PART("utf8"))
        test_text_utf8(ctx);
    tu_tls_end(ctx, &T, "ok");
    return 0;
}
