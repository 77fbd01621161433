/*
 * poll.c - zlink_poll over a mix of libzmq sockets, STREAM sockets and raw
 * descriptors. libzmq's zmq_poll does the waiting; a STREAM socket takes
 * part through its epoll descriptor (readable whenever the socket needs
 * attention), and its real readiness is decided by pumping it.
 */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>

#define ZL_POLL_STACK 16

ZL_API int zlink_poll(zlink_pollitem_t *items, int nitems, long timeout_ms)
{
    if (nitems < 0 || (nitems > 0 && !items))
        return zl_fail(EINVAL);
    zmq_pollitem_t stack_zi[ZL_POLL_STACK];
    zl_stream_t *stack_st[ZL_POLL_STACK];
    zmq_pollitem_t *zi = stack_zi;
    zl_stream_t **st = stack_st;
    if (nitems > ZL_POLL_STACK) {
        zi = malloc((size_t)nitems * sizeof *zi);
        st = malloc((size_t)nitems * sizeof *st);
        if (!zi || !st) {
            free(zi);
            free(st);
            return zl_fail(ENOMEM);
        }
    }
    int rc = -1, nstream = 0;
    for (int i = 0; i < nitems; i++) {
        items[i].revents = 0;
        st[i] = NULL;
        zi[i].revents = 0;
        if (!items[i].socket) {
            zi[i].socket = NULL;
            zi[i].fd = items[i].fd;
            zi[i].events = items[i].events;
            continue;
        }
        zl_handle_t *h = zl_handle_get(items[i].socket, 0);
        if (!h || (h->kind != ZL_KIND_ZSOCK && h->kind != ZL_KIND_STREAM)) {
            zl_set_errno(ENOTSOCK);
            goto out;
        }
        if (h->kind == ZL_KIND_ZSOCK) {
            zi[i].socket = h->u.zsock;
            zi[i].fd = 0;
            zi[i].events = items[i].events;
        } else {
            st[i] = h->u.stream;
            nstream++;
            zi[i].socket = NULL;
            zi[i].fd = zl_stream_fd(st[i]);
            /* only wait on it if input was asked for: the epoll fd stays
             * readable while unread input is pending */
            zi[i].events = (items[i].events & ZLINK_POLLIN) ? ZMQ_POLLIN : 0;
        }
    }

    uint64_t deadline = timeout_ms > 0 ? zl_now_ms() + (uint64_t)timeout_ms : 0;
    for (;;) {
        int ready = 0;
        for (int i = 0; nstream && i < nitems; i++) {
            if (!st[i])
                continue;
            int r = zl_stream_poll_check(st[i], items[i].events);
            if (r < 0)
                goto out;
            items[i].revents = (short)r;
            if (r)
                ready++;
        }
        long t;
        if (ready || timeout_ms == 0) {
            t = 0;
        } else if (timeout_ms < 0) {
            t = -1;
        } else {
            uint64_t now = zl_now_ms();
            t = now >= deadline ? 0 : (long)(deadline - now);
        }
        if (zmq_poll(zi, nitems, t) < 0) {
            zl_zfail();
            goto out;
        }
        int count = 0;
        for (int i = 0; i < nitems; i++) {
            if (st[i]) {
                if (!items[i].revents && zi[i].revents) {
                    int r = zl_stream_poll_check(st[i], items[i].events);
                    if (r < 0)
                        goto out;
                    items[i].revents = (short)r;
                }
            } else {
                items[i].revents = zi[i].revents;
            }
            if (items[i].revents)
                count++;
        }
        /* a STREAM wake-up that produced no message (a flush, a timer)
         * goes back to waiting for what is left of the timeout */
        if (count || t == 0) {
            rc = count;
            goto out;
        }
    }
out:
    if (zi != stack_zi) {
        free(zi);
        free(st);
    }
    return rc;
}
