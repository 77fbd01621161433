/*
 * fuzz_stream_multi.c - libFuzzer target: zlink_send on a STREAM socket
 * with 2-4 live connections (plain TCP clients with small receive buffers;
 * the socket's SNDBUF is small and SNDHWM a few messages), interleaved by
 * the input: messages to any connection, lone id and payload frames, a
 * connection held at SNDHWM by a client that does not read while the others
 * are sent to and closed, clients reading a little or all, clients vanishing
 * (closing or resetting their socket), the socket's notifications received.
 *
 * The oracle, on every call:
 * - every client's byte stream is exactly the concatenation, in order, of
 *   the payloads zlink_send accepted for its connection (checked at each
 *   read, and to the last byte once the connection is closed): never a byte
 *   of an id frame, of a refused payload or of another connection;
 * - a payload frame ends the message whatever it returns, so the frame
 *   after it is an id frame: an id frame is 4 for a live connection,
 *   EHOSTUNREACH for a closed, closing or unknown one (4 or EHOSTUNREACH
 *   for a client that vanished, and once EHOSTUNREACH, always), EINVAL
 *   without SNDMORE, never EAGAIN;
 * - a payload is accepted whole, or refused with EAGAIN only when its
 *   connection has SNDHWM accepted messages its client has not read to
 *   their end (the socket's queue, which SNDHWM bounds, holds no more than
 *   these), EHOSTUNREACH only for a client that vanished, EMSGSIZE for a
 *   NULL buffer; an empty one closes;
 * - the socket reports only a 0x00 per connection closed here or by its
 *   client (the clients send nothing), and a client reads EOF only after
 *   its close was asked for.
 *
 * Input: [setup] then records [op] [operands].
 * setup bits 0-1: 2 / 3 / 4 / 2 clients; bits 2-3: SNDHWM 1 / 2 / 5 / 0
 * (none); bit 4: SNDTIMEO 2 ms instead of 0; bit 5: payload frames carry
 * SNDMORE (ignored on a payload).
 * op bits 0-2: what; bits 3-4: the client k (mod the count); bits 5-7: m.
 * 0 MSG [len16]: [id k] then its payload: len bytes of input, or of filler
 *   if m & 1; DONTWAIT if m & 2; a NULL buffer if m & 4 (len 0: close).
 * 1 ID: one id frame: m 0 k's id; 1 k's id without SNDMORE; 2 a previous
 *   input's id; 3 4 input bytes; 4 3 bytes; 5 NULL; 6-7 k's id.
 * 2 FRAME [len16]: one frame as MSG's payload (a payload if an id is
 *   selected, else an id frame to the socket).
 * 3 CLOSE: [id k] + empty.
 * 4 READ [n]: client k reads up to n * 64 bytes (n 0: all there is).
 * 5 VANISH: client k closes its socket (m & 1: with a reset).
 * 6 RECV: the socket's pending notifications, DONTWAIT.
 * 7 EVENTS: ZLINK_EVENTS (pumps the socket: queues go to the kernel).
 *
 * At the end a selected message is completed, every connection closed with
 * [id]+empty (flushed: LINGER -1), every client read to EOF and every 0x00
 * received within 10 s; the process's descriptors and the socket's epoll
 * set are back to where they were before the input. A failed check prints
 * the input's last calls; FUZZ_TRACE=1 in the environment prints them all.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CLIENTS 4
#define MAX_EXPECTED (1u << 20) /* accepted bytes remembered per client */
#define MAX_MSGS 8192           /* accepted messages per client */

typedef struct client {
    int fd;       /* -1 once it vanished */
    uint32_t id;
    int vanished; /* closed its socket: what is sent may go nowhere */
    int gone;     /* the socket said so: EHOSTUNREACH, or its 0x00 */
    int closing;  /* [id]+empty accepted */
    int zero;     /* its 0x00 received */
    int eof;
    unsigned char expected[MAX_EXPECTED + 4];
    size_t nexpected, nread;
    size_t ends[MAX_MSGS + 1]; /* end offset of each accepted payload */
    size_t nmsgs, unread;  /* ends[unread] is the first not read whole */
} client_t;

static void *srv;
static uint16_t port;
static int epfd, fd_baseline, watch_baseline;
static client_t cl[MAX_CLIENTS];
static int ncl;
static int sel = -1; /* the client an accepted id frame selected */
static int hwm;
static uint32_t stale[MAX_CLIENTS];
static int nstale;
static unsigned char filler[MAX_CLIENTS][65536];

/* ---- the input's calls, printed when a check fails ---------------------- */

#define LOG_LINES 48
static char log_ring[LOG_LINES][112];
static unsigned log_n;

static int trace; /* FUZZ_TRACE set: every call on stderr as it happens */

static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = log_ring[log_n++ % LOG_LINES];
    vsnprintf(line, sizeof log_ring[0], fmt, ap);
    va_end(ap);
    if (trace)
        fprintf(stderr, "  %s\n", line);
}

static void dump(void)
{
    fprintf(stderr, "fuzz_stream_multi: SNDHWM %d, selected %d, the last calls:\n", hwm, sel);
    for (unsigned i = log_n > LOG_LINES ? log_n - LOG_LINES : 0; i < log_n; i++)
        fprintf(stderr, "  %s\n", log_ring[i % LOG_LINES]);
    for (int k = 0; k < ncl; k++) {
        client_t *c = &cl[k];
        fprintf(stderr, "  client %d id %08x: accepted %zu bytes in %zu msgs, read %zu;%s%s%s%s%s\n",
                k, c->id, c->nexpected, c->nmsgs, c->nread, c->vanished ? " vanished" : "",
                c->gone ? " gone" : "", c->closing ? " closing" : "", c->zero ? " 0x00" : "",
                c->eof ? " eof" : "");
    }
}

#define MUST(cond)                                                             \
    do {                                                                       \
        if (!(cond)) {                                                         \
            dump();                                                            \
            fuzz_fail(__FILE__, __LINE__, #cond);                              \
        }                                                                      \
    } while (0)

/* ---- the model ---------------------------------------------------------- */

static client_t *by_id(uint32_t id)
{
    for (int k = 0; k < ncl; k++)
        if (cl[k].id == id)
            return &cl[k];
    return NULL;
}

/* Accepted messages of c the client has not read to their end: the socket
 * queues at most these (the rest are in the kernel or read). */
static size_t unread_msgs(client_t *c)
{
    while (c->unread < c->nmsgs && c->ends[c->unread] <= c->nread)
        c->unread++;
    return c->nmsgs - c->unread;
}

static int room_for(const client_t *c, size_t len)
{
    return c->nexpected + len <= MAX_EXPECTED && c->nmsgs < MAX_MSGS;
}

static void check_id_frame(const void *buf, size_t len, int flags, int rc, int e)
{
    if (!(flags & ZLINK_SNDMORE)) {
        MUST(rc == -1 && e == EINVAL);
        return;
    }
    client_t *c = buf && len == 4 ? by_id(tu_be32(buf)) : NULL;
    if (!c) {
        MUST(rc == -1 && e == EHOSTUNREACH);
        return;
    }
    if (c->closing || c->gone)
        MUST(rc == -1 && e == EHOSTUNREACH);
    else if (c->vanished) /* the socket may not have noticed yet */
        MUST(rc == 4 || (rc == -1 && e == EHOSTUNREACH));
    else
        MUST(rc == 4);
    if (rc == 4)
        sel = (int)(c - cl);
    else
        c->gone = 1;
}

static void check_payload_frame(client_t *c, const void *buf, size_t len, int rc, int e)
{
    if (rc == -1 && e == EHOSTUNREACH) {
        MUST(c->vanished); /* it was live at its id frame */
        c->gone = 1;
        return;
    }
    if (len == 0) {
        MUST(rc == 0);
        c->closing = 1;
        return;
    }
    if (!buf) {
        MUST(rc == -1 && e == EMSGSIZE);
        return;
    }
    if (rc == -1) {
        MUST(e == EAGAIN);
        MUST(hwm > 0 && unread_msgs(c) >= (size_t)hwm);
        return;
    }
    MUST(rc == (int)len);
    memcpy(c->expected + c->nexpected, buf, len);
    c->nexpected += len;
    c->ends[c->nmsgs++] = c->nexpected;
}

/* One zlink_send, checked against the protocol; the model follows it. */
static int frame(const void *buf, size_t len, int flags)
{
    int was = sel;
    int rc = zlink_send(srv, buf, len, flags);
    int e = rc < 0 ? zlink_errno() : 0;
    if (was < 0)
        note("id frame %02x%02x%02x%02x.. len %zu flags %d -> %d errno %d",
             buf && len > 0 ? ((const unsigned char *)buf)[0] : 0,
             buf && len > 1 ? ((const unsigned char *)buf)[1] : 0,
             buf && len > 2 ? ((const unsigned char *)buf)[2] : 0,
             buf && len > 3 ? ((const unsigned char *)buf)[3] : 0, len, flags, rc, e);
    else
        note("payload to client %d: len %zu%s flags %d -> %d errno %d", was, len,
             buf ? "" : " NULL", flags, rc, e);
    sel = -1; /* a payload frame ends the message; an id frame may select */
    if (was < 0)
        check_id_frame(buf, len, flags, rc, e);
    else
        check_payload_frame(&cl[was], buf, len, rc, e);
    return rc;
}

static int id_frame(client_t *c)
{
    unsigned char idb[4];
    tu_put_be32(idb, c->id);
    return frame(idb, 4, ZLINK_SNDMORE);
}

/* ---- clients and the socket's notifications ----------------------------- */

static void check_bytes(client_t *c, const unsigned char *got, size_t n)
{
    const unsigned char *want = c->expected + c->nread;
    size_t have = c->nexpected - c->nread, same = n < have ? n : have;
    size_t i = 0;
    while (i < same && got[i] == want[i])
        i++;
    if (i < same)
        fprintf(stderr, "fuzz_stream_multi: client %d byte %zu of its stream is %02x, %02x was sent\n",
                (int)(c - cl), c->nread + i, got[i], want[i]);
    else if (n > have)
        fprintf(stderr, "fuzz_stream_multi: client %d got %zu bytes past the %zu accepted:"
                " %02x %02x %02x %02x...\n", (int)(c - cl), n - have, c->nexpected, got[have],
                n > have + 1 ? got[have + 1] : 0, n > have + 2 ? got[have + 2] : 0,
                n > have + 3 ? got[have + 3] : 0);
    MUST(i == same && n <= have); /* exactly the accepted bytes, in order */
    c->nread += n;
}

/* One non-blocking read of at most cap bytes; returns 1 if it got bytes or
 * the EOF. */
static int client_read(client_t *c, size_t cap)
{
    static unsigned char buf[65536];
    if (c->fd < 0 || c->eof)
        return 0;
    ssize_t n = recv(c->fd, buf, cap < sizeof buf ? cap : sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
        check_bytes(c, buf, (size_t)n);
        return 1;
    }
    if (n == 0) {
        note("client %d: EOF after %zu bytes", (int)(c - cl), c->nread);
        MUST(c->closing); /* the socket closes only when asked to */
        MUST(c->nread == c->nexpected);
        c->eof = 1;
        return 1;
    }
    MUST(errno == EAGAIN || errno == EWOULDBLOCK);
    return 0;
}

static void client_vanish(client_t *c, int reset)
{
    if (c->fd < 0)
        return;
    if (reset) {
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(c->fd);
    c->fd = -1;
    c->vanished = 1;
    note("client %d vanishes (%s)", (int)(c - cl), reset ? "reset" : "close");
}

/* One notification, DONTWAIT; returns 0 when there was none. */
static int server_recv(void)
{
    unsigned char idb[8], b[16];
    int n = zlink_recv(srv, idb, sizeof idb, ZLINK_DONTWAIT);
    if (n < 0) {
        MUST(zlink_errno() == EAGAIN);
        return 0;
    }
    MUST(n == 4);
    n = zlink_recv(srv, b, sizeof b, 0);
    client_t *c = by_id(tu_be32(idb));
    note("recv %08x: %d bytes, first %02x", tu_be32(idb), n, n > 0 ? b[0] : 0);
    MUST(c);
    /* the clients send nothing: only the disconnect event (RAW: an empty
     * payload) of a connection that was closed here or by its client, once */
    int ev = -1;
    size_t l = sizeof ev;
    MUST(zlink_getsockopt(srv, ZLINK_STREAM_EVENT, &ev, &l) == 0);
    MUST(n == 0 && ev == 0);
    MUST(!c->zero && (c->closing || c->vanished));
    c->zero = 1;
    c->gone = 1;
    return 1;
}

/* ---- one input ---------------------------------------------------------- */

static void setup(void)
{
    trace = getenv("FUZZ_TRACE") != NULL;
    srv = fuzz_stream_listener(&port);
    int linger = -1, sndbuf = 4096;
    /* -1: [id]+empty flushes everything before closing, so a client must
     * see every accepted byte; a small SNDBUF makes the queues fill */
    FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_LINGER, &linger, sizeof linger) == 0);
    FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_SNDBUF, &sndbuf, sizeof sndbuf) == 0);
    size_t len = sizeof epfd;
    FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_FD, &epfd, &len) == 0);
    watch_baseline = fuzz_epoll_watches(epfd);
    /* the clients' fillers differ at every offset */
    for (int k = 0; k < MAX_CLIENTS; k++)
        for (size_t i = 0; i < sizeof filler[k]; i++)
            filler[k][i] = (unsigned char)(i * 31 + 7 + (size_t)k * 64);
}

static void set_int(int opt, int v)
{
    FUZZ_ASSERT(zlink_setsockopt(srv, opt, &v, sizeof v) == 0);
}

static void connect_clients(int n)
{
    ncl = 0;
    for (int k = 0; k < n; k++) {
        client_t *c = &cl[k];
        c->fd = fuzz_tcp_connect_rcvbuf(port, 2048);
        /* one connection in flight: the 0x01 is this client's */
        c->id = fuzz_stream_wait_event(srv, 0x01);
        for (int j = 0; j < nstale; j++)
            FUZZ_ASSERT(c->id != stale[j]);
        FUZZ_ASSERT(!by_id(c->id));
        c->vanished = c->gone = c->closing = c->zero = c->eof = 0;
        c->nexpected = c->nread = c->nmsgs = c->unread = 0;
        ncl++;
    }
}

/* A payload frame's buffer by m (see the header): NULL, filler of client
 * k or input bytes; *len is cut to the input there is. */
static const void *payload(fuzz_reader_t *in, int m, int k, size_t *len)
{
    if (m & 4)
        return NULL;
    if (m & 1)
        return filler[k];
    size_t got;
    const void *p = fuzz_bytes(in, *len, &got);
    *len = got;
    return p;
}

static void op_id(fuzz_reader_t *in, client_t *c, int m)
{
    unsigned char idb[4];
    tu_put_be32(idb, c->id);
    switch (m) {
    case 1:
        frame(idb, 4, 0);
        break;
    case 2:
        tu_put_be32(idb, nstale ? stale[c - cl < nstale ? c - cl : 0] : 0);
        frame(idb, 4, ZLINK_SNDMORE);
        break;
    case 3: {
        size_t got;
        memcpy(idb, fuzz_bytes(in, 4, &got), got);
        memset(idb + got, 0, 4 - got);
        frame(idb, 4, ZLINK_SNDMORE);
        break;
    }
    case 4:
        frame(idb, 3, ZLINK_SNDMORE);
        break;
    case 5:
        frame(NULL, 4, ZLINK_SNDMORE);
        break;
    default:
        frame(idb, 4, ZLINK_SNDMORE);
        break;
    }
}

static void run_op(fuzz_reader_t *in, int more)
{
    uint8_t op = fuzz_u8(in);
    int k = ((op >> 3) & 3) % ncl, m = op >> 5;
    client_t *c = &cl[k];
    int flags = (m & 2 ? ZLINK_DONTWAIT : 0) | more;
    switch (op & 7) {
    case 0: { /* MSG */
        size_t len = fuzz_u16(in);
        const void *p = payload(in, m, k, &len);
        if (!room_for(c, len))
            break;
        if (id_frame(c) == 4)
            frame(p, len, flags);
        break;
    }
    case 1:
        op_id(in, c, m);
        break;
    case 2: { /* FRAME */
        size_t len = fuzz_u16(in);
        const void *p = payload(in, m, sel < 0 ? k : sel, &len);
        if (sel < 0 || room_for(&cl[sel], len))
            frame(p, len, flags);
        break;
    }
    case 3: /* CLOSE */
        if (id_frame(c) == 4)
            frame("", 0, more);
        break;
    case 4: { /* READ */
        size_t n = fuzz_u8(in);
        if (n)
            client_read(c, n * 64);
        else
            while (client_read(c, (size_t)-1) && !c->eof)
                ;
        break;
    }
    case 5:
        client_vanish(c, m & 1);
        break;
    case 6:
        for (int i = 0; i < 8 && server_recv(); i++)
            ;
        break;
    default: {
        int ev;
        size_t evlen = sizeof ev;
        MUST(zlink_getsockopt(srv, ZLINK_EVENTS, &ev, &evlen) == 0);
        MUST(ev & ZLINK_POLLOUT);
        break;
    }
    }
}

/* Completes a selected message, closes every connection, reads every client
 * to EOF and receives every 0x00, within 10 s. */
static void finish(void)
{
    if (sel >= 0)
        frame("end", 3, ZLINK_DONTWAIT); /* expected[] has room for it */
    for (int k = 0; k < ncl; k++)
        if (!cl[k].closing && !cl[k].gone && id_frame(&cl[k]) == 4)
            frame("", 0, 0); /* never refused for SNDHWM */
    long long deadline = fuzz_now_ms() + 10000;
    for (;;) {
        int done = 1, progress = 0;
        struct pollfd p[MAX_CLIENTS + 1];
        int np = 0;
        for (int k = 0; k < ncl; k++) {
            client_t *c = &cl[k];
            while (client_read(c, (size_t)-1) && !c->eof)
                progress = 1;
            if (c->fd >= 0 && !c->eof) {
                done = 0;
                p[np++] = (struct pollfd){c->fd, POLLIN, 0};
            }
            done &= c->zero;
        }
        while (server_recv())
            progress = 1;
        if (done)
            break;
        if (fuzz_now_ms() > deadline) {
            fprintf(stderr, "fuzz_stream_multi: the connections did not end within 10 s\n");
            MUST(!"every connection ended");
        }
        if (!progress) {
            p[np++] = (struct pollfd){epfd, POLLIN, 0};
            poll(p, (nfds_t)np, 1);
        }
    }
    for (int k = 0; k < ncl; k++) {
        if (!cl[k].vanished)
            MUST(cl[k].nread == cl[k].nexpected);
        if (cl[k].fd >= 0)
            close(cl[k].fd);
        cl[k].fd = -1;
        stale[k] = cl[k].id;
    }
    nstale = ncl;
    int fds = fuzz_open_fds(), watches = fuzz_epoll_watches(epfd);
    if (fds != fd_baseline || watches != watch_baseline ||
        zlink_socket_peer_count(srv) != 0) {
        fprintf(stderr, "fuzz_stream_multi: %d descriptors (%d before), the epoll set %d (%d), %d peers\n",
                fds, fd_baseline, watches, watch_baseline, zlink_socket_peer_count(srv));
        fuzz_dump_fds();
        MUST(!"the input left nothing behind");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!srv)
        setup();
    fuzz_reader_t in = {data, size};
    uint8_t st = fuzz_u8(&in);
    static const int counts[] = {2, 3, 4, 2}, hwms[] = {1, 2, 5, 0};
    hwm = hwms[(st >> 2) & 3];
    set_int(ZLINK_SNDHWM, hwm);
    set_int(ZLINK_SNDTIMEO, (st & 0x10) ? 2 : 0);
    int more = (st & 0x20) ? ZLINK_SNDMORE : 0;
    log_n = 0;
    sel = -1;
    /* per input: libFuzzer opens descriptors of its own between inputs
     * (the symbolizer's pipes when it prints a new function) */
    fd_baseline = fuzz_open_fds();
    connect_clients(counts[st & 3]);
    while (in.n)
        run_op(&in, more);
    finish();
    return 0;
}
