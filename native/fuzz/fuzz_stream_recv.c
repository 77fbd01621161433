/*
 * fuzz_stream_recv.c - libFuzzer target: the STREAM engine's receive path
 * fed arbitrary bytes by a peer. A plain TCP socket connected to a STREAM
 * socket writes the input; the STREAM socket receives it with a schedule
 * of buffer sizes (0 and 1 go through the truncating scratch path), with
 * zlink_recv or zlink_msg_recv, blocking or not. Checked on every input:
 * the connection's 0x01 comes first, a data payload is never one byte, the
 * bytes received are exactly the bytes written (at most the last one lost
 * at EOF, the documented held-back byte; any prefix after a reset) and the
 * 0x00 comes once.
 *
 * Input: [mode][8 schedule bytes][bytes the peer writes].
 * mode bits 0-1: how the peer ends: shutdown(SHUT_WR); close; reset
 * (SO_LINGER 0); stay open until the STREAM side closes with [id]+empty.
 * bit 2: write in chunks of (mode >> 3) + 1 bytes, receiving between
 * them. Schedule byte i (used round robin): bits 0-2 the buffer size
 * (0, 1, 2, 3, 5, 64, 4096, 65536), bit 3 zlink_msg_recv, bit 4 DONTWAIT.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { END_SHUTDOWN, END_CLOSE, END_RESET, END_LOCAL };

static void *srv;
static uint16_t port;
static uint32_t stale_id;

typedef struct rx {
    const uint8_t *sent;
    size_t nsent;     /* written so far */
    size_t nreceived; /* payload bytes delivered */
    uint32_t id;
    int closed;
    const uint8_t *sched;
    unsigned step;
} rx_t;

static const size_t sizes[] = {0, 1, 2, 3, 5, 64, 4096, 65536};

/* A payload of n bytes whose first `copied` are in data. */
static void check_payload(rx_t *x, const uint8_t *data, size_t n, size_t copied)
{
    if (n == 0)
        return; /* empty: a held-back byte or a spurious wake-up */
    if (n == 1) {
        /* one byte is always a notification: this connection's end */
        FUZZ_ASSERT(copied == 0 || data[0] == 0x00);
        FUZZ_ASSERT(!x->closed);
        x->closed = 1;
        return;
    }
    FUZZ_ASSERT(!x->closed);
    FUZZ_ASSERT(x->nreceived + n <= x->nsent);
    FUZZ_ASSERT(copied == 0 || memcmp(data, x->sent + x->nreceived, copied) == 0);
    x->nreceived += n;
}

/* One receive of [id][payload] by the schedule. Returns 0 when nothing
 * was there. */
static int receive_one(rx_t *x, int may_block)
{
    uint8_t sch = x->sched[x->step++ % 8];
    size_t cap = sizes[sch & 7];
    int flags = (sch & 0x10) || !may_block ? ZLINK_DONTWAIT : 0;
    unsigned char idb[4];
    int n = zlink_recv(srv, idb, sizeof idb, flags);
    if (n < 0) {
        FUZZ_ASSERT(zlink_errno() == EAGAIN);
        return 0;
    }
    FUZZ_ASSERT(n == 4);
    int more = 0;
    size_t ml = sizeof more;
    FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_RCVMORE, &more, &ml) == 0 && more == 1);
    uint32_t id = tu_be32(idb);
    /* one connection at a time: every message is about it */
    FUZZ_ASSERT(id == x->id);
    if (sch & 0x08) {
        zlink_msg_t m;
        FUZZ_ASSERT(zlink_msg_init(&m) == 0);
        n = zlink_msg_recv(&m, srv, 0);
        FUZZ_ASSERT(n >= 0 && (size_t)n == zlink_msg_size(&m));
        check_payload(x, zlink_msg_data(&m), (size_t)n, (size_t)n);
        zlink_msg_close(&m);
    } else {
        /* exactly cap bytes of heap: ASan sees a write past it */
        uint8_t *b = cap ? malloc(cap) : NULL;
        FUZZ_ASSERT(!cap || b);
        n = zlink_recv(srv, b, cap, 0);
        FUZZ_ASSERT(n >= 0);
        /* 2 bytes and more: zero copy, never more than the buffer; 0 and 1:
         * truncated like libzmq, the full size returned */
        if (cap >= 2)
            FUZZ_ASSERT((size_t)n <= cap);
        size_t copied = (size_t)n < cap ? (size_t)n : cap;
        check_payload(x, b, (size_t)n, copied);
        free(b);
    }
    FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_RCVMORE, &more, &ml) == 0 && more == 0);
    return 1;
}

/* The first message of a new connection is its 0x01. */
static uint32_t wait_connected(void)
{
    unsigned char idb[4], b[16];
    long long deadline = fuzz_now_ms() + 10000;
    while (zlink_recv(srv, idb, sizeof idb, 0) != 4)
        FUZZ_ASSERT(zlink_errno() == EAGAIN && fuzz_now_ms() < deadline);
    FUZZ_ASSERT(zlink_recv(srv, b, sizeof b, 0) == 1 && b[0] == 0x01);
    return tu_be32(idb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!srv) {
        srv = fuzz_stream_listener(&port);
        int t = 100; /* a blocking receive in the schedule waits this long */
        FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    }
    fuzz_reader_t in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    uint8_t sched[8];
    for (int i = 0; i < 8; i++)
        sched[i] = fuzz_u8(&in);
    int end = mode & 3;
    size_t chunk = (mode & 0x04) ? (size_t)(mode >> 3) + 1 : (size_t)-1;

    int peer = fuzz_tcp_connect(port);
    rx_t x = {in.p, 0, 0, 0, 0, sched, 0};
    x.id = wait_connected();
    FUZZ_ASSERT(x.id != stale_id);
    long long deadline = fuzz_now_ms() + 10000;
    while (x.nsent < in.n) {
        FUZZ_ASSERT(fuzz_now_ms() < deadline);
        size_t n = in.n - x.nsent < chunk ? in.n - x.nsent : chunk;
        ssize_t w = send(peer, in.p + x.nsent, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0)
            x.nsent += (size_t)w;
        else
            FUZZ_ASSERT(w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
        if (chunk != (size_t)-1 || w < 0)
            receive_one(&x, 0);
    }
    switch (end) {
    case END_SHUTDOWN:
        FUZZ_ASSERT(shutdown(peer, SHUT_WR) == 0);
        break;
    case END_CLOSE:
        close(peer);
        peer = -1;
        break;
    case END_RESET: {
        struct linger lg = {1, 0};
        setsockopt(peer, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        close(peer);
        peer = -1;
        break;
    }
    default:
        break;
    }
    int asked_close = 0;
    while (!x.closed) {
        FUZZ_ASSERT(fuzz_now_ms() < deadline);
        if (end == END_LOCAL && !asked_close && x.nreceived + 1 >= x.nsent) {
            /* all in (a held-back last byte may stay so): close from here */
            unsigned char idb[4];
            tu_put_be32(idb, x.id);
            FUZZ_ASSERT(zlink_send(srv, idb, 4, ZLINK_SNDMORE) == 4);
            FUZZ_ASSERT(zlink_send(srv, "", 0, 0) == 0);
            asked_close = 1;
        }
        if (!receive_one(&x, 1) && (x.sched[x.step % 8] & 0x10)) {
            struct pollfd p = {-1, 0, 0};
            poll(&p, 0, 1); /* a non-blocking schedule: do not spin */
        }
    }
    /* a reset may lose any suffix; otherwise only the held-back last byte */
    if (end != END_RESET && end != END_LOCAL)
        FUZZ_ASSERT(x.nreceived + 1 >= x.nsent);
    if (peer >= 0)
        close(peer);
    stale_id = x.id;
    return 0;
}
