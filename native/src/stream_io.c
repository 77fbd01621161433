/*
 * stream_io.c - the STREAM engine's event loop pieces: the epoll pump that
 * turns readiness into work (ready list, accepts, connect completions,
 * flushes), the queue of 0x01/0x00 notifications, and the timer heap that
 * drives reconnects, connect timeouts, close lingering and accept retries
 * (backed by a timerfd so a caller sleeping on ZLINK_FD wakes for them).
 */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

int zl_epoll_set(zl_stream_t *s, int op, int fd, uint32_t events,
                 uint64_t tag)
{
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = tag;
    return epoll_ctl(s->epfd, op, fd, &ev);
}

/* Grows a power-of-two ring, unwrapping it so head becomes 0. */
static int ring_grow(void **ring, uint32_t *head, uint32_t count,
                     uint32_t *cap, size_t elem)
{
    uint32_t ncap = *cap ? *cap * 2 : 64;
    char *n = malloc((size_t)ncap * elem);
    if (!n)
        return -1;
    char *o = *ring;
    for (uint32_t i = 0; i < count; i++)
        memcpy(n + (size_t)i * elem,
               o + (size_t)((*head + i) & (*cap - 1)) * elem, elem);
    free(o);
    *ring = n;
    *head = 0;
    *cap = ncap;
    return 0;
}

void zl_evq_push(zl_stream_t *s, uint32_t id, uint8_t byte)
{
    if (s->evq_count == s->evq_cap &&
        ring_grow((void **)&s->evq, &s->evq_head, s->evq_count, &s->evq_cap,
                  sizeof *s->evq) != 0)
        abort(); /* losing a connection event would break the contract */
    zl_event_t *e = &s->evq[(s->evq_head + s->evq_count) & (s->evq_cap - 1)];
    e->id = id;
    e->byte = byte;
    s->evq_count++;
    if (!s->evfd_signalled) {
        /* keeps the epoll fd (ZLINK_FD) readable while events wait */
        uint64_t one = 1;
        if (write(s->evfd, &one, sizeof one) == sizeof one)
            s->evfd_signalled = 1;
    }
}

void zl_ready_push(zl_stream_t *s, zl_conn_t *c)
{
    if (s->rdy_count == s->rdy_cap &&
        ring_grow((void **)&s->rdy, &s->rdy_head, s->rdy_count, &s->rdy_cap,
                  sizeof *s->rdy) != 0)
        return; /* level-triggered: the next batch reports it again */
    zl_ready_t *r = &s->rdy[(s->rdy_head + s->rdy_count) & (s->rdy_cap - 1)];
    r->idx = c->idx;
    r->serial = c->serial;
    s->rdy_count++;
    c->in_ready = 1;
}

/* ---- timers ------------------------------------------------------------ */

static void tfd_arm(zl_stream_t *s, uint64_t due)
{
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (due) {
        its.it_value.tv_sec = (time_t)(due / 1000u);
        its.it_value.tv_nsec = (long)(due % 1000u) * 1000000L;
    }
    timerfd_settime(s->tfd, due ? TFD_TIMER_ABSTIME : 0, &its, NULL);
    s->tfd_armed = due;
}

static void heap_swap(zl_timer_t *h, uint32_t a, uint32_t b)
{
    zl_timer_t t = h[a];
    h[a] = h[b];
    h[b] = t;
}

uint32_t zl_timer_add(zl_stream_t *s, uint64_t due, uint32_t kind,
                      uint32_t idx)
{
    if (s->heap_n == s->heap_cap) {
        uint32_t ncap = s->heap_cap ? s->heap_cap * 2 : 64;
        zl_timer_t *n = realloc(s->heap, (size_t)ncap * sizeof *n);
        if (!n)
            return 0;
        s->heap = n;
        s->heap_cap = ncap;
    }
    uint32_t id = ++s->timer_seq;
    if (!id)
        id = ++s->timer_seq;
    uint32_t i = s->heap_n++;
    s->heap[i].due = due;
    s->heap[i].id = id;
    s->heap[i].kind = kind;
    s->heap[i].idx = idx;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (s->heap[p].due <= s->heap[i].due)
            break;
        heap_swap(s->heap, p, i);
        i = p;
    }
    if (!s->tfd_armed || due < s->tfd_armed)
        tfd_arm(s, due ? due : 1);
    return id;
}

static zl_timer_t heap_pop(zl_stream_t *s)
{
    zl_timer_t top = s->heap[0];
    s->heap[0] = s->heap[--s->heap_n];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->heap_n && s->heap[l].due < s->heap[m].due)
            m = l;
        if (r < s->heap_n && s->heap[r].due < s->heap[m].due)
            m = r;
        if (m == i)
            break;
        heap_swap(s->heap, i, m);
        i = m;
    }
    return top;
}

/* Cancelled timers are not removed from the heap: their owner's timer_id
 * no longer matches and they are dropped when they come up. */
void zl_timers_run(zl_stream_t *s)
{
    if (s->heap_n) {
        uint64_t now = zl_now_ms();
        while (s->heap_n && s->heap[0].due <= now) {
            zl_timer_t t = heap_pop(s);
            if (t.kind == ZTM_CONN) {
                if (t.idx < s->nslots) {
                    zl_conn_t *c = s->conns[t.idx];
                    if (c->state != ZC_FREE && c->timer_id == t.id) {
                        c->timer_id = 0;
                        zl_conn_on_timer(s, c);
                    }
                }
            } else if (t.kind == ZTM_LISTENER) {
                if (t.idx < s->nlst && s->lst[t.idx].fd >= 0 &&
                    s->lst[t.idx].timer_id == t.id) {
                    s->lst[t.idx].timer_id = 0;
                    zl_listener_resume(s, t.idx);
                }
            }
        }
    }
    if (s->heap_n) {
        if (s->tfd_armed != s->heap[0].due)
            tfd_arm(s, s->heap[0].due ? s->heap[0].due : 1);
    } else if (s->tfd_armed) {
        tfd_arm(s, 0);
    }
}

/* ---- pump -------------------------------------------------------------- */

static void on_conn_event(zl_stream_t *s, zl_conn_t *c, uint32_t ev)
{
    switch (c->state) {
    case ZC_ACTIVE:
        if ((ev & EPOLLOUT) && c->want_out) {
            if (zl_conn_flush(s, c) < 0)
                return;
        }
        if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->in_ready)
            zl_ready_push(s, c);
        break;
    case ZC_CONNECTING:
        zl_conn_connect_done(s, c);
        break;
    case ZC_CLOSING:
        if (ev & (EPOLLERR | EPOLLHUP))
            zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, 0);
        else if (ev & EPOLLOUT)
            zl_conn_flush(s, c);
        break;
    default:
        break;
    }
}

/*
 * One epoll_wait and the processing of its batch. Readable connections only
 * go on the ready list here; their data is read later, straight into the
 * buffer of the zlink_recv that picks them. Returns 0; an interrupted wait
 * counts as an empty batch.
 */
int zl_pump(zl_stream_t *s, int timeout_ms)
{
    if (s->heap_n)
        zl_timers_run(s);
    int n = epoll_wait(s->epfd, s->evs, ZL_EV_BATCH, timeout_ms);
    for (int i = 0; i < n; i++) {
        uint64_t d = s->evs[i].data.u64;
        uint32_t ev = s->evs[i].events;
        uint32_t idx = (uint32_t)d;
        switch ((unsigned)(d >> 56)) {
        case ZT_CONN: {
            if (idx >= s->nslots)
                break;
            zl_conn_t *c = s->conns[idx];
            if (c->state == ZC_FREE ||
                (c->serial & 0xffffffu) != (uint32_t)((d >> 32) & 0xffffffu))
                break;
            on_conn_event(s, c, ev);
            break;
        }
        case ZT_LISTENER:
            if (idx < s->nlst && s->lst[idx].fd >= 0 &&
                (s->lst[idx].serial & 0xffffffu) ==
                    (uint32_t)((d >> 32) & 0xffffffu))
                zl_listener_accept(s, idx);
            break;
        case ZT_EVFD:
            if (!s->evq_count) {
                uint64_t v;
                if (read(s->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
                    break;
                s->evfd_signalled = 0;
            }
            break;
        case ZT_TIMERFD: {
            uint64_t v;
            if (read(s->tfd, &v, sizeof v) == sizeof v)
                s->tfd_armed = 0; /* one-shot: it is disarmed now */
            zl_timers_run(s);
            break;
        }
        default: /* ZT_SHUTDOWN: callers look at the context flag */
            break;
        }
    }
    return 0;
}
