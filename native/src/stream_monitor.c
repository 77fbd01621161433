/*
 * stream_monitor.c - monitoring of STREAM sockets. They have no libzmq
 * machinery, so they keep their events in bounded queues, one per monitor
 * handle (read possibly from another thread, hence the mutex), and, for
 * zlink_socket_monitor, publish v1-format events on a libzmq PAIR socket
 * like libzmq does.
 */
#include "stream.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define ZL_MONQ_MAX 65536u

typedef struct zl_monq {
    atomic_int refs;   /* the socket and the monitor handle */
    atomic_int closed; /* monitor handle closed: socket drops it */
    pthread_mutex_t lock;
    zlink_monitor_event_t *ring;
    uint32_t head, count, cap;
    uint64_t dropped; /* oldest events discarded at the bound */
    int signalled;
    int stopped;
    int evfd;
    int events;
    zl_ctx_t *ctx;
} zl_monq_t;

/* a monitor handle of a STREAM socket: reads its queue */
typedef struct zl_stream_monitor {
    zl_monitor_t base;
    zl_monq_t *q;
} zl_stream_monitor_t;

static const zl_monitor_ops_t stream_monitor_ops;

static void monq_unref(zl_monq_t *q)
{
    if (atomic_fetch_sub(&q->refs, 1) != 1)
        return;
    close(q->evfd);
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    free(q);
}

static void monq_push(zl_monq_t *q, const zlink_monitor_event_t *ev)
{
    int signal = 0;
    pthread_mutex_lock(&q->lock);
    if (q->count == q->cap) {
        if (q->cap < ZL_MONQ_MAX) {
            uint32_t ncap = q->cap ? q->cap * 2 : 64;
            zlink_monitor_event_t *n = malloc((size_t)ncap * sizeof *n);
            if (n) {
                for (uint32_t i = 0; i < q->count; i++)
                    n[i] = q->ring[(q->head + i) % q->cap];
                free(q->ring);
                q->ring = n;
                q->head = 0;
                q->cap = ncap;
            }
        }
        if (q->count == q->cap) {
            if (!q->cap) {
                q->dropped++;
                pthread_mutex_unlock(&q->lock);
                return;
            }
            q->head = (q->head + 1) % q->cap;
            q->count--;
            q->dropped++;
        }
    }
    q->ring[(q->head + q->count) % q->cap] = *ev;
    q->count++;
    if (!q->signalled) {
        q->signalled = 1;
        signal = 1;
    }
    pthread_mutex_unlock(&q->lock);
    if (signal) {
        uint64_t one = 1;
        ssize_t rc = write(q->evfd, &one, sizeof one);
        (void)rc;
    }
}

static void recompute_mask(zl_stream_t *s)
{
    int m = s->mon_pair ? s->mon_pair_events : 0;
    for (int i = 0; i < s->nmonq; i++)
        m |= s->monqs[i]->events;
    s->mon_mask = m;
}

/* Drops queues whose monitor handle has been closed. */
static void prune_queues(zl_stream_t *s)
{
    int j = 0;
    for (int i = 0; i < s->nmonq; i++) {
        if (atomic_load(&s->monqs[i]->closed))
            monq_unref(s->monqs[i]);
        else
            s->monqs[j++] = s->monqs[i];
    }
    if (j != s->nmonq) {
        s->nmonq = j;
        recompute_mask(s);
    }
}

static void copy_str(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n > ZL_ADDR_MAX - 1)
        n = ZL_ADDR_MAX - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void publish_v1(void *pair, uint64_t event, uint64_t value,
                       const char *addr)
{
    unsigned char hdr[6];
    uint16_t e16 = (uint16_t)event;
    uint32_t v32 = (uint32_t)value;
    memcpy(hdr, &e16, 2);
    memcpy(hdr + 2, &v32, 4);
    /* never block the STREAM socket on a slow or absent monitor reader */
    if (zmq_send(pair, hdr, sizeof hdr, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return;
    zmq_send(pair, addr, strlen(addr), ZMQ_DONTWAIT);
}

void zl_emit_slow(zl_stream_t *s, uint32_t event, uint64_t value,
                  const zl_conn_t *c, const char *local, const char *remote)
{
    prune_queues(s);
    if (!(s->mon_mask & (int)event))
        return;
    zlink_monitor_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.event = event;
    ev.value = value;
    if (c) {
        ev.routing_id.size = 4;
        zl_put_be32(ev.routing_id.data, c->id);
        if (!remote)
            zl_format_conn_addr(c, &c->remote, 0, ev.remote_addr,
                                    sizeof ev.remote_addr);
        if (!local) {
            zl_sockaddr_t la;
            socklen_t ll = sizeof la;
            if (c->fd >= 0 && getsockname(c->fd, &la.sa, &ll) == 0)
                zl_format_conn_addr(c, &la, 0, ev.local_addr,
                                    sizeof ev.local_addr);
            else if (c->listener1 && s->lst[c->listener1 - 1].fd >= 0)
                copy_str(ev.local_addr, s->lst[c->listener1 - 1].real);
        }
    }
    if (local)
        copy_str(ev.local_addr, local);
    if (remote)
        copy_str(ev.remote_addr, remote);
    for (int i = 0; i < s->nmonq; i++)
        if (s->monqs[i]->events & (int)event)
            monq_push(s->monqs[i], &ev);
    if (s->mon_pair && (s->mon_pair_events & (int)event)) {
        const char *a =
            zl_monitor_event_is_local(event) ? ev.local_addr : ev.remote_addr;
        if (!*a)
            a = zl_monitor_event_is_local(event) ? ev.remote_addr
                                                 : ev.local_addr;
        publish_v1(s->mon_pair, event, value, a);
    }
}

void zl_stream_monitors_stop(zl_stream_t *s)
{
    prune_queues(s);
    zl_emit(s, ZLINK_EVENT_MONITOR_STOPPED, 0, NULL, NULL, NULL);
    for (int i = 0; i < s->nmonq; i++) {
        zl_monq_t *q = s->monqs[i];
        pthread_mutex_lock(&q->lock);
        q->stopped = 1;
        pthread_mutex_unlock(&q->lock);
        monq_unref(q);
    }
    free(s->monqs);
    s->monqs = NULL;
    s->nmonq = 0;
    if (s->mon_pair) {
        zmq_close(s->mon_pair);
        s->mon_pair = NULL;
    }
    s->mon_mask = 0;
}

int zl_stream_monitor(zl_handle_t *h, const char *ep, int events)
{
    zl_stream_t *s = h->u.stream;
    if (zl_ctx_is_shutdown(s->ctx))
        return zl_fail(ETERM);
    if (s->mon_pair) {
        /* replacing or stopping: tell the old reader, like libzmq */
        if (s->mon_pair_events & ZLINK_EVENT_MONITOR_STOPPED)
            publish_v1(s->mon_pair, ZLINK_EVENT_MONITOR_STOPPED, 0, "");
        zmq_close(s->mon_pair);
        s->mon_pair = NULL;
        s->mon_pair_events = 0;
        recompute_mask(s);
    }
    if (!ep)
        return 0;
    if (strncmp(ep, "inproc://", 9) != 0)
        return zl_fail(EPROTONOSUPPORT);
    void *p = zmq_socket(s->ctx->zctx, ZMQ_PAIR);
    if (!p)
        return zl_zfail();
    int zero = 0;
    zmq_setsockopt(p, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_bind(p, ep) != 0) {
        int e = zmq_errno();
        zmq_close(p);
        return zl_fail(e);
    }
    s->mon_pair = p;
    s->mon_pair_events = events;
    recompute_mask(s);
    return 0;
}

void *zl_stream_monitor_open(zl_handle_t *h, int events)
{
    zl_stream_t *s = h->u.stream;
    if (zl_ctx_register(s->ctx) != 0)
        return NULL;
    if (s->nmonq == s->monq_cap) {
        int ncap = s->monq_cap ? s->monq_cap * 2 : 4;
        zl_monq_t **n = realloc(s->monqs, (size_t)ncap * sizeof *n);
        if (!n) {
            zl_ctx_unregister(s->ctx);
            zl_set_errno(ENOMEM);
            return NULL;
        }
        s->monqs = n;
        s->monq_cap = ncap;
    }
    zl_monq_t *q = calloc(1, sizeof *q);
    zl_stream_monitor_t *m = calloc(1, sizeof *m);
    if (q)
        q->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!q || !m || q->evfd < 0) {
        if (q && q->evfd >= 0)
            close(q->evfd);
        free(q);
        free(m);
        zl_ctx_unregister(s->ctx);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    pthread_mutex_init(&q->lock, NULL);
    atomic_store(&q->refs, 2);
    q->events = events;
    q->ctx = s->ctx;
    s->monqs[s->nmonq++] = q;
    recompute_mask(s);
    m->base.ops = &stream_monitor_ops;
    m->base.ctx = s->ctx;
    m->q = q;
    zl_handle_t *mh = zl_monitor_handle_new(&m->base);
    if (!mh) {
        atomic_store(&q->closed, 1);
        monq_unref(q);
        free(m);
        zl_ctx_unregister(s->ctx);
        return NULL;
    }
    return mh;
}

static int stream_monitor_recv(zl_monitor_t *base, zlink_monitor_event_t *out,
                               int flags)
{
    zl_monq_t *q = ((zl_stream_monitor_t *)base)->q;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        if (q->count) {
            *out = q->ring[q->head];
            q->head = (q->head + 1) % q->cap;
            q->count--;
            pthread_mutex_unlock(&q->lock);
            return 0;
        }
        /* reset the wake-up under the lock: a producer that pushes after
         * this sees signalled == 0 and writes the eventfd again */
        q->signalled = 0;
        uint64_t v;
        ssize_t rc = read(q->evfd, &v, sizeof v);
        (void)rc;
        pthread_mutex_unlock(&q->lock);
        if (flags & ZLINK_DONTWAIT)
            return zl_fail(EAGAIN);
        if (zl_ctx_is_shutdown(q->ctx))
            return zl_fail(ETERM);
        struct pollfd p[2] = {{q->evfd, POLLIN, 0},
                              {q->ctx->shutdown_fd, POLLIN, 0}};
        poll(p, 2, -1);
    }
}

static int stream_monitor_close(zl_monitor_t *base)
{
    zl_monq_t *q = ((zl_stream_monitor_t *)base)->q;
    pthread_mutex_lock(&q->lock);
    free(q->ring); /* nobody will read these any more */
    q->ring = NULL;
    q->head = q->count = q->cap = 0;
    pthread_mutex_unlock(&q->lock);
    atomic_store(&q->closed, 1);
    monq_unref(q);
    zl_ctx_unregister(base->ctx);
    free(base);
    return 0;
}

/* zlink_poll: the queue's eventfd, written when an event is queued while
 * the queue was not signalled; whether an event is there is the count */
static void stream_monitor_poll_item(zl_monitor_t *base, zmq_pollitem_t *zi)
{
    zi->socket = NULL;
    zi->fd = ((zl_stream_monitor_t *)base)->q->evfd;
    zi->events = ZMQ_POLLIN;
}

static int stream_monitor_poll_check(zl_monitor_t *base)
{
    zl_monq_t *q = ((zl_stream_monitor_t *)base)->q;
    pthread_mutex_lock(&q->lock);
    int ready = q->count > 0;
    if (!ready) {
        /* as in recv: the next event written after this wakes a poll */
        q->signalled = 0;
        uint64_t v;
        ssize_t rc = read(q->evfd, &v, sizeof v);
        (void)rc;
    }
    pthread_mutex_unlock(&q->lock);
    return ready;
}

static const zl_monitor_ops_t stream_monitor_ops = {
    .recv = stream_monitor_recv,
    .close = stream_monitor_close,
    .poll_item = stream_monitor_poll_item,
    .poll_check = stream_monitor_poll_check,
};
