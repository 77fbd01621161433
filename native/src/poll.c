/*
 * poll.c - zlink_poll over a mix of libzmq sockets, STREAM sockets and raw
 * descriptors. libzmq's zmq_poll does the waiting; each socket's kind sets
 * up what it waits on (poll_item). A kind with a readiness check of its own
 * (poll_check: STREAM, which takes part through its epoll descriptor,
 * readable whenever the socket needs attention, and decides by pumping) is
 * checked before the wait and after a wake-up. Monitor handles take part
 * too (POLLIN when an event can be read), through their kind's poll_item
 * and poll_check.
 */
#include "zl_internal.h"

#include <errno.h>
#include <stdlib.h>

#define ZL_POLL_STACK 16

ZL_API int zlink_poll(zlink_pollitem_t *items, int nitems, long timeout_ms)
{
    if (nitems < 0 || (nitems > 0 && !items))
        return zl_fail(EINVAL);
    zmq_pollitem_t stack_zi[ZL_POLL_STACK];
    zl_handle_t *stack_chk[ZL_POLL_STACK];
    zl_monitor_t *stack_mon[ZL_POLL_STACK];
    zmq_pollitem_t *zi = stack_zi;
    zl_handle_t **chk = stack_chk; /* the items with a poll_check */
    zl_monitor_t **mon = stack_mon; /* the monitor items */
    if (nitems > ZL_POLL_STACK) {
        zi = malloc((size_t)nitems * sizeof *zi);
        chk = malloc((size_t)nitems * sizeof *chk);
        mon = malloc((size_t)nitems * sizeof *mon);
        if (!zi || !chk || !mon) {
            free(zi);
            free(chk);
            free(mon);
            return zl_fail(ENOMEM);
        }
    }
    int rc = -1, nchk = 0;
    for (int i = 0; i < nitems; i++) {
        items[i].revents = 0;
        chk[i] = NULL;
        mon[i] = NULL;
        zi[i].revents = 0;
        if (!items[i].socket) {
            zi[i].socket = NULL;
            zi[i].fd = items[i].fd;
            zi[i].events = items[i].events;
            continue;
        }
        zl_handle_t *mh = zl_handle_get(items[i].socket, ZL_KIND_MONITOR);
        if (mh) {
            mon[i] = mh->u.mon;
            mon[i]->ops->poll_item(mon[i], &zi[i]);
            if (!(items[i].events & ZLINK_POLLIN))
                zi[i].events = 0;
            if (mon[i]->ops->poll_check)
                nchk++;
            continue;
        }
        zl_handle_t *h = zl_sock_get(items[i].socket);
        if (!h)
            goto out;
        h->ops->poll_item(h, items[i].events, &zi[i]);
        if (h->ops->poll_check) {
            chk[i] = h;
            nchk++;
        }
    }

    uint64_t deadline = timeout_ms > 0 ? zl_now_ms() + (uint64_t)timeout_ms : 0;
    for (;;) {
        int ready = 0;
        for (int i = 0; nchk && i < nitems; i++) {
            if (mon[i]) {
                if (mon[i]->ops->poll_check && (items[i].events & ZLINK_POLLIN) &&
                    mon[i]->ops->poll_check(mon[i])) {
                    items[i].revents = ZLINK_POLLIN;
                    ready++;
                }
                continue;
            }
            if (!chk[i])
                continue;
            int r = chk[i]->ops->poll_check(chk[i], items[i].events);
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
            if (mon[i]) {
                if (!items[i].revents && zi[i].revents) {
                    int r = !mon[i]->ops->poll_check || mon[i]->ops->poll_check(mon[i]);
                    items[i].revents = r ? ZLINK_POLLIN : 0;
                }
            } else if (chk[i]) {
                if (!items[i].revents && zi[i].revents) {
                    int r = chk[i]->ops->poll_check(chk[i], items[i].events);
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
        free(chk);
        free(mon);
    }
    return rc;
}
