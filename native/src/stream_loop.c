/*
 * stream_loop.c - the STREAM engine's event loop core: the descriptor set
 * through one of two backends (epoll in stream_epoll.c, io_uring in
 * stream_uring.c), the wake-up eventfd, the timer heap and its timerfd
 * (reconnects, connect timeouts, close lingering, accept retries), and the
 * pump, which runs due
 * timers, waits on the set once and routes each event by its tag to the
 * state machine's handlers (stream_conn.c). Readable connections are only
 * put on the ready list here; their data is read later, straight into the
 * buffer of the zlink_recv that picks them.
 */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

uint64_t zl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t zl_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- the descriptor set (either backend) and wake-up ----------------------- */

int zl_loop_ctl(zl_loop_t *l, int op, int fd, uint32_t events, uint64_t tag)
{
    if (l->uring)
        return zl_uring_ctl(l, op, fd, events, tag);
    return zl_epoll_ctl(l, op, fd, events, tag);
}

void zl_loop_del(zl_loop_t *l, int fd)
{
    if (l->uring && zl_uring_del(l, fd))
        return;
    zl_epoll_del(l, fd);
}

int zl_loop_init(zl_loop_t *l, int shutdown_fd, int backend)
{
    l->epfd = zl_epoll_open();
    l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    l->uring = NULL;
    if (l->epfd < 0 || l->evfd < 0 || l->tfd < 0 ||
        zl_epoll_ctl(l, EPOLL_CTL_ADD, l->evfd, EPOLLIN, ZL_TAG(ZT_EVFD, 0, 0)) != 0 ||
        zl_epoll_ctl(l, EPOLL_CTL_ADD, l->tfd, EPOLLIN, ZL_TAG(ZT_TIMERFD, 0, 0)) != 0 ||
        zl_epoll_ctl(l, EPOLL_CTL_ADD, shutdown_fd, EPOLLIN, ZL_TAG(ZT_SHUTDOWN, 0, 0)) != 0 ||
        (backend == ZL_BACKEND_URING && zl_uring_open(l) != 0)) {
        int e = errno;
        if (l->epfd >= 0)
            close(l->epfd);
        if (l->evfd >= 0)
            close(l->evfd);
        if (l->tfd >= 0)
            close(l->tfd);
        errno = e;
        return -1;
    }
    return 0;
}

void zl_loop_close(zl_loop_t *l)
{
    zl_uring_close(l);
    close(l->epfd);
    close(l->evfd);
    close(l->tfd);
    free(l->heap);
    l->heap = NULL;
}

void zl_loop_wake(zl_loop_t *l)
{
    if (!l->evfd_signalled) {
        uint64_t one = 1;
        if (write(l->evfd, &one, sizeof one) == sizeof one)
            l->evfd_signalled = 1;
    }
}

static void wake_clear(zl_loop_t *l)
{
    uint64_t v;
    if (read(l->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
        return;
    l->evfd_signalled = 0;
}

/* ---- timers ------------------------------------------------------------ */

static void tfd_arm(zl_loop_t *l, uint64_t due)
{
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (due) {
        its.it_value.tv_sec = (time_t)(due / 1000u);
        its.it_value.tv_nsec = (long)(due % 1000u) * 1000000L;
    }
    timerfd_settime(l->tfd, due ? TFD_TIMER_ABSTIME : 0, &its, NULL);
    l->tfd_armed = due;
}

static void heap_swap(zl_timer_t *h, uint32_t a, uint32_t b)
{
    zl_timer_t t = h[a];
    h[a] = h[b];
    h[b] = t;
}

uint32_t zl_loop_timer_add(zl_loop_t *l, uint64_t due, uint32_t kind,
                           uint32_t idx)
{
    if (l->heap_n == l->heap_cap) {
        uint32_t ncap = l->heap_cap ? l->heap_cap * 2 : 64;
        zl_timer_t *n = realloc(l->heap, (size_t)ncap * sizeof *n);
        if (!n)
            return 0;
        l->heap = n;
        l->heap_cap = ncap;
    }
    uint32_t id = ++l->timer_seq;
    if (!id)
        id = ++l->timer_seq;
    uint32_t i = l->heap_n++;
    l->heap[i].due = due;
    l->heap[i].id = id;
    l->heap[i].kind = kind;
    l->heap[i].idx = idx;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (l->heap[p].due <= l->heap[i].due)
            break;
        heap_swap(l->heap, p, i);
        i = p;
    }
    if (!l->tfd_armed || due < l->tfd_armed)
        tfd_arm(l, due ? due : 1);
    return id;
}

static zl_timer_t heap_pop(zl_loop_t *l)
{
    zl_timer_t top = l->heap[0];
    l->heap[0] = l->heap[--l->heap_n];
    uint32_t i = 0;
    for (;;) {
        uint32_t a = 2 * i + 1, b = a + 1, m = i;
        if (a < l->heap_n && l->heap[a].due < l->heap[m].due)
            m = a;
        if (b < l->heap_n && l->heap[b].due < l->heap[m].due)
            m = b;
        if (m == i)
            break;
        heap_swap(l->heap, i, m);
        i = m;
    }
    return top;
}

/* Cancelled timers are not removed from the heap: their owner's timer_id
 * no longer matches and they are dropped when they come up. */
void zl_timers_run(zl_stream_t *s)
{
    zl_loop_t *l = &s->loop;
    if (l->heap_n) {
        uint64_t now = zl_now_ms();
        while (l->heap_n && l->heap[0].due <= now) {
            zl_timer_t t = heap_pop(l);
            if (t.kind == ZTM_CONN) {
                zl_conn_t *c = zl_conn_of_timer(s, t.idx, t.id);
                if (c)
                    zl_conn_on_timer(s, c);
            } else if (t.kind == ZTM_LISTENER) {
                if (zl_listener_of_timer(s, t.idx, t.id))
                    zl_listener_on_timer(s, t.idx);
            }
        }
    }
    if (l->heap_n) {
        if (l->tfd_armed != l->heap[0].due)
            tfd_arm(l, l->heap[0].due ? l->heap[0].due : 1);
    } else if (l->tfd_armed) {
        tfd_arm(l, 0);
    }
}

/* ---- pump -------------------------------------------------------------- */

/* Routes one event (an epoll event, or a completed io_uring poll in the same
 * form) by its tag to the state machine. */
static void dispatch(zl_stream_t *s, const struct epoll_event *ev)
{
    zl_loop_t *l = &s->loop;
    uint64_t d = ev->data.u64;
    uint32_t idx = (uint32_t)d;
    uint32_t serial = (uint32_t)((d >> 32) & 0xffffffu);
    switch ((unsigned)(d >> 56)) {
    case ZT_CONN: {
        zl_conn_t *c = zl_conn_of_event(s, idx, serial);
        if (c)
            zl_conn_on_event(s, c, ev->events);
        break;
    }
    case ZT_LISTENER:
        if (zl_listener_of_event(s, idx, serial))
            zl_listener_on_event(s, idx);
        break;
    case ZT_EVFD:
        /* stays readable while notifications wait to be received */
        if (!s->evq_count)
            wake_clear(l);
        break;
    case ZT_TIMERFD: {
        uint64_t v;
        if (read(l->tfd, &v, sizeof v) == sizeof v)
            l->tfd_armed = 0; /* one-shot: it is disarmed now */
        zl_timers_run(s);
        break;
    }
    default: /* ZT_SHUTDOWN: callers look at the context flag; ZT_RING:
                its completions are read below */
        break;
    }
}

/*
 * io_uring: the completions already posted are read without a system call,
 * so a pump that finds nothing costs nothing; only a pump that may wait and
 * finds nothing sleeps, in epoll_wait on the set holding the ring. The
 * timerfd and the eventfd are only for callers sleeping on ZLINK_FD here:
 * the pump runs due timers itself and clears both once they are served.
 */
static int pump_uring(zl_stream_t *s, int timeout_ms)
{
    zl_loop_t *l = &s->loop;
    if (l->tfd_armed && l->tfd_armed <= zl_now_ms()) {
        uint64_t v;
        if (read(l->tfd, &v, sizeof v) == sizeof v || errno == EAGAIN)
            l->tfd_armed = 0;
    }
    if (l->heap_n || l->tfd_armed)
        zl_timers_run(s);
    int n = zl_uring_reap(l, l->evs, ZL_EV_BATCH);
    if (n == 0 && timeout_ms != 0) {
        int m = zl_epoll_wait(l, timeout_ms);
        for (int i = 0; i < m; i++)
            if ((unsigned)(l->evs[i].data.u64 >> 56) != ZT_RING)
                dispatch(s, &l->evs[i]);
        n = zl_uring_reap(l, l->evs, ZL_EV_BATCH);
    }
    for (int i = 0; i < n; i++)
        dispatch(s, &l->evs[i]);
    if (l->evfd_signalled && !s->evq_count)
        wake_clear(l);
    return 0;
}

/*
 * One wait (epoll_wait, or a look at the ring's completions) and the
 * processing of its batch. Returns 0; an interrupted wait counts as an
 * empty batch.
 */
int zl_pump(zl_stream_t *s, int timeout_ms)
{
    zl_loop_t *l = &s->loop;
    if (l->uring)
        return pump_uring(s, timeout_ms);
    if (l->heap_n)
        zl_timers_run(s);
    int n = zl_epoll_wait(l, timeout_ms);
    for (int i = 0; i < n; i++)
        dispatch(s, &l->evs[i]);
    return 0;
}
