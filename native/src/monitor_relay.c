/*
 * monitor_relay.c - zlink_socket_monitor for libzmq sockets.
 *
 * libzmq publishes its v1 events straight to the caller's PAIR, and the
 * value it puts in a DISCONNECTED event is the connection's descriptor,
 * where the zlink ABI has a disconnect reason. So libzmq publishes to an
 * internal inproc endpoint instead, and one relay thread per monitor
 * forwards each event to the caller's endpoint with that value translated.
 * libzmq 4.3 never says why a connection went away, so the reason is
 * ZLINK_DISCONNECT_UNKNOWN.
 *
 * A relay ends when libzmq sends MONITOR_STOPPED (the monitor was stopped
 * or replaced, or its socket was destroyed: always requested internally,
 * forwarded only if the caller asked for it) or when the context shuts
 * down. The context keeps every relay so that it can join their threads:
 * replacing a monitor joins the old relay at once (the relay unbinds its
 * endpoint before it ends, so the endpoint is free again), finished relays
 * are joined when the next one starts, and the rest when the context
 * terminates.
 */
#include "zl_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct zl_relay {
    struct zl_relay *next;
    zl_handle_t *owner; /* the monitored socket; NULL once it is closed */
    pthread_t thread;
    void *in;           /* PAIR connected to libzmq's monitor endpoint */
    void *out;          /* PAIR bound at the caller's endpoint */
    int events;         /* the caller's mask */
    atomic_int done;
    char *ep;           /* the caller's endpoint, unbound before out closes */
} zl_relay_t;

/* Forwards one event, never blocking on a slow or absent reader (like the
 * STREAM monitors). */
static void forward(zl_relay_t *r, uint16_t event, uint32_t value,
                    int reason_given, const void *addr, size_t addr_len)
{
    /* a ZMP connection's DISCONNECTED has its reason as the value (the one
     * with the peer frames, native/libzmq/reason.patch); any other has the
     * descriptor */
    if (event == ZLINK_EVENT_DISCONNECTED &&
        (!reason_given || value > ZLINK_DISCONNECT_CTX_TERM))
        value = ZLINK_DISCONNECT_UNKNOWN;
    unsigned char hdr[6];
    memcpy(hdr, &event, 2);
    memcpy(hdr + 2, &value, 4);
    if (zmq_send(r->out, hdr, sizeof hdr, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return;
    zmq_send(r->out, addr, addr_len, ZMQ_DONTWAIT);
}

static void *relay_main(void *arg)
{
    zl_relay_t *r = arg;
    for (;;) {
        zmq_msg_t f1, f2;
        zmq_msg_init(&f1);
        if (zmq_msg_recv(&f1, r->in, 0) < 0) {
            zmq_msg_close(&f1);
            if (zmq_errno() == EINTR)
                continue;
            break; /* ETERM: the context is shutting down */
        }
        uint16_t event = 0;
        uint32_t value = 0;
        if (zmq_msg_size(&f1) >= 6) {
            memcpy(&event, zmq_msg_data(&f1), 2);
            memcpy(&value, (const char *)zmq_msg_data(&f1) + 2, 4);
        }
        int more = zmq_msg_more(&f1);
        zmq_msg_close(&f1);
        zmq_msg_init(&f2);
        /* the address frame follows the header at once */
        if (more && zmq_msg_recv(&f2, r->in, 0) < 0) {
            zmq_msg_close(&f2);
            break;
        }
        more = more && zmq_msg_more(&f2);
        if (r->events & event)
            forward(r, event, value, more, zmq_msg_data(&f2), zmq_msg_size(&f2));
        zmq_msg_close(&f2);
        /* the routing id and addresses the ZMP engine adds to some events
         * (zsock_monitor.c) stay out: the endpoint publishes libzmq's v1
         * events, two frames each */
        while (more) {
            zmq_msg_t f;
            zmq_msg_init(&f);
            if (zmq_msg_recv(&f, r->in, 0) < 0) {
                zmq_msg_close(&f);
                break;
            }
            more = zmq_msg_more(&f);
            zmq_msg_close(&f);
        }
        if (event == ZLINK_EVENT_MONITOR_STOPPED)
            break;
    }
    zmq_close(r->in);
    /* zmq_close frees an inproc endpoint later, in libzmq's reaper thread;
     * zmq_unbind frees it now, so a monitor joined here has given its
     * endpoint back by the time zlink_socket_monitor replaces it */
    zmq_unbind(r->out, r->ep);
    zmq_close(r->out);
    atomic_store(&r->done, 1);
    return NULL;
}

/* Unlinks and returns a relay whose thread has finished (finished_only) or
 * the one of socket owner, or NULL. Caller holds ctx->lock. */
static zl_relay_t *unlink_relay(zl_ctx_t *c, const zl_handle_t *owner,
                                int finished_only)
{
    for (zl_relay_t **pp = &c->relays; *pp; pp = &(*pp)->next) {
        zl_relay_t *r = *pp;
        if (finished_only ? atomic_load(&r->done) : r->owner == owner) {
            *pp = r->next;
            return r;
        }
    }
    return NULL;
}

static void join_and_free(zl_relay_t *r)
{
    pthread_join(r->thread, NULL);
    free(r->ep);
    free(r);
}

static void reap_finished(zl_ctx_t *c)
{
    for (;;) {
        pthread_mutex_lock(&c->lock);
        zl_relay_t *r = unlink_relay(c, NULL, 1);
        pthread_mutex_unlock(&c->lock);
        if (!r)
            return;
        join_and_free(r);
    }
}

int zl_relay_monitor(zl_handle_t *h, const char *ep, int events)
{
    zl_ctx_t *c = h->ctx;
    void *zs = h->u.zsock;
    pthread_mutex_lock(&c->lock);
    zl_relay_t *old = unlink_relay(c, h, 0);
    pthread_mutex_unlock(&c->lock);
    /* stops the old relay too: it forwards MONITOR_STOPPED and ends */
    int stop_rc = zmq_socket_monitor(zs, NULL, 0);
    int stop_err = zmq_errno();
    if (old)
        join_and_free(old);
    reap_finished(c);
    if (!ep)
        return stop_rc == 0 ? 0 : zl_fail(stop_err);
    if (strncmp(ep, "inproc://", 9) != 0)
        return zl_fail(EPROTONOSUPPORT); /* libzmq's rule for monitors */
    if (zl_ctx_is_shutdown(c))
        return zl_fail(ETERM);

    zl_relay_t *r = calloc(1, sizeof *r);
    if (!r)
        return zl_fail(ENOMEM);
    r->events = events;
    r->ep = strdup(ep);
    if (!r->ep) {
        free(r);
        return zl_fail(ENOMEM);
    }
    char inner[96];
    snprintf(inner, sizeof inner, "inproc://zlink.relay.%p.%u", (void *)h,
             atomic_fetch_add(&c->seq, 1));
    int zero = 0, e = 0;
    r->out = zmq_socket(c->zctx, ZMQ_PAIR);
    r->in = zmq_socket(c->zctx, ZMQ_PAIR);
    if (!r->out || !r->in) {
        e = zmq_errno();
    } else {
        zmq_setsockopt(r->out, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(r->in, ZMQ_LINGER, &zero, sizeof zero);
        /* inproc allows connecting before the bind: connected first, the
         * relay cannot miss libzmq's first events */
        if (zmq_bind(r->out, ep) != 0 || zmq_connect(r->in, inner) != 0 ||
            zmq_socket_monitor(zs, inner,
                               events | ZLINK_EVENT_MONITOR_STOPPED) != 0)
            e = zmq_errno();
        else if ((e = pthread_create(&r->thread, NULL, relay_main, r)) != 0)
            zmq_socket_monitor(zs, NULL, 0);
    }
    if (e) {
        if (r->in)
            zmq_close(r->in);
        if (r->out)
            zmq_close(r->out);
        free(r->ep);
        free(r);
        return zl_fail(e);
    }
    r->owner = h;
    pthread_mutex_lock(&c->lock);
    r->next = c->relays;
    c->relays = r;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

void zl_relay_detach(zl_handle_t *h)
{
    zl_ctx_t *c = h->ctx;
    pthread_mutex_lock(&c->lock);
    for (zl_relay_t *r = c->relays; r; r = r->next)
        if (r->owner == h)
            r->owner = NULL;
    pthread_mutex_unlock(&c->lock);
}

void zl_relay_join_all(zl_ctx_t *c)
{
    /* after zmq_ctx_term: every relay has had ETERM or MONITOR_STOPPED */
    zl_relay_t *r = c->relays;
    c->relays = NULL;
    while (r) {
        zl_relay_t *next = r->next;
        join_and_free(r);
        r = next;
    }
}
