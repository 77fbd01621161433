/*
 * limit_uring.c - limit_echo's io_uring layer (--io uring, the c-uring row); see limit_io.h.
 *
 * No readiness polling: data moves by completions only.
 *  - receive: one multishot recv per connection, buffers picked by the kernel from a ring of
 *    UR_BUFS provided buffers of UR_BUF_SIZE bytes (one ring per process, so per side;
 *    LIMIT_URING_BUFS sets another count). A completion's bytes are handed on and the buffer
 *    goes straight back to the ring. A recv that stops (ring empty: ENOBUFS, or the kernel
 *    ended it) is armed again on the next pass.
 *  - send: a write copies its bytes into an arena (UR_ARENA bytes, reused as soon as no send
 *    of it is outstanding, so the bytes stay in the cache) and stages them on the connection;
 *    a connection's writes of one pass are contiguous, so each connection with data gets one
 *    send SQE per pass (MSG_WAITALL: the kernel finishes a short send itself). A connection
 *    has one send in the kernel at a time; what is written meanwhile waits for its completion.
 *    The server echoes without a copy where it can: a received buffer of a connection with
 *    nothing staged or sending is sent as it is and goes back to the ring when that completes.
 *  - one io_uring_submit_and_wait per pass hands the kernel every SQE of the pass and waits
 *    for the next completions; the ring is IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN (one
 *    thread; the kernel does the pass's work when it is asked for completions).
 * user_data: kind (3 bits) | arena (13 bits, sends) | generation (16 bits) | slot (32 bits); a
 * slot's generation moves on when it closes, so completions of a closed connection are
 * recognised (their buffers and arenas are still given back).
 */
#include "limit_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "epoll_common.h"

#ifndef LIMIT_HAVE_URING

lio_t *lio_uring_client(int ccu, int sndbuf, int rcvbuf, const char **why)
{
    (void)ccu, (void)sndbuf, (void)rcvbuf;
    *why = "limit_echo was built without liburing";
    return NULL;
}

int lio_uring_serve(int listen_fd, int stop_fd, int sndbuf, int rcvbuf, int sample_rate, volatile int *stop,
                    void (*record)(void *ctx, uint64_t ns), void *ctx, const char **why)
{
    (void)listen_fd, (void)stop_fd, (void)sndbuf, (void)rcvbuf, (void)sample_rate, (void)stop, (void)record,
        (void)ctx;
    *why = "limit_echo was built without liburing";
    return 3;
}

#else
#include <liburing.h>

/* The kernel fills provided buffers behind valgrind's back (no system call it sees writes them):
 * a completion's bytes are marked as written, or memcheck reports every use of them. */
#if defined(__has_include) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define KERNEL_WROTE(p, n) VALGRIND_MAKE_MEM_DEFINED(p, n)
#else
#define KERNEL_WROTE(p, n) ((void)(p), (void)(n))
#endif

#define UR_SQ 16384
#define UR_CQ 65536
#define UR_BUFS 2048         /* provided buffers by default (LIMIT_URING_BUFS: a power of two, 16..8192) */
#define UR_BUF_SIZE 32768    /* one s2 round of 30 1 KB packets fits one buffer */
#define UR_ARENA (1u << 20)  /* bytes of one send arena */
#define UR_MAX_ARENAS 8192   /* 13 bits of user_data */
#define UR_BGID 1
#define UR_CQE_BATCH 256

enum ur_kind { K_RECV = 1, K_SEND, K_SENDBUF, K_CONNECT, K_ACCEPT, K_STOP, K_IGNORE };
enum ur_state { S_FREE, S_CONNECTING, S_OPEN };

static uint64_t ud(int kind, unsigned arena, uint16_t gen, uint32_t slot)
{
    return (uint64_t)kind << 61 | (uint64_t)arena << 48 | (uint64_t)gen << 32 | slot;
}
static int ud_kind(uint64_t u) { return (int)(u >> 61); }
static unsigned ud_arena(uint64_t u) { return (unsigned)(u >> 48) & (UR_MAX_ARENAS - 1); }
static uint16_t ud_gen(uint64_t u) { return (uint16_t)(u >> 32); }
static uint32_t ud_slot(uint64_t u) { return (uint32_t)u; }

/* bytes waiting for or in a send: in an arena, or (the server's echo) still in the provided
 * buffer they were received into (buf: arena is then the buffer's id) */
typedef struct ur_region {
    uint32_t arena, off, len;
    uint32_t buf;
} ur_region_t;

typedef struct ur_arena {
    unsigned char *mem;
    size_t cap, used;
    int refs; /* staged regions and sends in the kernel */
} ur_arena_t;

typedef struct ur_conn {
    int fd;
    uint16_t gen;
    uint8_t state, recv_armed, queued, sending, held;
    ur_region_t staged; /* written, not handed to the kernel yet (len 0: none) */
    ur_region_t busy;   /* in the kernel */
} ur_conn_t;

typedef struct ur {
    lio_t io; /* first: the client layer's handle */
    struct io_uring ring;
    struct io_uring_buf_ring *br;
    unsigned char *bufs;
    unsigned nbufs;
    ur_conn_t *conns;
    size_t nconns;
    int *queue; /* slots with something to hand the kernel this pass */
    size_t nqueue;
    ur_arena_t *arenas;
    unsigned narenas, cur;
    int sndbuf, rcvbuf;
    const struct sockaddr *addr; /* client: connect()'s address (the caller's, kept for the run) */
    socklen_t addrlen;
    int failed; /* out of memory or arenas: printed, the run stops */
} ur_t;

/* ---- the ring ---------------------------------------------------------- */

static struct io_uring_sqe *sqe_get(ur_t *u)
{
    struct io_uring_sqe *s = io_uring_get_sqe(&u->ring);
    if (!s) {
        io_uring_submit(&u->ring); /* the SQ is full: hand over what is there */
        s = io_uring_get_sqe(&u->ring);
    }
    return s;
}

static void ur_free(ur_t *u)
{
    if (!u)
        return;
    if (u->br)
        munmap(u->br, u->nbufs * sizeof(struct io_uring_buf));
    if (u->ring.ring_fd > 0)
        io_uring_queue_exit(&u->ring);
    for (unsigned i = 0; u->arenas && i < u->narenas; i++)
        free(u->arenas[i].mem);
    free(u->arenas);
    free(u->bufs);
    free(u->conns);
    free(u->queue);
    free(u);
}

/* the ring, its provided buffers and nconns slots; NULL with *why set */
static ur_t *ur_new(size_t nconns, int sndbuf, int rcvbuf, const char **why)
{
    static char reason[160];
    ur_t *u = calloc(1, sizeof *u);
    if (!u) {
        *why = "out of memory";
        return NULL;
    }
    u->ring.ring_fd = -1;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = UR_CQ;
    int rc = io_uring_queue_init_params(UR_SQ, &u->ring, &p);
    if (rc < 0) {
        u->ring.ring_fd = -1;
        snprintf(reason, sizeof reason, "io_uring_setup: %s", strerror(-rc));
        *why = reason;
        ur_free(u);
        return NULL;
    }
    u->nbufs = UR_BUFS;
    const char *nb = getenv("LIMIT_URING_BUFS");
    if (nb && *nb) {
        long v = strtol(nb, NULL, 10);
        if (v < 16 || v > UR_MAX_ARENAS || (v & (v - 1))) {
            *why = "LIMIT_URING_BUFS must be a power of two from 16 to 8192";
            ur_free(u);
            return NULL;
        }
        u->nbufs = (unsigned)v;
    }
    u->br = mmap(NULL, u->nbufs * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1,
                 0);
    if (u->br == MAP_FAILED) {
        u->br = NULL;
        *why = "no memory for the provided buffer ring";
        ur_free(u);
        return NULL;
    }
    struct io_uring_buf_reg reg;
    memset(&reg, 0, sizeof reg);
    reg.ring_addr = (uint64_t)(uintptr_t)u->br;
    reg.ring_entries = u->nbufs;
    reg.bgid = UR_BGID;
    rc = io_uring_register_buf_ring(&u->ring, &reg, 0);
    u->bufs = malloc((size_t)u->nbufs * UR_BUF_SIZE);
    u->conns = calloc(nconns, sizeof *u->conns);
    u->queue = malloc(nconns * sizeof *u->queue);
    u->arenas = calloc(UR_MAX_ARENAS, sizeof *u->arenas);
    if (rc < 0 || !u->bufs || !u->conns || !u->queue || !u->arenas) {
        snprintf(reason, sizeof reason, "%s", rc < 0 ? "provided buffer rings refused" : "out of memory");
        *why = reason;
        ur_free(u);
        return NULL;
    }
    io_uring_buf_ring_init(u->br);
    for (unsigned i = 0; i < u->nbufs; i++)
        io_uring_buf_ring_add(u->br, u->bufs + (size_t)i * UR_BUF_SIZE, UR_BUF_SIZE, (unsigned short)i,
                              io_uring_buf_ring_mask(u->nbufs), (int)i);
    io_uring_buf_ring_advance(u->br, (int)u->nbufs);
    for (size_t i = 0; i < nconns; i++)
        u->conns[i].fd = -1;
    u->nconns = nconns;
    u->sndbuf = sndbuf;
    u->rcvbuf = rcvbuf;
    return u;
}

static void buf_recycle(ur_t *u, unsigned bid)
{
    io_uring_buf_ring_add(u->br, u->bufs + (size_t)bid * UR_BUF_SIZE, UR_BUF_SIZE, (unsigned short)bid,
                          io_uring_buf_ring_mask(u->nbufs), 0);
    io_uring_buf_ring_advance(u->br, 1);
}

/* ---- arenas: where written bytes wait for their send ------------------- */

static void arena_release(ur_t *u, unsigned a) { u->arenas[a].refs--; }

static void region_release(ur_t *u, const ur_region_t *r)
{
    if (r->buf)
        buf_recycle(u, r->arena);
    else
        arena_release(u, r->arena);
}

static unsigned char *region_bytes(ur_t *u, const ur_region_t *r)
{
    return (r->buf ? u->bufs + (size_t)r->arena * UR_BUF_SIZE : u->arenas[r->arena].mem) + r->off;
}

/* room for need bytes: *off in the returned arena, which gains a reference; -1 when none */
static int arena_alloc(ur_t *u, size_t need, uint32_t *off)
{
    ur_arena_t *c = u->narenas ? &u->arenas[u->cur] : NULL;
    if (c && c->refs == 0)
        c->used = 0; /* nothing of it is outstanding: start again at the front, still cached */
    if (!c || c->cap - c->used < need) {
        unsigned pick = UR_MAX_ARENAS;
        for (unsigned i = 0; i < u->narenas && pick == UR_MAX_ARENAS; i++)
            if (u->arenas[i].refs == 0 && u->arenas[i].cap >= need)
                pick = i;
        if (pick == UR_MAX_ARENAS) {
            if (u->narenas == UR_MAX_ARENAS)
                return -1;
            size_t cap = need > UR_ARENA ? need : UR_ARENA;
            unsigned char *mem = malloc(cap);
            if (!mem)
                return -1;
            pick = u->narenas++;
            u->arenas[pick] = (ur_arena_t){.mem = mem, .cap = cap};
        }
        u->cur = pick;
        c = &u->arenas[pick];
        c->used = 0;
    }
    *off = (uint32_t)c->used;
    c->used += need;
    c->refs++;
    return (int)u->cur;
}

static void enqueue(ur_t *u, uint32_t slot)
{
    ur_conn_t *k = &u->conns[slot];
    if (!k->queued) {
        k->queued = 1;
        u->queue[u->nqueue++] = (int)slot;
    }
}

/* stages len bytes on slot's connection; 0, or ENOMEM after printing why */
static int stage(ur_t *u, uint32_t slot, const void *buf, size_t len)
{
    ur_conn_t *k = &u->conns[slot];
    ur_region_t *s = &k->staged;
    ur_arena_t *c = u->narenas ? &u->arenas[u->cur] : NULL;
    if (s->len && !s->buf && s->arena == u->cur && s->off + s->len == c->used && c->cap - c->used >= len) {
        memcpy(c->mem + c->used, buf, len); /* the usual case: right behind its earlier bytes */
        c->used += len;
        s->len += (uint32_t)len;
        return 0;
    }
    uint32_t off;
    int a = arena_alloc(u, s->len + len, &off);
    if (a < 0) {
        fprintf(stderr, "limit_echo: out of memory for %zu bytes of output\n", s->len + len);
        u->failed = 1;
        return ENOMEM;
    }
    unsigned char *to = u->arenas[a].mem + off;
    if (s->len) {
        memcpy(to, region_bytes(u, s), s->len); /* moved behind: one region, one send */
        region_release(u, s);
    }
    memcpy(to + s->len, buf, len);
    *s = (ur_region_t){.arena = (uint32_t)a, .off = off, .len = s->len + (uint32_t)len};
    enqueue(u, slot);
    return 0;
}

static void send_busy(ur_t *u, uint32_t slot)
{
    ur_conn_t *k = &u->conns[slot];
    struct io_uring_sqe *s = sqe_get(u);
    io_uring_prep_send(s, k->fd, region_bytes(u, &k->busy), k->busy.len, MSG_NOSIGNAL | MSG_WAITALL);
    io_uring_sqe_set_data64(s, ud(k->busy.buf ? K_SENDBUF : K_SEND, k->busy.arena, k->gen, slot));
}

/* the echo of a received buffer: sent from the buffer itself when nothing of the connection is
 * staged or in the kernel (returns 1: the buffer comes back when its send completes), else
 * copied behind what is staged (returns 0: the caller gives the buffer back now) */
static int stage_buffer(ur_t *u, uint32_t slot, unsigned bid, size_t len, int *err)
{
    ur_conn_t *k = &u->conns[slot];
    *err = 0;
    if (k->staged.len == 0 && !k->sending) {
        k->staged = (ur_region_t){.arena = bid, .off = 0, .len = (uint32_t)len, .buf = 1};
        enqueue(u, slot);
        return 1;
    }
    *err = stage(u, slot, u->bufs + (size_t)bid * UR_BUF_SIZE, len);
    return 0;
}

static void arm_recv(ur_t *u, uint32_t slot)
{
    ur_conn_t *k = &u->conns[slot];
    struct io_uring_sqe *s = sqe_get(u);
    io_uring_prep_recv_multishot(s, k->fd, NULL, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = UR_BGID;
    io_uring_sqe_set_data64(s, ud(K_RECV, 0, k->gen, slot));
    k->recv_armed = 1;
}

/* the pass's SQEs: stopped recvs armed again, staged bytes of idle connections sent */
static void flush(ur_t *u)
{
    for (size_t i = 0; i < u->nqueue; i++) {
        uint32_t slot = (uint32_t)u->queue[i];
        ur_conn_t *k = &u->conns[slot];
        k->queued = 0;
        if (k->state != S_OPEN)
            continue;
        if (!k->recv_armed)
            arm_recv(u, slot);
        if (!k->sending && k->staged.len) {
            k->busy = k->staged;
            k->staged.len = 0;
            k->sending = 1;
            send_busy(u, slot);
        }
    }
    u->nqueue = 0;
}

static void conn_open(ur_t *u, uint32_t slot, int fd)
{
    ur_conn_t *k = &u->conns[slot];
    k->fd = fd;
    k->state = S_OPEN;
    k->recv_armed = k->sending = k->held = 0;
    k->staged.len = 0;
    enqueue(u, slot); /* its recv is armed with the pass's other SQEs */
}

/* the connection ends here; its completions still in the kernel are recognised as stale */
static void conn_close(ur_t *u, uint32_t slot)
{
    ur_conn_t *k = &u->conns[slot];
    if (k->state == S_FREE)
        return;
    if (k->state == S_CONNECTING) {
        struct io_uring_sqe *s = sqe_get(u);
        io_uring_prep_cancel64(s, ud(K_CONNECT, 0, k->gen, slot), 0);
        io_uring_sqe_set_data64(s, ud(K_IGNORE, 0, 0, 0));
    }
    /* the kernel's recv and send hold the socket: shutdown ends them and tells the peer now */
    shutdown(k->fd, SHUT_RDWR);
    close(k->fd);
    if (k->staged.len)
        region_release(u, &k->staged);
    k->staged.len = 0;
    k->fd = -1;
    k->state = S_FREE;
    k->gen++;
}

/* one completion. Returns the slot and kind it concerns for the caller's own handling */
typedef struct ur_event {
    int kind;
    uint32_t slot;
    int live;                 /* of the slot's current connection */
    int res;                  /* the completion's result */
    const unsigned char *buf; /* K_RECV with data: res bytes, given back after the handler */
    int bid;
    int ended; /* K_RECV: the connection ended (0 bytes or an error) */
    int drained;
} ur_event_t;

/* the layer's part of a completion: arenas, buffers and re-arming; fills ev for the caller */
static void complete(ur_t *u, const struct io_uring_cqe *cqe, ur_event_t *ev)
{
    uint64_t d = io_uring_cqe_get_data64(cqe);
    memset(ev, 0, sizeof *ev);
    ev->kind = ud_kind(d);
    ev->slot = ud_slot(d);
    ev->res = cqe->res;
    ev->bid = -1;
    if (ev->kind == K_IGNORE || ev->kind == K_ACCEPT || ev->kind == K_STOP)
        return;
    ur_conn_t *k = &u->conns[ev->slot];
    ev->live = k->gen == ud_gen(d) && k->state != S_FREE;
    if (ev->kind == K_SEND || ev->kind == K_SENDBUF) {
        if (ev->live && ev->res > 0 && (uint32_t)ev->res < k->busy.len) {
            k->busy.off += (uint32_t)ev->res; /* a short send: the rest goes on, same arena */
            k->busy.len -= (uint32_t)ev->res;
            k->held = 1;
            send_busy(u, ev->slot);
            return;
        }
        ur_region_t sent = {.arena = ud_arena(d), .buf = ev->kind == K_SENDBUF};
        region_release(u, &sent);
        if (!ev->live)
            return;
        k->sending = 0;
        if (ev->res < 0) {
            ev->ended = 1;
            return;
        }
        ev->drained = k->held;
        k->held = 0;
        if (k->staged.len)
            enqueue(u, ev->slot);
        return;
    }
    if (ev->kind == K_RECV) {
        if (cqe->flags & IORING_CQE_F_BUFFER)
            ev->bid = (int)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
        if (!ev->live)
            return;
        if (!(cqe->flags & IORING_CQE_F_MORE))
            k->recv_armed = 0;
        if (ev->res > 0 && ev->bid >= 0) {
            ev->buf = u->bufs + (size_t)ev->bid * UR_BUF_SIZE;
            KERNEL_WROTE(ev->buf, (size_t)ev->res);
        } else if (ev->res != -ENOBUFS) {
            ev->ended = 1; /* end of stream or an error; ENOBUFS is neither: the ring ran dry */
        }
        if (!k->recv_armed && !ev->ended)
            enqueue(u, ev->slot); /* armed again on the next pass, when buffers are back */
    }
}

/* waits up to ns (0: not at all) for completions after handing over the pass's SQEs */
static int submit_wait(ur_t *u, uint64_t ns)
{
    flush(u);
    struct __kernel_timespec ts = {.tv_sec = (long long)(ns / 1000000000ull), .tv_nsec = (long long)(ns % 1000000000ull)};
    struct io_uring_cqe *cqe;
    int rc = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        fprintf(stderr, "limit_echo: io_uring_submit_and_wait: %s\n", strerror(-rc));
        return -1;
    }
    return 0;
}

/* ---- the client layer -------------------------------------------------- */

static ur_t *as_ur(lio_t *io) { return (ur_t *)io; }

static int cl_connect(lio_t *io, int idx, const struct sockaddr *addr, socklen_t len)
{
    ur_t *u = as_ur(io);
    ur_conn_t *k = &u->conns[idx];
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return errno;
    ec_tune(fd, u->sndbuf, u->rcvbuf);
    k->fd = fd;
    k->state = S_CONNECTING;
    struct io_uring_sqe *s = sqe_get(u);
    io_uring_prep_connect(s, fd, addr, len);
    io_uring_sqe_set_data64(s, ud(K_CONNECT, 0, k->gen, (uint32_t)idx));
    return 0;
}

static int cl_write(lio_t *io, int idx, const void *buf, size_t len)
{
    return stage(as_ur(io), (uint32_t)idx, buf, len);
}

static int cl_held(lio_t *io, int idx) { return as_ur(io)->conns[idx].held; }

static void cl_close(lio_t *io, int idx) { conn_close(as_ur(io), (uint32_t)idx); }

static int cl_wait(lio_t *io, struct client *c, uint64_t ns)
{
    ur_t *u = as_ur(io);
    if (submit_wait(u, ns) < 0)
        return -1;
    struct io_uring_cqe *cqes[UR_CQE_BATCH];
    unsigned n;
    while ((n = io_uring_peek_batch_cqe(&u->ring, cqes, UR_CQE_BATCH)) > 0) {
        uint64_t now = ec_now_ns();
        for (unsigned i = 0; i < n; i++) {
            ur_event_t ev;
            complete(u, cqes[i], &ev);
            int idx = (int)ev.slot;
            if (ev.kind == K_CONNECT && ev.live) {
                if (ev.res == 0)
                    conn_open(u, ev.slot, u->conns[idx].fd);
                lc_connected(c, idx, ev.res < 0 ? -ev.res : 0, now);
            } else if (ev.live && ev.buf) {
                lc_data(c, idx, ev.buf, (size_t)ev.res);
            } else if (ev.live && ev.ended) {
                lc_closed(c, idx, ev.res < 0 ? -ev.res : 0);
            } else if (ev.live && ev.drained) {
                lc_drained(c, idx);
            }
            if (ev.bid >= 0)
                buf_recycle(u, (unsigned)ev.bid);
        }
        io_uring_cq_advance(&u->ring, n);
    }
    return u->failed ? -1 : 0;
}

static void cl_destroy(lio_t *io)
{
    ur_t *u = as_ur(io);
    for (size_t i = 0; i < u->nconns; i++)
        conn_close(u, (uint32_t)i);
    ur_free(u);
}

lio_t *lio_uring_client(int ccu, int sndbuf, int rcvbuf, const char **why)
{
    ur_t *u = ur_new((size_t)ccu, sndbuf, rcvbuf, why);
    if (!u)
        return NULL;
    u->io = (lio_t){.name = "uring", .connect = cl_connect, .write = cl_write, .held = cl_held, .close = cl_close,
                    .wait = cl_wait, .destroy = cl_destroy};
    return &u->io;
}

/* ---- the echo server --------------------------------------------------- */

static void arm_accept(ur_t *u, int l)
{
    struct io_uring_sqe *s = sqe_get(u);
    io_uring_prep_multishot_accept(s, l, NULL, NULL, SOCK_NONBLOCK);
    io_uring_sqe_set_data64(s, ud(K_ACCEPT, 0, 0, 0));
}

static void arm_stop(ur_t *u, int stop_fd, char *buf, size_t len)
{
    struct io_uring_sqe *s = sqe_get(u);
    io_uring_prep_read(s, stop_fd, buf, (unsigned)len, 0);
    io_uring_sqe_set_data64(s, ud(K_STOP, 0, 0, 0));
}

int lio_uring_serve(int listen_fd, int stop_fd, int sndbuf, int rcvbuf, int sample_rate, volatile int *stop,
                    void (*record)(void *ctx, uint64_t ns), void *ctx, const char **why)
{
    size_t cap = (size_t)ec_raise_nofile(); /* slots are descriptors */
    if (cap < 1024)
        cap = 1024;
    ur_t *u = ur_new(cap, sndbuf, rcvbuf, why);
    if (!u)
        return 3;
    uint64_t *reads = calloc(cap, sizeof *reads);
    if (!reads) {
        fprintf(stderr, "out of memory for %zu connections\n", cap);
        ur_free(u);
        return 2;
    }
    static char stop_buf[256];
    arm_accept(u, listen_fd);
    if (stop_fd >= 0)
        arm_stop(u, stop_fd, stop_buf, sizeof stop_buf);
    int status = 0;
    while (!*stop && status == 0) {
        if (submit_wait(u, 200000000ull) < 0) {
            status = 2;
            break;
        }
        struct io_uring_cqe *cqes[UR_CQE_BATCH];
        unsigned n;
        while (status == 0 && (n = io_uring_peek_batch_cqe(&u->ring, cqes, UR_CQE_BATCH)) > 0) {
            for (unsigned i = 0; i < n; i++) {
                ur_event_t ev;
                complete(u, cqes[i], &ev);
                if (ev.kind == K_STOP) {
                    if (ev.res <= 0)
                        status = -1;
                    else
                        arm_stop(u, stop_fd, stop_buf, sizeof stop_buf);
                } else if (ev.kind == K_ACCEPT) {
                    if (ev.res >= 0 && (size_t)ev.res < cap) {
                        ec_tune(ev.res, sndbuf, rcvbuf);
                        reads[ev.res] = 0;
                        conn_open(u, (uint32_t)ev.res, ev.res);
                    } else if (ev.res >= 0) {
                        close(ev.res);
                    }
                    if (!(cqes[i]->flags & IORING_CQE_F_MORE))
                        arm_accept(u, listen_fd);
                } else if (ev.live && ev.buf) {
                    int timed = sample_rate > 0 && reads[ev.slot] % (uint64_t)sample_rate == 0;
                    uint64_t read_at = timed ? ec_now_ns() : 0;
                    reads[ev.slot]++;
                    int err;
                    if (stage_buffer(u, ev.slot, (unsigned)ev.bid, (size_t)ev.res, &err))
                        ev.bid = -1; /* it is the echo now: back to the ring when sent */
                    if (err)
                        status = 2;
                    if (timed)
                        record(ctx, ec_now_ns() - read_at);
                } else if (ev.live && ev.ended) {
                    conn_close(u, ev.slot);
                }
                if (ev.bid >= 0)
                    buf_recycle(u, (unsigned)ev.bid);
            }
            io_uring_cq_advance(&u->ring, n);
        }
    }
    for (size_t i = 0; i < cap; i++)
        conn_close(u, (uint32_t)i);
    ur_free(u);
    free(reads);
    return status > 0 ? status : 0;
}

#endif
