/*
 * fuzz_stream_send.c - libFuzzer target: zlink_send of arbitrary frames on
 * a STREAM socket with one live connection (from a plain TCP peer), with
 * the documented send contract checked on every call and the bytes the
 * peer receives compared with the payloads the socket accepted.
 *
 * Input: [setup] then records [flags][len hi][len lo][bytes].
 * setup bits 0-1: SNDHWM 1000 / 1 / 2 / 0 (none); bit 2: SNDTIMEO 5 ms
 * instead of 0; bit 3: the peer resets the connection after (setup >> 4)
 * frames. The peer reads nothing until the input's frames are sent, so
 * a few hundred KB fill its window and the library queues (the socket's
 * SNDBUF is small). Record flags bit 0: DONTWAIT; bit 1: SNDMORE; bit 2: NULL
 * buffer; bit 3: the payload is len bytes of filler instead of len bytes
 * of input; bits 4-5 choose the routing id frame: the live id, the
 * previous input's (closed) id, 4 input bytes, or len & 7 input bytes.
 *
 * Every input opens its own connection and ends it with [id]+empty (the
 * library flushes, then closes), reads the peer to EOF and waits for the
 * 0x00, so inputs are independent and nothing accumulates.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EXPECTED (1u << 20)

static void *srv;
static uint16_t port;
static uint32_t stale_id;
static unsigned char filler[65536];

typedef struct run {
    uint32_t id;
    int peer;          /* raw fd, -1 once reset */
    int peer_gone;     /* reset by the peer: sends may fail or vanish */
    int closing;       /* [id]+empty sent */
    int want_payload;  /* an id frame was accepted */
    unsigned char *expected;
    size_t nexpected;
} run_t;

static void setup(void)
{
    srv = fuzz_stream_listener(&port);
    int linger = -1, sndbuf = 4096;
    /* -1: [id]+empty flushes everything before closing, so the peer must
     * see every accepted byte; a small SNDBUF makes the queue fill */
    FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_LINGER, &linger, sizeof linger) == 0);
    FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_SNDBUF, &sndbuf, sizeof sndbuf) == 0);
    for (size_t i = 0; i < sizeof filler; i++)
        filler[i] = (unsigned char)(i * 31 + 7);
}

static void set_int(int opt, int v)
{
    FUZZ_ASSERT(zlink_setsockopt(srv, opt, &v, sizeof v) == 0);
}

static void reset_peer(run_t *r)
{
    struct linger lg = {1, 0};
    setsockopt(r->peer, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(r->peer);
    r->peer = -1;
    r->peer_gone = 1;
}

static void send_id(run_t *r, uint8_t flags, fuzz_reader_t *in, size_t len)
{
    unsigned char idb[8];
    size_t idlen = 4;
    switch ((flags >> 4) & 3) {
    case 0:
        tu_put_be32(idb, r->id);
        break;
    case 1:
        tu_put_be32(idb, stale_id);
        break;
    case 2: {
        size_t got;
        memcpy(idb, fuzz_bytes(in, 4, &got), got);
        memset(idb + got, 0, 4 - got);
        break;
    }
    default: {
        idlen = len & 7;
        size_t got;
        memcpy(idb, fuzz_bytes(in, idlen, &got), got);
        memset(idb + got, 0, idlen - got);
        break;
    }
    }
    int null_buf = flags & 0x04;
    int sflags = flags & (ZLINK_DONTWAIT | ZLINK_SNDMORE);
    int rc = zlink_send(srv, null_buf ? NULL : idb, idlen, sflags);
    int e = zlink_errno();
    if (!(sflags & ZLINK_SNDMORE)) {
        FUZZ_ASSERT(rc == -1 && e == EINVAL); /* an id frame needs SNDMORE */
        return;
    }
    int live = !null_buf && idlen == 4 && tu_be32(idb) == r->id && !r->closing;
    if (live && !r->peer_gone) {
        FUZZ_ASSERT(rc == 4);
    } else if (live) {
        /* the library may not have noticed the reset yet */
        FUZZ_ASSERT(rc == 4 || (rc == -1 && e == EHOSTUNREACH));
    } else {
        FUZZ_ASSERT(rc == -1 && e == EHOSTUNREACH);
    }
    r->want_payload = rc == 4;
}

static void send_payload(run_t *r, uint8_t flags, fuzz_reader_t *in, size_t len)
{
    const unsigned char *buf;
    if (flags & 0x08) {
        buf = filler;
    } else {
        size_t got;
        buf = fuzz_bytes(in, len, &got);
        len = got;
    }
    /* bound what one input makes the harness remember */
    if (r->nexpected + len > MAX_EXPECTED)
        return;
    int null_buf = (flags & 0x04) && len;
    int rc = zlink_send(srv, null_buf ? NULL : buf, len, flags & (ZLINK_DONTWAIT | ZLINK_SNDMORE));
    int e = zlink_errno();
    if (rc == -1 && e == EHOSTUNREACH) {
        FUZZ_ASSERT(r->peer_gone);
        r->want_payload = 0;
        return;
    }
    if (null_buf) {
        FUZZ_ASSERT(rc == -1 && e == EMSGSIZE); /* nothing stays selected */
        r->want_payload = 0;
        return;
    }
    if (len == 0) {
        FUZZ_ASSERT(rc == 0);
        r->closing = 1;
        r->want_payload = 0;
        return;
    }
    if (rc == -1) {
        FUZZ_ASSERT(e == EAGAIN); /* the queue is at SNDHWM: nothing stays selected */
        r->want_payload = 0;
        return;
    }
    FUZZ_ASSERT(rc == (int)len);
    r->want_payload = 0;
    memcpy(r->expected + r->nexpected, buf, len);
    r->nexpected += len;
}

/* One step towards the end of the connection: completes a selected
 * message (sent or refused, the payload frame ends it), then asks for the
 * close ([id]+empty). */
static void step_close(run_t *r, int closed)
{
    if (r->want_payload) {
        int rc = zlink_send(srv, "end", 3, ZLINK_DONTWAIT);
        if (rc == 3) {
            memcpy(r->expected + r->nexpected, "end", 3); /* the buffer has room */
            r->nexpected += 3;
        } else if (rc == -1 && zlink_errno() == EHOSTUNREACH) {
            FUZZ_ASSERT(r->peer_gone);
        } else {
            FUZZ_ASSERT(rc == -1 && zlink_errno() == EAGAIN);
        }
        r->want_payload = 0;
    } else if (!r->closing) {
        unsigned char idb[4];
        tu_put_be32(idb, r->id);
        int rc = zlink_send(srv, idb, 4, ZLINK_SNDMORE);
        if (rc == 4) {
            FUZZ_ASSERT(!closed);
            FUZZ_ASSERT(zlink_send(srv, "", 0, 0) == 0);
        } else {
            FUZZ_ASSERT(r->peer_gone && zlink_errno() == EHOSTUNREACH);
        }
        r->closing = 1;
    }
}

/* Ends the connection and reads the peer to EOF while the socket flushes
 * (it progresses only inside calls), until the connection's 0x00; then
 * compares what the peer got with what the socket accepted. */
static void finish(run_t *r)
{
    long long deadline = fuzz_now_ms() + 10000;
    static unsigned char got[MAX_EXPECTED + 4];
    size_t ngot = 0;
    int eof = r->peer < 0, closed = 0;
    while (!eof || !closed || !r->closing) {
        FUZZ_ASSERT(fuzz_now_ms() < deadline);
        step_close(r, closed);
        int progress = 0;
        if (!eof) {
            ssize_t n = recv(r->peer, got + ngot, sizeof got - ngot, MSG_DONTWAIT);
            if (n > 0)
                ngot += (size_t)n;
            else if (n == 0)
                eof = 1;
            else
                FUZZ_ASSERT(errno == EAGAIN || errno == EWOULDBLOCK);
            progress = n >= 0;
            FUZZ_ASSERT(ngot < sizeof got); /* never more than was accepted */
        }
        unsigned char idb[4], b[16];
        if (!closed && zlink_recv(srv, idb, sizeof idb, ZLINK_DONTWAIT) == 4) {
            int n = zlink_recv(srv, b, sizeof b, 0);
            /* the peer sends nothing: only this connection's disconnect
             * event can come (RAW: an empty payload) */
            int ev = -1;
            size_t l = sizeof ev;
            FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_STREAM_EVENT, &ev, &l) == 0);
            FUZZ_ASSERT(n == 0 && ev == 0 && tu_be32(idb) == r->id);
            /* before the close was asked for, only a reset ends it */
            FUZZ_ASSERT(r->closing || r->peer_gone);
            closed = 1;
            progress = 1;
        } else {
            FUZZ_ASSERT(closed || zlink_errno() == EAGAIN);
        }
        if (!progress && !eof) {
            struct pollfd p = {r->peer, POLLIN, 0};
            poll(&p, 1, 1);
        }
    }
    if (r->peer >= 0) {
        FUZZ_ASSERT(ngot == r->nexpected);
        FUZZ_ASSERT(memcmp(got, r->expected, ngot) == 0);
        close(r->peer);
    }
}

/* The first message of a new connection is its 0x01. */
static uint32_t wait_connected(void)
{
    int t = 10000;
    set_int(ZLINK_RCVTIMEO, t);
    unsigned char idb[4], b[16];
    FUZZ_ASSERT(zlink_recv(srv, idb, sizeof idb, 0) == 4);
    FUZZ_ASSERT(zlink_recv(srv, b, sizeof b, 0) == 0); /* RAW: the connect event */
    uint32_t id = tu_be32(idb);
    FUZZ_ASSERT(id != stale_id);
    return id;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!srv)
        setup();
    static unsigned char expected[MAX_EXPECTED + 4];
    fuzz_reader_t in = {data, size};
    uint8_t st = fuzz_u8(&in);
    static const int hwms[] = {1000, 1, 2, 0};
    set_int(ZLINK_SNDHWM, hwms[st & 3]);
    set_int(ZLINK_SNDTIMEO, (st & 0x04) ? 5 : 0);
    int reset_after = (st & 0x08) ? st >> 4 : -1;

    run_t r = {0};
    r.expected = expected;
    r.peer = fuzz_tcp_connect(port);
    r.id = wait_connected();
    int frames = 0;
    while (in.n) {
        if (frames++ == reset_after)
            reset_peer(&r);
        uint8_t flags = fuzz_u8(&in);
        size_t len = fuzz_u16(&in);
        if (r.want_payload)
            send_payload(&r, flags, &in, len);
        else
            send_id(&r, flags, &in, len);
    }
    finish(&r);
    stale_id = r.id;
    return 0;
}
