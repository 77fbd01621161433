/*
 * fuzz_stream_recv.c - libFuzzer target: the STREAM engine's receive path
 * and its framing decoder fed arbitrary bytes by a peer, in each framing
 * (ZLINK_STREAM_FRAMING LENGTH, RAW, BATCH; one listener each). A plain TCP
 * socket connected to a STREAM socket writes the input; the STREAM socket
 * receives it with a schedule of buffer sizes, with zlink_recv or
 * zlink_msg_recv, blocking or not. Checked on every input: the connect
 * event comes first and the disconnect event once, last, with the right
 * ZLINK_STREAM_EVENT_ERRNO; LENGTH: each payload is the next body of the
 * stream (cut to the buffer, its full size returned), a zero length drops
 * the connection with EPROTO and one over MAXMSGSIZE with EMSGSIZE after
 * every body before it; BATCH: payloads are whole packets, the stream in
 * order, a first packet over the buffer returns its size and stays; RAW:
 * data is never empty and the bytes are exactly the bytes written (all of
 * them at an orderly end: nothing is held back).
 *
 * Input: [mode][8 schedule bytes][bytes the peer writes].
 * mode bits 0-1: how the peer ends: shutdown(SHUT_WR); close; reset
 * (SO_LINGER 0); stay open until the STREAM side closes with [id]+empty.
 * bit 2: write in chunks of (mode >> 3) + 1 bytes, receiving between
 * them. Schedule byte i (used round robin): bits 0-2 the buffer size
 * (0, 1, 2, 3, 5, 64, 4096, 65536), bit 3 zlink_msg_recv, bit 4 DONTWAIT;
 * byte 0 bits 5-6: the framing (0 LENGTH, 1 RAW, 2 BATCH, 3 LENGTH), byte 1
 * bits 5-7: MAXMSGSIZE (-1, 0, 1, 5, 64, 300, 4096, -1; -1 and 0 mean
 * 8 MiB). In RAW a 0-byte
 * buffer takes nothing, so the receive after it is a zlink_msg_recv.
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

static void *srvs[3];
static uint16_t ports[3];
static uint32_t stale_id[3];
static void *srv;

static const int64_t maxes[8] = {-1, 0, 1, 5, 64, 300, 4096, -1};

typedef struct rx {
    int framing;
    int64_t max;
    const uint8_t *sent;
    size_t nsent;     /* written so far */
    size_t nreceived; /* stream bytes delivered (LENGTH: headers included) */
    uint32_t id;
    int closed, close_err;
    const uint8_t *sched;
    unsigned step;
    int stuck; /* RAW: a 0-byte buffer took nothing; the next is msg_recv */
} rx_t;

static const size_t sizes[] = {0, 1, 2, 3, 5, 64, 4096, 65536};

/* The errno a length in the stream at off drops the connection with, 0 if
 * it is fine, -1 if its header is not all written. */
static int bad_len(const rx_t *x, size_t off)
{
    if (x->nsent - off < 4)
        return -1;
    uint32_t len = tu_be32(x->sent + off);
    if (len == 0)
        return EPROTO;
    /* zlink 1.3's rule: MAXMSGSIZE when above 0, else 8 MiB */
    int64_t limit = x->max > 0 ? x->max : (int64_t)8 << 20;
    if ((int64_t)len > limit || len > (uint32_t)INT32_MAX - 4)
        return EMSGSIZE;
    return 0;
}

/* The disconnect event (cause err): what the stream says must hold. */
static void check_end(rx_t *x, int err, int end)
{
    FUZZ_ASSERT(!x->closed);
    x->closed = 1;
    x->close_err = err;
    if (x->framing == ZLINK_STREAM_FRAMING_RAW) {
        FUZZ_ASSERT(err == 0 || err == ECONNRESET);
        return;
    }
    int b = bad_len(x, x->nreceived);
    if (b > 0) {
        /* every body before the bad length came (a reset may lose them) */
        FUZZ_ASSERT(err == b || (end == END_RESET && err == ECONNRESET));
        return;
    }
    FUZZ_ASSERT(err == 0 || err == ECONNRESET);
    if (b == 0 && end != END_RESET && end != END_LOCAL) {
        /* an orderly end: only an unfinished packet may be left */
        size_t len = tu_be32(x->sent + x->nreceived);
        FUZZ_ASSERT(x->nreceived + 4 + len > x->nsent);
    }
}

/* A data payload of n bytes whose first `copied` are in data. */
static void check_data(rx_t *x, const uint8_t *data, size_t n, size_t copied)
{
    FUZZ_ASSERT(!x->closed);
    if (x->framing == ZLINK_STREAM_FRAMING_RAW) {
        FUZZ_ASSERT(n > 0);
        if (copied == 0)
            return; /* a 0-byte buffer: nothing taken, the bytes stay */
        FUZZ_ASSERT(copied == n && x->nreceived + n <= x->nsent);
        FUZZ_ASSERT(memcmp(data, x->sent + x->nreceived, n) == 0);
        x->nreceived += n;
        return;
    }
    if (x->framing == ZLINK_STREAM_FRAMING_LENGTH) {
        FUZZ_ASSERT(bad_len(x, x->nreceived) == 0);
        size_t len = tu_be32(x->sent + x->nreceived);
        FUZZ_ASSERT(n == len && x->nreceived + 4 + len <= x->nsent);
        if (copied)
            FUZZ_ASSERT(memcmp(data, x->sent + x->nreceived + 4, copied < n ? copied : n) == 0);
        x->nreceived += 4 + len;
        return;
    }
    /* BATCH: whole good packets, the stream in order */
    FUZZ_ASSERT(copied == n && x->nreceived + n <= x->nsent);
    FUZZ_ASSERT(memcmp(data, x->sent + x->nreceived, n) == 0);
    size_t off = 0;
    while (off < n) {
        FUZZ_ASSERT(bad_len(x, x->nreceived + off) == 0);
        off += 4 + (size_t)tu_be32(data + off);
    }
    FUZZ_ASSERT(off == n);
    x->nreceived += n;
}

/* One receive of [id][payload] by the schedule. Returns 0 when nothing
 * was there. */
static int receive_one(rx_t *x, int may_block, int end)
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
    /* one connection at a time: every message is about it */
    FUZZ_ASSERT(tu_be32(idb) == x->id);
    uint8_t *b = NULL;
    size_t copied;
    int use_msg = (sch & 0x08) || x->stuck;
    x->stuck = 0;
    if (use_msg) {
        zlink_msg_t m;
        FUZZ_ASSERT(zlink_msg_init(&m) == 0);
        n = zlink_msg_recv(&m, srv, 0);
        FUZZ_ASSERT(n >= 0 && (size_t)n == zlink_msg_size(&m));
        b = malloc((size_t)n + 1);
        memcpy(b, zlink_msg_data(&m), (size_t)n);
        copied = (size_t)n;
        zlink_msg_close(&m);
    } else {
        /* exactly cap bytes of heap: ASan sees a write past it */
        b = cap ? malloc(cap) : NULL;
        FUZZ_ASSERT(!cap || b);
        n = zlink_recv(srv, b, cap, 0);
        FUZZ_ASSERT(n >= 0);
        int ev0 = 0;
        size_t el = sizeof ev0;
        FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_STREAM_EVENT, &ev0, &el) == 0);
        if (x->framing == ZLINK_STREAM_FRAMING_BATCH && (size_t)n > cap && ev0 < 0) {
            /* nothing consumed: the same payload frame, large enough */
            FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_RCVMORE, &more, &ml) == 0 && more == 1);
            free(b);
            cap = (size_t)n;
            b = malloc(cap);
            n = zlink_recv(srv, b, cap, 0);
            FUZZ_ASSERT(n >= 0 && (size_t)n <= cap);
        }
        if (x->framing == ZLINK_STREAM_FRAMING_RAW && cap)
            FUZZ_ASSERT((size_t)n <= cap);
        x->stuck = x->framing == ZLINK_STREAM_FRAMING_RAW && !cap && n > 0;
        copied = (size_t)n < cap ? (size_t)n : cap;
    }
    int ev = 0, err = 0;
    ml = sizeof ev;
    FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_STREAM_EVENT, &ev, &ml) == 0);
    FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_STREAM_EVENT_ERRNO, &err, &ml) == 0);
    if (ev >= 0) {
        FUZZ_ASSERT(ev == 0); /* the connect event was taken already */
        FUZZ_ASSERT(n == (x->framing == ZLINK_STREAM_FRAMING_RAW ? 0 : 1));
        FUZZ_ASSERT(copied == 0 || b[0] == 0x00);
        check_end(x, err, end);
    } else {
        FUZZ_ASSERT(err == 0);
        if (n > 0 || x->framing != ZLINK_STREAM_FRAMING_BATCH)
            check_data(x, b, (size_t)n, copied);
    }
    free(b);
    FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_RCVMORE, &more, &ml) == 0 && more == 0);
    return 1;
}

/* The first message of a new connection is its connect event. */
static uint32_t wait_connected(int framing)
{
    unsigned char idb[4], b[16];
    long long deadline = fuzz_now_ms() + 10000;
    while (zlink_recv(srv, idb, sizeof idb, 0) != 4)
        FUZZ_ASSERT(zlink_errno() == EAGAIN && fuzz_now_ms() < deadline);
    int n = zlink_recv(srv, b, sizeof b, 0);
    if (framing == ZLINK_STREAM_FRAMING_RAW)
        FUZZ_ASSERT(n == 0);
    else
        FUZZ_ASSERT(n == 1 && b[0] == 0x01);
    int ev = -1;
    size_t ml = sizeof ev;
    FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_STREAM_EVENT, &ev, &ml) == 0 && ev == 1);
    return tu_be32(idb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader_t in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    uint8_t sched[8];
    for (int i = 0; i < 8; i++)
        sched[i] = fuzz_u8(&in);
    int framing = ((sched[0] >> 5) & 3) % 3;
    if (!srvs[framing]) {
        /* the framing is set before the socket binds */
        void *s = fuzz_socket(ZLINK_STREAM);
        FUZZ_ASSERT(s);
        FUZZ_ASSERT(zlink_setsockopt(s, ZLINK_STREAM_FRAMING, &framing, sizeof framing) == 0);
        int zero = 0, t = 100; /* a blocking receive in the schedule waits this long */
        FUZZ_ASSERT(zlink_setsockopt(s, ZLINK_LINGER, &zero, sizeof zero) == 0);
        FUZZ_ASSERT(zlink_setsockopt(s, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
        FUZZ_ASSERT(zlink_bind(s, "tcp://127.0.0.1:*") == 0);
        char ep[256];
        size_t len = sizeof ep;
        FUZZ_ASSERT(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &len) == 0);
        ports[framing] = (uint16_t)atoi(strrchr(ep, ':') + 1);
        fuzz_allow_port(ports[framing]);
        srvs[framing] = s;
    }
    srv = srvs[framing];
    int64_t max = maxes[(sched[1] >> 5) & 7];
    FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_MAXMSGSIZE, &max, sizeof max) == 0);
    int end = mode & 3;
    size_t chunk = (mode & 0x04) ? (size_t)(mode >> 3) + 1 : (size_t)-1;

    int peer = fuzz_tcp_connect(ports[framing]);
    rx_t x = {framing, max, in.p, 0, 0, 0, 0, 0, sched, 0, 0};
    x.id = wait_connected(framing);
    FUZZ_ASSERT(x.id != stale_id[framing]);
    long long deadline = fuzz_now_ms() + 10000;
    int broken = 0; /* the server dropped the connection: writes fail */
    while (x.nsent < in.n && !broken && !x.closed) {
        FUZZ_ASSERT(fuzz_now_ms() < deadline);
        size_t n = in.n - x.nsent < chunk ? in.n - x.nsent : chunk;
        ssize_t w = send(peer, in.p + x.nsent, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0)
            x.nsent += (size_t)w;
        else if (w < 0 && (errno == EPIPE || errno == ECONNRESET) &&
                 framing != ZLINK_STREAM_FRAMING_RAW)
            broken = 1;
        else
            FUZZ_ASSERT(w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
        if (chunk != (size_t)-1 || w < 0)
            receive_one(&x, 0, end);
    }
    switch (end) {
    case END_SHUTDOWN:
        shutdown(peer, SHUT_WR);
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
        if (end == END_LOCAL && !asked_close) {
            /* all in (LENGTH, BATCH: every whole packet): close from here */
            int all = x.nreceived == x.nsent;
            if (framing != ZLINK_STREAM_FRAMING_RAW && !all)
                all = bad_len(&x, x.nreceived) < 0 ||
                      (bad_len(&x, x.nreceived) == 0 &&
                       x.nreceived + 4 + tu_be32(x.sent + x.nreceived) > x.nsent);
            if (all) {
                unsigned char idb[4];
                tu_put_be32(idb, x.id);
                FUZZ_ASSERT(zlink_send(srv, idb, 4, ZLINK_SNDMORE) == 4);
                FUZZ_ASSERT(zlink_send(srv, "", 0, 0) == 0);
                asked_close = 1;
            }
        }
        if (!receive_one(&x, 1, end) && (x.sched[x.step % 8] & 0x10)) {
            struct pollfd p = {-1, 0, 0};
            poll(&p, 0, 1); /* a non-blocking schedule: do not spin */
        }
    }
    /* RAW at an orderly end: every byte, none held back */
    if (framing == ZLINK_STREAM_FRAMING_RAW && (end == END_SHUTDOWN || end == END_CLOSE))
        FUZZ_ASSERT(x.nreceived == x.nsent && x.close_err == 0);
    if (peer >= 0)
        close(peer);
    stale_id[framing] = x.id;
    return 0;
}
