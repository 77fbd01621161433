/*
 * stream_uring.c - the io_uring backend of a STREAM socket's loop
 * (stream_loop.h) and the choice of backend.
 *
 * Readiness comes from one-shot IORING_OP_POLL_ADD requests, one per
 * registered descriptor, instead of an epoll set. The pump reads completed
 * polls straight from the completion ring (shared memory, no system call)
 * and hands each on as the epoll event it stands for. A completed poll is
 * armed again on the next pump, together with every other one, in a single
 * io_uring_enter; arming checks the descriptor's state at once, so what is
 * still readable (data the caller has not read yet) completes again, which
 * gives the level-triggered behaviour the state machine was written for.
 *
 * Each descriptor has an entry (indexed by descriptor number) with its tag,
 * its mask and a generation: a poll's user_data is generation << 32 | fd,
 * so the completion of a poll that was replaced (a changed mask) or removed
 * (a closed connection whose descriptor number came back) is recognised and
 * dropped. Adding, changing and removing submit at once: a removed poll
 * holds a reference to the socket, which must go before close() so that the
 * peer sees the connection end.
 *
 * Completions of a poll run as task work of the thread that armed it; a
 * thread that exits takes its polls with it (they complete with ECANCELED)
 * and the next pump arms them again from the thread calling then.
 */
#include "stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_errno; /* 0: io_uring works here */
static pthread_once_t warn_once = PTHREAD_ONCE_INIT;

#ifdef ZLINK_HAVE_URING
#include <liburing.h>

#define URING_SQ 256
#define URING_CQ 8192

typedef struct zl_upoll {
    uint64_t tag;
    uint32_t mask;
    uint32_t gen;
    uint8_t registered; /* the caller wants events for it */
    uint8_t armed;      /* a poll of this generation is in the kernel */
    uint8_t queued;     /* on the arm list */
} zl_upoll_t;

struct zl_uring {
    struct io_uring ring;
    zl_upoll_t *fds;
    uint32_t nfds;
    int *arm; /* descriptors to arm on the next pump */
    uint32_t narm, arm_cap;
};

static void probe(void)
{
    struct io_uring r;
    int rc = io_uring_queue_init(4, &r, 0);
    if (rc < 0) {
        probe_errno = -rc;
        return;
    }
    io_uring_queue_exit(&r);
}

static struct io_uring_sqe *sqe_get(struct zl_uring *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) {
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    return sqe;
}

static int ensure_fd(struct zl_uring *u, int fd)
{
    if ((uint32_t)fd < u->nfds)
        return 0;
    uint32_t n = u->nfds ? u->nfds : 1024;
    while (n <= (uint32_t)fd)
        n *= 2;
    zl_upoll_t *p = realloc(u->fds, (size_t)n * sizeof *p);
    if (!p)
        return -1;
    memset(p + u->nfds, 0, (size_t)(n - u->nfds) * sizeof *p);
    u->fds = p;
    u->nfds = n;
    return 0;
}

static int queue_arm(struct zl_uring *u, int fd)
{
    zl_upoll_t *e = &u->fds[fd];
    if (e->queued)
        return 0;
    if (u->narm == u->arm_cap) {
        uint32_t n = u->arm_cap ? u->arm_cap * 2 : 256;
        int *a = realloc(u->arm, (size_t)n * sizeof *a);
        if (!a)
            return -1;
        u->arm = a;
        u->arm_cap = n;
    }
    u->arm[u->narm++] = fd;
    e->queued = 1;
    return 0;
}

/* prepares the poll of fd's current generation (submitted by the caller);
 * -1 when no submission entry could be had */
static int arm_one(struct zl_uring *u, int fd)
{
    zl_upoll_t *e = &u->fds[fd];
    if (!e->registered || e->armed)
        return 0;
    struct io_uring_sqe *sqe = sqe_get(u);
    if (!sqe)
        return -1;
    io_uring_prep_poll_add(sqe, fd, e->mask);
    io_uring_sqe_set_data64(sqe, ((uint64_t)e->gen << 32) | (uint32_t)fd);
    e->armed = 1;
    return 0;
}

/* prepares the polls of the arm list (submitted by the caller) */
static void arm_queued(struct zl_uring *u)
{
    uint32_t n = u->narm;
    u->narm = 0;
    for (uint32_t i = 0; i < n; i++) {
        int fd = u->arm[i];
        u->fds[fd].queued = 0;
        if (arm_one(u, fd) != 0)
            queue_arm(u, fd); /* cannot happen after a submit; next pump */
    }
}

/* cancels the poll of fd's current generation (its completion is dropped) */
static void cancel(struct zl_uring *u, int fd)
{
    zl_upoll_t *e = &u->fds[fd];
    if (e->armed) {
        struct io_uring_sqe *sqe = sqe_get(u);
        if (sqe) {
            io_uring_prep_poll_remove(sqe, ((uint64_t)e->gen << 32) | (uint32_t)fd);
            io_uring_sqe_set_data64(sqe, UINT64_MAX); /* nobody's */
        }
        e->armed = 0;
    }
    e->gen++;
}

int zl_uring_open(zl_loop_t *l)
{
    struct zl_uring *u = calloc(1, sizeof *u);
    if (!u)
        return -1;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = URING_CQ;
    int rc = io_uring_queue_init_params(URING_SQ, &u->ring, &p);
    if (rc < 0) {
        free(u);
        errno = -rc;
        return -1;
    }
    if (zl_epoll_ctl(l, EPOLL_CTL_ADD, u->ring.ring_fd, EPOLLIN,
                     ZL_TAG(ZT_RING, 0, 0)) != 0) {
        int e = errno;
        io_uring_queue_exit(&u->ring);
        free(u);
        errno = e;
        return -1;
    }
    l->uring = u;
    return 0;
}

void zl_uring_close(zl_loop_t *l)
{
    struct zl_uring *u = l->uring;
    if (!u)
        return;
    io_uring_queue_exit(&u->ring); /* cancels every poll */
    free(u->fds);
    free(u->arm);
    free(u);
    l->uring = NULL;
}

int zl_uring_ctl(zl_loop_t *l, int op, int fd, uint32_t events, uint64_t tag)
{
    struct zl_uring *u = l->uring;
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if (ensure_fd(u, fd) != 0)
        return -1;
    zl_upoll_t *e = &u->fds[fd];
    if (op == EPOLL_CTL_ADD && e->registered) {
        errno = EEXIST;
        return -1;
    }
    if (op == EPOLL_CTL_MOD && !e->registered) {
        errno = ENOENT;
        return -1;
    }
    if (e->registered && e->mask == events && e->tag == tag)
        return 0;
    cancel(u, fd); /* a poll with the old mask or tag must not complete */
    e->registered = 1;
    e->mask = events;
    e->tag = tag;
    if (arm_one(u, fd) != 0) {
        e->registered = 0;
        errno = ENOMEM;
        return -1;
    }
    io_uring_submit(&u->ring);
    return 0;
}

int zl_uring_del(zl_loop_t *l, int fd)
{
    struct zl_uring *u = l->uring;
    if (fd < 0 || (uint32_t)fd >= u->nfds || !u->fds[fd].registered)
        return 0;
    u->fds[fd].registered = 0;
    int armed = u->fds[fd].armed;
    cancel(u, fd);
    if (armed)
        io_uring_submit(&u->ring); /* the poll's hold on the socket goes now */
    return 1;
}

int zl_uring_reap(zl_loop_t *l, struct epoll_event *evs, int max)
{
    struct zl_uring *u = l->uring;
    arm_queued(u);
    if (io_uring_sq_ready(&u->ring))
        io_uring_submit(&u->ring);
    struct io_uring_cqe *cqes[ZL_EV_BATCH];
    if (max > ZL_EV_BATCH)
        max = ZL_EV_BATCH;
    unsigned got = io_uring_peek_batch_cqe(&u->ring, cqes, (unsigned)max);
    int n = 0;
    for (unsigned i = 0; i < got; i++) {
        uint64_t d = cqes[i]->user_data;
        int res = cqes[i]->res;
        int fd = (int)(uint32_t)d;
        uint32_t gen = (uint32_t)(d >> 32);
        if (d == UINT64_MAX || (uint32_t)fd >= u->nfds)
            continue;
        zl_upoll_t *e = &u->fds[fd];
        if (!e->registered || e->gen != gen || !e->armed)
            continue; /* a replaced or removed poll */
        e->armed = 0;
        if (res == -ECANCELED || res == -EINTR) {
            queue_arm(u, fd); /* its thread exited: arm it again */
            continue;
        }
        evs[n].events = res < 0 ? (uint32_t)EPOLLERR : (uint32_t)res;
        evs[n].data.u64 = e->tag;
        n++;
        queue_arm(u, fd); /* on the next pump: level-triggered */
    }
    io_uring_cq_advance(&u->ring, got);
    return n;
}

#else /* !ZLINK_HAVE_URING: built without liburing, epoll only */

static void probe(void) { probe_errno = ENOSYS; }

int zl_uring_open(zl_loop_t *l)
{
    (void)l;
    errno = ENOSYS;
    return -1;
}

void zl_uring_close(zl_loop_t *l) { (void)l; }

int zl_uring_ctl(zl_loop_t *l, int op, int fd, uint32_t events, uint64_t tag)
{
    (void)l, (void)op, (void)fd, (void)events, (void)tag;
    errno = ENOSYS;
    return -1;
}

int zl_uring_del(zl_loop_t *l, int fd)
{
    (void)l, (void)fd;
    return 0;
}

int zl_uring_reap(zl_loop_t *l, struct epoll_event *evs, int max)
{
    (void)l, (void)evs, (void)max;
    return 0;
}

#endif

int zl_uring_available(void)
{
    pthread_once(&probe_once, probe);
    return probe_errno == 0;
}

static void warn_fallback(void)
{
    fprintf(stderr, "zlink: io_uring is not available here (%s%s); STREAM sockets use epoll\n",
            probe_errno == ENOSYS ? "" : "io_uring_setup: ", strerror(probe_errno));
}

int zl_io_backend(int ctx_choice)
{
    int want = ctx_choice;
    if (!want) {
        const char *env = getenv("ZLINK_IO_BACKEND");
        if (env && strcmp(env, "io_uring") == 0)
            want = ZL_BACKEND_URING;
        else if (env && strcmp(env, "epoll") == 0)
            want = ZL_BACKEND_EPOLL;
    }
    if (!want)
        want = ZL_BACKEND_EPOLL; /* the default: see docs/native.md */
    if (want == ZL_BACKEND_URING && !zl_uring_available()) {
        pthread_once(&warn_once, warn_fallback);
        want = ZL_BACKEND_EPOLL;
    }
    return want;
}
